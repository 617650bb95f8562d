"""Per-key rate limits: GCRA over one timestamp per key, and the middleware that applies it.

The algorithm is GCRA (the generic cell rate algorithm), a token bucket stored as a single
number per key, its "theoretical arrival time" (TAT): the instant at which the key's bucket
would be full again. With `limit` requests per `window` seconds each request costs
`window / limit` seconds of TAT, and a request is allowed while the TAT it would leave is
at most `window` seconds ahead of now. So a key that has been idle can make `limit` requests
at once, then one more every `window / limit` seconds. In any span of t seconds at most
`limit + t * limit / window` requests pass, so there is no burst of `2 * limit` within moments
around a window boundary, as a fixed window counter allows.

What the headers say (draft-ietf-httpapi-ratelimit-headers, the `RateLimit-*` fields):
- `RateLimit-Limit`: requests allowed per window for the key's plan;
- `RateLimit-Remaining`: requests the key could still make right now, this one counted;
- `RateLimit-Reset`: seconds until the quota is whole again (Remaining back to Limit) if the
  key makes no further request, rounded up;
- `Retry-After` (429 only): seconds until the next request will be allowed, rounded up, >= 1.

The limiter is an interface (`Limiter`); the embedded one keeps its state in memory for one
process with a bounded number of entries. A shared store (Redis) implements the same `hit`.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple, Protocol

from aiohttp import web

from edge import appkeys
from edge.errors import ApiError

# Float arithmetic on times: a value within this much of an integer counts as that integer,
# so that e.g. 600 requests per 60 s (0.1 s each) give exact Remaining/Reset values.
_EPSILON = 1e-6

DEFAULT_CAPACITY = 100_000
_UNSET: Any = object()


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


class Limiter(Protocol):
    """Counts one request of `key` and says whether it may go on."""

    async def hit(self, key: str, limit: int, window: int) -> RateState: ...

    def hit_now(self, key: str, limit: int, window: int) -> RateState | None:
        """`hit` when it needs no I/O (in memory: always), else None, counting nothing:
        then the caller awaits `hit`. A plain call costs less than a coroutine, on a step
        every request takes."""
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

    def _evict(self, now: float) -> None:
        recovered = [key for key, tat in self._tats.items() if tat <= now]
        for key in recovered:
            del self._tats[key]
        while len(self._tats) > self._low_water:
            self._tats.popitem(last=False)


LIMIT, REMAINING, RESET = "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"


def rate_headers(state: RateState) -> dict[str, str]:
    """The RateLimit-* response headers for a decision."""
    return {
        LIMIT: str(state.limit),
        REMAINING: str(state.remaining),
        RESET: str(state.reset_seconds),
    }


def rate_lines(state: RateState) -> str:
    """`rate_headers(state)` as HTTP header lines (edge.wire.PreparedResponse.add_lines)."""
    return (
        f"{LIMIT}: {state.limit}\r\n{REMAINING}: {state.remaining}\r\n"
        f"{RESET}: {state.reset_seconds}\r\n"
    )


def create_limiter(config_redis_url: str | None, redis_timeout: float = 0.5) -> Limiter:
    """The limiter a configuration asks for: shared through Redis with a URL, else in memory.

    No I/O here: the Redis client connects on first use (limiter_context connects it at
    startup). ConfigError for an unusable URL.
    """
    if config_redis_url:
        # Imported here so that redis-py is loaded only by edges that use it.
        from edge.ratelimit_redis import create_redis_limiter

        return create_redis_limiter(config_redis_url, redis_timeout)
    return MemoryLimiter()


async def limiter_context(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: create the limiter at startup; a Redis one connects first, closes last."""
    config = app[appkeys.CONFIG]
    if not config.redis_url:
        app[appkeys.LIMITER] = MemoryLimiter()
        yield
        return
    from edge.ratelimit_redis import create_redis_limiter  # see create_limiter

    async with create_redis_limiter(config.redis_url, config.redis_timeout) as limiter:
        app[appkeys.LIMITER] = limiter
        yield


def setup(app: web.Application) -> None:
    app.cleanup_ctx.append(limiter_context)


async def count(
    request: web.Request, app: web.Application | None = None, principal: Any = _UNSET
) -> RateState | None:
    """The rate limit step: count an authenticated request (not a CORS preflight).

    Raises the 429 over the limit; else returns the decision, whose headers
    (`rate_headers`) `edge.app.edge_middleware` adds to the response, or to the error
    raised below it (a raised 304 Not Modified counted too, so it says so); None when
    nothing was counted. `app` is `request.app` and `principal` request[PRINCIPAL] (the
    middleware has both).
    """
    if principal is _UNSET:
        principal = request.get(appkeys.PRINCIPAL)
    if principal is None or request.method == "OPTIONS":
        return None
    if app is None:
        app = request.app
    limit, window = app[appkeys.CONFIG].rate_limit(principal.plan)
    limiter = app[appkeys.LIMITER]
    state = limiter.hit_now(principal.key_id, limit, window)
    if state is None:
        state = await limiter.hit(principal.key_id, limit, window)
    if not state.allowed:
        raise ApiError(
            "rate_limited",
            f"rate limit of {limit} requests per {window} s exceeded; "
            f"retry in {state.retry_after_seconds} s",
            headers={**rate_headers(state), "Retry-After": str(state.retry_after_seconds)},
        )
    request[appkeys.RATE_STATE] = state
    return state
