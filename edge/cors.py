"""CORS for browser clients (not built yet: passes requests through)."""

from __future__ import annotations

from aiohttp import web

from edge.middlewares import Handler


@web.middleware
async def cors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    return await handler(request)
