"""Outbound rate limits: at most N requests in any rolling period, for every period a network
documents (20 a minute; 1 a minute and 1,000 a day...), and at most C at once, per credential.

A sliding log rather than a token bucket: it guarantees each published figure ("20 calls per
minute") over every period, which is what a network counts, at the cost of one timestamp per
request of the longest period (at most the largest of the documented counts).

A process counts only its own requests; the store counts everyone's (`Reserve`: the
connection's requests of every worker, of a worker that restarted, kept for the longest
period). A request is sent once both have room: this process's log spares the store a
question while it is full already, and the store's answer is what holds across processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from bisect import bisect_right
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sync.clock import Clock
from sync.spec import Rate

# Counts one request in the store if it fits every documented rate over the requests of
# every worker: 0.0 when it was counted, else the seconds until it would fit.
Reserve = Callable[[], Awaitable[float]]


def credential_key(network: str, credentials: Mapping[str, object]) -> str:
    """A limiter key for one credential: a hash, so no secret is kept or shown."""
    canonical = json.dumps(dict(credentials), sort_keys=True, default=str).encode()
    return f"{network}:{hashlib.sha256(canonical).hexdigest()[:16]}"


@dataclass
class SlidingLimiter:
    """Waits until a request fits in every one of `rates` over its rolling period, and
    lets at most `concurrency` requests run at once (None: no such limit)."""

    rate: Rate
    clock: Clock
    more: Sequence[Rate] = ()
    concurrency: int | None = None
    _sent: deque[float] = field(default_factory=deque)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _flying: asyncio.Semaphore | None = None
    # When (on clock.monotonic()) the store last said the next request would fit.
    _shared_opens: float = 0.0

    def __post_init__(self) -> None:
        if self.concurrency is not None:
            self._flying = asyncio.Semaphore(self.concurrency)

    @property
    def rates(self) -> tuple[Rate, ...]:
        return (self.rate, *self.more)

    def _wait(self, now: float) -> float:
        """Seconds until one more request fits every rate (0: now)."""
        longest = max(r.seconds for r in self.rates)
        while self._sent and now - self._sent[0] >= longest:
            self._sent.popleft()
        wait = 0.0
        ordered = list(self._sent)
        for rate in self.rates:
            recent = len(ordered) - bisect_right(ordered, now - rate.seconds)
            if recent >= rate.requests:
                # The request that must leave the period before another fits.
                leaving = ordered[len(ordered) - rate.requests]
                wait = max(wait, leaving + rate.seconds - now)
        return wait

    def opens_at(self) -> float:
        """When (on clock.monotonic()) the next request would fit every rate, as far as
        this process and the store's last answer know."""
        now = self.clock.monotonic()
        return max(now + self._wait(now), self._shared_opens)

    async def acquire(self, cutoff: float | None = None, shared: Reserve | None = None) -> bool:
        """Return True when one more request may be sent now, and record it as sent (in
        the store too, through `shared`); False, at once, when that moment comes after
        `cutoff` (on clock.monotonic())."""
        async with self._lock:
            while True:
                now = self.clock.monotonic()
                wait = self._wait(now)
                if wait <= 0 and shared is not None:
                    wait = await shared()
                    now = self.clock.monotonic()
                    self._shared_opens = now + max(0.0, wait)
                if wait <= 0:
                    self._sent.append(now)
                    return True
                if cutoff is not None and now + wait > cutoff:
                    return False
                await self.clock.sleep(wait)

    @contextlib.asynccontextmanager
    async def flight(self) -> AsyncIterator[None]:
        """Held while a request runs: at most `concurrency` at once."""
        if self._flying is None:
            yield
            return
        async with self._flying:
            yield

    async def hold_off(self, seconds: float) -> None:
        """Make everyone sharing the credential wait (a network said Retry-After)."""
        async with self._lock:
            await self.clock.sleep(seconds)


@dataclass
class Limiters:
    """One limiter per (network, credential), shared by every sync of a worker."""

    clock: Clock
    _limiters: dict[str, SlidingLimiter] = field(default_factory=dict)

    def get(
        self, key: str, rate: Rate, more: Sequence[Rate] = (), concurrency: int | None = None
    ) -> SlidingLimiter:
        limiter = self._limiters.get(key)
        wanted = (rate, tuple(more), concurrency)
        if limiter is None or (limiter.rate, tuple(limiter.more), limiter.concurrency) != wanted:
            limiter = self._limiters[key] = SlidingLimiter(
                rate, self.clock, tuple(more), concurrency
            )
        return limiter
