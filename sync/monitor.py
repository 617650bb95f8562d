"""The sync worker's monitoring port (`--metrics-port`): GET /metrics and GET /healthz.

A small aiohttp app of its own on `--metrics-host:--metrics-port` (loopback by default),
never anything else: the worker serves no API.

- `/metrics`: the worker's registry (sync.metrics) in Prometheus' text format, the
  connections' last successes read from the account store first.
- `/healthz`: 200 while the worker makes progress, 503 once it made none for
  `--stall-seconds` (sync.health); JSON either way, with the version. `Cache-Control:
  no-store`: a cached answer about health is a wrong one.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import orjson
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.exposition import generate_latest

from contract.process import serve_side_app
from store import AccountStore
from sync.health import health
from sync.logs import logger
from sync.metrics import SyncMetrics

log = logger("sync.monitor")

METRICS_PATH = "/metrics"
HEALTHZ = "/healthz"
METRICS = web.AppKey("metrics", SyncMetrics)
# The account store the scrape reads the connections from.
STORE = web.AppKey("store", AccountStore)


async def scrape(request: web.Request) -> web.Response:
    metrics = request.app[METRICS]
    await metrics.read_store(request.app[STORE])
    body = generate_latest(metrics.registry)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


async def healthz(request: web.Request) -> web.Response:
    metrics = request.app[METRICS]
    status, body = health(metrics.progress, len(metrics.running))
    return web.Response(
        status=status,
        body=orjson.dumps(body),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def monitor_app(metrics: SyncMetrics, store: AccountStore) -> web.Application:
    """The app of the monitoring port."""
    app = web.Application()
    app[METRICS] = metrics
    app[STORE] = store
    app.router.add_get(METRICS_PATH, scrape)
    app.router.add_get(HEALTHZ, healthz)
    return app


@contextlib.asynccontextmanager
async def serve_monitor(
    metrics: SyncMetrics, store: AccountStore, host: str, port: int
) -> AsyncIterator[None]:
    """Serve `monitor_app` on host:port while the context is entered."""
    async with serve_side_app(monitor_app(metrics, store), host, port) as (shown, bound):
        metrics.port = bound
        log.info(
            "metrics and health on http://%s:%d (%s, %s)",
            shown,
            metrics.port,
            METRICS_PATH,
            HEALTHZ,
        )
        yield
