"""The application factory: config in, a ready aiohttp application out."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from edge import appkeys, health, ratelimit, static
from edge.auth import auth_middleware
from edge.config import Config
from edge.cors import cors_middleware
from edge.handlers import account, openapi, programs
from edge.middlewares import error_middleware, request_id_middleware
from edge.ratelimit import ratelimit_middleware


async def _secret_context(app: web.Application) -> AsyncIterator[None]:
    app[appkeys.SECRET] = app[appkeys.CONFIG].resolved_secret()
    yield


def create_app(config: Config) -> web.Application:
    """Build the edge application for `config` (resources open on startup, close on cleanup)."""
    app = web.Application(
        middlewares=[
            request_id_middleware,  # outermost: every response, errors included, gets its id
            error_middleware,
            cors_middleware,
            auth_middleware,
            ratelimit_middleware,
        ],
    )
    app[appkeys.CONFIG] = config
    app.cleanup_ctx.append(_secret_context)
    programs.setup(app)
    account.setup(app)
    openapi.setup(app)
    ratelimit.setup(app)
    health.setup(app)
    static.setup(app)  # the HTML directory at /, when config.serve_site (after the API)
    return app
