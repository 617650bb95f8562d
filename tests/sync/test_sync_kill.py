"""`python -m sync` killed (SIGKILL) in the middle of a sync, then started again: the store
ends as an uninterrupted run leaves it, with nothing lost nor duplicated, and the dead
worker's lease lets the next worker in once it ends. On a SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from sync_support import ACCOUNT, SECRET, FakeNetworks, expected, seed_store

from accounts.keyring import Keyring
from store import AccountStore, CommissionQuery, commissions, connections, open_store

ROOT = Path(__file__).resolve().parents[2]
# Real worker processes, killed and started again.
pytestmark = pytest.mark.process
NETWORK = "impact"  # 45-day windows, 500 requests an hour: a 400-day backfill never waits
KILL_AT = 3  # the worker dies while the third window's request is in flight
LEASE_SECONDS = 8


class Worker:
    """One `python -m sync` process, its output kept in a file."""

    def __init__(self, database: str, base_url: str, worker_id: str, log: Path) -> None:
        self.argv = [
            sys.executable,
            "-m",
            "sync",
            "--database",
            database,
            "--base-url",
            f"{NETWORK}={base_url}/{NETWORK}",
            "--worker-id",
            worker_id,
            "--poll-seconds",
            "0.1",
            "--lease-seconds",
            str(LEASE_SECONDS),
            "--backfill-days",
            "400",
            "--interval-minutes",
            "600",
        ]
        self.log = log
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> int:
        env = {**os.environ, "EDGE_SECRET_KEY": SECRET}
        env.pop("EDGE_SECRET_FILE", None)
        with self.log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv, cwd=ROOT, env=env, stdout=out, stderr=out
            )
        return self.process.pid

    async def stop(self) -> None:
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                await self.process.wait()


async def seeded(database: str, keyring: Keyring) -> AccountStore:
    store = await open_store(database, writable=True, readers=1, timeout=10.0)
    await seed_store(store, keyring, networks=(NETWORK,))
    return store


async def finished(store: AccountStore, worker: Worker) -> str:
    """The connection's recorded outcome once the worker recorded one."""
    for _ in range(1200):
        view = await store.read(connections.find, ACCOUNT, NETWORK)
        if view is not None and view.status != "never" and view.lease_owner is None:
            return view.status
        assert worker.process is not None and worker.process.returncode is None
        await asyncio.sleep(0.05)
    raise AssertionError("the worker never finished its sync")


async def rows(store: AccountStore) -> dict[str, tuple]:
    found = await store.read(
        commissions.page, CommissionQuery(ACCOUNT, limit=1000, network=NETWORK)
    )
    ids = [r.external_id for r in found]
    assert len(ids) == len(set(ids)), "a commission is stored twice"
    return {
        r.external_id: (
            r.status,
            r.raw_status,
            r.commission_amount,
            r.sale_amount,
            r.currency,
            r.transacted_at,
            r.sub_id,
            r.program_external_id,
        )
        for r in found
    }


async def test_a_worker_killed_mid_sync_then_restarted_stores_what_an_uninterrupted_run_does(
    database: str,
    tmp_path: Path,
    networks: FakeNetworks,
    keyring: Keyring,
    transcript: list[str],
):
    log = tmp_path / "workers.log"
    base_url = networks.url  # type: ignore[attr-defined]

    # The reference: one uninterrupted run on its own SQLite file.
    reference_store = await seeded(str(tmp_path / "reference.sqlite3"), keyring)
    try:
        reference = Worker(str(tmp_path / "reference.sqlite3"), base_url, "ref", log)
        await reference.start()
        try:
            assert await finished(reference_store, reference) == "ok"
        finally:
            await reference.stop()
        wanted = await rows(reference_store)
    finally:
        await reference_store.close()
    assert set(wanted) == set(expected(NETWORK))
    networks[NETWORK].seen.clear()

    store = await seeded(database, keyring)
    try:
        first = Worker(database, base_url, "killed", log)

        def kill(st) -> None:
            if len(st.seen) == KILL_AT and first.process is not None:
                os.kill(first.process.pid, signal.SIGKILL)

        networks[NETWORK].on_request = kill
        await first.start()
        assert first.process is not None
        async with asyncio.timeout(60):
            assert await first.process.wait() == -signal.SIGKILL
        networks[NETWORK].on_request = None
        dead = await store.read(connections.find, ACCOUNT, NETWORK)
        assert dead is not None
        assert (dead.status, dead.lease_owner) == ("never", "killed")
        assert dead.position is not None, "no window was committed before the kill"
        before = await rows(store)
        assert len(before) < len(wanted), "the kill came after the last row"

        # A new worker: it may take the connection only once the dead one's lease ended.
        second = Worker(database, base_url, "restarted", log)
        await second.start()
        try:
            assert await finished(store, second) == "ok"
        finally:
            await second.stop()
        after = await rows(store)
    finally:
        await store.close()
    transcript.append(log.read_text("utf-8"))
    assert after == wanted
    assert {k: after[k] for k in before} == before
