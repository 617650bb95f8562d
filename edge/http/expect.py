"""The `Expect` request header: ignored by every route."""

from __future__ import annotations

from aiohttp import web


async def ignore_expectation(request: web.Request) -> None:
    """The routes' `expect_handler`: an `Expect` header is ignored.

    It is for requests with a body, and every endpoint is GET or HEAD; aiohttp's default
    answers any expectation but 100-continue with a plain-text 417, a status no endpoint
    lists, before any middleware runs (so without JSON body or request id)."""
    return None
