"""What the edge opens on startup and closes on cleanup: one aiohttp cleanup context each.

`edge.app.create_app` registers them in `CONTEXTS`' order, which is their dependency
order: aiohttp enters them in that order on startup and leaves them in the reverse order
on cleanup, so each finds what it needs open and is closed before what it uses.

    secret  ->  store  ->  authenticator (the store)  ->  limiter  ->  directory (the secret)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path

from aiohttp import web

from edge import appkeys
from edge.auth.authenticator import CachedAuthenticator
from edge.auth.failures import AuthFailures
from edge.auth.public import PublicCallers
from edge.directory.pages import DirectoryState, add_sighup
from edge.http.limiter import MemoryLimiter
from edge.metrics import CountingStore, serve_metrics
from store import open_store, reached_over_network
from store.base import StoreError
from store.handle import StoreHandle

log = logging.getLogger("edge")

Context = Callable[[web.Application], AsyncIterator[None]]


async def secret_context(app: web.Application) -> AsyncIterator[None]:
    """The secrets that sign and verify cursors (from the configuration, or the file it
    names): the current one signs, every configured one verifies."""
    app[appkeys.SECRET] = app[appkeys.CONFIG].keyring()
    yield


async def store_context(app: web.Application) -> AsyncIterator[None]:
    """Open the account store (read-only) for the app's lifetime.

    An unreachable store does not stop the edge from starting: the directory needs no
    store, and keys verified before an outage stay trusted for `--key-stale-seconds`. The
    handle connects by itself once the store answers; until then every store call raises
    StoreUnavailable, as during any outage. A store that cannot be opened for another
    reason (an unknown URL scheme, a SQLite file that is not a database) is a setting to
    fix: the edge refuses to start."""
    config = app[appkeys.CONFIG]
    handle = StoreHandle(
        partial(open_store, config.database, timeout=config.store_timeout),
        retry=reached_over_network(config.database),
    )
    try:
        await handle.start()
    except StoreError as exc:
        log.error("cannot start: %s", exc)
        raise
    app[appkeys.STORE] = handle
    try:
        yield
    finally:
        await handle.close()


async def authenticator_context(app: web.Application) -> AsyncIterator[None]:
    """The key cache over the store, the count of refused keys per client address
    (`appkeys.AUTH_CLOCK` as their clock when set) and the public's principals."""
    config = app[appkeys.CONFIG]
    clock = app.get(appkeys.AUTH_CLOCK, time.monotonic)
    app[appkeys.AUTHENTICATOR] = CachedAuthenticator(
        app[appkeys.STORE],
        ttl=config.key_cache_seconds,
        stale=config.key_stale_seconds,
        clock=clock,
    )
    app[appkeys.AUTH_FAILURES] = AuthFailures(
        *config.auth_failure_limit, config.trusted_proxies, clock=clock
    )
    app[appkeys.PUBLIC_CALLERS] = PublicCallers(config.trusted_proxies)
    yield


async def limiter_context(app: web.Application) -> AsyncIterator[None]:
    """The rate limiter: in memory, or a Redis one that connects first and closes last."""
    config = app[appkeys.CONFIG]
    if not config.redis_url:
        app[appkeys.LIMITER] = MemoryLimiter()
        yield
        return
    # Imported here so that redis-py is loaded only by edges that use it.
    from edge.http.ratelimit_redis import create_redis_limiter

    async with create_redis_limiter(config.redis_url, config.redis_timeout) as limiter:
        app[appkeys.LIMITER] = limiter
        yield


async def directory_context(app: web.Application) -> AsyncIterator[None]:
    """Load the first build, keep it fresh while the app runs, stop watching on cleanup."""
    config = app[appkeys.CONFIG]
    state = DirectoryState(root=Path(config.dist), secret=app[appkeys.SECRET].current)
    app[appkeys.DIRECTORY] = state
    await state.refresh()
    if state.current is None:
        log.warning("no build in %s yet: /v1/programs answers 503 until one appears", state.root)
    state.sighup = add_sighup(state)
    watcher = asyncio.create_task(state.watch(config.reload_interval), name="directory-watch")
    try:
        yield
    finally:
        if state.sighup:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def store_metrics_context(app: web.Application) -> AsyncIterator[None]:
    """With metrics on, right after the store opens: wrap it so that its errors are counted
    (what comes after it, the authenticator first, uses the wrapper)."""
    store = app.get(appkeys.STORE)
    if store is not None:
        app[appkeys.STORE] = CountingStore(store, app[appkeys.METRICS].store_errors)
    yield


async def metrics_context(app: web.Application) -> AsyncIterator[None]:
    """With metrics on, last: serve /metrics on the metrics port, reading the build, the
    limiter and the store of this app."""
    config = app[appkeys.CONFIG]
    metrics = app[appkeys.METRICS]
    directory = app[appkeys.DIRECTORY]
    limiter = app[appkeys.LIMITER]

    def build() -> tuple[str, float] | None:
        current = directory.current
        return None if current is None else (current.build_id, current.loaded_at)

    metrics.read.build = build
    if hasattr(limiter, "degraded"):
        metrics.read.redis_degraded = lambda: bool(limiter.degraded)
    assert config.metrics_port is not None  # registered only then (edge.app)
    async with serve_metrics(
        metrics, lambda: app.get(appkeys.STORE), config.metrics_host, config.metrics_port
    ):
        yield


# In dependency order (see the module's docstring).
CONTEXTS: tuple[Context, ...] = (
    secret_context,
    store_context,
    authenticator_context,
    limiter_context,
    directory_context,
)
