"""The event feed: the `events` table, the triggers that write it, and its operations.

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

`data` is JSON text made by the database, byte for byte what the API sends (members in
resource order, compact, amounts as JSON numbers verbatim), the same from SQLite and
PostgreSQL: both build it by concatenation from one list of members here, since
PostgreSQL's json_build_object spaces its output and jsonb reorders members.

Feed order is `id`. On SQLite one write runs at a time and ids never go back
(AUTOINCREMENT: a pruned maximum is not reused). On PostgreSQL write transactions run side
by side and an identity is taken before its transaction commits, so an id can become
visible after a higher one: a reader that had passed it would never see it. The triggers
therefore take a transaction-scoped advisory lock per account before taking ids: the
event writes of one account commit one after another, and any snapshot that shows an
account's event shows every lower one of the same account. The feed is read per account
(GET /v1/events, `account_events`), so it never has a gap; a reader across accounts must
not take the global id order for commit order.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contract.vocabulary import EVENT_TYPES
from store.base import format_timestamp
from store.core import Session, lock_key

if TYPE_CHECKING:
    from store.core import AccountStore

# The types, in the contract's order (what the triggers write is what the API lists).
CREATED, UPDATED, SYNC_FAILED, RECOVERED_EVENT, DISCONNECTED = EVENT_TYPES

# Connection statuses of a failed sync; leaving them for one of RECOVERED is a recovery.
FAILED = ("auth_failed", "error")
RECOVERED = ("ok", "partial")

# The advisory lock space of the per-account event lock (the two-int4 form of
# pg_advisory_xact_lock, apart from the bigint keys of store.core.lock_key).
EVENTS_LOCK_SPACE = lock_key("events") >> 32


# --- JSON text made in SQL --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Member:
    """One member of an event's `data`: its JSON name, the column it shows and how:
    `text` (a JSON string or null), `amount` (the stored decimal text as a JSON number, or
    null), `commission_id` (the row id as the API's public id)."""

    name: str
    column: str
    kind: str = "text"


COMMISSION_MEMBERS = (
    Member("id", "id", "commission_id"),
    Member("network", "network"),
    Member("externalId", "external_id"),
    Member("programName", "program_name"),
    Member("programExternalId", "program_external_id"),
    Member("status", "status"),
    Member("rawStatus", "raw_status"),
    Member("saleAmount", "sale_amount", "amount"),
    Member("commissionAmount", "commission_amount", "amount"),
    Member("currency", "currency"),
    Member("clickedAt", "clicked_at"),
    Member("transactedAt", "transacted_at"),
    Member("subId", "sub_id"),
)
PREVIOUS_MEMBERS = (
    Member("status", "status"),
    Member("rawStatus", "raw_status"),
    Member("commissionAmount", "commission_amount", "amount"),
    Member("saleAmount", "sale_amount", "amount"),
    Member("currency", "currency"),
)
CONNECTION_MEMBERS = (
    Member("network", "network"),
    Member("status", "status"),
    Member("previousStatus", "status"),  # read from the row before the change
    Member("reasonCode", "reason_code"),
    Member("lastSuccessAt", "last_success_at"),
)
# What makes a commission.updated: the status or the money.
UPDATED_COLUMNS = ("status", "commission_amount", "sale_amount", "currency")


def _value(dialect: str, member: Member, row: str) -> str:
    """SQL of one member's JSON text, never NULL; `row` the prefix of its columns."""
    column = f"{row}{member.column}"
    if member.kind == "amount":
        # Stored amounts are JSON number literals already (AMOUNT_PATTERN).
        return f"coalesce({column}, 'null')"
    if member.kind == "commission_id":
        # store.base.commission_id: com_ and 16 hex digits.
        if dialect == "sqlite":
            return f"printf('\"com_%016x\"', {column})"
        return f"'\"com_' || lpad(to_hex({column}), 16, '0') || '\"'"
    if dialect == "sqlite":
        return f"json_quote({column})"  # 'null' for NULL
    return f"coalesce(to_json({column})::text, 'null')"


def json_sql(dialect: str, members: Sequence[tuple[Member, str] | tuple[str, str]]) -> str:
    """SQL of a compact JSON object: each member a (Member, row prefix) or a (name, SQL of
    JSON text) nested as is. Concatenated, so both databases write the same bytes."""
    parts = []
    for n, (member, source) in enumerate(members):
        name = member.name if isinstance(member, Member) else member
        value = _value(dialect, member, source) if isinstance(member, Member) else source
        parts.append(f"'{',' if n else '{'}\"{name}\":' || {value}")
    return " || ".join(parts) + " || '}'"


def commission_data(dialect: str, new: str, old: str | None = None) -> str:
    """SQL of a commission event's data: the Commission of `new`, and with `old` its
    `previous` state."""
    members: list[tuple[Member, str] | tuple[str, str]] = [(m, new) for m in COMMISSION_MEMBERS]
    if old is not None:
        members.append(("previous", json_sql(dialect, [(m, old) for m in PREVIOUS_MEMBERS])))
    return json_sql(dialect, members)


def connection_data(dialect: str, new: str, old: str) -> str:
    """SQL of a connection event's data, `old` the row before the change."""
    return json_sql(
        dialect,
        [(m, old if m.name == "previousStatus" else new) for m in CONNECTION_MEMBERS],
    )


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


def _changed(old: str, new: str) -> str:
    return " OR ".join(f"{old}{c} IS DISTINCT FROM {new}{c}" for c in UPDATED_COLUMNS)


_INSERT = "INSERT INTO events (account_id, type, occurred_at, data)"
EVENTS_INDEXES = (
    # The feed of one account in order, and its keyset pages.
    "CREATE INDEX events_account ON events (account_id, id)",
    # Retention: the events older than a moment.
    "CREATE INDEX events_occurred ON events (occurred_at)",
)


def _connection_when(old: str, new: str) -> tuple[str, str]:
    """Conditions of connection.sync_failed and connection.recovered."""
    failed = f"{new}status IN ({_quoted(FAILED)}) AND {old}status NOT IN ({_quoted(FAILED)})"
    recovered = f"{old}status IN ({_quoted(FAILED)}) AND {new}status IN ({_quoted(RECOVERED)})"
    return failed, recovered


def sqlite_migration() -> tuple[str, ...]:
    """Migration 5 on SQLite: the table, its indexes and one row trigger per event type."""
    now = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
    failed, recovered = _connection_when("OLD.", "NEW.")
    changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in UPDATED_COLUMNS)
    connection_events = [
        f"""CREATE TRIGGER events_{name} AFTER UPDATE OF status ON networks
            FOR EACH ROW WHEN {when}
            BEGIN
                {_INSERT} VALUES (NEW.account_id, '{event}',
                    coalesce(NEW.last_sync_at, {now}), {connection_data("sqlite", "NEW.", "OLD.")});
            END"""
        for name, event, when in (
            ("connection_failed", SYNC_FAILED, failed),
            ("connection_recovered", RECOVERED_EVENT, recovered),
        )
    ]
    return (
        # AUTOINCREMENT: an id is never reused, even once retention pruned the highest.
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            occurred_at TEXT NOT NULL,
            data TEXT NOT NULL
        )""",
        *EVENTS_INDEXES,
        f"""CREATE TRIGGER events_commission_created AFTER INSERT ON commissions
            BEGIN
                {_INSERT} VALUES (NEW.account_id, '{CREATED}', NEW.updated_at,
                    {commission_data("sqlite", "NEW.")});
            END""",
        f"""CREATE TRIGGER events_commission_updated AFTER UPDATE ON commissions
            FOR EACH ROW WHEN {changed}
            BEGIN
                {_INSERT} VALUES (NEW.account_id, '{UPDATED}', NEW.updated_at,
                    {commission_data("sqlite", "NEW.", "OLD.")});
            END""",
        *connection_events,
    )


def _pg_lock(accounts: str) -> str:
    """Take the event lock of each account `accounts` selects, in account order."""
    return (
        f"PERFORM pg_advisory_xact_lock({EVENTS_LOCK_SPACE}, "
        "(a.account_id % 2147483647)::integer) "
        f"FROM (SELECT DISTINCT account_id FROM ({accounts}) AS s ORDER BY account_id) AS a"
    )


def _pg_function(name: str, *statements: str) -> str:
    body = "\n                ".join(f"{statement};" for statement in statements)
    return f"""CREATE FUNCTION {name}() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                {body}
                RETURN NULL;
            END
            $$"""


def pg_migration() -> tuple[str, ...]:
    """Migration 5 on PostgreSQL: the table, its indexes, a statement trigger per kind of
    commission write (set-based over its transition tables: an upsert of 10,000 rows
    writes its events in one INSERT) and a row trigger on a connection's status (one row
    an update). Each takes the account's event lock before taking ids (see the module)."""
    failed, recovered = _connection_when("OLD.", "NEW.")
    changed = (
        "SELECT o.account_id FROM old_rows o JOIN new_rows n ON n.id = o.id "
        f"WHERE {_changed('o.', 'n.')}"
    )
    connection = _pg_function(
        "events_connection",
        f"PERFORM pg_advisory_xact_lock({EVENTS_LOCK_SPACE}, "
        "(NEW.account_id % 2147483647)::integer)",
        f"{_INSERT} VALUES (NEW.account_id, CASE WHEN {failed} THEN '{SYNC_FAILED}' "
        f"ELSE '{RECOVERED_EVENT}' END, coalesce(NEW.last_sync_at, "
        """to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')), """
        f"{connection_data('pg', 'NEW.', 'OLD.')})",
    )
    return (
        """CREATE TABLE events (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            type text COLLATE "C" NOT NULL,
            occurred_at text COLLATE "C" NOT NULL,
            data text NOT NULL
        )""",
        *EVENTS_INDEXES,
        _pg_function(
            "events_commission_created",
            _pg_lock("SELECT account_id FROM new_rows"),
            f"{_INSERT} SELECT n.account_id, '{CREATED}', n.updated_at, "
            f"{commission_data('pg', 'n.')} FROM new_rows n ORDER BY n.id",
        ),
        _pg_function(
            "events_commission_updated",
            _pg_lock(changed),
            f"{_INSERT} SELECT n.account_id, '{UPDATED}', n.updated_at, "
            f"{commission_data('pg', 'n.', 'o.')} "
            f"FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE {_changed('o.', 'n.')} "
            "ORDER BY n.id",
        ),
        connection,
        """CREATE TRIGGER events_commission_created AFTER INSERT ON commissions
            REFERENCING NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION events_commission_created()""",
        """CREATE TRIGGER events_commission_updated AFTER UPDATE ON commissions
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION events_commission_updated()""",
        f"""CREATE TRIGGER events_connection AFTER UPDATE OF status ON networks
            FOR EACH ROW WHEN (({failed}) OR ({recovered}))
            EXECUTE FUNCTION events_connection()""",
    )


