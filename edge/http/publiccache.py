"""The public caching step: a directory answer to a request without a key (the public) is
made cacheable by shared caches (`PUBLIC_CACHE_CONTROL`); the handlers write the private
`Cache-Control` of a keyed answer, which it keeps (docs/directory-api.md)."""

from __future__ import annotations

from collections.abc import MutableMapping

from aiohttp import web
from aiohttp.typedefs import Handler

from edge import appkeys
from edge.auth.principal import Principal
from edge.http.httpcache import PUBLIC_CACHE_CONTROL


def for_the_public(headers: MutableMapping[str, str], principal: Principal | None) -> None:
    """Make a directory answer's (200 or 304) `Cache-Control` public when it answers a
    request without a key."""
    if principal is not None and principal.anonymous:
        headers["Cache-Control"] = PUBLIC_CACHE_CONTROL


@web.middleware
async def public_cache_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The public caching step, innermost of the request steps: on the way out, the 200 or
    304 answer to the public gets the public `Cache-Control`, a raised 304 too."""
    principal = request.get(appkeys.PRINCIPAL)
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        if exc.status == 304:
            for_the_public(exc.headers, principal)
        raise
    if response.status in (200, 304):
        for_the_public(response.headers, principal)
    return response
