"""Prometheus metrics of one edge process, served on their own port (`--metrics-port`).

- Every app has its own `CollectorRegistry` (`appkeys.METRICS`), never prometheus-client's
  global one: several apps in one process (the tests) each count their own traffic.
- Requests are counted by route template (`/v1/programs/{slug}`, not the raw path: one
  series per route, not one per URL a client makes up) and status, with a latency
  histogram; 429 answers are also a counter of their own.
- What is read rather than counted is collected at scrape time: the affdir version
  (`affdir_build_info`, the sync worker's too), the build served and its age, whether the rate limiter is counting per process because Redis failed, and the
  sync outcomes per network as the account store records them.
- Store errors count every `StoreError` a store call raised while serving, by operation
  (the store's two doors are wrapped by `CountingStore` when metrics are on).
- `/metrics` is served by a small app of its own on `--metrics-host:--metrics-port`, never
  on the public port. With several workers each serves its own, on `--metrics-port` plus
  its index (docs/deploy.md): each worker is one scrape target, so nothing is shared
  between processes and a restarted worker starts its counters from zero, which
  Prometheus' `rate()` expects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter as Tally
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from contract.process import serve_side_app
from contract.version import BUILD_INFO_METRIC, VERSION
from store import connections
from store.base import StoreError
from store.core import AccountStore, Op
from store.publicids import PublicIds

log = logging.getLogger("edge.metrics")

T = TypeVar("T")
P = ParamSpec("P")

METRICS_PATH = "/metrics"
UNMATCHED = "unmatched"  # the route label of a request no route matched (a 404, say)
SYNC_READ_TIMEOUT = 2.0  # seconds a scrape waits for the store's connection list
# Latency buckets (seconds): the API answers most requests from memory in well under a
# millisecond, store-backed ones in milliseconds; the top buckets catch timeouts.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class ReadState:
    """What the scrape-time collector reads: set by the app's lifecycle as it starts."""

    build: Callable[[], tuple[str, float] | None] = lambda: None  # (build id, loaded_at)
    redis_degraded: Callable[[], bool | None] = lambda: None  # None: no Redis configured
    sync_outcomes: Tally[tuple[str, str]] = field(default_factory=Tally)  # (network, status)


