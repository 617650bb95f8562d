"""Outbound rate limits: at most N requests in any rolling period, per credential.

A sliding log rather than a token bucket: it guarantees the published figure ("20 calls per
minute") over every period, which is what a network counts, at the cost of N timestamps per
credential (N is small for every network).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from sync.clock import Clock
from sync.spec import Rate


def credential_key(network: str, credentials: Mapping[str, object]) -> str:
    """A limiter key for one credential: a hash, so no secret is kept or shown."""
    canonical = json.dumps(dict(credentials), sort_keys=True, default=str).encode()
    return f"{network}:{hashlib.sha256(canonical).hexdigest()[:16]}"


@dataclass
class SlidingLimiter:
    """Waits until a request fits in `rate` over the rolling period."""

    rate: Rate
    clock: Clock
    _sent: deque[float] = field(default_factory=deque)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def acquire(self, cutoff: float | None = None) -> bool:
        """Return True when one more request may be sent now, and record it as sent;
        False, at once, when that moment comes after `cutoff` (on clock.monotonic())."""
        async with self._lock:
            while True:
                now = self.clock.monotonic()
                while self._sent and now - self._sent[0] >= self.rate.seconds:
                    self._sent.popleft()
                if len(self._sent) < self.rate.requests:
                    self._sent.append(now)
                    return True
                wait = self._sent[0] + self.rate.seconds - now
                if cutoff is not None and now + wait > cutoff:
                    return False
                await self.clock.sleep(wait)

    async def hold_off(self, seconds: float) -> None:
        """Make everyone sharing the credential wait (a network said Retry-After)."""
        async with self._lock:
            await self.clock.sleep(seconds)


@dataclass
class Limiters:
    """One limiter per (network, credential), shared by every sync of a worker."""

    clock: Clock
    _limiters: dict[str, SlidingLimiter] = field(default_factory=dict)

    def get(self, key: str, rate: Rate) -> SlidingLimiter:
        limiter = self._limiters.get(key)
        if limiter is None or limiter.rate != rate:
            limiter = self._limiters[key] = SlidingLimiter(rate, self.clock)
        return limiter
