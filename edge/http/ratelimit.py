"""Per-key rate limits: the request step that applies them (edge.http.limiter counts).

What the headers say (draft-ietf-httpapi-ratelimit-headers; names and formats are
contract.ratelimit's):
- `RateLimit-Limit`: requests allowed per window for the key's plan;
- `RateLimit-Remaining`: requests the key could still make right now, this one counted;
- `RateLimit-Reset`: seconds until the quota is whole again (Remaining back to Limit) if the
  key makes no further request, rounded up;
- `RateLimit-Policy: "default";q=LIMIT;w=WINDOW` and `RateLimit: "default";r=REMAINING;t=RESET`:
  the same numbers as the current draft's structured fields;
- `Retry-After` (429 only): seconds until the next request will be allowed, rounded up, >= 1.

A 304 Not Modified is not counted (as GitHub does for conditional requests): the request is
counted before the handler runs, like any other, and when the handler answers 304 its cost
is given back (`refund`), so the key's quota and the headers of that 304 are what they were
before it. Counting first keeps one round trip per request and the 429 before any work; a
key with no quota left gets its 429 even for a conditional request.

The limiter is an interface (`Limiter`); the embedded one keeps its state in memory for one
process with a bounded number of entries. A shared store (Redis) implements the same `hit`.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from contract import ratelimit as fields
from contract.ratelimit import LIMIT, POLICY, RATELIMIT, REMAINING, RESET
from edge import appkeys
from edge.http.errors import ApiError
from edge.http.limiter import RateState

_UNSET: Any = object()

__all__ = ["LIMIT", "POLICY", "RATELIMIT", "REMAINING", "RESET", "count", "rate_headers", "refund"]


def rate_headers(state: RateState) -> dict[str, str]:
    """The rate limit response headers for a decision, both forms (contract.ratelimit)."""
    return fields.fields(state.limit, state.window_seconds, state.remaining, state.reset_seconds)


async def count(
    request: web.Request, app: web.Application | None = None, principal: Any = _UNSET
) -> RateState | None:
    """The rate limit step: count an authenticated request (not a CORS preflight).

    Raises the 429 over the limit; else returns the decision, whose headers
    (`rate_headers`) `edge.http.middlewares.edge_middleware` adds to the response, or to
    the error raised below it (a 304 Not Modified, returned or raised, once `refund` gave
    its cost back); None when nothing was counted. `app` is `request.app` and `principal`
    request[PRINCIPAL] (the middleware has both).
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


async def refund(
    request: web.Request, app: web.Application, principal: Any, state: RateState
) -> RateState:
    """Give back the cost `count` took for this request (its answer is a 304 Not Modified).

    Returns the decision to report: the key's quota as it is once refunded, so Remaining
    is what it was before the request.
    """
    limit, window = state.limit, state.window_seconds
    refunded = await app[appkeys.LIMITER].refund(principal.key_id, limit, window)
    request[appkeys.RATE_STATE] = refunded
    return refunded