# --- Reading and pruning the feed -------------------------------------------------------

EVENT_ID_PREFIX = "evt_"
# The largest identity both databases hold: a public id past it names no event.
MAX_EVENT_SEQ = 2**63 - 1


def event_id(seq: int) -> str:
    """Public id of an event: `evt_` + 16 hex digits, as a commission's (`com_`): fixed
    width, so text order is feed order."""
    if not 0 <= seq < 2**64:
        raise ValueError("event sequence number out of range")
    return f"{EVENT_ID_PREFIX}{seq:016x}"


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


async def record_disconnected(s: Session, account_id: int, network: str) -> None:
    """Write the connection.disconnected event of a connection about to be removed, in the
    caller's transaction, under the account's event lock as the triggers take it."""
    dialect = "pg" if s.dialect.concurrent_writes else "sqlite"
    if dialect == "pg":
        await s.execute(
            f"SELECT pg_advisory_xact_lock({EVENTS_LOCK_SPACE}, (?::bigint % 2147483647)::integer)",
            account_id,
        )
    await s.execute(
        f"{_INSERT} SELECT n.account_id, '{DISCONNECTED}', ?, "
        f"{connection_data(dialect, 'n.', 'n.')} FROM networks n "
        "WHERE n.account_id = ? AND n.network = ?",
        s.now(),
        account_id,
        network,
    )
