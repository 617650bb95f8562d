"""Operations on connected networks: their credentials (ciphertext only), the sync
worker's leases and positions, and the outcomes of its runs.

Run them through the store's doors: `await store.write(connections.claim, uid, network,
worker, lease_seconds)`, `await store.read(connections.find_all)`. Whatever selects
credentials goes through the write door: read connections may never select them.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from contract import vocabulary as v
from store.accounts import account_id
from store.base import (
    MAX_SYNC_COUNT,
    About,
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
from store.core import Session, lock_key
from store.events import record_disconnected

_CONNECTION_COLUMNS = (
    "a.uid, n.network, n.status, n.connected_at, n.last_sync_at, n.last_attempt_at, "
    "n.reason_code, n.reason_message, n.currency, n.sync_position, n.lease_owner, "
    "n.lease_expires_at, n.accounts, n.programs, n.transactions, n.next_attempt_at, "
    "n.import_only, n.last_import_at"
)


_CONNECTIONS = (
    f"SELECT {_CONNECTION_COLUMNS} FROM networks n JOIN accounts a ON a.id = n.account_id"
)


def _connection(row: Sequence[Any]) -> ConnectionView:
    # PostgreSQL's boolean, SQLite's 0/1: one bool.
    values = list(row)
    values[-2] = bool(values[-2])
    return ConnectionView(*values)


def _due(table: str, attempted_before: str, now: str) -> tuple[str, list[Any]]:
    """The condition (on `table`'s columns) of a connection due for a sync, and its
    parameters: its planned next attempt has come (a run a documented limit cut short,
    resumed when the limit opens, however soon); or, with none planned, it was not attempted
    since `attempted_before`; or a worker that died left it (its lease was never released).
    A planned attempt still ahead holds it back even past the interval: the network would
    refuse the calls until then."""
    t = f"{table}." if table else ""
    return (
        f"({t}lease_owner IS NOT NULL "
        f"OR {t}next_attempt_at <= ? "
        f"OR ({t}next_attempt_at IS NULL "
        f"AND ({t}last_attempt_at IS NULL OR {t}last_attempt_at < ?)))",
        [now, attempted_before],
    )


async def connect(s: Session, account_uid: str, network: str, ciphertext: bytes) -> None:
    """Connect a network (status `never` until a sync is recorded) or replace its
    credentials (its last sync outcome stays)."""
    check_network(network)
    now = s.now()
    row_id = await account_id(s, account_uid)
    await s.execute(
        "INSERT INTO networks (account_id, network, status, connected_at) "
        "VALUES (?, ?, 'never', ?) ON CONFLICT (account_id, network) DO UPDATE SET "
        "connected_at = excluded.connected_at, import_only = ?",
        row_id,
        network,
        now,
        False,
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
            "INSERT INTO networks (account_id, network, status, connected_at, import_only) "
            "VALUES (?, ?, 'never', ?, ?) ON CONFLICT (account_id, network) DO NOTHING",
            await account_id(s, account_uid),
            network,
            s.now(),
            True,
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
        raise NotFound(f"account {account_uid} has not connected {network}", About.CONNECTION)
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
        raise NotFound(f"account {account_uid} has not connected {network}", About.CONNECTION)


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
    """Connections to sync: credentials stored, account not suspended, due (`_due`: its
    planned next attempt has come, else not attempted since `attempted_before`, or left
    behind by a worker that died), no live lease; least recently attempted first.

    Run it through the write door: a read connection's snapshot may predate a claim or a
    release another worker just committed, and the list would offer stale leases."""
    now = s.now()
    due, params = _due("n", attempted_before, now)
    rows = await s.fetch(
        f"{_CONNECTIONS} JOIN network_credentials c "
        "ON c.account_id = n.account_id AND c.network = n.network "
        f"WHERE NOT a.suspended AND {due} "
        "AND (n.lease_expires_at IS NULL OR n.lease_expires_at <= ?) "
        "ORDER BY coalesce(n.last_attempt_at, ''), a.uid, n.network LIMIT ?",
        *params,
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
    """Lease the connection to `worker` for `lease_seconds`: take the lease if it is free,
    expired or already `worker`'s (and, with `attempted_before`, if it is still due as
    `due` listed it: no one attempted the connection since). One conditional UPDATE:
    of two workers racing, the row lock lets one through and the other finds it taken; a
    worker whose due list predates another's whole sync finds it attempted and leaves it."""
    moment = s.moment()
    now = format_timestamp(moment)
    expires = format_timestamp(lease_end(moment, lease_seconds))
    due = ""
    params: list[Any] = [worker, expires, now, account_uid, network, worker, now]
    if attempted_before is not None:
        condition, more = _due("", attempted_before, now)
        due = f"AND {condition} "
        params += more
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
        raise NotFound(f"no credentials stored for {account_uid}/{network}", About.CREDENTIALS)
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
    s: Session,
    account_uid: str,
    network: str,
    status: str,
    reason: tuple[str, str] | None,
    next_attempt_at: str | None = None,
) -> ConnectionView:
    """The run's outcome, its reason and counts of what is stored for the connection, and
    with them when the next attempt is planned (`next_attempt_at`: a run a documented limit
    cut short goes on then; None: the sync interval decides)."""
    check_sync(status, ())
    check_sync_reason(reason)
    now = s.now()
    row_id = await account_id(s, account_uid)
    transactions, programs = await _count_stored(s, row_id, network)
    code, message = reason if reason is not None else (None, None)
    updated = await s.execute(
        "UPDATE networks SET status = ?, last_sync_at = ?, reason_code = ?, reason_message = ?, "
        "last_success_at = CASE WHEN ? THEN ? ELSE last_success_at END, "
        "accounts = 1, programs = ?, transactions = ?, next_attempt_at = ? "
        "WHERE account_id = ? AND network = ?",
        status,
        now,
        code,
        message,
        status == "ok",
        now,
        programs,
        transactions,
        next_attempt_at,
        row_id,
        network,
    )
    if not updated:
        raise NotFound(f"account {account_uid} has not connected {network}", About.CONNECTION)
    found = await find(s, account_uid, network)
    assert found is not None
    return found


