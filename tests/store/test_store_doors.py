"""The store's two doors: `read(fn, *args)` and `write(fn, *args)` run a session function."""

from __future__ import annotations

import pytest

from store import accounts, open_store
from store.core import Session


async def count_accounts(s: Session, plan: str) -> int:
    return int(await s.fetchval("SELECT COUNT(*) FROM accounts WHERE plan = ?", plan))


async def add_then_fail(s: Session, uid: str) -> None:
    await s.execute(
        "INSERT INTO accounts (uid, email, plan, created_at) VALUES (?, NULL, 'pro', ?)",
        uid,
        "2026-01-01T00:00:00Z",
    )
    raise RuntimeError("after the insert")


async def test_a_write_commits_and_a_failed_one_leaves_nothing(database: str):
    store = await open_store(database, writable=True, readers=1)
    try:
        await store.write(accounts.create, None, "pro", uid="acc_doors")
        assert await store.read(count_accounts, "pro") == 1
        with pytest.raises(RuntimeError, match="after the insert"):
            await store.write(add_then_fail, "acc_rolled_back")
        assert await store.read(count_accounts, plan="pro") == 1
        assert await store.read(accounts.find, "acc_rolled_back") is None
    finally:
        await store.close()
