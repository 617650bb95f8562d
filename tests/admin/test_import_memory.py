"""`affdir-admin commissions import` streams: its memory does not grow with the file, and a
file written over several chunks is still imported whole or not at all."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from accounts.importer import CHUNK_ROWS
from sync.connectors import CONNECTORS

ROOT = Path(__file__).resolve().parents[2]
SECRET = "import-secret-" + "z" * 40
HEADER = (
    "externalId,programName,programExternalId,status,saleAmount,commissionAmount,currency,"
    "clickedAt,transactedAt,subId\n"
)
# Peak RSS of the whole command: at its ~1 MB size mostly the interpreter and its imports.
PEAK_RATIO = 3


def write_export(path: Path, size: int, *, last: str | None = None) -> int:
    """A CSV export of about `size` bytes with every column (ids E0, E1, ...); `last`
    replaces its last row. Returns the number of rows."""
    rows = 0
    with path.open("w") as out:
        out.write(HEADER)
        written = len(HEADER)
        while written < size:
            line = (
                f"E{rows},Programme {rows % 300} — Boutique en ligne,P{rows % 300},"
                f"{('pending', 'approved', 'declined')[rows % 3]},{rows % 99991}.{rows % 100:02d},"
                f"{rows % 997}.50,EUR,2026-01-0{1 + rows % 9}T09:00:00Z,"
                f"2026-01-0{1 + rows % 9}T10:00:00Z,campaign-{rows % 5000}-newsletter\n"
            )
            out.write(line)
            written += len(line.encode())
            rows += 1
        if last is not None:
            out.write(last + "\n")
            rows += 1
    return rows


def admin(env: dict[str, str], *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "admin", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=600,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def publisher(env: dict[str, str]) -> str:
    """A new account with awin connected, through the CLI."""
    created = admin(env, "account", "create", "--plan", "pro")
    assert created.returncode == 0, created.stderr
    uid = created.stdout.strip()
    fields = CONNECTORS["awin"].spec.required_credentials
    credentials = json.dumps({name: f"{name}-value" for name in fields}).encode()
    connected = admin(
        env, "network", "connect", "--account", uid, "--network", "awin",
        "--credentials-file", "-", stdin=credentials,
    )  # fmt: skip
    assert connected.returncode == 0, connected.stderr
    return uid


def peak_rss_kib(env: dict[str, str], *args: str) -> tuple[int, str]:
    """The peak RSS of `affdir-admin ARGS` and its output, from a fresh helper process
    whose one child it is (RUSAGE_CHILDREN: the largest of its waited-for children)."""
    helper = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "assert done.returncode == 0, done.stderr\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.stdout)\n"
    )
    measured = subprocess.run(
        [sys.executable, "-c", helper, sys.executable, "-m", "admin", *args],
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=900,
        text=True,
    )
    assert measured.returncode == 0, measured.stderr
    peak, output = measured.stdout.split(" ", 1)
    return int(peak), output


@pytest.mark.slow
@pytest.mark.process
def test_a_100_mb_import_peaks_within_a_small_multiple_of_a_1_mb_one(tmp_path):
    # About a minute: half a million rows written on SQLite. Held whole, the large file and
    # its rows peaked at about fifteen times the small one's.
    env = {"EDGE_DATABASE": str(tmp_path / "edge.sqlite3"), "EDGE_SECRET_KEY": SECRET}
    uid = publisher(env)
    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    write_export(small, 1 << 20)
    rows = write_export(large, 100 << 20)
    command = ("commissions", "import", "--account", uid, "--network", "awin", "--json")
    small_peak, _ = peak_rss_kib(env, *command, str(small))
    large_peak, output = peak_rss_kib(env, *command, str(large))
    assert json.loads(output)["rows"] == rows
    assert large_peak < PEAK_RATIO * small_peak, (small_peak, large_peak)


@pytest.mark.parametrize(
    ("last", "problem"),
    [
        # A bad row at the very end, once two chunks are written.
        ("E-last,1.50,EUR,2026-01-01T10:00:00Z", "row: has 4 fields, the header has 10"),
        # The first row's id again, in the last chunk.
        ("E0,,,pending,,1.50,EUR,,2026-01-01T10:00:00Z,", "externalId: duplicate of line 2"),
    ],
)
@pytest.mark.process
async def test_a_file_written_over_several_chunks_is_imported_whole_or_not_at_all(
    database, tmp_path, last, problem
):
    env = {
        "EDGE_DATABASE": database,
        "EDGE_SECRET_KEY": SECRET,
        "EDGE_SECRET_FILE": str(tmp_path / "secret.key"),
    }
    uid = publisher(env)
    command = ("commissions", "import", "--account", uid, "--network", "awin", "--json")
    export = tmp_path / "export.csv"
    size = (2 * CHUNK_ROWS + 500) * 150  # three chunks
    rows = write_export(export, size, last=last)
    assert rows > 2 * CHUNK_ROWS
    refused = admin(env, *command, str(export))
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr == (
        f"{export}:{rows + 1}: {problem}\naffdir-admin: nothing imported; check the file, then "
        f"import it with: affdir-admin commissions import --account {uid} --network awin {export}\n"
    )
    assert await stored_count(database) == 0

    rows = write_export(export, size)
    imported = admin(env, *command, str(export))
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
