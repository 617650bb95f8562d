"""Operations on connected networks: their credentials (ciphertext only), the sync
worker's leases and positions, and the outcomes of its runs.

Run them through the store's doors: `await store.write(connections.claim, uid, network,
worker, lease_seconds)`, `await store.read(connections.find_all)`. Whatever selects
credentials goes through the write door: read connections may never select them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from contract import vocabulary as v
from store.accounts import account_id
from store.base import (
    MAX_SYNC_COUNT,
    Conflict,
    ConnectionView,
    ImportResult,
    NewCommission,
    NotFound,
    SealedCredentials,
    check_network,
    check_sync,
    check_sync_reason,
    format_timestamp,
)
from store.commissions import check_batch, upsert_chunks
from store.core import Session
from store.events import record_disconnected

_CONNECTION_COLUMNS = (
    "a.uid, n.network, n.status, n.connected_at, n.last_sync_at, n.last_attempt_at, "
    "n.reason_code, n.reason_message, n.currency, n.sync_position, n.lease_owner, "
    "n.lease_expires_at, n.accounts, n.programs, n.transactions"
)


_CONNECTIONS = (
    f"SELECT {_CONNECTION_COLUMNS} FROM networks n JOIN accounts a ON a.id = n.account_id"
)


def _connection(row: Sequence[Any]) -> ConnectionView:
    return ConnectionView(*row)


async def connect(s: Session, account_uid: str, network: str, ciphertext: bytes) -> None:
    """Connect a network (status `never` until a sync is recorded) or replace its
    credentials (its last sync outcome stays)."""
    check_network(network)
    now = s.now()
    row_id = await account_id(s, account_uid)
    await s.execute(
        "INSERT INTO networks (account_id, network, status, connected_at) "
        "VALUES (?, ?, 'never', ?) "
        "ON CONFLICT (account_id, network) DO UPDATE SET connected_at = excluded.connected_at",
        row_id,
        network,
        now,
    )
    await s.execute(
        "INSERT INTO network_credentials (account_id, network, ciphertext, updated_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (account_id, network) DO UPDATE SET "
        "ciphertext = excluded.ciphertext, updated_at = excluded.updated_at",
        row_id,
        network,
        ciphertext,
        now,
    )


async def connect_import_only(s: Session, account_uid: str, network: str) -> bool:
    """Connect a network whose commissions come by file import only: no credentials, so
    the sync worker never lists it. False when the network is connected already (its
    credentials, if any, stay: disconnect it first to make it import-only)."""
    check_network(network)
    return bool(
        await s.execute(
            "INSERT INTO networks (account_id, network, status, connected_at) "
            "VALUES (?, ?, 'never', ?) ON CONFLICT (account_id, network) DO NOTHING",
            await account_id(s, account_uid),
            network,
            s.now(),
        )
    )


async def disconnect(s: Session, account_uid: str, network: str) -> None:
    """Remove a connection: its credentials go with it (no worker syncs it again; one
    syncing it now loses its lease and writes nothing more), its commissions stay, and a
    connection.disconnected event records it. NotFound when it is not connected."""
    check_network(network)
    row_id = await account_id(s, account_uid)
    found = await s.fetchval(
        "SELECT 1 FROM networks WHERE account_id = ? AND network = ?", row_id, network
    )
    if found is None:
        raise NotFound(f"account {account_uid} has not connected {network}")
    await record_disconnected(s, row_id, network)
    await s.execute(
        "DELETE FROM network_credentials WHERE account_id = ? AND network = ?", row_id, network
    )
    await s.execute("DELETE FROM networks WHERE account_id = ? AND network = ?", row_id, network)


async def record_sync(
    s: Session,
    account_uid: str,
    network: str,
    status: str,
    *,
    accounts: int,
    programs: int,
    transactions: int,
) -> None:
    """Record the outcome of a synchronisation of a connected network, with its counts."""
    counts = (accounts, programs, transactions)
    check_network(network)
    check_sync(status, counts)
    now = s.now()
    updated = await s.execute(
        "UPDATE networks SET status = ?, last_sync_at = ?, "
        "last_success_at = CASE WHEN ? THEN ? ELSE last_success_at END, "
        "accounts = ?, programs = ?, transactions = ? WHERE account_id = ? AND network = ?",
        status,
        now,
        status == "ok",
        now,
        *counts,
        await account_id(s, account_uid),
        network,
    )
    if not updated:
        raise NotFound(f"account {account_uid} has not connected {network}")


async def find(s: Session, account_uid: str, network: str) -> ConnectionView | None:
    """One connection with its sync state, or None."""
    row = await s.fetchrow(
        f"{_CONNECTIONS} WHERE a.uid = ? AND n.network = ?", account_uid, network
    )
    return None if row is None else _connection(row)


async def find_all(s: Session, account_uid: str | None = None) -> list[ConnectionView]:
    """Every connection (of one account: NotFound for an unknown one), by account then
    network."""
    if account_uid is None:
        rows = await s.fetch(f"{_CONNECTIONS} ORDER BY a.uid, n.network")
    else:
        await account_id(s, account_uid)  # NotFound for an unknown account
        rows = await s.fetch(f"{_CONNECTIONS} WHERE a.uid = ? ORDER BY n.network", account_uid)
    return [_connection(row) for row in rows]


async def due(s: Session, attempted_before: str, limit: int) -> list[ConnectionView]:
    """Connections to sync: credentials stored, account not suspended, not attempted since
    `attempted_before` or left behind by a worker that died (its lease ended unreleased),
    no live lease; least recently attempted first.

    Run it through the write door: a read connection's snapshot may predate a claim or a
    release another worker just committed, and the list would offer stale leases."""
    now = s.now()
    rows = await s.fetch(
        f"{_CONNECTIONS} JOIN network_credentials c "
        "ON c.account_id = n.account_id AND c.network = n.network "
        "WHERE NOT a.suspended "
        "AND (n.last_attempt_at IS NULL OR n.last_attempt_at < ? OR n.lease_owner IS NOT NULL) "
        "AND (n.lease_expires_at IS NULL OR n.lease_expires_at <= ?) "
        "ORDER BY coalesce(n.last_attempt_at, ''), a.uid, n.network LIMIT ?",
        attempted_before,
        now,
        limit,
    )
    return [_connection(row) for row in rows]


def lease_end(moment: dt.datetime, lease_seconds: float) -> dt.datetime:
    """When a lease taken at `moment` ends, rounded up to the whole second the store keeps:
    rounding down would end it early, and another worker could take the connection while
    its holder still counts on the time it asked for."""
    end = moment + dt.timedelta(seconds=max(1.0, lease_seconds))
    whole = end.replace(microsecond=0)
    return whole if whole == end else whole + dt.timedelta(seconds=1)


async def claim(
    s: Session,
    account_uid: str,
    network: str,
    worker: str,
    lease_seconds: float,
    *,
    attempted_before: str | None = None,
) -> bool:
    """Lease the connection to `worker` for `lease_seconds`: take the lease if it is free, expired or already `worker`'s (and, with
    `attempted_before`, if no one attempted the connection since). One conditional UPDATE:
    of two workers racing, the row lock lets one through and the other finds it taken; a
    worker whose due list predates another's whole sync finds it attempted and leaves it."""
    moment = s.moment()
    now = format_timestamp(moment)
    expires = format_timestamp(lease_end(moment, lease_seconds))
    due = ""
    params: list[Any] = [worker, expires, now, account_uid, network, worker, now]
    if attempted_before is not None:
        # A lease still set was never released: its holder died, the attempt did not end.
        due = "AND (last_attempt_at IS NULL OR last_attempt_at < ? OR lease_owner IS NOT NULL) "
        params += [attempted_before]
    return bool(
        await s.execute(
            "UPDATE networks SET lease_owner = ?, lease_expires_at = ?, last_attempt_at = ? "
            "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ? "
            "AND (lease_owner IS NULL OR lease_owner = ? OR lease_expires_at <= ?) " + due,
            *params,
        )
    )


