"""A real `python -m sync` with `--log-format json --metrics-port`: its log lines are JSON
naming the connection and never a credential, its metrics count what a sync against the
loopback fake networks did, and its /healthz fails once the worker stops making progress."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.redisserver import free_port
from sync_support import ACCOUNT, PLANTED, SECRET, Canned, FakeNetworks, expected, seed_store

from accounts.keyring import Keyring
from contract.version import VERSION
from store import AccountStore, connections, open_store

ROOT = Path(__file__).resolve().parents[2]
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


class SyncProcess:
    """One `python -m sync` process, its stderr kept in a file."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.argv = [sys.executable, "-m", "sync", *argv]
        self.log = log
        self.env = {**os.environ, "EDGE_SECRET_KEY": SECRET, **(env or {})}
        self.env.pop("EDGE_SECRET_FILE", None)
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv, cwd=ROOT, env=self.env, stdout=out, stderr=out
            )

    async def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(sig)
        async with asyncio.timeout(30):
            return await self.process.wait()

    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def text(self) -> str:
        return self.log.read_text("utf-8")


def worker_args(database: str, base_url: str, networks: tuple[str, ...], port: int) -> list[str]:
    args = ["--database", database, "--worker-id", "observed", "--backfill-days", "400"]
    args += ["--metrics-port", str(port), "--log-format", "json", "--interval-minutes", "600"]
    for network in networks:
        args += ["--base-url", f"{network}={base_url}/{network}"]
    return args


@pytest.fixture
async def seeded(tmp_path: Path, keyring: Keyring) -> AsyncIterator[tuple[str, AccountStore]]:
    """A SQLite account store with the test account connected to awin and impact."""
    database = str(tmp_path / "sync.sqlite3")
    store = await open_store(database, writable=True, readers=1, timeout=10.0)
    await seed_store(store, keyring, networks=("awin", "impact"))
    try:
        yield database, store
    finally:
        await store.close()


async def get(session: aiohttp.ClientSession, url: str) -> tuple[int, bytes, str]:
    async with session.get(url) as resp:
        return resp.status, await resp.read(), resp.headers.get("Content-Type", "")


async def until_listening(session: aiohttp.ClientSession, port: int, worker: SyncProcess) -> None:
    for _ in range(300):
        assert worker.alive(), worker.text()
        try:
            await get(session, f"http://127.0.0.1:{port}/healthz")
            return
        except aiohttp.ClientConnectionError:
            await asyncio.sleep(0.05)
    raise AssertionError("the metrics port never answered")


def samples(text: str) -> Samples:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(scraped: Samples, name: str, **labels: str) -> float | None:
    return scraped.get((name, frozenset(labels.items())))


async def outcomes(store: AccountStore, networks: tuple[str, ...], worker: SyncProcess) -> dict:
    """Each network's recorded outcome, once all of them have one and no lease is held."""
    for _ in range(600):
        views = {v.network: v for v in await store.read(connections.find_all, ACCOUNT)}
        if all(views[n].status != "never" and views[n].lease_owner is None for n in networks):
            return {n: views[n].status for n in networks}
        assert worker.alive(), worker.text()
        await asyncio.sleep(0.05)
    raise AssertionError("the worker never finished its syncs")


@pytest.mark.process
async def test_a_sync_is_counted_in_the_metrics_and_logged_as_json_without_credentials(
    seeded, networks: FakeNetworks, tmp_path: Path, transcript: list[str]
):
    database, store = seeded
    port = free_port()
    # awin: asked to wait once (429, Retry-After 1), then answers; impact: refuses the key.
    networks["awin"].inject.append(Canned(429, b"slow down", {"Retry-After": "1"}))
    networks["impact"].reject_auth = True
    synced = ("awin", "impact")
    worker = SyncProcess(
        worker_args(database, networks.url, synced, port),  # type: ignore[attr-defined]
        tmp_path / "worker.log",
    )
    await worker.start()
    try:
        async with aiohttp.ClientSession() as session:
            await until_listening(session, port, worker)
            assert await outcomes(store, synced, worker) == {"awin": "ok", "impact": "auth_failed"}
            status, body, ctype = await get(session, f"http://127.0.0.1:{port}/metrics")
            assert status == 200 and ctype.startswith("text/plain; version=")
            scraped = samples(body.decode())
            status, health, ctype = await get(session, f"http://127.0.0.1:{port}/healthz")
    finally:
        assert await worker.stop() == 0
        transcript.append(worker.text())

    assert (status, ctype) == (200, "application/json")
    answer = orjson.loads(health)
    assert (answer["status"], answer["version"], answer["running"]) == ("ok", VERSION, 0)

    rows = len(expected("awin"))
    assert rows > 0
    assert value(scraped, "affdir_build_info", version=VERSION) == 1
    assert value(scraped, "affdir_sync_runs_total", network="awin", outcome="ok") == 1
    assert value(scraped, "affdir_sync_runs_total", network="impact", outcome="auth_failed") == 1
    assert value(scraped, "affdir_sync_run_duration_seconds_count", network="awin") == 1
    assert (
        value(scraped, "affdir_sync_rows_written_total", network="awin", change="inserted") == rows
    )
    assert value(scraped, "affdir_sync_rows_written_total", network="awin", change="updated") == 0
    assert value(scraped, "affdir_sync_requests_total", network="awin", status="429") == 1
    assert (
        value(scraped, "affdir_sync_requests_total", network="awin", status="200")
        == len(networks["awin"].seen) - 1
    )
    assert value(scraped, "affdir_sync_requests_total", network="impact", status="401") == 1
    assert value(scraped, "affdir_sync_retries_total", network="awin", cause="rate_limited") == 1
    waits = "affdir_sync_rate_limit_wait_seconds"
    assert value(scraped, f"{waits}_count", network="awin", cause="retry_after") == 1
    assert value(scraped, f"{waits}_sum", network="awin", cause="retry_after") == 1.0
    assert value(scraped, "affdir_sync_running") == 0
    # awin just synced ok; impact never did: counted from the worker's start.
    age = "affdir_sync_last_success_age_seconds"
    awin_age = value(scraped, age, account=ACCOUNT, network="awin")
    impact_age = value(scraped, age, account=ACCOUNT, network="impact")
    assert awin_age is not None and impact_age is not None
    assert 0 <= awin_age < impact_age < 60
    assert 0 <= (value(scraped, "affdir_sync_progress_age_seconds") or 0) < 60
    assert value(scraped, "process_cpu_seconds_total") is not None  # the standard ones
    names = {name for name, _ in scraped}
    own = {n for n in names if not n.startswith(("process_", "python_"))}
    assert all(n.startswith("affdir_sync_") or n == "affdir_build_info" for n in own), own

    text = worker.text()
    assert not [v for v in PLANTED if v in text]
    lines = [orjson.loads(line) for line in text.splitlines()]  # every line is one object
    assert all({"ts", "level", "logger", "message"} <= set(line) for line in lines)
    for network in synced:
        about = [line for line in lines if line.get("network") == network]
        assert any(line["logger"] == "sync.runner" for line in about), lines
        assert all(line["connection"] == f"{ACCOUNT}/{network}" for line in about)
        assert all(line["account"] == ACCOUNT for line in about)
    # Every line written while a sync ran names its connection.
    retry = [line for line in lines if "waiting" in line["message"]]
    assert retry and all(line.get("network") == "awin" for line in retry)


