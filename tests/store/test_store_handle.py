"""StoreHandle: a store unreachable at start is retried in the background with backoff; a
store that cannot be opened for another reason is refused at once. Over real SQLite files;
the outage is an opener that fails its first attempts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from store import StoreError, StoreUnavailable, accounts, open_store, reached_over_network
from store.handle import Backoff, StoreHandle

FAST = Backoff(first=0.01, factor=2.0, cap=0.05)


def flaky_opener(path: Path, failures: int):
    """Opens the SQLite store at `path`, after `failures` attempts that find it down."""
    attempts = []

    async def opener():
        attempts.append(1)
        if len(attempts) <= failures:
            raise StoreUnavailable(f"down (attempt {len(attempts)})")
        return await open_store(str(path), writable=True)

    return opener, attempts


async def test_an_unreachable_store_is_retried_until_it_opens(tmp_path):
    opener, attempts = flaky_opener(tmp_path / "s.sqlite3", failures=3)
    handle = StoreHandle(opener, backoff=FAST)
    await handle.start()
    assert handle.store is None and handle.problem == "down (attempt 1)"
    # Both doors fail as in an outage.
    with pytest.raises(StoreUnavailable, match="not connected: down"):
        await handle.read(accounts.lookup_key, "0" * 64)
    with pytest.raises(StoreUnavailable, match="not connected: down"):
        await handle.write(accounts.create, None, "free")
    with pytest.raises(StoreUnavailable):
        handle.get()
    try:
        async with asyncio.timeout(10):
            store = await handle.opened()
        assert len(attempts) == 4 and handle.problem is None
        assert handle.get() is store
        uid = await handle.write(accounts.create, None, "free")  # through the open store
        assert (await handle.read(accounts.find, uid)).plan == "free"
    finally:
        await handle.close()


async def test_the_handle_has_two_doors_and_nothing_else(tmp_path):
    opener, _ = flaky_opener(tmp_path / "s.sqlite3", failures=0)
    handle = StoreHandle(opener)
    await handle.start()
    try:
        # No forwarding of anything else: an operation goes through `read` or `write`.
        assert not hasattr(handle, "lookup_key") and not hasattr(handle, "_read_pool")
        assert await handle.read(accounts.lookup_key, "0" * 64) is None
    finally:
        await handle.close()


async def test_without_retry_an_unusable_store_refuses_to_start(tmp_path):
    path = tmp_path / "not-a-db.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    handle = StoreHandle(lambda: open_store(str(path)), retry=False)
    with pytest.raises(StoreError):
        await handle.start()
    await handle.close()


async def test_closing_stops_the_retries(tmp_path):
    opener, attempts = flaky_opener(tmp_path / "s.sqlite3", failures=10**9)
    handle = StoreHandle(opener, backoff=FAST)
    await handle.start()
    await asyncio.sleep(0.1)
    await handle.close()
    tried = len(attempts)
    await asyncio.sleep(0.1)
    assert len(attempts) == tried and handle.store is None


def test_backoff_grows_to_its_cap():
    delays = Backoff(first=0.5, factor=2.0, cap=3.0).delays()
    assert [next(delays) for _ in range(6)] == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]


@pytest.mark.parametrize(
    ("address", "remote"),
    [
        ("postgresql://u@h/db", True),
        ("postgres://u@h/db", True),
        ("POSTGRESQL://u@h/db", True),
        ("sqlite:///var/edge.sqlite3", False),
        ("var/edge.sqlite3", False),
    ],
)
def test_only_a_server_is_waited_for(address, remote):
    assert reached_over_network(address) is remote
