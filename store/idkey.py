"""The id key in the store: read it, or make it once (store.publicids turns row ids into the
ids the API shows with it). Its table (schema step 8) is one row, never shown by any read
path of the API."""

from __future__ import annotations

from store.core import Session
from store.publicids import KEY_BYTES


async def stored_key(s: Session) -> bytes | None:
    """The store's id key, None while it has none."""
    key = await s.fetchval("SELECT key FROM id_key WHERE id = 1")
    return None if key is None else bytes(key)


async def ensure_key(s: Session, candidate: bytes) -> bytes:
    """The store's id key: `candidate` if it had none, else the one it holds. Safe to race:
    the first insert wins, the others read what it wrote."""
    if len(candidate) != KEY_BYTES:
        raise ValueError(f"the id key is {KEY_BYTES} bytes")
    await s.execute(
        "INSERT INTO id_key (id, key, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING",
        candidate,
        s.now(),
    )
    key = await stored_key(s)
    assert key is not None  # inserted or already there, in this transaction
    return key
