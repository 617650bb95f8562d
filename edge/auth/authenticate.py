"""Authentication: `Authorization: Bearer <key>` on every /v1 path."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web

from accounts.store.base import StoreUnavailable
from contract.endpoints import ENDPOINTS, ME
from edge import appkeys
from edge.http.errors import ApiError


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the key that authenticated the request and its account."""

    key_id: str
    account_uid: str
    plan: str
    prefix: str
    label: str
    scopes: tuple[str, ...]
    suspended: bool = False
    # The account as read together with the key (accounts.store.AccountView): /v1/me shows it,
    # so it is as fresh as the key's cache entry and never needs a store call of its own.
    account: Any = field(default=None, compare=False, repr=False)


class NotCached:
    """What `Authenticator.cached` answers when the key's answer is not at hand."""


NOT_CACHED = NotCached()


class Authenticator(Protocol):
    async def authenticate(self, key: str) -> Principal | None:
        """The principal of a key, or None when unknown or revoked.

        Raises StoreUnavailable when the key cannot be verified right now (a key not seen
        since start while the account store is down).
        """
        ...

    def cached(self, key: str) -> Principal | NotCached | None:
        """What `authenticate` would answer, when it can without waiting (a fresh cache
        entry), else NOT_CACHED. The auth step calls it first: almost every request is
        a cache hit, and a plain call costs less than a coroutine."""
        ...


_STATUSES_BY_ROUTE = {e.path: e.statuses for e in ENDPOINTS}


def unverifiable(request: web.Request) -> ApiError:
    """The answer for a key that cannot be checked because the account store is down.

    503 where the endpoint lists it; elsewhere (/v1/programs/{slug}, /v1/me list no 503)
    401, with Retry-After and a message saying it is temporary (docs/accounts.md).
    """
    retry = {"Retry-After": str(request.app[appkeys.CONFIG].retry_after)}
    route = request.match_info.route.resource
    canonical = route.canonical if route is not None else request.path
    if 503 in _STATUSES_BY_ROUTE.get(canonical, ()):
        return ApiError(
            "unavailable", "the API key cannot be verified right now; retry later", headers=retry
        )
    return ApiError(
        "invalid_api_key",
        "the API key cannot be verified right now (account store unavailable); retry later",
        headers=retry,
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


async def authenticate(
    request: web.Request, app: web.Application | None = None
) -> Principal | None:
    """The auth step: resolve the caller's key into request[PRINCIPAL] (and return it), or
    raise the 401. None when the request needs no key.

    `app` is `request.app` (passed by the middleware, which has it already).
    """
    if request.method == "OPTIONS" or not requires_key(request):
        return None
    given = request.headers.getall("Authorization", ())
    token = bearer_token(given[0] if given else None)
    if len(given) > 1:
        # Which one counts would be a guess (a proxy may have checked the other): none.
        raise ApiError("missing_api_key", "send one Authorization header, not several")
    if app is None:
        app = request.app
    authenticator = app[appkeys.AUTHENTICATOR]
    principal = authenticator.cached(token)
    if principal is NOT_CACHED:
        try:
            principal = await authenticator.authenticate(token)
        except StoreUnavailable:
            raise unverifiable(request) from None
    if principal is None:
        raise ApiError("invalid_api_key", "the API key is unknown or revoked")
    if principal.suspended and request.path != ME.path:
        # 403 is listed for /v1/me only: there a suspended account learns why (see
        # docs/accounts.md); everywhere else the key simply does not work.
        raise ApiError("invalid_api_key", "the API key's account is suspended; see GET /v1/me")
    request[appkeys.PRINCIPAL] = principal
    return principal
