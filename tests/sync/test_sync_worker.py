"""The long-lived worker: bounded concurrency, leases, no network holding up the others,
graceful stop; and `python -m sync` as a process."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.clock import FakeClock
from sync_support import NETWORKS, FakeNetworks, MemoryStore, seal

from sync.model import Outcome
from sync.worker import Worker, WorkerConfig

ROOT = Path(__file__).resolve().parents[2]


class CountingStore(MemoryStore):
    """Counts connections held at once (claimed and not yet released)."""

    held: int = 0
    most_held: int = 0

    async def claim(self, conn, worker_id, lease_seconds):
        claimed = await super().claim(conn, worker_id, lease_seconds)
        if claimed:
            self.held += 1
            self.most_held = max(self.most_held, self.held)
        return claimed

    async def release(self, conn, worker_id):
        self.held -= 1
        await super().release(conn, worker_id)


def counting(store: MemoryStore) -> CountingStore:
    out = CountingStore(store.clock)
    out.connections, out.credentials = store.connections, store.credentials
    return out


async def until(condition, seconds: float = 10.0) -> None:
    async with asyncio.timeout(seconds):
        while True:
            if condition():
                return
            await asyncio.sleep(0.01)


def worker(store, settings, map_status, clock, **config) -> Worker:
    cfg = WorkerConfig(worker_id="w1", poll_seconds=0.01, **config)
    # Sealing what a network rotates, as `python -m sync` does.
    return Worker(store, _decrypt(), map_status, cfg, settings, clock, seal=seal)


def _decrypt():
    from sync_support import decrypt

    return decrypt


async def test_every_connection_syncs_with_bounded_concurrency_and_a_slow_network_holds_none(
    networks: FakeNetworks, store, settings, map_status, clock: FakeClock
):
    shared = counting(store)
    networks["kwanko"].delay = 0.4
    w = worker(shared, settings, map_status, clock, concurrency=2)
    stop = asyncio.Event()
    running = asyncio.create_task(w.run(stop))
    await until(lambda: len(shared.reports) == len(NETWORKS))
    stop.set()
    await running
    assert shared.most_held == 2
    assert {c.network for c, _ in shared.reports} == set(NETWORKS)
    assert all(r.outcome is Outcome.OK for _, r in shared.reports)
    # The slow network finished last: the others went through the other slot meanwhile.
    assert shared.reports[-1][0].network == "kwanko"
    assert shared.leases == {}


async def test_a_connection_leased_by_another_worker_is_left_alone(
    networks, store, settings, map_status, clock
):
    # w2 is at work and renews its lease as it goes: the lease outlasts this whole pass
    # (in which one-call-a-minute networks take hours of the fake clock).
    store.leases[("acc_sync_test", "awin")] = ("w2", clock.monotonic() + 30 * 86400)
    w = worker(store, settings, map_status, clock, concurrency=4)
    stop = asyncio.Event()
    running = asyncio.create_task(w.run(stop))
    await until(lambda: len(store.reports) == len(NETWORKS) - 1)
    stop.set()
    await running
    assert "awin" not in {c.network for c, _ in store.reports}
    assert networks["awin"].seen == []
    assert store.leases[("acc_sync_test", "awin")][0] == "w2"


async def test_stopping_cancels_a_sync_past_the_grace_period_and_releases_its_lease(
    networks, store, settings, map_status, clock
):
    store.connections = [c for c in store.connections if c.network == "effiliation"]
    networks["effiliation"].delay = 30
    w = worker(store, settings, map_status, clock, concurrency=1, grace_seconds=0.1)
    stop = asyncio.Event()
    running = asyncio.create_task(w.run(stop))
    await until(lambda: networks["effiliation"].seen)
    stop.set()
    async with asyncio.timeout(5):
        await running
    assert store.leases == {}
    assert store.reports == []  # cut off: nothing recorded, nothing half-written


@pytest.mark.process
def test_python_m_sync_stops_cleanly_on_sigterm(tmp_path, transcript):
    env = {
        **os.environ,
        "EDGE_DATABASE": str(tmp_path / "store.sqlite3"),
        "EDGE_SECRET_KEY": "sync-test-secret-" + "s" * 32,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "sync", "--poll-seconds", "0.05"],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert "started" in line, line
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        transcript += [line, proc.stderr.read()]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({"EDGE_SECRET_KEY": "", "EDGE_SECRET_FILE": "{tmp}/nope.key"}, (), "no secret at"),
        ({"EDGE_SECRET_KEY": "short"}, (), "EDGE_SECRET_KEY must be at least 32"),
        ({}, ("--base-url", "nowhere=http://x"), "--base-url expects NETWORK=URL"),
        ({}, ("--concurrency", "0"), "--concurrency and --backfill-days must be at least 1"),
        # A secret on argv shows in ps and shell history: refused, never echoed.
        (
            {},
            ("--secret-key", "argv-secret-" + "a" * 32),
            "--secret-key takes no value on the command line, where `ps` and shell history "
            "show it: set EDGE_SECRET_KEY, or name the edge's secret file with --secret-file",
        ),
        ({}, ("--secret-key=argv-secret-" + "a" * 32,), "--secret-key takes no value"),
        (
            {},
            ("--database", "postgresql://u:argv-secret-x@127.0.0.1:1/db"),
            "--database: a password in the URL shows in `ps`",
        ),
    ],
)
@pytest.mark.process
def test_python_m_sync_refuses_a_bad_setting_in_one_line(tmp_path, transcript, env, args, message):
    environ = {
        **os.environ,
        "EDGE_DATABASE": str(tmp_path / "store.sqlite3"),
        "EDGE_SECRET_KEY": "sync-test-secret-" + "s" * 32,
        **{k: val.format(tmp=tmp_path) for k, val in env.items()},
    }
    out = subprocess.run(
        [sys.executable, "-m", "sync", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        env=environ,
    )
    transcript += [out.stdout, out.stderr]
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "argv-secret-" not in out.stderr
