"""Per-key rate limits (not built yet: passes requests through)."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from edge.middlewares import Handler


@dataclass(frozen=True, slots=True)
class RateState:
    """The limiter's decision for one request: what the RateLimit-* headers and /v1/me say."""

    limit: int
    window_seconds: int
    remaining: int
    reset_seconds: int
    allowed: bool = True


@web.middleware
async def ratelimit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    return await handler(request)
