"""The event feed: the `events` table and its operations.

Every change the store records for an account becomes one row of `events`, written by a
trigger in the change's own transaction, whoever writes (the sync's upsert, an import, a
correction, a sync outcome): an event exists exactly when its change committed.

- `commission.created`: a commission row inserted; `data` is the Commission as
  GET /v1/commissions lists it.
- `commission.updated`: its status, amounts or currency changed; `data` is the Commission
  as it now stands plus `previous`, the replaced status, rawStatus, amounts and currency.
- `connection.sync_failed`: a connection's status became a failure (auth_failed, error)
  from anything else; `data` is the connection's network, status, previous status, the
  outcome's reasonCode and its last success.
- `connection.recovered`: a failed connection's status became ok or partial (records
  flow again); `data` has the same members.
- `connection.disconnected`: the account disconnected a network (its sync stopped, its
  commissions kept); `data` has the same members, as the connection stood (written by the
  operation, store.connections.disconnect, in its transaction).

The table and its triggers are schema step 5 (store/schema/v005_events.py). `data` is JSON
text made by the database, byte for byte what the API sends but for the commission's id
the triggers write from its row id (`PublicIds.event_data` puts its public id in, for the
feed and the webhook payloads alike; store.publicids) (members in
resource order, compact, amounts as JSON numbers verbatim), the same from SQLite and
PostgreSQL: both build it by concatenation, since PostgreSQL's json_build_object spaces
its output and jsonb reorders members.

Feed order is `id`, the row id; an event's public id is its permutation
(`PublicIds.event`), whose order means nothing: clients follow the feed's cursor. On SQLite one write runs at a time and ids never go back
(AUTOINCREMENT: a pruned maximum is not reused). On PostgreSQL write transactions run side
by side and an identity is taken before its transaction commits, so an id can become
visible after a higher one: a reader that had passed it would never see it. The triggers
therefore take a transaction-scoped advisory lock per account before taking ids (the
two-int4 form of pg_advisory_xact_lock, in a space of its own): the
event writes of one account commit one after another, and any snapshot that shows an
account's event shows every lower one of the same account. The feed is read per account
(GET /v1/events, `account_events`), so it never has a gap; a reader across accounts must
not take the global id order for commit order.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from contract.vocabulary import EVENT_TYPES
from store.base import format_timestamp
from store.core import Session

if TYPE_CHECKING:
    from store.core import AccountStore

# --- Reading and pruning the feed -------------------------------------------------------

# The largest identity both databases hold: a public id decoding past it names no event.
MAX_EVENT_SEQ = 2**63 - 1


@dataclass(frozen=True, slots=True)
class EventQuery:
    """One page of an account's feed, oldest first."""

    account_uid: str
    limit: int
    since: str  # the oldest occurred_at returned (the retention's horizon), TIMESTAMP_FORMAT
    types: tuple[str, ...] = ()  # distinct EVENT_TYPES; empty: every type
    after: int | None = None  # the id of the last event of the previous page


@dataclass(frozen=True, slots=True)
class EventRow:
    seq: int
    type: str
    occurred_at: str
    data: str  # JSON text of an object, as the API sends it


# With a type filter, a page reads at most this many events of the feed: a type that is
# rare among many (a million created events of a big import) must not make every request
# read them all. The page may then hold fewer than its limit; its cursor still moves on.
SCAN_MAX = 10_000


def _feed(query: EventQuery) -> tuple[list[str], list[Any]]:
    """Conditions and parameters of the account's feed past `after`, within the retention."""
    where = ["account_id = (SELECT id FROM accounts WHERE uid = ?)", "occurred_at >= ?"]
    params: list[Any] = [query.account_uid, query.since]
    if query.after is not None:
        where.append("id > ?")
        params.append(query.after)
    return where, params


def events_sql(query: EventQuery, scan: int | None = None) -> tuple[str, list[Any]]:
    """The page's statement: a seek on events_account (account_id, id) past `after`; with
    `scan`, the types are looked for among the next `scan` events of the feed only."""
    where, params = _feed(query)
    types = ""
    if query.types:
        types = f"type IN ({', '.join('?' * len(query.types))})"
    columns = "id, type, occurred_at, data"
    if scan is not None and types:
        source = (
            f"(SELECT {columns} FROM events WHERE {' AND '.join(where)} ORDER BY id LIMIT ?) AS w"
        )
        sql = f"SELECT {columns} FROM {source} WHERE {types} ORDER BY id LIMIT ?"
        return sql, [*params, scan, *query.types, query.limit]
    if types:
        where.append(types)
        params.extend(query.types)
    sql = f"SELECT {columns} FROM events WHERE {' AND '.join(where)} ORDER BY id LIMIT ?"
    return sql, [*params, query.limit]


