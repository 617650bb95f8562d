"""The one schema history (store/schema): its shipped steps never change, a store made by an
earlier release upgrades to the same schema as one built from empty, and no DDL lives
outside store/schema/. The PostgreSQL side of the comparison is tests/store/pg/test_schema.py."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import os
import re
import sqlite3
from pathlib import Path

import pytest
from schema_shapes import differences, sqlite_shape

from store import connections
from store.engines.sqlite import SqliteStore, migrate
from store.schema import HISTORY, LATEST, statements
from store.schema.status import schema_status
from store.schema.step import ENGINES, Engine

ROOT = Path(__file__).resolve().parents[2]
OLD_CLOCK = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

# The text of every step that has shipped, per database (sha256 of its statements joined by
# "\n;\n", first 16 hex digits). Stores made by an earlier release are at these versions
# already: a changed text would never reach them, so a schema change is a new step.
SHIPPED = {
    1: {"sqlite": "b02de6e3161bc054", "postgres": "ec02e51b38dcc468"},
    2: {"sqlite": "eafd0540a2b59510", "postgres": "bb670cb1fd3ac3e1"},
    3: {"sqlite": "66b5d159f74a95a8", "postgres": "e9ea8dac05ca479d"},
    4: {"sqlite": "a4b1353dc2c1bfd7", "postgres": "99fbaa8e54336d71"},
    5: {"sqlite": "f897a45f2e21a192", "postgres": "738a0579b29a3ddf"},
    6: {"sqlite": "15ae93ecf0bf114f", "postgres": "e39064d5e51c5280"},
    7: {"sqlite": "7ceed40f161cbba0", "postgres": "7fe3c864fd27023d"},
    8: {"sqlite": "298790affd5ca5b3", "postgres": "0a7c82be6a3876c3"},
    9: {"sqlite": "1f8d619bc460d70f", "postgres": "cf1760cef512eb50"},
    10: {"sqlite": "3d901abcdbb63ea7", "postgres": "e6d320977f9fc563"},
    11: {"sqlite": "0fe0201a10b81485", "postgres": "414741627ebf2733"},
}


def fingerprint(step: tuple[str, ...]) -> str:
    return hashlib.sha256("\n;\n".join(step).encode()).hexdigest()[:16]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_shipped_step_is_never_edited(engine: Engine):
    assert len(SHIPPED) <= LATEST
    for version, pins in SHIPPED.items():
        assert fingerprint(HISTORY[version - 1].sql(engine)) == pins[engine], (
            f"step {version} on {engine} changed: add a new step instead"
        )


@pytest.mark.parametrize("engine", ENGINES)
def test_every_step_has_statements_on_each_database(engine: Engine):
    assert all(statements(engine))
    assert len(statements(engine)) == LATEST
    with pytest.raises(ValueError, match="no schema version"):
        statements(engine, upto=LATEST + 1)


async def built_from_empty(path: Path) -> None:
    store = await SqliteStore.open(path, writable=True, readers=1)
    await store.close()


def made_by_release(path: Path, version: int) -> None:
    """A SQLite file as the release whose schema was `version` left it: its steps applied
    by the runner, one transaction each, then closed."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrate(conn, lambda: OLD_CLOCK, upto=version) == version
    finally:
        conn.close()


@pytest.fixture(scope="module")
def current_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("schema") / "empty.sqlite3"
    asyncio.run(built_from_empty(path))
    return path


async def test_a_store_built_from_empty_is_at_the_latest_version(current_sqlite: Path):
    status = await schema_status(str(current_sqlite))
    assert (status.current, status.latest) == (LATEST, LATEST)
    assert not status.pending


@pytest.mark.parametrize("version", range(1, LATEST))
async def test_a_store_of_an_earlier_release_upgrades_to_the_same_schema(
    tmp_path: Path, current_sqlite: Path, version: int
):
    path = tmp_path / f"v{version}.sqlite3"
    made_by_release(path, version)
    status = await schema_status(str(path))
    assert (status.current, [m.version for m in status.pending]) == (
        version,
        list(range(version + 1, LATEST + 1)),
    )
    await built_from_empty(path)  # the current code opens it
    assert (await schema_status(str(path))).current == LATEST
    assert differences(sqlite_shape(current_sqlite), sqlite_shape(path)) == []
    # The triggers too: the same names, tables and text as a store built from empty.
    triggers = "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
    with (
        contextlib.closing(sqlite3.connect(current_sqlite)) as empty,
        contextlib.closing(sqlite3.connect(path)) as upgraded,
    ):
        assert upgraded.execute(triggers).fetchall() == empty.execute(triggers).fetchall()


def test_the_shape_reads_what_the_steps_declare(current_sqlite: Path):
    shape = sqlite_shape(current_sqlite)
    accounts = shape["tables"]["accounts"]
    assert ("suspended", "flag", True, "0") in accounts["columns"]
    assert ("email", "text", False, None) in accounts["columns"]
    assert accounts["checks"] == [["plan"]]
    assert shape["tables"]["commissions"]["uniques"] == {
        ("id",),
        ("account_id", "network", "external_id"),
    }
    assert shape["indexes"]["commissions_page"] == (
        "commissions",
        ["account_id", "transacted_at DESC", "id DESC"],
        False,
    )
    assert shape["tables"]["network_credentials"]["foreign_keys"] == {
        ("networks", ("account_id", "network"), ("account_id", "network"), "CASCADE")
    }


# --- DDL lives in store/schema/ only ------------------------------------------------------

DDL = re.compile(r"CREATE\s+(UNIQUE\s+)?INDEX|CREATE\s+TABLE|ALTER\s+TABLE", re.IGNORECASE)
# Where DDL may appear: the steps, and the tests and benchmarks that build or inspect stores.
DDL_HOMES = ("store/schema/", "tests/", "bench/")


def python_files() -> list[Path]:
    """Every .py file of the tree, but virtual environments, caches and hidden folders."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if not name.startswith(".") and name not in {"node_modules", "__pycache__", "dist"}
        ]
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return found


def test_no_ddl_outside_the_schema_history():
    files = python_files()
    assert any(path.match("store/schema/v001_*.py") for path in files)
    found = []
    for path in files:
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(DDL_HOMES):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if DDL.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    assert found == [], "DDL belongs in a step of store/schema/:\n" + "\n".join(found)


async def test_step_9_marks_the_connections_without_credentials_as_import_only(tmp_path: Path):
    """A store of release 8 knew an import-only connection only as one stored without
    credentials: step 9 marks those, and only those."""
    path = tmp_path / "v8.sqlite3"
    made_by_release(path, 8)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO accounts (uid, plan, created_at) VALUES ('acc_1', 'pro', '2026-01-01T00:00:00Z')"
        )
        for network in ("amazon", "awin"):
            conn.execute(
                "INSERT INTO networks (account_id, network, status, connected_at) "
                "VALUES (1, ?, 'never', '2026-01-01T00:00:00Z')",
                (network,),
            )
        conn.execute(
            "INSERT INTO network_credentials (account_id, network, ciphertext, updated_at) "
            "VALUES (1, 'awin', x'00', '2026-01-01T00:00:00Z')"
        )
    conn.close()
    store = await SqliteStore.open(path, writable=True, readers=1)
    try:
        views = await store.read(connections.find_all, "acc_1")
    finally:
        await store.close()
    assert {v.network: v.import_only for v in views} == {"amazon": True, "awin": False}
    assert all(v.next_attempt_at is None and v.last_import_at is None for v in views)
