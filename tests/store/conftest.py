"""Fixtures of the store's own tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from store import AccountStore, open_store


@pytest.fixture
async def writable(database: str) -> AsyncIterator[AccountStore]:
    """A writable store on the test's database (both engines), closed after the test."""
    store = await open_store(database, writable=True, readers=1)
    try:
        yield store
    finally:
        await store.close()
