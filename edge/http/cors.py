"""CORS for browser clients: preflights, and the CORS headers on every answer, errors too.

The headers of an answer are set from aiohttp's public `on_response_prepare` signal (as
edge.http.security does), so that an answer a handler streams, which has sent its headers
before any middleware sees it, carries them as well as a plain one or an error.

`config.cors_origins` is `*` (any origin: the API is keyed, not cookie-based, so a wildcard
exposes nothing a key does not already grant) or a comma-separated list of origins, of which
the matching one is echoed with `Vary: Origin`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from contract import ratelimit

# Every path answers these and no other (the 405's Allow, the preflight's Allow-Methods).
ALLOWED_METHODS = "GET, HEAD"
ALLOW_HEADERS = "Authorization, If-None-Match"
EXPOSE_HEADERS = ", ".join(("ETag", "Link", "X-Request-Id", *ratelimit.NAMES, "Retry-After"))
# Chromium caps a preflight's cache life at 2 hours; asking for more buys nothing.
MAX_AGE = "7200"
# What an answer carries when any origin is allowed (`*`): the same for every request.
ANY_ORIGIN_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": EXPOSE_HEADERS,
}


@dataclass(frozen=True, slots=True)
class CorsPolicy:
    any_origin: bool
    origins: frozenset[str]

    def allowed(self, origin: str | None) -> str | None:
        """The Access-Control-Allow-Origin value for a request from `origin`, if any."""
        if self.any_origin:
            return "*"
        if origin is not None and origin.lower() in self.origins:
            return origin
        return None


@functools.lru_cache(maxsize=8)
def policy(setting: str) -> CorsPolicy:
    """Parse `config.cors_origins` (memoised: the setting never changes while serving)."""
    items = {item.strip().rstrip("/").lower() for item in setting.split(",") if item.strip()}
    return CorsPolicy(any_origin="*" in items, origins=frozenset(items - {"*"}))


def _add_vary(response: web.StreamResponse, name: str) -> None:
    vary = response.headers.get("Vary")
    response.headers["Vary"] = f"{vary}, {name}" if vary else name


def is_preflight(request: web.Request) -> bool:
    """An OPTIONS a browser sends before a cross-origin request, to a path we serve.

    The router answers OPTIONS on our GET routes with 405 (method not allowed): that is
    what tells a known path from an unknown one, which keeps its 404.
    """
    if request.method != "OPTIONS" or "Origin" not in request.headers:
        return False
    if "Access-Control-Request-Method" not in request.headers:
        return False
    exc = request.match_info.http_exception
    return exc is not None and exc.status == 405


def preflight_response(cors: CorsPolicy, origin: str | None) -> web.Response:
    # 200 with an empty body, not the usual 204: an endpoint answers 200, 304 or one of its
    # listed errors, nothing else (docs/spec/api-decisions.md), and a browser takes any 2xx.
    response = web.Response(status=200)
    allowed = cors.allowed(origin)
    if allowed is not None:
        # Without Allow-Origin the browser refuses the real request; no need to say more.
        response.headers["Access-Control-Allow-Origin"] = allowed
        response.headers["Access-Control-Allow-Methods"] = ALLOWED_METHODS
        response.headers["Access-Control-Allow-Headers"] = ALLOW_HEADERS
        response.headers["Access-Control-Max-Age"] = MAX_AGE
    if not cors.any_origin:
        _add_vary(response, "Origin")
    return response


def add_cors_headers(response: web.StreamResponse, cors: CorsPolicy, origin: str | None) -> None:
    """The CORS headers of an actual (non-preflight) answer.

    They are sent whether or not the request had an Origin: a browser may reuse a cached
    answer to a plain request for a cross-origin one, which must still pass the check.
    """
    if cors.any_origin:
        # "*" allows every origin (cors.allowed is "*"): no Vary.
        response.headers.update(ANY_ORIGIN_HEADERS)
        return
    allowed = cors.allowed(origin)
    if allowed is not None:
        response.headers["Access-Control-Allow-Origin"] = allowed
        response.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
    _add_vary(response, "Origin")


def cors_middleware(cors: CorsPolicy) -> Middleware:
    """The preflight step, under the request id step, for the policy of
    `config.cors_origins`: a preflight is answered here; any other request goes on."""

    @web.middleware
    async def cors_step(request: web.Request, handler: Handler) -> web.StreamResponse:
        if is_preflight(request):
            return preflight_response(cors, request.headers.get("Origin"))
        return await handler(request)

    return cors_step


def install(app: web.Application, cors: CorsPolicy) -> None:
    """Answer preflights and put the CORS headers on every other answer of `app`."""

    async def stamp_cors_headers(request: web.Request, response: web.StreamResponse) -> None:
        if not is_preflight(request):
            add_cors_headers(response, cors, request.headers.get("Origin"))

    app.on_response_prepare.append(stamp_cors_headers)
