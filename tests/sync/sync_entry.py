"""A store factory for `python -m sync` in tests: an empty in-memory store."""

from __future__ import annotations

from sync_support import FakeClock, MemoryStore, decrypt


async def empty_store():
    return MemoryStore(FakeClock()), decrypt
