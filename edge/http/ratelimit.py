"""Per-key rate limits: the request step that applies them (edge.http.limiter counts).

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

from typing import Any

from aiohttp import web

from edge import appkeys
from edge.http.errors import ApiError
from edge.http.limiter import Limiter, MemoryLimiter, RateState

_UNSET: Any = object()

LIMIT, REMAINING, RESET = "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"


def rate_headers(state: RateState) -> dict[str, str]:
    """The RateLimit-* response headers for a decision."""
    return {
        LIMIT: str(state.limit),
        REMAINING: str(state.remaining),
        RESET: str(state.reset_seconds),
    }


def create_limiter(config_redis_url: str | None, redis_timeout: float = 0.5) -> Limiter:
    """The limiter a configuration asks for: shared through Redis with a URL, else in memory.

    No I/O here: the Redis client connects on first use (limiter_context connects it at
    startup). ConfigError for an unusable URL.
    """
    if config_redis_url:
        # Imported here so that redis-py is loaded only by edges that use it.
        from edge.http.ratelimit_redis import create_redis_limiter

        return create_redis_limiter(config_redis_url, redis_timeout)
    return MemoryLimiter()


async def count(
    request: web.Request, app: web.Application | None = None, principal: Any = _UNSET
) -> RateState | None:
    """The rate limit step: count an authenticated request (not a CORS preflight).

    Raises the 429 over the limit; else returns the decision, whose headers
    (`rate_headers`) `edge.http.middlewares.edge_middleware` adds to the response, or to the error
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
