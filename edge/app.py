"""The application factory: config in, a ready aiohttp application out."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from edge import appkeys, cors, health, ratelimit, static
from edge.auth import authenticate
from edge.config import Config
from edge.errors import ApiError
from edge.handlers import account, openapi, programs
from edge.middlewares import Handler, new_request_id, response_for
from edge.wire import add_headers


async def _secret_context(app: web.Application) -> AsyncIterator[None]:
    app[appkeys.SECRET] = app[appkeys.CONFIG].resolved_secret()
    yield


@web.middleware
async def edge_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The steps every request goes through, outermost first: request id, errors, CORS,
    key (auth), rate limit; each is its module's plain function.

    One aiohttp middleware calling them costs less than one middleware each (a coroutine
    and its frames per layer and per request: bench/README.md, Directory, "Middleware stack").
    """
    # Request id: every response, errors included, gets it.
    request[appkeys.REQUEST_ID] = rid = new_request_id()
    try:
        app = request.app  # one lookup (a property walking the match info), not one per step
        policy = cors.policy(app[appkeys.CONFIG].cors_origins)
        origin = request.headers.get("Origin")
        if request.method == "OPTIONS" and cors.is_preflight(request):
            response = cors.preflight_response(policy, origin)
        else:
            # The headers this step adds to the answer, in their order (rate limit, CORS,
            # request id), written with one update: each CIMultiDict write has its cost.
            added: dict[str, str] | None = None
            try:
                principal = await authenticate(request, app)
                added = await ratelimit.count(request, app, principal)
                if added is None:
                    response = await handler(request)
                else:
                    try:
                        response = await handler(request)
                    except (ApiError, web.HTTPException) as exc:
                        # Counted, so its answer says so too: the error step keeps
                        # `headers`, a raised 304 Not Modified is sent with them.
                        exc.headers.update(added)
                        raise
            except Exception as exc:
                # Errors become responses under the CORS step, so they carry its headers.
                added = None
                response = response_for(request, exc)
            added = cors.add_cors_headers(response, policy, origin, added)
            if added is not None:
                added["X-Request-Id"] = rid
                add_headers(response, added)
                return response
    except Exception as exc:
        response = response_for(request, exc)
    response.headers["X-Request-Id"] = rid
    return response


def create_app(config: Config) -> web.Application:
    """Build the edge application for `config` (resources open on startup, close on cleanup)."""
    app = web.Application(middlewares=[edge_middleware])
    app[appkeys.CONFIG] = config
    app.cleanup_ctx.append(_secret_context)
    programs.setup(app)
    account.setup(app)
    openapi.setup(app)
    ratelimit.setup(app)
    health.setup(app)
    static.setup(app)  # the HTML directory at /, when config.serve_site (after the API)
    return app
