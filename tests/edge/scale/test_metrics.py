"""GET /metrics of a real `python -m edge --metrics-port`: the counters move by the traffic
made, on the metrics port only."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import socket
import time
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.edgeprocess import EDGE_START_TIMEOUT, bearer, start_edge, wait_healthy

from accounts import apikeys
from contract.version import VERSION
from edge import appkeys
from edge.app import create_app
from edge.config import ConfigError, load
from store import accounts, connections, open_store

LIMIT = 3
# Where the metrics ports are chosen from: below the kernel's ephemeral range, which every
# `bind(port 0)` and outgoing connection on the machine draws from. A port chosen there
# cannot be handed to another process between the test choosing it and the edge binding it.
PORT_FLOOR = 20000
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_ports(count: int) -> int:
    """The first of `count` consecutive free TCP ports outside the ephemeral range.

    The edge serves worker N's metrics on --metrics-port + N, so the test needs a run of
    ports, not one: a single free port from the kernel says nothing of the next one, which
    any other process may hold or be handed at any moment. Ports outside the ephemeral range
    are never handed out by the kernel; only a process that names one binds it, and the
    random start keeps concurrent runs of these tests apart."""
    low = int(EPHEMERAL_RANGE.read_text().split()[0]) if EPHEMERAL_RANGE.exists() else 32768
    rng = random.SystemRandom()
    for _ in range(200):
        first = rng.randrange(PORT_FLOOR, max(PORT_FLOOR + 1, low - count))
        if all(_bindable(first + i) for i in range(count)):
            return first
    raise AssertionError(f"no {count} consecutive free ports in {PORT_FLOOR}..{low}")


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a Prometheus text answer, by name and labels."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(scraped: dict, name: str, **labels: str) -> float:
    return scraped.get((name, frozenset(labels.items())), 0.0)


async def scrape(session: aiohttp.ClientSession, port: int) -> dict:
    async with session.get(f"http://127.0.0.1:{port}/metrics") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain; version=")
        return samples(await resp.text())


async def wait_scrapable(ports: list[int], within: float = EDGE_START_TIMEOUT) -> None:
    """Until every port answers GET /metrics: each worker starts on its own time, and the
    edge's /healthz answers as soon as the first one serves."""
    deadline = time.monotonic() + within
    async with aiohttp.ClientSession() as session:
        for port in ports:
            while True:
                try:
                    async with session.get(f"http://127.0.0.1:{port}/metrics") as resp:
                        if resp.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    pass
                assert time.monotonic() < deadline, f"nothing serves metrics on port {port}"
                await asyncio.sleep(0.05)


async def seed(database: str) -> str:
    """An account with one key and two connected networks, one of them synced."""
    store = await open_store(database, writable=True, readers=1)
    try:
        uid = await store.write(accounts.create, None, "free")
        issued = apikeys.generate_key()
        await store.write(
            accounts.create_key, uid, issued.key_hash, issued.prefix, "metrics", ("read",)
        )
        await store.write(connections.connect, uid, "awin", b"sealed")
        await store.write(connections.connect, uid, "impact", b"sealed")
        await store.write(
            connections.record_sync, uid, "awin", "ok", accounts=1, programs=2, transactions=3
        )
    finally:
        await store.close()
    return issued.key


