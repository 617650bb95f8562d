"""The PostgreSQL twin of tests/edge/account/test_no_leaks.py's file check: nothing the
server writes to disk (tables, indexes, WAL) holds an API key or plain credentials."""

from __future__ import annotations

from pathlib import Path

from support.accountkit import new_account

from accounts.crypto import encrypt_credentials
from store import connections

PLANTED = b"PLANTED-PG-CREDENTIAL-5d1e"


def disk_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())


async def test_the_server_files_hold_no_key_and_no_plain_credentials(store, pg_server, edge_config):
    account = await new_account(store)
    secret = edge_config.secret_key.encode()
    await store.write(
        connections.connect,
        account.uid,
        "awin",
        encrypt_credentials(secret, account.uid, "awin", PLANTED),
    )
    pg_server.sql("CHECKPOINT")  # every page on disk, not only in the WAL
    raw = disk_bytes(pg_server.data_dir)
    assert account.prefix.encode() in raw  # the prefix is kept, to list and revoke keys
    assert account.key.encode() not in raw and account.key[12:].encode() not in raw
    assert PLANTED not in raw
