"""Authentication: `Authorization: Bearer <key>` on every /v1 path; the directory's paths
also answer a request without that header, as the public (`anonymous`)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from contract.endpoints import ENDPOINTS, ME
from edge import appkeys
from edge.auth.principal import NOT_CACHED, Authenticator, NotCached, Principal
from edge.http.errors import ApiError, unavailable
from edge.http.limiter import RateState
from edge.http.ratelimit import rate_headers
from store.base import StoreUnavailable

# Principal and the Authenticator protocol live in edge.auth.principal (a leaf, which
# edge.appkeys imports); they are named here too, where the auth step is.
__all__ = [
    "NOT_CACHED",
    "Authenticator",
    "NotCached",
    "Principal",
    "auth_middleware",
    "authenticate",
    "bearer_token",
    "requires_key",
    "too_many_failures",
    "unverifiable",
]


_STATUSES_BY_ROUTE = {e.path: e.statuses for e in ENDPOINTS}
# The routes that answer a request without an Authorization header (the public directory).
_ANONYMOUS_ROUTES = frozenset(e.path for e in ENDPOINTS if e.anonymous)


def unverifiable(request: web.Request) -> ApiError:
    """The answer for a key that cannot be checked because the account store is down.

    503 where the endpoint lists it; elsewhere (/v1/programs/{slug}, /v1/me list no 503)
    401, with Retry-After and a message saying it is temporary (docs/accounts.md).
    """
    retry_after = request.app[appkeys.CONFIG].retry_after
    route = request.match_info.route.resource
    canonical = route.canonical if route is not None else request.path
    if 503 in _STATUSES_BY_ROUTE.get(canonical, ()):
        return unavailable("the API key cannot be verified right now; retry later", retry_after)
    return ApiError(
        "invalid_api_key",
        "the API key cannot be verified right now (account store unavailable); retry later",
        headers={"Retry-After": str(retry_after)},
    )


def too_many_failures(state: RateState) -> ApiError:
    """429 for a client address past its limit of refused keys, with the rate limit headers
    of that limit and Retry-After (edge.auth.failures)."""
    wait = state.retry_after_seconds
    return ApiError(
        "rate_limited",
        f"too many requests with an unknown, revoked or malformed API key from this address "
        f"({state.limit} per {state.window_seconds} s); retry in {wait} s",
        headers={**rate_headers(state), "Retry-After": str(wait)},
    )


# The whitespace HTTP allows around a header's value and between its words (RFC 9110): the
# key itself is exact, so no other (Unicode) space is taken off it.
_OWS = " \t"


def bearer_token(header: str | None) -> str:
    """The key in an Authorization header; ApiError(missing_api_key) when there is none."""
    if not header:
        raise ApiError("missing_api_key", "send the header Authorization: Bearer <API key>")
    if header.startswith("Bearer "):  # what clients send: the same answer as the general case
        token = header[7:].strip(_OWS)
        if token:
            return token
    scheme, _, token = header.strip(_OWS).partition(" ")
    token = token.strip(_OWS)
    if scheme.lower() != "bearer" or not token:
        raise ApiError("missing_api_key", "the Authorization header must be: Bearer <API key>")
    return token


def requires_key(request: web.Request) -> bool:
    """Matched /v1 routes need a key; unknown paths and methods answer 404/405 first."""
    match_info = request.match_info
    if match_info.http_exception is not None:
        return False
    # The route's own path, not the request's: that one would be decoded for each request.
    return match_info.route.resource.canonical.startswith("/v1/")  # type: ignore[union-attr]


async def authenticate(request: web.Request) -> Principal | None:
    """Resolve the caller's key into request[PRINCIPAL] (and return it), or raise the 401.
    None when the request needs no key."""
    if request.method == "OPTIONS" or not requires_key(request):
        return None
    given = request.headers.getall("Authorization", ())
    app = request.app
    if not given and request.match_info.route.resource.canonical in _ANONYMOUS_ROUTES:  # type: ignore[union-attr]
        # No header at all: the public. A header, even an empty or a wrong one, is a key
        # to check: a broken client is told so, never silently served as the public.
        public = app[appkeys.PUBLIC_CALLERS].of(request)
        request[appkeys.PRINCIPAL] = public
        return public
    token = bearer_token(given[0] if given else None)
    if len(given) > 1:
        # Which one counts would be a guess (a proxy may have checked the other): none.
        raise ApiError("missing_api_key", "send one Authorization header, not several")
    authenticator = app[appkeys.AUTHENTICATOR]
    principal = authenticator.cached(token)
    failures = app[appkeys.AUTH_FAILURES]
    address: str | None = None  # the client's, found only when a key is not known
    if isinstance(principal, NotCached):
        # A lookup is what a flood of made-up keys costs: none for an address over its
        # limit of refused keys (edge.auth.failures).
        address = failures.key_of(request)
        denied = failures.blocked(address)
        if denied is not None:
            raise too_many_failures(denied)
        try:
            principal = await authenticator.authenticate(token)
        except StoreUnavailable:
            raise unverifiable(request) from None
    if principal is None:
        counted = failures.failed(address or failures.key_of(request))
        if not counted.allowed:
            raise too_many_failures(counted)
        raise ApiError("invalid_api_key", "the API key is unknown or revoked")
    if principal.suspended and request.path != ME.path:
        # 403 is listed for /v1/me only: there a suspended account learns why (see
        # docs/accounts.md); everywhere else the key simply does not work.
        raise ApiError("invalid_api_key", "the API key's account is suspended; see GET /v1/me")
    request[appkeys.PRINCIPAL] = principal
    return principal


@web.middleware
async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The key step, under the error step: the caller's key is checked before anything
    below runs (`authenticate`), and request[PRINCIPAL] tells the steps and handlers below
    who calls."""
    await authenticate(request)
    return await handler(request)
