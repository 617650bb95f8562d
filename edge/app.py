"""The application factory: config in, a ready aiohttp application out.

Everything the application is made of is put together here, once: its middlewares, its
lifecycles (edge.lifecycle, in dependency order) and its routes. It uses aiohttp's public
API only: plain `web.Response`s, aiohttp's own routing and middleware chain.
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Middleware

from edge import appkeys
from edge.auth.authenticate import auth_middleware
from edge.config import Config
from edge.handlers import account, events, health, openapi, payments, programs, static
from edge.http import cors, security
from edge.http.errors import error_middleware
from edge.http.ratelimit import rate_limit_middleware
from edge.http.requestid import request_id_middleware
from edge.lifecycle import CONTEXTS, metrics_context, store_context, store_metrics_context
from edge.metrics import metrics_middleware, new_metrics


def create_app(config: Config) -> web.Application:
    """Build the edge application for `config` (resources open on startup, close on cleanup)."""
    # The request steps, outermost first, one middleware each (docs/api.md); the site's,
    # when it is served, goes innermost, so that the steps apply to its answers too.
    cors_policy = cors.policy(config.cors_origins)
    middlewares: list[Middleware] = [
        request_id_middleware,
        cors.cors_middleware(cors_policy),
        error_middleware,
        auth_middleware,
        rate_limit_middleware,
    ]
    if config.serve_site:
        middlewares.append(static.site_middleware)
    metrics = new_metrics() if config.metrics_port is not None else None
    if metrics is not None:
        # Outermost, so that it times and counts every answer, errors included.
        middlewares.insert(0, metrics_middleware(metrics))
    app = web.Application(middlewares=middlewares)
    app[appkeys.CONFIG] = config
    security.install(app)
    cors.install(app, cors_policy)
    # secret -> store -> authenticator -> limiter -> directory: entered in this order on
    # startup, left in the reverse order on cleanup.
    contexts = list(CONTEXTS)
    if metrics is not None:
        app[appkeys.METRICS] = metrics
        contexts.insert(contexts.index(store_context) + 1, store_metrics_context)
        contexts.append(metrics_context)
    app.cleanup_ctx.extend(contexts)
    # The API's routes; the site answers only what none of them matched.
    programs.setup(app)
    account.setup(app)
    payments.setup(app)
    events.setup(app)
    openapi.setup(app)
    health.setup(app)
    static.setup_docs(app)
    return app
