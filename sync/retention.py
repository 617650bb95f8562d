"""The event feed's retention, kept by the sync worker: every `every` seconds it deletes the
events older than the retention (store.events.prune, a batch a transaction).

The API never answers an event past the retention whether or not it was deleted yet, so
pruning only bounds the table's size: a worker that is down for a while loses nothing,
and several workers pruning at once delete each event once. `affdir-admin events prune`
does the same on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import Callable

from store import AccountStore
from store.base import StoreError, utc_now
from store.events import prune, retention_horizon
from sync.logs import logger

log = logger("sync.retention")

PRUNE_EVERY = 3600.0  # seconds between two prunes: an hour's events are a small batch


async def prune_events(
    store: AccountStore, days: int, now: Callable[[], dt.datetime] = utc_now
) -> int:
    """Delete the events older than `days` days; how many were deleted (0 when the store
    could not be written: the next round tries again)."""
    try:
        deleted = await prune(store, retention_horizon(now(), days))
    except StoreError as exc:
        log.warning("events could not be pruned (%s); trying again later", exc)
        return 0
    if deleted:
        log.info("pruned %d events older than %d days", deleted, days)
    return deleted


async def keep_retention(
    store: AccountStore,
    days: int,
    stop: asyncio.Event,
    every: float = PRUNE_EVERY,
    now: Callable[[], dt.datetime] = utc_now,
) -> None:
    """Prune now, then every `every` seconds, until `stop` is set."""
    while not stop.is_set():
        await prune_events(store, days, now)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
