"""`affdir-admin migrate` and `migrate --status` on an unmigrated SQLite file and an
unmigrated PostgreSQL database: what is pending, what is applied, the exit statuses."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import asyncpg
import pytest
from support.adminrun import run_admin

from store.schema import LATEST, statements
from store.schema.status import schema_status

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)])
def unmigrated(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL or path of an account database no migration has touched."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_fresh_url"))
    return str(tmp_path / "accounts.sqlite3")


def admin(database: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`affdir-admin migrate ARGS` on `database`, in process; its output as text."""
    done = run_admin({"EDGE_DATABASE": database}, "migrate", *args)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


async def at_version_one(database: str) -> None:
    """Apply the first migration only, as code of that version would have."""
    create = "CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at text)"
    record = "INSERT INTO schema_migrations VALUES (1, '2026-01-01T00:00:00Z')"
    if database.startswith("postgresql://"):
        conn = await asyncpg.connect(database)
        try:
            async with conn.transaction():
                for statement in (*statements("postgres", upto=1)[0], create, record):
                    await conn.execute(statement)
        finally:
            await conn.close()
        return
    with contextlib.closing(sqlite3.connect(database)) as conn, conn:
        for statement in (*statements("sqlite", upto=1)[0], create, record):
            conn.execute(statement)


async def test_status_then_migrate_then_status(unmigrated):
    pending = admin(unmigrated, "--status")
    assert pending.returncode == 3, pending.stderr
    lines = pending.stdout.splitlines()
    assert lines[0] == f"schema version 0, latest {LATEST}"
    assert [line.split(":")[0] for line in lines[1:]] == [
        f"pending {n}" for n in range(1, LATEST + 1)
    ]
    assert lines[1].startswith("pending 1: CREATE TABLE accounts, ")
    if not unmigrated.startswith("postgresql://"):
        assert not await asyncio.to_thread(os.path.exists, unmigrated)  # never made
    assert (await schema_status(unmigrated)).current == 0  # nor migrates

    applied = admin(unmigrated)
    assert applied.returncode == 0, applied.stderr
    lines = applied.stdout.splitlines()
    assert lines[0] == f"schema version {LATEST}, latest {LATEST}"
    assert [line.split(":")[0] for line in lines[1:]] == [
        f"applied {n}" for n in range(1, LATEST + 1)
    ]
    assert (await schema_status(unmigrated)).current == LATEST

    current = admin(unmigrated, "--status")
    assert current.returncode == 0, current.stderr
    assert current.stdout.splitlines() == [f"schema version {LATEST}, latest {LATEST}"]
    again = admin(unmigrated)
    assert again.returncode == 0 and again.stdout.splitlines() == current.stdout.splitlines()


async def test_only_what_is_missing_is_pending_and_applied(unmigrated):
    await at_version_one(unmigrated)
    pending = admin(unmigrated, "--status", "--json")
    assert pending.returncode == 3, pending.stderr
    report = json.loads(pending.stdout)
    assert (report["version"], report["latest"]) == (1, LATEST)
    assert [m["version"] for m in report["pending"]] == list(range(2, LATEST + 1))
    assert "ALTER TABLE networks ADD COLUMN currency" in report["pending"][0]["summary"]
    applied = admin(unmigrated, "--json")
    assert applied.returncode == 0, applied.stderr
    report = json.loads(applied.stdout)
    assert report["version"] == LATEST
    assert [m["version"] for m in report["applied"]] == list(range(2, LATEST + 1))


async def test_a_schema_newer_than_the_code_is_refused(unmigrated):
    admin(unmigrated)
    newer = f"INSERT INTO schema_migrations VALUES ({LATEST + 1}, '2099-01-01T00:00:00Z')"
    if unmigrated.startswith("postgresql://"):
        conn = await asyncpg.connect(unmigrated)
        try:
            await conn.execute(newer)
        finally:
            await conn.close()
    else:
        with contextlib.closing(sqlite3.connect(unmigrated)) as conn, conn:
            conn.execute(newer)
    for args in ((), ("--status",)):
        refused = admin(unmigrated, *args)
        assert refused.returncode == 1
        assert f"version {LATEST + 1}, newer than this code ({LATEST})" in refused.stderr
