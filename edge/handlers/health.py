"""GET /healthz and GET /readyz: for process supervisors and load balancers.

- `/healthz` (liveness): 200 `{"status": "ok", "version": ..., "build": ...}` whenever the
  process can answer at all: the affdir version it runs and the id of the build it serves
  (null before the first). Restart the process when it fails, not when a dependency does.
- `/readyz` (readiness): 200 when this edge can serve its API: a build is loaded and the
  account store answers a cheap query within READY_TIMEOUT (or the store timeout, if
  shorter). Otherwise 503 `unavailable`, the message naming what is not ready. A load
  balancer routes traffic only to ready edges. Once a graceful shutdown has begun
  (SIGTERM: the app's on_shutdown signal), 503 `not ready: shutting down`, whatever else,
  while the requests in flight finish.
- Redis is deliberately not part of readiness: the rate limiter fails open (per-process
  limits, docs/deploy.md), so a Redis outage must not take every edge out of rotation.

Both live outside /v1, so they need no key (auth guards /v1/ only) and are never counted
by the rate limiter (it counts authenticated requests only); `Cache-Control: no-store`,
since a cached answer about health is a wrong one.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from aiohttp import web

from contract.endpoints import JSON
from contract.version import VERSION
from edge import appkeys
from edge.http.errors import unavailable
from edge.http.expect import ignore_expectation
from store import accounts
from store.base import StoreError

log = logging.getLogger("edge.handlers.health")

HEALTHZ = "/healthz"
READYZ = "/readyz"
READY_TIMEOUT = 1.0  # seconds: health checkers time out after a few
NO_STORE = {"Cache-Control": "no-store"}
# A key hash no key has (a key's SHA-256 is all zeros with odds of 2**-256): the probe runs
# the real indexed query the API runs for every new key, and finds nothing.
PROBE_HASH = "0" * 64


def _json(value: object) -> web.Response:
    return web.Response(body=orjson.dumps(value), content_type=JSON, headers=NO_STORE)


async def healthz(request: web.Request) -> web.Response:
    state = request.app.get(appkeys.DIRECTORY)
    build = state.current.build_id if state is not None and state.current is not None else None
    return _json({"status": "ok", "version": VERSION, "build": build})


def build_problem(app: web.Application) -> str | None:
    """Why the directory cannot be served, or None when a build is loaded."""
    state = app.get(appkeys.DIRECTORY)
    if state is None or state.current is None:
        return "no build loaded"
    return None


async def store_problem(app: web.Application) -> str | None:
    """Why the account store cannot be used, or None when it answered a cheap query."""
    store = app.get(appkeys.STORE)
    if store is None:
        return "account store not open"
    timeout = min(READY_TIMEOUT, app[appkeys.CONFIG].store_timeout)
    try:
        async with asyncio.timeout(timeout):
            await store.read(accounts.lookup_key, PROBE_HASH)
    except TimeoutError:
        return f"account store did not answer within {timeout:g} s"
    except (StoreError, OSError) as exc:
        return f"account store unreachable ({exc})"
    except Exception:
        # Unexpected (a bug in a store), but readiness must still answer, and "not ready"
        # is the truth; the traceback goes to the log.
        log.exception("readiness probe of the account store failed")
        return "account store failed"
    return None


async def readyz(request: web.Request) -> web.Response:
    app = request.app
    if app[appkeys.DRAINING].is_set():
        # Asked to stop: no store probe; the answer is "not ready" however healthy the rest.
        problems = ["shutting down"]
    else:
        problems = [p for p in (build_problem(app), await store_problem(app)) if p]
    if problems:
        raise unavailable(
            "not ready: " + "; ".join(problems), app[appkeys.CONFIG].retry_after, NO_STORE
        )
    build = app[appkeys.DIRECTORY].current
    assert build is not None  # else build_problem would have said so
    return _json({"status": "ok", "build": build.build_id})


async def start_draining(app: web.Application) -> None:
    """The app's on_shutdown: from now on /readyz answers 503."""
    app[appkeys.DRAINING].set()
    log.info("shutting down: /readyz answers 503")


def setup(app: web.Application) -> None:
    """Register /healthz and /readyz (GET and HEAD), and /readyz's shutdown signal."""
    app[appkeys.DRAINING] = asyncio.Event()
    app.on_shutdown.append(start_draining)
    app.router.add_get(HEALTHZ, healthz, expect_handler=ignore_expectation)
    app.router.add_get(READYZ, readyz, expect_handler=ignore_expectation)
