"""GCRA over one timestamp per key: the algorithm, the limiter interface and the
in-memory limiter (the Redis one, edge.http.ratelimit_redis, implements the same `hit`).

The algorithm is GCRA (the generic cell rate algorithm), a token bucket stored as a single
number per key, its "theoretical arrival time" (TAT): the instant at which the key's bucket
would be full again. With `limit` requests per `window` seconds each request costs
`window / limit` seconds of TAT, and a request is allowed while the TAT it would leave is
at most `window` seconds ahead of now. So a key that has been idle can make `limit` requests
at once, then one more every `window / limit` seconds. In any span of t seconds at most
`limit + t * limit / window` requests pass, so there is no burst of `2 * limit` within moments
around a window boundary, as a fixed window counter allows.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple, Protocol

# Float arithmetic on times: a value within this much of an integer counts as that integer,
# so that e.g. 600 requests per 60 s (0.1 s each) give exact Remaining/Reset values.
_EPSILON = 1e-6

DEFAULT_CAPACITY = 100_000


class RateState(NamedTuple):
    """The limiter's decision for one request: what the RateLimit-* headers and /v1/me say.

    Immutable; a NamedTuple, not a frozen dataclass: made once per request, it costs a
    quarter of the frozen dataclass's `__init__`.
    """

    limit: int
    window_seconds: int
    remaining: int
    reset_seconds: int
    allowed: bool = True
    retry_after_seconds: int = 0  # > 0 only when not allowed


def _ceil(seconds: float) -> int:
    return max(0, math.ceil(seconds - _EPSILON))


def gcra(tat: float | None, now: float, limit: int, window: int) -> tuple[float | None, RateState]:
    """One request at `now` against a key whose theoretical arrival time is `tat`.

    Returns the key's new TAT (unchanged when the request is denied: refused requests cost
    nothing) and the decision. `tat` is None for a key with no history.
    """
    interval = window / limit  # cost of one request, in seconds of TAT
    start = now if tat is None or tat < now else tat  # max(tat, now)
    new_tat = start + interval
    ahead = new_tat - now
    # Allowed while the bucket would not be more than `window` seconds from full.
    if ahead <= window + _EPSILON:
        remaining = math.floor((window - ahead) / interval + _EPSILON)
        reset = math.ceil(ahead - _EPSILON)  # _ceil, inlined: this runs on every request
        return new_tat, RateState(
            limit, window, remaining if remaining > 0 else 0, reset if reset > 0 else 0
        )
    return tat, RateState(
        limit=limit,
        window_seconds=window,
        remaining=0,
        reset_seconds=_ceil(start - now),
        allowed=False,
        retry_after_seconds=max(1, _ceil(new_tat - window - now)),
    )


def gcra_refund(
    tat: float | None, now: float, limit: int, window: int
) -> tuple[float | None, RateState]:
    """Give back one request's cost to a key whose theoretical arrival time is `tat`.

    Returns the key's new TAT (None when its bucket is full: nothing left to remember) and
    the key's state once refunded, as a request counted at `now` would have seen it before
    its own cost. Never gives back more than the bucket holds: a full bucket stays full.
    """
    interval = window / limit
    new_tat = None if tat is None else tat - interval
    if new_tat is None or new_tat - now <= _EPSILON:
        return None, RateState(limit, window, limit, 0)
    ahead = new_tat - now
    remaining = math.floor((window - ahead) / interval + _EPSILON)
    return new_tat, RateState(limit, window, min(limit, max(0, remaining)), _ceil(ahead))


class Limiter(Protocol):
    """Counts one request of `key` and says whether it may go on."""

    async def hit(self, key: str, limit: int, window: int) -> RateState: ...

    def hit_now(self, key: str, limit: int, window: int) -> RateState | None:
        """`hit` when it needs no I/O (in memory: always), else None, counting nothing:
        then the caller awaits `hit`. A plain call costs less than a coroutine, on a step
        every request takes."""
        ...

    async def refund(self, key: str, limit: int, window: int) -> RateState:
        """Give back the cost of one request `hit` allowed (one whose answer is a 304);
        the key's state once refunded."""
        ...


class MemoryLimiter:
    """GCRA in one process's memory, with at most `capacity` keys remembered.

    Entries are kept in least-recently-used order. When there are too many, the entries whose
    bucket is full again (TAT in the past) go first: they carry no information. Only if that
    is not enough are the least recently used others dropped; such a key merely starts again
    with a whole quota, which never refuses a request that should have been allowed.
    """

    def __init__(
        self, capacity: int = DEFAULT_CAPACITY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._capacity = capacity
        # Evicting down to a low-water mark, not just to the cap, keeps the full sweep
        # below from running on every new key once the table is full.
        self._low_water = max(1, capacity - max(1, capacity // 10))
        self._clock = clock
        self._tats: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tats)

    async def hit(self, key: str, limit: int, window: int) -> RateState:
        return self.hit_now(key, limit, window)

    def hit_now(self, key: str, limit: int, window: int) -> RateState:
        # A plain call: on one event loop the read-modify-write below is atomic.
        now = self._clock()
        tat, state = gcra(self._tats.get(key), now, limit, window)
        if tat is not None:
            self._tats[key] = tat
            self._tats.move_to_end(key)
            if len(self._tats) > self._capacity:
                self._evict(now)
        return state

    def peek_denied(self, key: str, limit: int, window: int) -> RateState | None:
        """The refusal `hit_now` would give `key` now, else None; counts nothing and
        leaves the order of eviction as it is."""
        tat = self._tats.get(key)
        if tat is None:
            return None
        _, state = gcra(tat, self._clock(), limit, window)
        return None if state.allowed else state

    async def refund(self, key: str, limit: int, window: int) -> RateState:
        return self.refund_now(key, limit, window)

    def refund_now(self, key: str, limit: int, window: int) -> RateState:
        tat, state = gcra_refund(self._tats.get(key), self._clock(), limit, window)
        if tat is None:
            self._tats.pop(key, None)
        else:
            self._tats[key] = tat
        return state

    def _evict(self, now: float) -> None:
        recovered = [key for key, tat in self._tats.items() if tat <= now]
        for key in recovered:
            del self._tats[key]
        while len(self._tats) > self._low_water:
            self._tats.popitem(last=False)