async def test_metrics_count_the_traffic_on_their_own_port(tmp_path, edges, built_dist):
    database = str(tmp_path / "edge.sqlite3")
    key = await seed(database)
    metrics_port = free_ports(1)
    args = ["--dist", str(built_dist), "--database", database]
    args += ["--rate-limit-free", f"{LIMIT}/60", "--metrics-port", str(metrics_port)]
    edge = start_edge(tmp_path, args)
    edges.append(edge)
    await wait_healthy(edge)
    async with aiohttp.ClientSession() as session:
        before = await scrape(session, metrics_port)
        for _ in range(LIMIT + 2):  # LIMIT answered, 2 refused
            async with session.get(edge.base_url + "/v1/me", headers=bearer(key)) as resp:
                await resp.read()
        for path in ("/healthz", "/healthz", "/no/such/path"):
            async with session.get(edge.base_url + path) as resp:
                await resp.read()
        # The public port does not serve the metrics.
        async with session.get(edge.base_url + "/metrics") as resp:
            assert resp.status == 404
        after = await scrape(session, metrics_port)
    assert edge.stop() == 0

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    requests = "edge_requests_total"
    assert moved(requests, route="/v1/me", method="GET", status="200") == LIMIT
    assert moved(requests, route="/v1/me", method="GET", status="429") == 2
    assert moved(requests, route="/healthz", method="GET", status="200") == 2
    # By route template, never by raw path: a path no route has is one series.
    assert moved(requests, route="unmatched", method="GET", status="404") == 2
    assert not any("/no/such/path" in str(labels) for _, labels in after)
    assert moved("edge_rate_limited_total") == 2
    assert moved("edge_request_duration_seconds_count", route="/v1/me") == LIMIT + 2
    assert moved("edge_store_errors_total", operation="accounts.lookup_key") == 0

    build_id = (built_dist / "manifest.json").read_text().split('"buildId"')[1].split('"')[1]
    assert value(after, "edge_build_info", build_id=build_id) == 1
    assert value(after, "affdir_build_info", version=VERSION) == 1
    assert value(after, "edge_build_age_seconds") >= 0
    assert value(after, "edge_sync_connections", network="awin", status="ok") == 1
    assert value(after, "edge_sync_connections", network="impact", status="never") == 1


async def test_each_worker_serves_its_own_metrics_on_the_next_port(tmp_path, edges, redis_url):
    database = str(tmp_path / "edge.sqlite3")
    key = await seed(database)
    metrics_port = free_ports(2)
    args = ["--database", database, "--workers", "2", "--redis-url", redis_url]
    edge = start_edge(tmp_path, [*args, "--metrics-port", str(metrics_port)])
    edges.append(edge)
    await wait_healthy(edge)
    await wait_scrapable([metrics_port, metrics_port + 1])  # both workers up
    requests = 10
    connector = aiohttp.TCPConnector(force_close=True)  # spread over the workers
    async with aiohttp.ClientSession(connector=connector) as session:
        for _ in range(requests):
            async with session.get(edge.base_url + "/v1/me", headers=bearer(key)) as resp:
                await resp.read()
        scraped = [await scrape(session, metrics_port + i) for i in range(2)]
    assert edge.stop() == 0
    counted = [
        value(s, "edge_requests_total", route="/v1/me", method="GET", status="200") for s in scraped
    ]
    # Each worker counts what it answered; together, every request once.
    assert sum(counted) == requests


async def test_store_errors_are_counted_per_app(aiohttp_client, edge_config):
    # Two apps in one process: each has its own registry, so each counts its own.
    broken, healthy = (create_app(dataclasses.replace(edge_config, metrics_port=0)) for _ in "ab")
    clients = [await aiohttp_client(app) for app in (broken, healthy)]
    await broken[appkeys.STORE].close()  # every call now fails with StoreUnavailable
    stranger = bearer(apikeys.generate_key().key)  # never seen: the store must be asked
    for client in clients:
        resp = await client.get("/v1/me", headers=stranger)
        assert resp.status == 401  # cannot be verified (its table has no 503)
    async with aiohttp.ClientSession() as session:
        scraped = [await scrape(session, app[appkeys.METRICS].port) for app in (broken, healthy)]
    failed = [value(s, "edge_store_errors_total", operation="accounts.lookup_key") for s in scraped]
    assert failed[0] >= 1 and failed[1] == 0
    for s in scraped:
        assert value(s, "edge_requests_total", route="/v1/me", method="GET", status="401") == 1


def test_metrics_ports_past_65535_are_refused():
    with pytest.raises(ConfigError, match="worker 1 would serve its metrics on port 65536"):
        load(["--metrics-port", "65535", "--workers", "2", "--redis-url", "redis://r"], {})
