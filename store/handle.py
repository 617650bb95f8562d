"""A store that may not be open yet: `StoreHandle` opens it in the background and keeps
trying, with backoff, until it opens.

A process that needs the account store only for part of its work (the edge serves the
directory without it; the sync worker has nothing to do without it but must not die for a
database restart) starts with the store unreachable and connects by itself once it
answers. Once open, the store reconnects on its own after an outage (its pool does); only
the first open needs this handle.

- `start()` tries once; a store that is unreachable (`StoreUnavailable`) is retried in a
  background task with a growing delay (`Backoff`). Any other `StoreError` (an unknown
  URL scheme, a read-only store asked to migrate) is a setting to fix, not an outage: it is
  raised, and the process refuses to start. So is every failure when `retry` is False
  (a local SQLite file does not come back by itself: see
  `store.reached_over_network`).
- The handle is itself an `AccountStore`: its two doors, `read` and `write`, pass the
  operation to the open store's and raise `StoreUnavailable` while there is none, so its
  callers handle "not opened yet" as the outage it is, the same way as one that happens
  later.
- `problem` says why it is not open (None once open); `opened()` waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from store.base import StoreUnavailable
from store.core import AccountStore, Op
from store.publicids import PublicIds

log = logging.getLogger("store")

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays between attempts: `first`, then times `factor` each time, at most `cap`."""

    first: float = 0.5
    factor: float = 2.0
    cap: float = 30.0

    def delays(self) -> Iterator[float]:
        delay = self.first
        while True:
            yield delay
            delay = min(delay * self.factor, self.cap)


class StoreHandle:
    """An AccountStore opened by `opener`, now or, when unreachable, as soon as it can be."""

    def __init__(
        self,
        opener: Callable[[], Awaitable[AccountStore]],
        *,
        retry: bool = True,
        backoff: Backoff | None = None,
        name: str = "account store",
    ) -> None:
        self._opener = opener
        self._retry_unreachable = retry
        self._backoff = backoff or Backoff()
        self._name = name
        self._store: AccountStore | None = None
        self._problem: str | None = "not opened yet"
        self._opened = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def store(self) -> AccountStore | None:
        """The open store, or None while it could not be opened."""
        return self._store

    @property
    def problem(self) -> str | None:
        """Why the store is not open (the last attempt's error), or None once it is."""
        return self._problem

    async def start(self) -> None:
        """Open the store now, or keep trying in the background while it is unreachable.

        Raises the StoreError of a store that cannot be opened for another reason than an
        outage (a setting to fix)."""
        if await self._attempt():
            return
        log.error(
            "%s unreachable (%s): starting without it, retrying in the background",
            self._name,
            self._problem,
        )
        self._task = asyncio.create_task(self._retry(), name="store-open")

    async def opened(self) -> AccountStore:
        """The store, once open (waits as long as it takes)."""
        await self._opened.wait()
        assert self._store is not None
        return self._store

    def get(self) -> AccountStore:
        """The open store; StoreUnavailable while there is none."""
        if self._store is None:
            raise StoreUnavailable(f"not connected: {self._problem}")
        return self._store

    async def close(self) -> None:
        """Stop trying, and close the store if it opened."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._store is not None:
            await self._store.close()

    async def _attempt(self) -> bool:
        try:
            store = await self._opener()
        except StoreUnavailable as exc:
            if not self._retry_unreachable:
                raise
            self._problem = str(exc) or type(exc).__name__
            return False
        if self._closed:  # closed while this attempt ran: nobody will close it later
            await store.close()
            return False
        self._store = store
        self._problem = None
        self._opened.set()
        return True

    async def _retry(self) -> None:
        for delay in self._backoff.delays():
            await asyncio.sleep(delay)
            if await self._attempt():
                log.warning("%s reachable: connected", self._name)
                return
            log.info("%s still unreachable (%s)", self._name, self._problem)

    @property
    def ids(self) -> PublicIds:
        """The open store's public ids; StoreUnavailable while there is none."""
        return self.get().ids

    async def read(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The open store's `read`; StoreUnavailable while there is none."""
        return await self.get().read(fn, *args, **kwargs)

    async def write(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The open store's `write`; StoreUnavailable while there is none."""
        return await self.get().write(fn, *args, **kwargs)
