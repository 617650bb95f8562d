"""Real `python -m edge` processes: one limit across processes and workers through Redis,
and the worker supervisor (restart, reload, graceful stop, start-up failure)."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import aiohttp
import pytest
from support.edgeprocess import (
    ROOT,
    EdgeProcess,
    alive,
    bearer,
    children,
    running,
    seed_key,
    start_edge,
    wait_healthy,
)
from support.slowedge import SLOW_STARTED

from edge.workers import MAX_RESTART_DELAY, SHUTDOWN_TIMEOUT, restart_delay

LIMIT = 12
# Several workers need a Redis URL; these tests stop before any worker would use it.
UNREACHABLE_REDIS = "redis://127.0.0.1:9/0"


async def count_allowed(urls: list[str], key: str, requests: int) -> dict[int, int]:
    """Statuses of `requests` GET /v1/me spread over `urls`, each on a new connection (so
    SO_REUSEPORT spreads them over the workers too)."""
    statuses: dict[int, int] = {}
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(n: int) -> int:
            async with session.get(urls[n % len(urls)] + "/v1/me", headers=bearer(key)) as resp:
                await resp.read()
                return resp.status

        for status in await asyncio.gather(*(one(n) for n in range(requests))):
            statuses[status] = statuses.get(status, 0) + 1
    return statuses


async def test_one_limit_across_two_edge_processes(tmp_path, edges, redis_url):
    database = str(tmp_path / "edge.sqlite3")
    key = await seed_key(database)
    args = ["--database", database, "--redis-url", redis_url, "--rate-limit-free", f"{LIMIT}/60"]
    edges.extend(start_edge(tmp_path, args) for _ in range(2))
    await asyncio.gather(*(wait_healthy(edge) for edge in edges))
    statuses = await count_allowed([e.base_url for e in edges], key, 3 * LIMIT)
    assert statuses == {200: LIMIT, 429: 2 * LIMIT}
    for edge in edges:
        assert edge.stop() == 0


async def test_one_limit_across_the_workers_of_one_edge(tmp_path, edges, redis_url, built_dist):
    database = str(tmp_path / "edge.sqlite3")
    key = await seed_key(database)
    args = [
        "--workers",
        "2",
        "--dist",
        str(built_dist),
        "--database",
        database,
        "--redis-url",
        redis_url,
        "--rate-limit-free",
        f"{LIMIT}/60",
    ]
    edge = start_edge(tmp_path, args)
    edges.append(edge)
    await wait_healthy(edge)
    assert len(children(edge.process.pid)) == 2
    statuses = await count_allowed([edge.base_url], key, 3 * LIMIT)
    assert statuses == {200: LIMIT, 429: 2 * LIMIT}
    async with aiohttp.ClientSession() as session, session.get(edge.base_url + "/readyz") as resp:
        assert resp.status == 200
    assert edge.stop() == 0
    assert "without --redis-url" not in edge.log_text()


async def wait_for(predicate, within: float = 15.0, edge: EdgeProcess | None = None) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"condition not reached in time\n{edge.log_text() if edge else ''}")


async def test_the_supervisor_restarts_reloads_and_stops(tmp_path, edges, redis_url):
    database = str(tmp_path / "edge.sqlite3")
    key = await seed_key(database)
    edge = start_edge(
        tmp_path, ["--workers", "2", "--database", database, "--redis-url", redis_url]
    )
    edges.append(edge)
    await wait_healthy(edge)
    await wait_for(lambda: "2 workers serving" in edge.log_text(), edge=edge)
    workers = children(edge.process.pid)
    assert len(workers) == 2

    # SIGHUP reaches the workers (they reload the build) and kills none of them.
    edge.process.send_signal(signal.SIGHUP)
    await asyncio.sleep(0.5)
    assert children(edge.process.pid) == workers

    # A crashed worker is replaced; the port keeps answering meanwhile.
    victim = min(workers)
    os.kill(victim, signal.SIGKILL)
    await wait_for(lambda: len(children(edge.process.pid) - {victim}) == 2, edge=edge)
    assert victim not in children(edge.process.pid)
    assert "exited with status -9" in edge.log_text()
    statuses = await count_allowed([edge.base_url], key, 10)
    assert statuses == {200: 10}

    # SIGTERM: the workers stop gracefully, then the supervisor, with status 0.
    all_workers = children(edge.process.pid)
    started = time.monotonic()
    assert edge.stop() == 0
    assert time.monotonic() - started < 10
    assert not running(all_workers)


async def test_orphaned_workers_stop_by_themselves(tmp_path, edges, redis_url):
    database = str(tmp_path / "e.sqlite3")
    edge = start_edge(
        tmp_path, ["--workers", "2", "--database", database, "--redis-url", redis_url]
    )
    edges.append(edge)
    await wait_healthy(edge)
    workers = children(edge.process.pid)
    assert workers, "the supervisor has no worker to orphan"
    edge.process.kill()  # SIGKILL: the supervisor cannot forward anything
    edge.process.wait()
    # Generous: under a loaded CI machine a worker may still be starting when orphaned.
    await wait_for(lambda: not alive(workers), 30)


async def test_a_worker_that_cannot_start_stops_the_edge(tmp_path, edges):
    # A store that cannot be opened: every worker fails during start-up.
    (tmp_path / "file").write_text("not a directory")
    args = ["--workers", "2", "--database", str(tmp_path / "file" / "x.db")]
    edge = start_edge(tmp_path, [*args, "--redis-url", UNREACHABLE_REDIS])
    edges.append(edge)
    status = await asyncio.to_thread(edge.process.wait, 30)
    assert status == 1
    assert "during start-up" in edge.log_text()


def test_a_taken_port_is_refused_at_once(tmp_path, edges):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        edge = start_edge(tmp_path, ["--workers", "2", "--redis-url", UNREACHABLE_REDIS], port=port)
        edges.append(edge)
        assert edge.process.wait(30) != 0
    assert "Address already in use" in edge.log_text()


@pytest.mark.parametrize(
    ("failures", "delay"), [(0, 0.0), (1, 0.5), (2, 1.0), (3, 2.0), (20, MAX_RESTART_DELAY)]
)
def test_restart_delay_backs_off(failures, delay):
    assert restart_delay(failures) == delay


@pytest.mark.process
def test_several_workers_without_redis_are_refused(tmp_path):
    edge = start_edge(tmp_path, ["--workers", "2"])
    assert edge.process.wait(30) == 2
    assert "2 workers need --redis-url" in edge.log_text()


async def test_a_stop_signal_during_start_up_stops_cleanly(tmp_path, edges):
    # A PostgreSQL that accepts and never answers: the edge is still starting when SIGINT
    # comes. It must stop as cleanly as a running edge, not end in a KeyboardInterrupt
    # traceback.
    connected = asyncio.Event()

    async def silent(reader, writer):
        connected.set()  # the edge is up to its store's connection: past its start-up imports
        await reader.read()  # until the edge hangs up: it never gets an answer
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        args = ["--database", f"postgresql://u@127.0.0.1:{port}/db", "--store-timeout", "20"]
        edge = start_edge(tmp_path, args)
        edges.append(edge)
        while not connected.is_set():
            assert edge.process.poll() is None, edge.log_text()
            await asyncio.sleep(0.02)
        assert edge.process.poll() is None, edge.log_text()
        started = time.monotonic()
        edge.process.send_signal(signal.SIGINT)
        status = await asyncio.to_thread(edge.process.wait, 15)
    finally:
        server.close()
        await server.wait_closed()
    assert status == 0 and time.monotonic() - started < 10, edge.log_text()
    assert "Traceback" not in edge.log_text() and "stopping" in edge.log_text()


@pytest.mark.parametrize(("access_log", "written"), [("true", True), ("false", False)])
async def test_the_access_log_follows_its_own_setting_not_the_log_level(
    tmp_path, edges, access_log, written
):
    # --log-level WARNING silenced the access log's INFO lines though --access-log was on.
    args = ["--log-level", "WARNING", "--access-log", access_log]
    edge = start_edge(tmp_path, [*args, "--database", str(tmp_path / "e.sqlite3")])
    edges.append(edge)
    await wait_healthy(edge)
    assert edge.stop() == 0
    assert ('"path":"/healthz"' in edge.log_text()) is written, edge.log_text()


SLOW_EDGE = (str(ROOT / "tests" / "support" / "slowedge.py"),)


async def slow_request(edge: EdgeProcess, seconds: float) -> float:
    """GET /slow?s=SECONDS; how long until the answer or the connection's end."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", edge.port)
    writer.write(f"GET /slow?s={seconds} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
    await writer.drain()
    await reader.read(1)  # an answer, or b"" when the edge closes the connection
    writer.close()
    return time.monotonic() - started


@pytest.mark.parametrize("workers", [1, 2])
async def test_a_stopping_edge_is_done_within_its_shutdown_timeout(
    tmp_path, edges, workers, request
):
    # aiohttp waits its shutdown timeout for a request in flight, then as long again: left
    # to itself a worker could be SIGKILLed at 15 s before its cleanups, or one process take
    # 21 s.
    args = ["--database", str(tmp_path / "e.sqlite3"), "--workers", str(workers)]
    if workers > 1:
        args += ["--redis-url", request.getfixturevalue("shared_redis").url]
    edge = start_edge(tmp_path, args, program=SLOW_EDGE)
    edges.append(edge)
    await wait_healthy(edge)
    in_flight = asyncio.ensure_future(slow_request(edge, 60))
    await wait_for(lambda: SLOW_STARTED in edge.log_text(), edge=edge)
    started = time.monotonic()
    edge.process.send_signal(signal.SIGTERM)
    status = await asyncio.to_thread(edge.process.wait, 30)
    took = time.monotonic() - started
    await asyncio.wait_for(in_flight, 5)
    assert status == 0 and took < SHUTDOWN_TIMEOUT + 2, (took, edge.log_text())
    assert "killing" not in edge.log_text()


async def test_a_second_stop_signal_quits_a_single_edge_at_once(tmp_path, edges):
    edge = start_edge(tmp_path, ["--database", str(tmp_path / "e.sqlite3")], program=SLOW_EDGE)
    edges.append(edge)
    await wait_healthy(edge)
    in_flight = asyncio.ensure_future(slow_request(edge, 60))
    await wait_for(lambda: SLOW_STARTED in edge.log_text(), edge=edge)
    edge.process.send_signal(signal.SIGINT)
    await asyncio.sleep(1)
    started = time.monotonic()
    edge.process.send_signal(signal.SIGINT)
    status = await asyncio.to_thread(edge.process.wait, 30)
    assert status == 128 + signal.SIGINT and time.monotonic() - started < 3, edge.log_text()
    assert "second stop signal: quitting now" in edge.log_text()
    await asyncio.wait_for(in_flight, 5)
