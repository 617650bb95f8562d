"""Helpers of the directory tests (test modules import these; conftest.py holds fixtures).

The edge under test authenticates with the real authenticator and a real SQLite account
store (made once per session by conftest.py) holding one pro account and `TEST_KEY`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from accounts import apikeys
from edge import appkeys
from edge.directory.pages import DirectoryState
from store import accounts, open_store

# A well-formed key (marker, 32 base62 characters, checksum) fixed so tests can name it.
_RANDOM = "DirectoryTests0123456789abcdefgh"
TEST_KEY = apikeys.MARKER + _RANDOM + apikeys.checksum(_RANDOM)
AUTH = {"Authorization": f"Bearer {TEST_KEY}"}


async def make_accounts(path: Path) -> None:
    """A real account store at `path` with one pro account owning TEST_KEY."""
    store = await open_store(str(path), writable=True)
    try:
        uid = await store.write(accounts.create, "directory-tests@example.com", "pro")
        await store.write(
            accounts.create_key,
            uid,
            apikeys.key_hash(TEST_KEY),
            apikeys.prefix_of(TEST_KEY),
            "directory tests",
            ("read",),
        )
    finally:
        await store.close()


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
