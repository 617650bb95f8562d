"""Fixtures of the account tests (tests/accounts, tests/admin, tests/edge/account): a real
edge on a real account database. tests/conftest.py registers them as a plugin.

Every test that reaches the database (through `database`, `account_config`, `admin_store`,
`seeded`, or `edge_client` where a folder's `client_config` is `account_config`) runs twice:
on a SQLite file in tmp_path and on the session's PostgreSQL server (tests/support/pgfixtures.py;
skipped without PostgreSQL, except in CI). A test of SQLite internals is marked `sqlite_only`; its PostgreSQL twin is in tests/store/pg."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from edge.config import Config
from store import AccountStore, open_store
from support.accountkit import Seeded, new_account
from support.storedrows import StoredRows, run_apart

# The account tests make hundreds of calls with one key; the limiter is not under test here.
UNLIMITED = (1_000_000, 60)


BACKENDS = ("sqlite", "postgresql")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sqlite_only: a test of SQLite internals (its PostgreSQL twin is in tests/store/pg)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "database" in metafunc.fixturenames:
        sqlite_only = metafunc.definition.get_closest_marker("sqlite_only") is not None
        backends = [
            pytest.param(name, marks=[pytest.mark.postgresql] if name == "postgresql" else [])
            for name in (BACKENDS[:1] if sqlite_only else BACKENDS)
        ]
        metafunc.parametrize("database", backends, indirect=True)


@pytest.fixture
def database(request: pytest.FixtureRequest, edge_config: Config) -> str:
    """The test's account database: a SQLite file in tmp_path, or an emptied database on
    the session's PostgreSQL server."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return edge_config.database


@pytest.fixture
def stored_bytes(request: pytest.FixtureRequest, database: str) -> Callable[[], bytes]:
    """`stored_bytes()`: everything the account database has written to disk so far (the
    SQLite file and its WAL; the PostgreSQL server's files after a checkpoint)."""
    if database.startswith("postgresql://"):
        server = request.getfixturevalue("pg_server")

        def read() -> bytes:
            server.sql("CHECKPOINT")
            return b"".join(p.read_bytes() for p in server.data_dir.rglob("*") if p.is_file())

        return read
    path = Path(database)
    return lambda: b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


async def _migrated(path: Path) -> None:
    store = await open_store(str(path), writable=True, readers=1)
    await store.close()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite store as the store's own first opening leaves it (migrated, owner-only,
    its id key made), made once per session: migrating takes some 50 ms of DDL, copying it
    one. The SQLite twin of `pg_url`'s migrated and emptied database."""
    path = tmp_path_factory.mktemp("migrated") / "edge.sqlite3"
    run_apart(_migrated(path))
    assert not path.with_name(path.name + "-wal").exists()  # closed: the file is the store
    return path


@pytest.fixture
def account_config(request: pytest.FixtureRequest, edge_config: Config, database: str) -> Config:
    """The edge's config on the test's account database, migrated and empty (a first
    opening, its migration and its races, are the store's own tests: tests/store reach
    `database` directly); holding the module's `stored_rows` where the test uses them."""
    on_sqlite = not database.startswith("postgresql://")
    if "stored_rows" in request.fixturenames:
        # Before anything opens the database: the module's rows copied in (StoredRows).
        rows: StoredRows = request.getfixturevalue("stored_rows")
        rows.copy_into(database, request.getfixturevalue("migrated_sqlite") if on_sqlite else None)
    elif on_sqlite and not Path(database).exists():
        shutil.copy(request.getfixturevalue("migrated_sqlite"), database)  # mode too: 0600
    return dataclasses.replace(
        edge_config, database=database, rate_limit_free=UNLIMITED, rate_limit_pro=UNLIMITED
    )


@pytest.fixture
async def admin_store(account_config: Config) -> AsyncIterator[AccountStore]:
    """A writable store on the edge's database: what the admin CLI would do, in-process."""
    store = await open_store(account_config.database, writable=True, readers=1)
    yield store
    await store.close()


@pytest.fixture
async def seeded(admin_store: AccountStore) -> Seeded:
    return await new_account(admin_store)