async def account_events(s: Session, query: EventQuery) -> list[EventRow]:
    """One keyset page of an account's events in feed order (ascending id)."""
    sql, params = events_sql(query)
    return [EventRow(int(r[0]), r[1], r[2], r[3]) for r in await s.fetch(sql, *params)]


@dataclass(frozen=True, slots=True)
class EventPage:
    """A page as the API reads it: its events, and with a type filter whose scan of
    SCAN_MAX events ended before the page was full, the id of the last event scanned
    (where the next page resumes; the events between matched no type)."""

    rows: list[EventRow]
    scanned_to: int | None = None


async def events_page(s: Session, query: EventQuery, scan: int | None = None) -> EventPage:
    """One page of the API: `account_events`, a type filter reading `scan` (default
    SCAN_MAX) events at most."""
    scan = scan or SCAN_MAX
    if not query.types:
        return EventPage(await account_events(s, query))
    sql, params = events_sql(query, scan)
    rows = [EventRow(int(r[0]), r[1], r[2], r[3]) for r in await s.fetch(sql, *params)]
    if len(rows) >= query.limit:
        return EventPage(rows)
    where, params = _feed(query)
    read, last = await s.fetchrow(
        f"SELECT count(*), max(id) FROM (SELECT id FROM events WHERE {' AND '.join(where)} "
        "ORDER BY id LIMIT ?) AS w",
        *params,
        scan,
    )
    return EventPage(rows, int(last) if int(read) >= scan else None)


async def prune_events(s: Session, before: str, limit: int) -> int:
    """Delete up to `limit` events that occurred before `before`, oldest first; return
    how many. A batch a transaction: a large backlog never holds the write lock long."""
    return await s.execute(
        "DELETE FROM events WHERE id IN "
        "(SELECT id FROM events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ?)",
        before,
        limit,
    )


PRUNE_BATCH = 10_000


def retention_horizon(now: dt.datetime, days: int) -> str:
    """The oldest occurred_at kept by `days` days of retention at `now`: the API answers
    no event older, and pruning deletes those."""
    return format_timestamp(now - dt.timedelta(days=days))


async def prune(store: AccountStore, before: str, batch: int = PRUNE_BATCH) -> int:
    """Delete every event that occurred before `before`, a batch a transaction; return
    how many were deleted."""
    total = 0
    while True:
        deleted = await store.write(prune_events, before, batch)
        total += deleted
        if deleted < batch:
            return total


# The event a disconnection writes (the triggers write the others).
DISCONNECTED = "connection.disconnected"
assert DISCONNECTED in EVENT_TYPES

# The per-account event lock the triggers take (schema step 5, PostgreSQL): an event written
# here takes its id, and commits, in the account's order as theirs do.
EVENTS_LOCK = "SELECT pg_advisory_xact_lock(-419135353, (?::bigint % 2147483647)::integer)"


async def record_disconnected(s: Session, account_id: int, network: str) -> None:
    """Write the connection.disconnected event of a connection about to be removed, in the
    caller's transaction, under the account's event lock as the triggers take it; its data
    is the connection's state as the other connection events show it."""
    if s.dialect.concurrent_writes:
        await s.execute(EVENTS_LOCK, account_id)
    row = await s.fetchrow(
        "SELECT status, reason_code, last_success_at FROM networks "
        "WHERE account_id = ? AND network = ?",
        account_id,
        network,
    )
    if row is None:
        return
    status, reason_code, last_success_at = row
    data = {
        "network": network,
        "status": status,
        "previousStatus": status,
        "reasonCode": reason_code,
        "lastSuccessAt": last_success_at,
    }
    await s.execute(
        "INSERT INTO events (account_id, type, occurred_at, data) VALUES (?, ?, ?, ?)",
        account_id,
        DISCONNECTED,
        s.now(),
        orjson.dumps(data).decode(),
    )
