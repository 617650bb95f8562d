"""Helpers of the directory tests (test modules import these; conftest.py holds fixtures).

The account half is wired in now, but these tests keep a tiny authenticator accepting
`TEST_KEY` only, installed over the real one, so they need no account store data.
"""

from __future__ import annotations

import asyncio
import hmac
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient

from edge import appkeys
from edge.auth import Principal
from edge.directory import DirectoryState

TEST_KEY = "aff_test_0123456789abcdef0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TEST_KEY}"}
PRINCIPAL = Principal(
    key_id="key_test",
    account_uid="acct_test",
    plan="pro",
    prefix="aff_test_0123",
    label="directory tests",
    scopes=("read",),
)


class StaticAuthenticator:
    """Accepts TEST_KEY, nothing else."""

    async def authenticate(self, key: str) -> Principal | None:
        return PRINCIPAL if hmac.compare_digest(key.encode(), TEST_KEY.encode()) else None


async def install_authenticator(app: web.Application) -> None:
    # on_startup runs after every cleanup context, so this wins over any real one.
    app[appkeys.AUTHENTICATOR] = StaticAuthenticator()


def directory_state(client: TestClient) -> DirectoryState:
    return client.app[appkeys.DIRECTORY]


async def wait_for_build(client: TestClient, build_id: str, within: float = 5.0) -> None:
    """Wait until the edge serves `build_id` (by its own polling)."""
    state = directory_state(client)
    for _ in range(int(within / 0.01)):
        if state.current is not None and state.current.build_id == build_id:
            return
        await asyncio.sleep(0.01)
    current = state.current.build_id if state.current else None
    raise AssertionError(f"edge still serves {current}, not {build_id}")


async def walk(
    client: TestClient, params: dict[str, str], limits: list[int], *, partial: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Follow nextCursor from the first page; check every page's invariants on the way.

    Returns the rows seen, in order, and the pages' `page` objects. One page per limit;
    running out of limits before the last page is an error unless `partial`.
    """
    rows: list[dict[str, Any]] = []
    pages: list[dict[str, Any]] = []
    query = dict(params)
    for limit in limits:
        query["limit"] = str(limit)
        resp = await client.get("/v1/programs", params=query, headers=AUTH)
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        page = body["page"]
        assert set(body) == {"data", "page"}
        assert page["limit"] == limit
        assert len(body["data"]) <= limit
        if pages:
            assert body["data"], "an empty trailing page"
        rows += body["data"]
        pages.append(page)
        if not page["hasMore"]:
            assert page["nextCursor"] is None
            assert "Link" not in resp.headers
            return rows, pages
        assert len(body["data"]) == limit
        assert isinstance(page["nextCursor"], str)
        link = resp.headers["Link"]
        assert link.endswith('>; rel="next"') and f"cursor={page['nextCursor']}" in link
        query["cursor"] = page["nextCursor"]
    assert partial, "more pages than limits"
    return rows, pages