@pytest.mark.process
async def test_healthz_fails_once_a_hanging_network_holds_every_slot(
    seeded, networks: FakeNetworks, tmp_path: Path, transcript: list[str]
):
    database, _ = seeded
    port = free_port()
    networks["awin"].delay = 120  # no answer within the test
    args = worker_args(database, networks.url, ("awin",), port)  # type: ignore[attr-defined]
    args += ["--concurrency", "1", "--poll-seconds", "0.1", "--stall-seconds", "1.5"]
    worker = SyncProcess(args, tmp_path / "worker.log")
    await worker.start()
    try:
        async with aiohttp.ClientSession() as session:
            await until_listening(session, port, worker)
            for _ in range(200):
                status, body, _ = await get(session, f"http://127.0.0.1:{port}/healthz")
                if status == 503:
                    break
                await asyncio.sleep(0.05)
            assert status == 503, body
            answer = orjson.loads(body)
            assert answer["status"] == "stalled" and answer["version"] == VERSION
            assert answer["secondsSinceProgress"] > answer["stallSeconds"] == 1.5
            assert answer["running"] == 1
            status, text, _ = await get(session, f"http://127.0.0.1:{port}/metrics")
            assert (value(samples(text.decode()), "affdir_sync_progress_age_seconds") or 0) > 1.5
            assert value(samples(text.decode()), "affdir_sync_running") == 1
    finally:
        # The sync never ends by itself: no graceful stop to wait for.
        await worker.stop(signal.SIGKILL)
        transcript.append(worker.text())


@pytest.mark.process
async def test_healthz_stays_ok_while_an_idle_worker_polls(tmp_path: Path, transcript: list[str]):
    port = free_port()
    args = ["--database", str(tmp_path / "empty.sqlite3"), "--metrics-port", str(port)]
    args += ["--poll-seconds", "0.1", "--stall-seconds", "1"]
    worker = SyncProcess(args, tmp_path / "worker.log", {"SYNC_LOG_FORMAT": "text"})
    await worker.start()
    try:
        async with aiohttp.ClientSession() as session:
            await until_listening(session, port, worker)
            await asyncio.sleep(2)  # twice --stall-seconds: the polls are its progress
            status, body, _ = await get(session, f"http://127.0.0.1:{port}/healthz")
            assert status == 200, body
            assert orjson.loads(body)["status"] == "ok"
    finally:
        assert await worker.stop() == 0
        transcript.append(worker.text())
    # SYNC_LOG_FORMAT=text: plain lines, not JSON.
    assert " INFO sync: affdir-sync " + VERSION in worker.text()


@pytest.mark.parametrize(
    ("args", "env", "error"),
    [
        (["--log-format", "xml"], {}, "--log-format: invalid choice"),
        ([], {"SYNC_LOG_FORMAT": "xml"}, "SYNC_LOG_FORMAT must be one of: json, text"),
        (["--metrics-port", "70000"], {}, "--metrics-port must be a port number"),
        (["--stall-seconds", "0"], {}, "--stall-seconds must be a positive number"),
    ],
)
@pytest.mark.process
async def test_bad_observability_settings_are_refused(args, env, error, tmp_path: Path):
    worker = SyncProcess(args, tmp_path / "worker.log", env)
    await worker.start()
    assert worker.process is not None
    async with asyncio.timeout(30):
        assert await worker.process.wait() == 2
    assert error in worker.text()


@pytest.mark.process
async def test_a_taken_metrics_port_stops_the_worker_with_a_reason(tmp_path: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["--database", str(tmp_path / "w.sqlite3"), "--metrics-port", str(port)]
        worker = SyncProcess(args, tmp_path / "worker.log")
        await worker.start()
        assert worker.process is not None
        async with asyncio.timeout(30):
            assert await worker.process.wait() == 1
    assert "cannot serve the metrics port" in worker.text()
