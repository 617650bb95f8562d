"""Events past the retention are deleted by `affdir-admin events prune` and by the sync
worker's hourly round (sync.retention), on both stores; newer ones stay."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path

import pytest

from admin.cli import main
from store import AccountStore, accounts, commissions, open_store
from store.base import NewCommission
from store.core import Session
from sync.__main__ import parse_args
from sync.retention import keep_retention, prune_events


def commission(external_id: str) -> NewCommission:
    return NewCommission(
        external_id=external_id,
        status="pending",
        raw_status=None,
        commission_amount="1.00",
        currency="EUR",
        transacted_at="2026-01-03T10:12:00Z",
    )


async def external_ids(store: AccountStore) -> list[str]:
    async def read(s: Session) -> list[str]:
        rows = await s.fetch("SELECT data FROM events ORDER BY id")
        return [json.loads(r[0])["externalId"] for r in rows]

    return await store.read(read)


async def seed(database: str, ages: dict[str, int]) -> None:
    """One commission per name, written `ages[name]` days ago."""
    for name, days in ages.items():
        moment = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
        store = await open_store(database, writable=True, readers=1, clock=lambda m=moment: m)
        try:
            if name == next(iter(ages)):
                await store.write(accounts.create, None, "free", uid="acc_prune")
            await store.write(commissions.upsert, "acc_prune", "awin", [commission(name)])
        finally:
            await store.close()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> str:
    monkeypatch.setenv("EDGE_DATABASE", database)
    monkeypatch.setenv("EDGE_SECRET_FILE", str(tmp_path / "secret.key"))
    return database


def test_the_admin_command_deletes_what_is_past_the_retention(env, capsys, monkeypatch):
    asyncio.run(seed(env, {"d90": 90, "d40": 40, "d20": 20, "d0": 0}))
    assert main(["events", "prune", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["deleted"] == 2
    monkeypatch.setenv("EDGE_EVENTS_RETENTION_DAYS", "10")
    assert main(["events", "prune"]) == 0
    assert "1 events older than 10 days" in capsys.readouterr().out
    assert main(["events", "prune", "--retention-days", "30"]) == 0
    assert capsys.readouterr().out.startswith("0 events")

    async def remaining() -> list[str]:
        store = await open_store(env, readers=1)
        try:
            return await external_ids(store)
        finally:
            await store.close()

    assert asyncio.run(remaining()) == ["d0"]
    for days, message in (("0", "must be 1 or more"), ("3651", "must be at most 3650")):
        with pytest.raises(SystemExit) as refused:
            main(["events", "prune", "--retention-days", days])
        assert refused.value.code == 2 and message in capsys.readouterr().err


async def test_the_sync_workers_round_prunes_until_stopped(database):
    await seed(database, {"old": 31, "new": 2})
    store = await open_store(database, writable=True, readers=1)
    try:
        stop = asyncio.Event()
        rounds = asyncio.create_task(keep_retention(store, 30, stop, every=0.05))
        for _ in range(100):
            if await external_ids(store) == ["new"]:
                break
            await asyncio.sleep(0.02)
        assert await external_ids(store) == ["new"]
        stop.set()
        await asyncio.wait_for(rounds, 5)
        assert await prune_events(store, 1) == 1
    finally:
        await store.close()


async def test_a_closed_store_is_tried_again_later(database):
    store = await open_store(database, writable=True, readers=1)
    await store.close()
    assert await prune_events(store, 30) == 0


def test_the_sync_worker_takes_the_edges_retention(monkeypatch, capsys):
    assert parse_args([]).events_retention_days == 30
    monkeypatch.setenv("EDGE_EVENTS_RETENTION_DAYS", "45")
    assert parse_args([]).events_retention_days == 45
    assert parse_args(["--events-retention-days", "7"]).events_retention_days == 7
    for days in ("0", "3651"):
        with pytest.raises(SystemExit):
            parse_args(["--events-retention-days", days])
        assert "--events-retention-days must be 1 to 3650" in capsys.readouterr().err