async def renew(
    s: Session, account_uid: str, network: str, worker: str, lease_seconds: float
) -> bool:
    """Extend `worker`'s lease for `lease_seconds` from now; False when `worker` holds it no
    more (released, or taken by another worker). A renewal is no new attempt: it leaves
    last_attempt_at as the claim stamped it."""
    expires = format_timestamp(lease_end(s.moment(), lease_seconds))
    return bool(
        await s.execute(
            "UPDATE networks SET lease_expires_at = ? "
            "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ? "
            "AND lease_owner = ?",
            expires,
            account_uid,
            network,
            worker,
        )
    )


async def release(s: Session, account_uid: str, network: str, worker: str) -> None:
    """Give the lease up (nothing when `worker` does not hold it)."""
    await s.execute(
        "UPDATE networks SET lease_owner = NULL, lease_expires_at = NULL "
        "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ? "
        "AND lease_owner = ?",
        account_uid,
        network,
        worker,
    )


async def sealed_credentials(s: Session, account_uid: str, network: str) -> SealedCredentials:
    """The connection's ciphertext; NotFound when none is stored. Run it through the write
    door: read connections may never select credentials (the SQLite layer's authorizer
    refuses them)."""
    blob = await s.fetchval(
        "SELECT ciphertext FROM network_credentials "
        "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ?",
        account_uid,
        network,
    )
    if blob is None:
        raise NotFound(f"no credentials stored for {account_uid}/{network}")
    return SealedCredentials(account_uid, network, bytes(blob))


