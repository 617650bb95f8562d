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
is given back (`settle`), so the key's quota and the headers of that 304 are what they were
before it. Counting first keeps one round trip per request and the 429 before any work; a
key with no quota left gets its 429 even for a conditional request.

The limiter is an interface (`Limiter`); the embedded one keeps its state in memory for one
process with a bounded number of entries. A shared store (Redis) implements the same `hit`.
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from contract import ratelimit as fields
from contract.ratelimit import LIMIT, POLICY, RATELIMIT, REMAINING, RESET
from edge import appkeys
from edge.auth.principal import Principal
from edge.http.errors import ApiError
from edge.http.limiter import RateState
from edge.http.publiccache import is_public

__all__ = [
    "LIMIT",
    "POLICY",
    "RATELIMIT",
    "REMAINING",
    "RESET",
    "count",
    "rate_headers",
    "rate_limit_middleware",
    "settle",
]


def rate_headers(state: RateState) -> dict[str, str]:
    """The rate limit response headers for a decision, both forms (contract.ratelimit)."""
    return fields.fields(state.limit, state.window_seconds, state.remaining, state.reset_seconds)


async def count(request: web.Request, principal: Principal) -> RateState:
    """Count a request of `principal`: the 429 over its limit, else the decision, also
    kept as request[RATE_STATE]."""
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


async def settle(
    request: web.Request, principal: Principal, state: RateState, status: int
) -> RateState:
    """The decision to report with an answer of `status`: `state`, or for a 304 Not
    Modified the key's quota once its cost is given back (so Remaining is what it was
    before the request)."""
    if status != 304:
        return state
    refunded = await request.app[appkeys.LIMITER].refund(
        principal.key_id, state.limit, state.window_seconds
    )
    request[appkeys.RATE_STATE] = refunded
    return refunded


@web.middleware
async def rate_limit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The rate limit step, under the key step: count the request of a key (or of the
    public), answer 429 past its limit, and send the decision's headers with the answer,
    or with the error raised below (the error step keeps an error's `headers`); not with
    a public answer, which a shared cache replays to everyone (edge.http.publiccache)."""
    principal = request.get(appkeys.PRINCIPAL)
    if principal is None:  # a request that needs no key (edge.auth.authenticate)
        return await handler(request)
    state = await count(request, principal)
    try:
        response = await handler(request)
    except (ApiError, web.HTTPException) as exc:
        exc.headers.update(rate_headers(await settle(request, principal, state, exc.status)))
        raise
    state = await settle(request, principal, state, response.status)
    # A streamed answer (an export) sent its headers when it began (edge.handlers.export).
    if not is_public(response.headers) and not response.prepared:
        response.headers.update(rate_headers(state))
    return response
