"""`affdir-admin commissions import` streams: its memory does not grow with the file, and a
file written over several chunks is still imported whole or not at all.

Both run the command in process (tests/support/adminrun.py) with the importer's bounds
made small (`importer.CHUNK_ROWS`, `importer.HEAD_MAX`), so a file of many chunks is a few
thousand rows, not a few hundred thousand: what the tests hold (a chunk at a time, one
transaction) depends on the number of chunks, not on their size.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
import tracemalloc
from pathlib import Path

import asyncpg
import pytest
from support.adminrun import run_admin

from accounts import importer
from accounts.importer import read_export, text_lines
from accounts.statusmap import load_status_map
from sync.connectors import CONNECTORS

SECRET = "import-secret-" + "z" * 40
HEADER = (
    "externalId,programName,programExternalId,status,saleAmount,commissionAmount,currency,"
    "clickedAt,transactedAt,subId\n"
)
CHUNK = 200  # rows a chunk in these tests
HEAD = 1 << 14  # characters read ahead to find a CSV's delimiter: about 115 rows
# Past the ids seen (FirstLines: 25 to 50 bytes an id, twice that while its table doubles),
# what a larger file may add to an import's peak: a tenth of its extra rows held.
HELD_SHARE = 0.1


def export_text(rows: int, *, last: str | None = None) -> str:
    """A CSV export of `rows` rows with every column (ids E0, E1, ...); `last` replaces
    its last row."""
    lines = [
        f"E{n},Programme {n % 300} — Boutique en ligne,P{n % 300},"
        f"{('pending', 'approved', 'declined')[n % 3]},{n % 99991}.{n % 100:02d},"
        f"{n % 997}.50,EUR,2026-01-0{1 + n % 9}T09:00:00Z,"
        f"2026-01-0{1 + n % 9}T10:00:00Z,campaign-{n % 5000}-newsletter\n"
        for n in range(rows)
    ]
    if last is not None:
        lines[-1] = last + "\n"
    return HEADER + "".join(lines)


def publisher(env: dict[str, str]) -> str:
    """A new account with awin connected, through the CLI."""
    created = run_admin(env, "account", "create", "--plan", "pro")
    assert created.returncode == 0, created.stderr
    uid = created.stdout.decode().strip()
    fields = CONNECTORS["awin"].spec.required_credentials
    credentials = json.dumps({name: f"{name}-value" for name in fields}).encode()
    connected = run_admin(
        env, "network", "connect", "--account", uid, "--network", "awin",
        "--credentials-file", "-", stdin=credentials,
    )  # fmt: skip
    assert connected.returncode == 0, connected.stderr
    return uid


def import_command(uid: str, export: Path) -> tuple[str, ...]:
    return ("commissions", "import", "--account", uid, "--network", "awin", "--json", str(export))


def held_bytes_a_row(text: str) -> float:
    """What holding the rows of `text` takes, a row: the memory of a file read whole."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        lines = text_lines(io.BytesIO(text.encode()), "csv")
        chunks = list(read_export(lines, "csv", "awin", load_status_map()))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return held / sum(len(rows) for rows in chunks)


def import_peak(env: dict[str, str], uid: str, export: Path) -> int:
    """The peak of the Python memory allocated while the command imports `export`."""
    tracemalloc.start()
    try:
        done = run_admin(env, *import_command(uid, export))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["inserted"] == export.read_text().count("\n") - 1
    return peak


@pytest.mark.slow
def test_an_import_holds_a_chunk_and_the_ids_seen_not_the_file(tmp_path, monkeypatch):
    # The memory model: the head read ahead (HEAD_MAX), a read block, a chunk of rows and
    # the ids seen (FirstLines), none of which grows with the file but the ids. A file of
    # 4 chunks and one of 16, each on a fresh database after one import that warms the
    # caches: the larger may add its ids and a small share of its extra rows held. Held
    # whole, the extra rows added all of theirs (about 800 bytes each).
    monkeypatch.setattr(importer, "CHUNK_ROWS", CHUNK)
    monkeypatch.setattr(importer, "HEAD_MAX", HEAD)
    small, large = 4 * CHUNK, 16 * CHUNK
    peaks = {}
    for name, rows in (("warm", small), ("small", small), ("large", large)):
        env = {"EDGE_DATABASE": str(tmp_path / f"{name}.sqlite3"), "EDGE_SECRET_KEY": SECRET}
        export = tmp_path / f"{name}.csv"
        export.write_text(export_text(rows))
        peaks[name] = import_peak(env, publisher(env), export)
    per_row = held_bytes_a_row(export_text(CHUNK))
    ids = 2 * 50 * large
    assert per_row > 500, per_row  # a row held is objects, not bytes: the test can fail
    growth = peaks["large"] - peaks["small"]
    assert growth < ids + HELD_SHARE * per_row * (large - small), (peaks, per_row)


@pytest.mark.parametrize(
    ("last", "problem"),
    [
        # A bad row at the very end, once two chunks are written.
        ("E-last,1.50,EUR,2026-01-01T10:00:00Z", "row: has 4 fields, the header has 10"),
        # The first row's id again, in the last chunk.
        ("E0,,,pending,,1.50,EUR,,2026-01-01T10:00:00Z,", "externalId: duplicate of line 2"),
    ],
)
async def test_a_file_written_over_several_chunks_is_imported_whole_or_not_at_all(
    database, tmp_path, monkeypatch, last, problem
):
    monkeypatch.setattr(importer, "CHUNK_ROWS", CHUNK)
    env = {
        "EDGE_DATABASE": database,
        "EDGE_SECRET_KEY": SECRET,
        "EDGE_SECRET_FILE": str(tmp_path / "secret.key"),
    }
    uid = publisher(env)
    export = tmp_path / "export.csv"
    rows = 2 * CHUNK + 50  # three chunks
    export.write_text(export_text(rows, last=last))
    refused = run_admin(env, *import_command(uid, export))
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.decode() == (
        f"{export}:{rows + 1}: {problem}\naffdir-admin: nothing imported; check the file, then "
        f"import it with: affdir-admin commissions import --account {uid} --network awin {export}\n"
    )
    assert await stored_count(database) == 0

    export.write_text(export_text(rows))
    imported = run_admin(env, *import_command(uid, export))
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout) == {
        "file": str(export),
        "rows": rows,
        "inserted": rows,
        "updated": 0,
        "unchanged": 0,
    }
    assert await stored_count(database) == rows


async def stored_count(database: str) -> int:
    """How many commissions the database holds, read apart from any store."""
    sql = "SELECT count(*) FROM commissions"
    if database.startswith("postgresql://"):
        conn = await asyncpg.connect(database)
        try:
            return int(await conn.fetchval(sql))
        finally:
            await conn.close()
    with contextlib.closing(sqlite3.connect(database)) as conn:
        return int(conn.execute(sql).fetchone()[0])
