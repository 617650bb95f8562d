"""Backing up and restoring the account store: a restored store answers the same bytes.

SQLite through `affdir-admin backup/restore` (SQLite's online backup API); PostgreSQL through
`pg_dump -Fc` / `pg_restore`, as docs/deploy.md tells operators.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from support.edgeclient import EdgeClientFactory

from accounts import backup as backup_files
from accounts.crypto import decrypt_credentials
from accounts.demo import DEMO_UID, seed_store
from admin.cli import main as admin_main
from edge.config import Config
from store import AccountStore, accounts

SECRET = "backup-secret-" + "b" * 40


async def answers(client: TestClient, key: str) -> list[bytes]:
    """/v1/me and every page of /v1/commissions, as bytes."""
    auth = {"Authorization": f"Bearer {key}"}
    pages = [await (await client.get("/v1/me", headers=auth)).read()]
    url: str | None = "/v1/commissions?limit=100"
    while url:
        response = await client.get(url, headers=auth)
        assert response.status == 200, await response.text()
        pages.append(await response.read())
        body = await response.json()
        url = body["page"]["nextCursor"] and (
            f"/v1/commissions?limit=100&cursor={body['page']['nextCursor']}"
        )
    return pages


async def run(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run a command to its end; its exit status and standard error."""
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    _, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, err.decode()


async def admin(config: Config, *args: str) -> tuple[int, str]:
    """The admin CLI, as an operator runs it."""
    return await run(
        sys.executable,
        "-m",
        "admin",
        "--database",
        config.database,
        *args,
        env={**os.environ, "EDGE_SECRET_KEY": SECRET},
    )


def stored_credentials(database: str) -> dict[str, bytes]:
    with contextlib.closing(sqlite3.connect(database)) as conn, conn:
        rows = conn.execute("SELECT network, ciphertext FROM network_credentials").fetchall()
    return dict(rows)


def dump_tool(pg_server, name: str) -> str:
    tool = pg_server.bin_dir / name
    if not tool.exists():
        pytest.skip(f"{name} is not installed beside the PostgreSQL server")
    return str(tool)


@pytest.mark.process
async def test_a_restored_store_serves_the_same_bytes_keys_and_credentials(
    admin_store: AccountStore,
    account_config: Config,
    edge_client: EdgeClientFactory,
    database: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    config = dataclasses.replace(account_config, secret_key=SECRET)
    key = await seed_store(admin_store, SECRET.encode(), 120)
    before = await answers(await edge_client(config), key)
    assert len(before) == 3  # /v1/me and two pages of commissions
    postgres = database.startswith("postgresql://")
    saved = tmp_path / "store.backup"
    if postgres:
        pg_server = request.getfixturevalue("pg_server")
        assert await run(
            dump_tool(pg_server, "pg_dump"), "-Fc", "-d", database, "-f", str(saved)
        ) == (0, "")
    else:
        credentials = stored_credentials(database)
        assert (await admin(config, "backup", str(saved)))[0] == 0

    # What an operator's mistake might do: rows gone, the key revoked.
    await admin_store.write(accounts.revoke_key, key[:12])
    if postgres:
        pg_server.sql("DELETE FROM commissions", database.rsplit("/", 1)[1].split("?")[0])
        restored = await run(
            dump_tool(pg_server, "pg_restore"),
            *("--clean", "--if-exists", "--single-transaction", "-d", database, str(saved)),
        )
        assert restored == (0, ""), restored
    else:
        with contextlib.closing(sqlite3.connect(database)) as conn, conn:
            conn.execute("DELETE FROM commissions")
        assert (await admin(config, "restore", str(saved)))[0] == 0
        assert stored_credentials(database) == credentials
        for network, blob in credentials.items():
            assert decrypt_credentials(SECRET.encode(), DEMO_UID, network, blob).startswith(b"{")

    after = await answers(await edge_client(config), key)
    assert after == before


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("prepare", "args", "message"),
    [
        ("existing", ("backup", "{target}"), "exists; choose another FILE, or replace it with"),
        ("self", ("backup", "{database}"), "is the database itself"),
        ("not_sqlite", ("restore", "{target}"), "not a SQLite database"),
        ("missing", ("restore", "{target}"), "no such file"),
        ("other_db", ("restore", "{target}"), "not an account store (no accounts, api_keys"),
        ("newer", ("restore", "{target}"), "is newer than this code"),
    ],
)
@pytest.mark.process
async def test_backup_and_restore_refuse_what_would_lose_data(
    admin_store: AccountStore,
    account_config: Config,
    tmp_path: Path,
    prepare: str,
    args: tuple[str, ...],
    message: str,
) -> None:
    target = tmp_path / "backup.sqlite3"
    if prepare == "existing":
        target.write_bytes(b"keep me")
    elif prepare == "not_sqlite":
        target.write_bytes(b"this is not a database at all, just some text" * 10)
    elif prepare == "other_db":
        with contextlib.closing(sqlite3.connect(target)) as conn, conn:
            conn.execute("CREATE TABLE something (x)")
    elif prepare == "newer":
        assert (await admin(account_config, "backup", str(target)))[0] == 0
        with contextlib.closing(sqlite3.connect(target)) as conn, conn:
            conn.execute("INSERT INTO schema_migrations VALUES (999, '2030-01-01T00:00:00Z')")
    live = Path(account_config.database)
    before = live.read_bytes()  # noqa: ASYNC240 - a test's own small file
    argv = [a.format(target=target, database=account_config.database) for a in args]
    status, err = await admin(account_config, *argv)
    assert status == 1 and message in err, err
    assert live.read_bytes() == before  # noqa: ASYNC240
    if prepare == "existing":
        assert target.read_bytes() == b"keep me"
    assert not list(tmp_path.glob("*.partial"))  # noqa: ASYNC240


def test_backup_points_postgresql_users_to_pg_dump(capsys: pytest.CaptureFixture[str]) -> None:
    code = admin_main(["--database", "postgresql://u@127.0.0.1:1/x", "backup", "f"])
    assert code == 1
    assert "pg_dump -Fc and pg_restore" in capsys.readouterr().err


def test_a_backup_is_one_self_contained_file(tmp_path: Path) -> None:
    live = tmp_path / "live.sqlite3"
    with contextlib.closing(sqlite3.connect(live)) as conn, conn:
        conn.execute("PRAGMA journal_mode=WAL")
        for table in backup_files.SCHEMA_TABLES:
            conn.execute(f"CREATE TABLE {table} (version INTEGER)")
        conn.execute("INSERT INTO schema_migrations VALUES (1)")
    # Committed rows still in the -wal file are in the backup: it is not a file copy.
    info = backup_files.backup(live, tmp_path / "copy.sqlite3")
    assert (info.schema_version, info.accounts) == (1, 0)
    assert not (tmp_path / "copy.sqlite3-wal").exists()
    with contextlib.closing(sqlite3.connect(tmp_path / "copy.sqlite3")) as conn, conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
