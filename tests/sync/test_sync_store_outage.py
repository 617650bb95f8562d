"""The worker and a real PostgreSQL store that is down at start or goes down mid-sync: it
waits, syncs once the store answers, and never records our outage as the network's error.

These tests stop and start the session's PostgreSQL server; `pg_url` starts it again for
the next test if one fails midway.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

from sync_support import CREDENTIALS, connection, decrypt, seal

from store import accounts, connections, open_store
from store.handle import Backoff, StoreHandle
from sync.model import Outcome
from sync.storage import AccountSyncStore
from sync.worker import Worker, WorkerConfig

ROOT = Path(__file__).resolve().parents[2]
NETWORK = "awin"
FAST = Backoff(first=0.1, factor=2.0, cap=0.5)


async def seed(pg_url: str) -> None:
    """The test account with its awin connection (sealed as the test decrypt expects)."""
    conn = connection(NETWORK)
    store = await open_store(pg_url, writable=True, timeout=10.0)
    try:
        await store.write(accounts.create, None, "pro", uid=conn.account_uid)
        await store.write(
            connections.connect, conn.account_uid, NETWORK, seal(conn, CREDENTIALS[NETWORK])
        )
    finally:
        await store.close()


async def stored_state(pg_url: str):
    store = await open_store(pg_url, timeout=10.0)
    try:
        return await store.read(connections.find, connection(NETWORK).account_uid, NETWORK)
    finally:
        await store.close()


async def until(condition, seconds: float = 60.0) -> None:
    async with asyncio.timeout(seconds):
        while True:
            if condition():
                return
            await asyncio.sleep(0.02)


def worker_on(handle: StoreHandle, settings, map_status, clock) -> Worker:
    config = WorkerConfig(worker_id="w1", poll_seconds=0.05, lease_seconds=600.0)
    return Worker(AccountSyncStore(handle, "w1"), decrypt, map_status, config, settings, clock)


async def test_a_worker_started_with_the_store_down_syncs_once_it_answers(
    pg_url, pg_server, networks, settings, map_status, clock
):
    await seed(pg_url)
    await asyncio.to_thread(pg_server.stop)
    handle = StoreHandle(partial(open_store, pg_url, writable=True, timeout=2.0), backoff=FAST)
    stop = asyncio.Event()
    try:
        await handle.start()  # unreachable: no error, retried in the background
        assert handle.store is None and handle.problem
        worker = worker_on(handle, settings, map_status, clock)
        running = asyncio.create_task(worker.run(stop))
        await asyncio.sleep(0.5)  # several polls, all met by the outage
        assert not running.done() and not worker.reports
        assert networks[NETWORK].seen == []
    finally:
        await asyncio.to_thread(pg_server.start)
    try:
        await until(lambda: worker.reports)
    finally:
        stop.set()
        await running
        await handle.close()
    assert [r.outcome for r in worker.reports] == [Outcome.OK]
    state = await stored_state(pg_url)
    assert (state.status, state.reason_code, state.lease_owner) == ("ok", None, None)
    assert state.transactions > 0


async def test_a_sync_cut_by_a_store_outage_runs_again_and_is_not_an_error(
    pg_url, pg_server, networks, settings, map_status, clock
):
    await seed(pg_url)
    handle = StoreHandle(partial(open_store, pg_url, writable=True, timeout=2.0), backoff=FAST)
    await handle.start()
    worker = worker_on(handle, settings, map_status, clock)
    networks[NETWORK].delay = 2.0  # the store goes down while the network answers
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await until(lambda: networks[NETWORK].seen)
        await asyncio.to_thread(pg_server.stop)
        await until(lambda: worker.interrupted)  # its next write met the outage
        assert not worker.reports  # nothing recorded for a run our outage cut short
    finally:
        await asyncio.to_thread(pg_server.start)
    networks[NETWORK].delay = 0
    try:
        await until(lambda: worker.reports)  # run again without waiting for the interval
    finally:
        stop.set()
        await running
        await handle.close()
    assert [r.outcome for r in worker.reports] == [Outcome.OK]
    assert worker.interrupted == {}
    state = await stored_state(pg_url)
    assert (state.status, state.reason_code, state.lease_owner) == ("ok", None, None)


def test_python_m_sync_starts_and_waits_while_the_store_is_down(tmp_path, pg_url, pg_server):
    env = {**os.environ, "EDGE_DATABASE": pg_url, "EDGE_SECRET_KEY": "sync-test-secret-" + "s" * 32}
    pg_server.stop()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sync", "--poll-seconds", "0.05"],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            lines = [proc.stderr.readline() for _ in range(2)]
            assert "account store unreachable" in lines[0] and "retrying" in lines[0], lines
            assert "started" in lines[1], lines
            assert proc.poll() is None  # waiting, not gone
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stderr.close()
    finally:
        pg_server.start()
