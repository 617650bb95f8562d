"""The request steps, as one aiohttp middleware (`edge_middleware`): request id, errors,
CORS, key (auth), rate limit, outermost first; each is its module's plain function. An
answer to the public (a directory request without a key) is made cacheable by shared
caches on the way out (`edge.http.httpcache.for_the_public`).

`edge.app.create_app` installs it, once, as the application's first middleware.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from edge import appkeys
from edge.auth.authenticate import authenticate
from edge.http import cors, ratelimit
from edge.http.errors import ApiError, response_for
from edge.http.httpcache import for_the_public
from edge.http.limiter import RateState
from edge.http.requestid import CURRENT_REQUEST_ID, REQUEST_ID_HEADER, new_request_id

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

JSON = "application/json"


async def ignore_expectation(request: web.Request) -> None:
    """The routes' `expect_handler`: an `Expect` header is ignored.

    It is for requests with a body, and every endpoint is GET or HEAD; aiohttp's default
    answers any expectation but 100-continue with a plain-text 417, a status no endpoint
    lists, before any middleware runs (so without JSON body or request id)."""
    return None


@web.middleware
async def edge_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The steps every request goes through, outermost first: request id, errors, CORS,
    key (auth), rate limit.

    One aiohttp middleware calling plain functions, not one middleware per step: aiohttp
    wraps every middleware layer in a coroutine call per request, which the steps do not
    need (they have no state of their own between the request and the answer).
    """
    # Request id: every response, errors included, gets it.
    request[appkeys.REQUEST_ID] = rid = new_request_id()
    CURRENT_REQUEST_ID.set(rid)  # for the log lines of this request (edge.logs)
    try:
        response: web.StreamResponse
        app = request.app  # one lookup, not one per step
        policy = app[appkeys.CORS]
        if request.method == "OPTIONS" and cors.is_preflight(request):
            response = cors.preflight_response(policy, request.headers.get("Origin"))
        else:
            state: RateState | None = None
            try:
                principal = await authenticate(request, app)
                state = await ratelimit.count(request, app, principal)
                if state is None:
                    response = await handler(request)
                else:
                    try:
                        response = await handler(request)
                    except (ApiError, web.HTTPException) as exc:
                        # Counted, so its answer says so too: the error step keeps
                        # `headers`, a raised 304 Not Modified is sent with them (once
                        # its cost is given back, as for a returned one below).
                        if exc.status == 304:
                            state = await ratelimit.refund(request, app, principal, state)
                            for_the_public(exc.headers, principal)
                        exc.headers.update(ratelimit.rate_headers(state))
                        raise
                    if response.status == 304:
                        # A conditional hit costs the key nothing (edge.http.ratelimit).
                        state = await ratelimit.refund(request, app, principal, state)
                    if response.status in (200, 304):
                        for_the_public(response.headers, principal)
            except Exception as exc:
                # Errors become responses under the CORS step, so they carry its headers.
                state = None
                response = response_for(request, exc)
            # The headers this step adds to the answer, in their order (rate limit, CORS,
            # request id), written in one update: each CIMultiDict write has its cost.
            added = None if state is None else ratelimit.rate_headers(state)
            # The Origin header is read only when the answer depends on it.
            origin = None if policy.any_origin else request.headers.get("Origin")
            added = cors.add_cors_headers(response, policy, origin, added)
            if added is not None:
                added[REQUEST_ID_HEADER] = rid
                response.headers.update(added)
                return response
    except Exception as exc:
        response = response_for(request, exc)
    response.headers[REQUEST_ID_HEADER] = rid
    return response
