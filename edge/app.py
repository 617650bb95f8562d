"""The application factory: config in, a ready aiohttp application out."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import hdrs, web

from edge import appkeys
from edge.auth.authenticate import authenticate
from edge.config import Config
from edge.handlers import account, health, openapi, programs, static
from edge.http import cors, ratelimit, wire
from edge.http.errors import ApiError
from edge.http.middlewares import REQUEST_ID_HEADER, Handler, new_request_id, response_for
from edge.http.wire import PreparedResponse

log = logging.getLogger("edge")


async def _secret_context(app: web.Application) -> AsyncIterator[None]:
    app[appkeys.SECRET] = app[appkeys.CONFIG].resolved_secret()
    yield


@web.middleware
async def edge_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The steps every request goes through, outermost first: request id, errors, CORS,
    key (auth), rate limit; each is its module's plain function.

    One aiohttp middleware calling them costs fewer instructions per request than a chain
    of them: each layer adds a coroutine, its awaits and its frames to every request.
    """
    # Request id: every response, errors included, gets it.
    request[appkeys.REQUEST_ID] = rid = new_request_id()
    try:
        app = request.app  # one lookup (a property walking the match info), not one per step
        policy = app[appkeys.CORS]
        if request.method == "OPTIONS" and cors.is_preflight(request):
            response = cors.preflight_response(policy, request.headers.get("Origin"))
        else:
            state: ratelimit.RateState | None = None
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
                        # `headers`, a raised 304 Not Modified is sent with them.
                        exc.headers.update(ratelimit.rate_headers(state))
                        raise
            except Exception as exc:
                # Errors become responses under the CORS step, so they carry its headers.
                state = None
                response = response_for(request, exc)
            # The headers this step adds to the answer, in their order (rate limit, CORS,
            # request id), written at once: each CIMultiDict write has its cost.
            if policy.any_origin and type(response) is PreparedResponse:
                # A directory page (edge.http.wire): these as header lines, which need no
                # check; every value is a number, a constant or the request id.
                rate = "" if state is None else ratelimit.rate_lines(state)
                response.add_lines(f"{rate}{cors.ANY_ORIGIN_LINES}{REQUEST_ID_HEADER}: {rid}\r\n")
                return response
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


def direct_handler(app: web.Application) -> Handler:
    """What aiohttp's `Application._handle` does for this app, calling `edge_middleware`
    itself instead of through aiohttp's middleware chain.

    For an app with middlewares, aiohttp wraps each handler in a chain built per request
    from a cache (`_cached_build_middleware`): a `partial` per middleware and its own
    `_fix_request_current_app` layer, which sets `match_info.current_app` to the app it is
    already (one app, no sub-applications). That chain cost 14,000 of the ~327,000 CPU
    instructions of a cached `/v1/programs` request (bench/README.md, Directory, session
    5). The rest is aiohttp's, line for line: route resolution (404 and 405 included),
    the `Expect` handler, then the one middleware around the route's handler, for every
    request. tests/edge_programs/test_wire.py compares the bytes of both over a matrix
    of requests.

    One shortcut in resolution: a route of a fixed path (every one but a programme's by
    slug) is found by its method and path in one dict, as aiohttp's PlainResource
    matches it; aiohttp's `resolve` walks the path's prefixes through coroutines, which
    cost 6,000 instructions more (bench/README.md, Directory, session 6). Any other
    request goes to `resolve`.
    """
    router = app.router
    fixed = fixed_routes(router)

    async def handle(request: web.Request) -> web.StreamResponse:
        route = fixed.get((request.method, request.rel_url.path_safe))
        if route is None:
            match_info = await router.resolve(request)
        else:
            match_info = web.UrlMappingMatchInfo({}, route)
        match_info.add_app(app)
        match_info.freeze()
        request._match_info = match_info
        if request.headers.get(hdrs.EXPECT):
            response = await match_info.expect_handler(request)
            await request.writer.drain()
            if response is not None:
                return response
        return await edge_middleware(request, match_info.handler)

    return handle


def fixed_routes(router: web.UrlDispatcher) -> dict[tuple[str, str], web.AbstractRoute]:
    """(method, path) -> route, for the routes of fixed paths (`PlainResource`), as
    aiohttp's `resolve` finds them: it tries the resources indexed under the whole path
    first, in the order they were added, so the first one with the method wins. A path
    under which another kind of resource was indexed before, and a route for any method
    (`*`), are left to `resolve`."""
    fixed: dict[tuple[str, str], web.AbstractRoute] = {}
    others: set[str] = set()  # index keys of the other resources so far
    for resource in router.resources():
        if type(resource) is not web.PlainResource:
            others.add(_index_key(resource.canonical))
            continue
        path = resource.get_info()["path"]
        if _index_key(path) in others:
            continue
        for route in resource:
            if route.method != hdrs.METH_ANY:
                fixed.setdefault((route.method, path), route)
    return fixed


def _index_key(canonical: str) -> str:
    # aiohttp's UrlDispatcher._get_resource_index_key (3.14), from the public `canonical`.
    if "{" in canonical:
        canonical = canonical.partition("{")[0].rpartition("/")[0]
    return canonical.rstrip("/") or "/"


def use_direct_handler(app: web.Application) -> None:
    """Serve `app` through `direct_handler` when its one middleware is `edge_middleware`.

    aiohttp's servers (`web.run_app`, AppRunner, the test server) take the app's `_handle`
    as their request handler once it has started; this is the one place it is replaced,
    on startup, when the middlewares are set. With other middlewares (the site's, with
    `serve_site`), sub-applications, or an aiohttp the fast path was not checked against
    (`edge.http.wire.VERIFIED_AIOHTTP`), aiohttp's own `_handle` and chain serve it."""
    app.on_startup.insert(0, _choose_handler)


async def _choose_handler(app: web.Application) -> None:
    if not wire.ENABLED:
        log.warning(
            "aiohttp %s is not a release the edge's fast path was checked against (%s): "
            "answering through aiohttp's own response path",
            aiohttp.__version__,
            ", ".join(f"{series}x" for series in wire.VERIFIED_AIOHTTP),
        )
        return
    # add_subapp and add_domain both add a PrefixedSubAppResource (or a subclass).
    subapps = any(isinstance(r, web.PrefixedSubAppResource) for r in app.router.resources())
    if list(app.middlewares) == [edge_middleware] and not subapps:
        # object.__setattr__: in aiohttp's debug mode (python -X dev), Application's own
        # __setattr__ warns about any attribute it does not list.
        object.__setattr__(app, "_handle", direct_handler(app))


def create_app(config: Config) -> web.Application:
    """Build the edge application for `config` (resources open on startup, close on cleanup)."""
    app = web.Application(middlewares=[edge_middleware])
    use_direct_handler(app)
    app[appkeys.CONFIG] = config
    app[appkeys.CORS] = cors.policy(config.cors_origins)
    app.cleanup_ctx.append(_secret_context)
    programs.setup(app)
    account.setup(app)
    openapi.setup(app)
    ratelimit.setup(app)
    health.setup(app)
    static.setup(app)  # the HTML directory at /, when config.serve_site (after the API)
    return app
