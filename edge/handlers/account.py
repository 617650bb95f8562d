"""GET /v1/me and /v1/commissions (not built yet)."""

from __future__ import annotations

from aiohttp import web


def setup(app: web.Application) -> None:
    """Register the account routes and the account store."""
