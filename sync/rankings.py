"""The months' rankings by programme and by sub-id (store.ranks), kept by the sync worker:
every `every` seconds it rebuilds the months whose commissions changed since.

Until a month is rebuilt a summary adds its totals up instead, to the same answer: a
worker that is down, or behind, makes such summaries slower, never wrong. Several workers
rebuild side by side (on PostgreSQL each takes a month no other holds).
"""

from __future__ import annotations

import asyncio
import contextlib

from store import AccountStore, ranks
from store.base import StoreError
from sync.logs import logger

log = logger("sync.rankings")

# Seconds between two rounds: a summary of a month just synced is fast again this soon.
REBUILD_EVERY = 5.0
# Months rebuilt in a round at most: the next round takes the rest.
REBUILD_BATCH = 500


async def rebuild_rankings(store: AccountStore, batch: int = REBUILD_BATCH) -> int:
    """Rebuild up to `batch` stale months; how many (0 when the store could not be
    written: the next round tries again)."""
    try:
        return await ranks.refresh(store, batch)
    except StoreError as exc:
        log.warning("rankings could not be rebuilt (%s); trying again later", exc)
        return 0


async def keep_rankings(
    store: AccountStore, stop: asyncio.Event, every: float = REBUILD_EVERY
) -> None:
    """Rebuild stale months now, then every `every` seconds, until `stop` is set."""
    while not stop.is_set():
        await rebuild_rankings(store)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