async def write_window(
    s: Session,
    account_uid: str,
    network: str,
    rows: Sequence[NewCommission],
    position: str | None,
    worker: str,
) -> ImportResult:
    """A window's rows and the position after it, together, under `worker`'s live lease:
    a worker that lost its lease (it stalled past it, another took over) writes nothing."""
    check_network(network)
    check_batch(rows)
    now = s.now()
    held = await s.fetchval(
        "SELECT 1 FROM networks WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) "
        "AND network = ? AND lease_owner = ? AND lease_expires_at > ?",
        account_uid,
        network,
        worker,
        now,
    )
    if held is None:
        raise Conflict(f"{account_uid}/{network}: the lease of {worker} has ended")
    result = await upsert_chunks(s, account_uid, network, (rows,))
    if position is not None:
        await s.execute(
            "UPDATE networks SET sync_position = ? "
            "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ?",
            position,
            account_uid,
            network,
        )
    return result


async def record_outcome(
    s: Session, account_uid: str, network: str, status: str, reason: tuple[str, str] | None
) -> ConnectionView:
    """The run's outcome, its reason and counts of what is stored for the connection."""
    check_sync(status, ())
    check_sync_reason(reason)
    now = s.now()
    row_id = await account_id(s, account_uid)
    transactions, programs = await s.fetchrow(
        "SELECT count(*), count(DISTINCT program_external_id) FROM commissions "
        "WHERE account_id = ? AND network = ?",
        row_id,
        network,
    )
    code, message = reason if reason is not None else (None, None)
    updated = await s.execute(
        "UPDATE networks SET status = ?, last_sync_at = ?, reason_code = ?, reason_message = ?, "
        "last_success_at = CASE WHEN ? THEN ? ELSE last_success_at END, "
        "accounts = 1, programs = ?, transactions = ? WHERE account_id = ? AND network = ?",
        status,
        now,
        code,
        message,
        status == "ok",
        now,
        min(int(programs), MAX_SYNC_COUNT),
        min(int(transactions), MAX_SYNC_COUNT),
        row_id,
        network,
    )
    if not updated:
        raise NotFound(f"account {account_uid} has not connected {network}")
    found = await find(s, account_uid, network)
    assert found is not None
    return found


async def set_currency(s: Session, account_uid: str, network: str, currency: str | None) -> None:
    """Set (or clear, with None) the account's currency at a network whose records carry none."""
    if currency is not None and not re.fullmatch(v.CURRENCY_PATTERN, currency):
        raise ValueError("currency must be an ISO 4217 code of 3 capital letters, e.g. USD")
    if not await s.execute(
        "UPDATE networks SET currency = ? "
        "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ?",
        currency,
        account_uid,
        network,
    ):
        raise NotFound(f"account {account_uid} has not connected {network}")


async def credentials_after(
    s: Session, after: tuple[str, str] | None, limit: int
) -> list[SealedCredentials]:
    """A batch of stored ciphertexts in (account uid, network) order, strictly after
    `after`, for re-encryption (through the write door, as `sealed_credentials`)."""
    where, params = ("", []) if after is None else ("WHERE (a.uid, c.network) > (?, ?) ", [*after])
    rows = await s.fetch(
        "SELECT a.uid, c.network, c.ciphertext FROM network_credentials c "
        f"JOIN accounts a ON a.id = c.account_id {where}ORDER BY a.uid, c.network LIMIT ?",
        *params,
        limit,
    )
    return [SealedCredentials(row[0], row[1], bytes(row[2])) for row in rows]


async def replace_credentials(
    s: Session, account_uid: str, network: str, old: bytes, new: bytes
) -> bool:
    """Swap a ciphertext for `new` if it is still `old`: a connection re-connected
    meanwhile keeps its new credentials (False)."""
    return bool(
        await s.execute(
            "UPDATE network_credentials SET ciphertext = ?, updated_at = ? "
            "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ? "
            "AND ciphertext = ?",
            new,
            s.now(),
            account_uid,
            network,
            old,
        )
    )
