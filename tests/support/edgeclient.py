"""The type of the tests' one client fixture, `edge_client` (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp.test_utils import TestClient

# `await edge_client(config=None, *, routes=None, store=None, server_kwargs=None, **overrides)`
EdgeClientFactory = Callable[..., Awaitable[TestClient]]