async def _count_stored(s: Session, row_id: int, network: str) -> tuple[int, int]:
    """How many transactions, and of how many programmes, the connection holds (bounded)."""
    transactions, programs = await s.fetchrow(
        "SELECT count(*), count(DISTINCT program_external_id) FROM commissions "
        "WHERE account_id = ? AND network = ?",
        row_id,
        network,
    )
    return min(int(transactions), MAX_SYNC_COUNT), min(int(programs), MAX_SYNC_COUNT)


async def import_commissions(
    s: Session, account_uid: str, network: str, chunks: Iterable[Sequence[NewCommission]]
) -> ImportResult:
    """A file's rows (store.commissions.upsert_stream) and, in the same transaction, the
    connection's latest import time and its counts of what is stored: an import-only
    connection, never synced, shows what its imports brought."""
    result = await upsert_chunks(s, account_uid, network, chunks, stream=True)
    row_id = await account_id(s, account_uid)
    transactions, programs = await _count_stored(s, row_id, network)
    await s.execute(
        "UPDATE networks SET last_import_at = ?, transactions = ?, programs = ? "
        "WHERE account_id = ? AND network = ?",
        s.now(),
        transactions,
        programs,
        row_id,
        network,
    )
    return result


async def reserve_call(
    s: Session, account_uid: str, network: str, rates: Sequence[tuple[int, float]]
) -> float:
    """Count one request to `network` for the connection now, if it fits every one of
    `rates` ((requests, seconds): at most that many requests in any rolling period of that
    length) among the requests every worker counted; 0.0 when it was counted, else the
    seconds until it would fit (nothing counted: wait that long and ask again).

    Reservations of one connection queue on an advisory lock where writes run side by side
    (one write at a time in SQLite): the count and the new row are one decision, so two
    workers never both take a connection's last call of a period. Rows older than the
    longest period go with each reservation."""
    if not rates or any(requests < 1 or seconds <= 0 for requests, seconds in rates):
        raise ValueError("rates are (requests >= 1, seconds > 0) pairs, at least one")
    now_ms = math.floor(s.moment().timestamp() * 1000)
    row_id = await account_id(s, account_uid)
    if s.dialect.concurrent_writes:
        await s.execute("SELECT pg_advisory_xact_lock(?)", lock_key(f"calls:{row_id}:{network}"))
    periods = [math.ceil(seconds * 1000) for _, seconds in rates]
    wait_ms = 0
    for (requests, _), period in zip(rates, periods, strict=True):
        # The request that must leave the period before one more fits (None: it fits).
        leaving = await s.fetchval(
            "SELECT sent_ms FROM network_calls WHERE account_id = ? AND network = ? "
            "AND sent_ms > ? ORDER BY sent_ms DESC LIMIT 1 OFFSET ?",
            row_id,
            network,
            now_ms - period,
            requests - 1,
        )
        if leaving is not None:
            wait_ms = max(wait_ms, int(leaving) + period - now_ms)
    if wait_ms > 0:
        return wait_ms / 1000
    await s.execute(
        "DELETE FROM network_calls WHERE account_id = ? AND network = ? AND sent_ms <= ?",
        row_id,
        network,
        now_ms - max(periods),
    )
    await s.execute(
        "INSERT INTO network_calls (account_id, network, sent_ms) VALUES (?, ?, ?)",
        row_id,
        network,
        now_ms,
    )
    return 0.0


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
        raise NotFound(f"account {account_uid} has not connected {network}", About.CONNECTION)


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
