"""GET /v1/programs and /v1/programs/{slug} (not built yet)."""

from __future__ import annotations

from aiohttp import web


def setup(app: web.Application) -> None:
    """Register the directory routes and the build loader."""