class ReadCollector(Collector):
    """The gauges read at scrape time from `ReadState`."""

    def __init__(self, state: ReadState, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.clock = clock

    def collect(self) -> Iterator[Metric]:
        version = GaugeMetricFamily(
            BUILD_INFO_METRIC, "The affdir version this process runs (1).", labels=["version"]
        )
        version.add_metric([VERSION], 1)
        yield version
        info = GaugeMetricFamily(
            "edge_build_info",
            "The build this process serves (1), by build id.",
            labels=["build_id"],
        )
        age = GaugeMetricFamily(
            "edge_build_age_seconds", "Seconds since this process loaded the build it serves."
        )
        build = self.state.build()
        if build is not None:
            build_id, loaded_at = build
            info.add_metric([build_id], 1)
            age.add_metric([], max(0.0, self.clock() - loaded_at))
        yield info
        yield age
        degraded = self.state.redis_degraded()
        if degraded is not None:
            yield GaugeMetricFamily(
                "edge_redis_degraded",
                "1 while Redis failed and rate limits are counted per process.",
                value=int(degraded),
            )
        sync = GaugeMetricFamily(
            "edge_sync_connections",
            "Connected networks by their last sync outcome, as the account store records it.",
            labels=["network", "status"],
        )
        for (network, status), count in sorted(self.state.sync_outcomes.items()):
            sync.add_metric([network, status], count)
        yield sync


@dataclass
class Metrics:
    """One app's registry and its instruments."""

    registry: CollectorRegistry
    requests: Counter
    latency: Histogram
    rate_limited: Counter
    store_errors: Counter
    read: ReadState
    port: int | None = None  # the metrics port once bound (a port 0 setting picks one)


def new_metrics(clock: Callable[[], float] = time.time) -> Metrics:
    """A fresh registry with the edge's instruments."""
    registry = CollectorRegistry(auto_describe=True)
    read = ReadState()
    registry.register(ReadCollector(read, clock))
    return Metrics(
        registry=registry,
        requests=Counter(
            "edge_requests",
            "Requests answered, by route template, method and status.",
            ["route", "method", "status"],
            registry=registry,
        ),
        latency=Histogram(
            "edge_request_duration_seconds",
            "Time from the request reaching the app to its answer being ready, by route.",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        ),
        rate_limited=Counter(
            "edge_rate_limited", "Requests answered 429 by the rate limiter.", registry=registry
        ),
        store_errors=Counter(
            "edge_store_errors",
            "Account store calls that failed (StoreError) while serving, by operation.",
            ["operation"],
            registry=registry,
        ),
        read=read,
    )


def route_of(request: web.Request) -> str:
    """The route template that matched, e.g. `/v1/programs/{slug}`; UNMATCHED for none."""
    info = request.match_info
    route = getattr(info, "route", None)
    resource = route.resource if route is not None else None
    if resource is None or getattr(info, "http_exception", None) is not None:
        return UNMATCHED
    canonical: str = resource.canonical
    return canonical


def metrics_middleware(metrics: Metrics) -> Any:
    """The outermost middleware when metrics are on: counts every answer and times it."""

    @web.middleware
    async def count(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:  # a 304 re-raised by the error step
            status = exc.status
            raise
        finally:
            route = route_of(request)
            metrics.requests.labels(route, request.method, str(status)).inc()
            metrics.latency.labels(route).observe(time.perf_counter() - started)
            if status == 429:
                metrics.rate_limited.inc()

    return count


def operation_label(fn: Callable[..., object]) -> str:
    """An operation as its module and name: store.accounts.lookup_key is
    "accounts.lookup_key" (names alone repeat: accounts.find, commissions.find)."""
    return f"{fn.__module__.rpartition('.')[2]}.{fn.__name__}"


class CountingStore:
    """The account store, counting the StoreErrors its two doors raise into `store_errors`,
    labelled by the operation (`operation_label`)."""

    def __init__(self, store: AccountStore, store_errors: Counter) -> None:
        self._store = store
        self._errors = store_errors

    async def read(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The store's `read`, its StoreError counted."""
        try:
            return await self._store.read(fn, *args, **kwargs)
        except StoreError:
            self._errors.labels(operation_label(fn)).inc()
            raise

    async def write(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The store's `write`, its StoreError counted."""
        try:
            return await self._store.write(fn, *args, **kwargs)
        except StoreError:
            self._errors.labels(operation_label(fn)).inc()
            raise

    @property
    def ids(self) -> PublicIds:
        """The store's public ids."""
        return self._store.ids

    async def close(self) -> None:
        """Close the store."""
        await self._store.close()


async def read_sync_outcomes(store: AccountStore, read: ReadState) -> None:
    """Refresh the sync outcomes per network from the store (kept as they were on failure)."""
    try:
        async with asyncio.timeout(SYNC_READ_TIMEOUT):
            views = await store.read(connections.find_all)
    except (StoreError, OSError, TimeoutError) as exc:
        log.warning("metrics: cannot read the sync outcomes: %s", exc)
        return
    read.sync_outcomes = Tally((c.network, c.status) for c in views)


def metrics_app(metrics: Metrics, store: Callable[[], AccountStore | None]) -> web.Application:
    """The app of the metrics port: GET /metrics in Prometheus' text format."""

    async def scrape(request: web.Request) -> web.Response:
        current = store()
        if current is not None:
            await read_sync_outcomes(current, metrics.read)
        body = generate_latest(metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get(METRICS_PATH, scrape)
    return app


@contextlib.asynccontextmanager
async def serve_metrics(
    metrics: Metrics, store: Callable[[], AccountStore | None], host: str, port: int
) -> AsyncIterator[None]:
    """Serve `metrics_app` on host:port while the context is entered."""
    async with serve_side_app(metrics_app(metrics, store), host, port) as (shown, bound):
        metrics.port = bound
        log.info("metrics on http://%s:%d%s", shown, metrics.port, METRICS_PATH)
        yield
