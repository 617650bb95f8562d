"""Operations on commissions and their history: the API's pages and details, and the
set-based upserts of imports and of the sync.

Run them through the store's doors: `await store.read(commissions.page, query)`,
`await store.write(commissions.upsert, account_uid, network, rows)`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from operator import attrgetter
from typing import Any

import orjson

from contract.commission import NAMES
from contract.resources import HISTORY_MAX
from store.accounts import account_id
from store.base import (
    VALUE_FIELDS,
    CommissionDetail,
    CommissionQuery,
    CommissionRow,
    ImportResult,
    NewCommission,
    StatusChange,
    check_commission,
    check_network,
    latest_instant,
    with_stored,
)
from store.core import (
    HISTORY_FIELDS,
    Session,
    account_filters,
    lock_key,
    one_statement,
    pairs_filter,
)
from store.payments import keep_paid

# A CommissionRow's columns, in its order.
COMMISSION_COLUMNS = ", ".join(("id", "network", *NAMES))


def commissions_sql(query: CommissionQuery) -> tuple[str, list[Any]]:
    """One keyset page: the account's rows strictly after `query.after`, newest first.

    Dates bound the UTC date of transacted_at inclusively; with the fixed timestamp form,
    `date T00:00:00Z <= transacted_at <= date T23:59:59Z` is exact and uses the index.
    The row-value comparison is standard SQL (SQLite and PostgreSQL both seek with it).
    """
    where, params = account_filters(query.account_uid, query.network, query.status)
    # Read by the commissions_program_page and commissions_sub_id_page indexes.
    if query.program_external_id is not None:
        where.append("program_external_id = ?")
        params.append(query.program_external_id)
    if query.sub_id is not None:
        where.append("sub_id = ?")
        params.append(query.sub_id)
    if query.program_pairs is not None:
        condition, more = pairs_filter(query.program_pairs, "program_external_id")
        where.append(condition)
        params += more
    if query.since is not None:
        where.append("transacted_at >= ?")
        params.append(f"{query.since.isoformat()}T00:00:00Z")
    if query.until is not None:
        where.append("transacted_at <= ?")
        params.append(f"{query.until.isoformat()}T23:59:59Z")
    if query.updated_since is not None:
        where.append("updated_at >= ?")
        params.append(query.updated_since)
    if query.after is not None:
        where.append("(transacted_at, id) < (?, ?)")
        params.extend(query.after)
    sql = (
        f"SELECT {COMMISSION_COLUMNS} FROM commissions WHERE {' AND '.join(where)} "
        "ORDER BY transacted_at DESC, id DESC LIMIT ?"
    )
    params.append(query.limit)
    return sql, params


def page_sql(query: CommissionQuery) -> tuple[str, list[Any]]:
    """`commissions_sql` with the page folded into one JSON array (`Dialect.json_pages`).
    Values stay exact: the amounts are text, so they travel as JSON strings."""
    sql, params = commissions_sql(query)
    return f"SELECT json_group_array(json_array({COMMISSION_COLUMNS})) FROM ({sql})", params


def _page_order(row: CommissionRow) -> tuple[str, int]:
    return row.transacted_at, row.seq


# Every column an import writes, and what a conflict on its identity updates: `id` (seq)
# and imported_at are never touched, so a re-imported row keeps its place and public id.
# A row whose values are already stored is not updated at all: its updated_at (what
# `updatedSince` reads) moves only when the row changed.
_ROW_COLUMNS = ("external_id", *VALUE_FIELDS)


_ROW = attrgetter(*_ROW_COLUMNS)


_INSERT_COMMISSIONS = (
    f"INSERT INTO commissions (account_id, network, {', '.join(_ROW_COLUMNS)}, "
    "imported_at, updated_at)"
)


def _on_commission_conflict(distinct: str) -> str:
    """The upsert's conflict clause; `distinct`: the database's null-safe `<>`."""
    stored = ", ".join(f"commissions.{name}" for name in VALUE_FIELDS)
    incoming = ", ".join(f"excluded.{name}" for name in VALUE_FIELDS)
    return (
        "ON CONFLICT (account_id, network, external_id) DO UPDATE SET "
        + ", ".join(f"{name} = excluded.{name}" for name in VALUE_FIELDS)
        + f", updated_at = excluded.updated_at WHERE ({stored}) {distinct} ({incoming})"
    )


# A chunk of rows a statement, so that the database compares and writes them without a
# round trip (PostgreSQL) or a return to Python (SQLite) per row. Python's sqlite3 gives
# up the GIL at every step of a statement; one step per row would take it back from the
# busy event loop each time (up to a switch interval, 5 ms), one per chunk only once.
# PostgreSQL: one text array per column.
UPSERT_ARRAYS_SQL = (
    f"{_INSERT_COMMISSIONS} SELECT ?, ?, r.*, ?, ? "
    f"FROM unnest({', '.join('?::text[]' for _ in _ROW_COLUMNS)}) AS r ({', '.join(_ROW_COLUMNS)}) "
    f"{_on_commission_conflict('IS DISTINCT FROM')}"
)


UPSERT_CHUNK = 10_000  # rows per array statement: bounded messages, any import size


# SQLite: every value bound, plain `?` placeholders, each row's tuple the account, the
# network, its columns and the two timestamps (`upsert_values_params`). Numbered ones
# (`?1`) would bind the shared four once, but Python 3.12 deprecates binding them from a
# sequence (an error from 3.14). A chunk is cut into powers of two up to this many rows, so
# a connection compiles and caches a dozen statements whatever the row counts: the largest
# power of two whose values stay within the 32,766 that SQLite (since 3.32) binds (2,048
# rows of 15 values; a commission field more halves it).
SQLITE_MAX_VARIABLES = 32_766
VALUES_CHUNK = 1 << ((SQLITE_MAX_VARIABLES // (len(_ROW_COLUMNS) + 4)).bit_length() - 1)


@functools.lru_cache(maxsize=VALUES_CHUNK.bit_length())
def upsert_values_sql(rows: int) -> str:
    """The SQLite upsert of `rows` rows of bound values (see VALUES_CHUNK), bound with
    `upsert_values_params`."""
    row = "(" + ", ".join("?" for _ in range(len(_ROW_COLUMNS) + 4)) + ")"
    tuples = ", ".join(row for _ in range(rows))
    return f"{_INSERT_COMMISSIONS} VALUES {tuples} {_on_commission_conflict('IS NOT')}"


def upsert_values_params(
    account: int, network: str, now: str, rows: Iterable[Sequence[Any]]
) -> list[Any]:
    """The values of `upsert_values_sql`: per row (its `_ROW_COLUMNS`), the account, the
    network, the row and `now` twice (imported_at, updated_at)."""
    bound: list[Any] = []
    for row in rows:
        bound += (account, network, *row, now, now)
    return bound


def values_chunks(count: int) -> Iterator[tuple[int, int]]:
    """(start, rows) of the statements that write `count` rows: VALUES_CHUNK rows while
    they last, then the powers of two of the rest, largest first."""
    start = 0
    while count - start >= VALUES_CHUNK:
        yield start, VALUES_CHUNK
        start += VALUES_CHUNK
    size = VALUES_CHUNK
    while start < count:
        size //= 2
        if count - start >= size:
            yield start, size
            start += size


def _one_of(s: Session, values: list[str]) -> tuple[str, list[Any]]:
    """(condition, its one parameter) matching a column against `values`, any number of
    them: an array (PostgreSQL), a JSON text read by json_each (SQLite). Both seek the
    unique key once per value."""
    if s.dialect.arrays:
        return "= ANY(?::text[])", [values]
    # Text, not bytes: SQLite's JSON functions take a BLOB for their binary JSONB form.
    return "IN (SELECT value FROM json_each(?))", [orjson.dumps(values).decode()]


@one_statement
async def page(s: Session, query: CommissionQuery) -> list[CommissionRow]:
    """One keyset page of the account's commissions: up to query.limit rows,
    transacted_at DESC then seq DESC, strictly after query.after when given (never OFFSET)."""
    if not s.dialect.json_pages:
        sql, params = commissions_sql(query)
        return [CommissionRow(*row) for row in await s.fetch(sql, *params)]
    sql, params = page_sql(query)
    rows = [CommissionRow(*row) for row in orjson.loads(await s.fetchval(sql, *params))]
    # The aggregate keeps the subquery's order; sorting 26 rows makes sure of it.
    rows.sort(key=_page_order, reverse=True)
    return rows


# The largest identity both databases hold (PostgreSQL's bigint): a public id past it names
# no commission.
MAX_SEQ = 2**63 - 1


async def find(s: Session, account_uid: str, seq: int) -> CommissionDetail | None:
    """The account's commission `seq` and its latest HISTORY_MAX earlier states, or None
    (another account's commissions are None too)."""
    if not 0 < seq <= MAX_SEQ:
        return None
    row = await s.fetchrow(
        f"SELECT {COMMISSION_COLUMNS}, imported_at FROM commissions "
        "WHERE id = ? AND account_id = (SELECT id FROM accounts WHERE uid = ?)",
        seq,
        account_uid,
    )
    if row is None:
        return None
    *columns, imported_at = tuple(row)
    # One more than shown: the state before the first shown one tells when that began.
    changes = await s.fetch(
        f"SELECT {', '.join(HISTORY_FIELDS)}, changed_at FROM commission_history "
        "WHERE commission_id = ? ORDER BY id DESC LIMIT ?",
        seq,
        HISTORY_MAX + 1,
    )
    changes.reverse()
    history = []
    recorded = imported_at
    for n, change in enumerate(changes):
        status, raw_status, commission, sale, currency, replaced = tuple(change)
        if n or len(changes) <= HISTORY_MAX:
            history.append(
                StatusChange(status, raw_status, commission, sale, currency, recorded, replaced)
            )
        recorded = replaced
    return CommissionDetail(CommissionRow(*columns), tuple(history))


def check_batch(rows: Sequence[NewCommission], latest: str | None = None) -> None:
    """Every row valid (instants up to `latest`, default a day from now), no external_id
    twice; ValueError says which is not."""
    seen: set[str] = set()
    latest = latest or latest_instant()
    for row in rows:
        check_commission(row, latest)
        if row.external_id in seen:
            raise ValueError(f"external_id: {row.external_id!r} appears twice")
        seen.add(row.external_id)


async def stored_values(
    s: Session, row_id: int, network: str, external_ids: list[str]
) -> dict[str, tuple[Any, ...]]:
    """external_id -> VALUE_FIELDS, of the rows already stored among `external_ids`."""
    found: dict[str, tuple[Any, ...]] = {}
    if not external_ids:
        return found
    condition, params = _one_of(s, external_ids)
    for row in await s.fetch(
        f"SELECT external_id, {', '.join(VALUE_FIELDS)} FROM commissions "
        f"WHERE account_id = ? AND network = ? AND external_id {condition}",
        row_id,
        network,
        *params,
    ):
        found[row[0]] = tuple(row)[1:]
    return found


async def upsert(
    s: Session, account_uid: str, network: str, rows: Sequence[NewCommission]
) -> ImportResult:
    """Insert or update by (account, network, external_id), all rows in one transaction;
    rows as they stand are left (ValueError for an invalid row: nothing is written)."""
    check_network(network)
    check_batch(rows)
    return await upsert_chunks(s, account_uid, network, (rows,))


async def upsert_stream(
    s: Session, account_uid: str, network: str, chunks: Iterable[Sequence[NewCommission]]
) -> ImportResult:
    """`upsert` of every row of `chunks`, one chunk at a time, all in one transaction:
    `chunks` is an iterator (a generator reading a file, say) run between the statements,
    so memory holds one chunk at a time; an external_id of an earlier chunk is refused too."""
    return await upsert_chunks(s, account_uid, network, chunks, stream=True)


async def upsert_chunks(
    s: Session,
    account_uid: str,
    network: str,
    chunks: Iterable[Sequence[NewCommission]],
    *,
    stream: bool = False,
) -> ImportResult:
    """Insert or update by (account, network, external_id), chunk by chunk in the caller's
    one transaction; rows as they stand are left. Each chunk is checked (`check_batch`)
    before it is written: an invalid row raises and rolls the whole transaction back.
    `stream`: an external_id of an earlier chunk is refused too (the ids written so far
    are kept in a temporary table)."""
    check_network(network)
    now = s.now()
    row_id = await account_id(s, account_uid)
    if s.dialect.concurrent_writes:
        # Imports of one (account, network) one at a time: each sees what the one before
        # committed, and counts inserted/updated exactly.
        key = lock_key(f"import:{row_id}:{network}")
        await s.execute("SELECT pg_advisory_xact_lock(?)", key)
    if stream:
        if s.dialect.idle_timeout:
            await s.execute(f"SET LOCAL idle_in_transaction_session_timeout = {STREAM_IDLE * 1000}")
        await s.execute(f"CREATE TEMPORARY TABLE {_STREAMED_IDS} (external_id text PRIMARY KEY)")
    latest = latest_instant()
    inserted = updated = unchanged = 0
    # A payment line's evidence outlasts a later answer (or file) that says less: only
    # an account that holds payments of this network has any to look for.
    paid_evidence = (
        await s.fetchval(
            "SELECT 1 FROM payments WHERE account_id = ? AND network = ? LIMIT 1", row_id, network
        )
        is not None
    )
    for rows in chunks:
        check_batch(rows, latest)
        if paid_evidence:
            rows = await keep_paid(s, account_uid, network, rows)
        if stream:
            # A later chunk's repeat of an id would update a row this transaction wrote and
            # break the counts: the ids written so far are kept by the database, not here.
            await _note_written(s, [r.external_id for r in rows])
        partial = [r.external_id for r in rows if r.stated is not None]
        complete = with_stored(rows, await stored_values(s, row_id, network, partial))
        if s.dialect.arrays:
            statements: Iterable[tuple[int, int]] = (
                (start, UPSERT_CHUNK) for start in range(0, len(complete), UPSERT_CHUNK)
            )
        else:
            statements = values_chunks(len(complete))
        for start, size in statements:
            chunk = complete[start : start + size]
            stored = await count_stored(s, row_id, network, [r.external_id for r in chunk])
            if s.dialect.arrays:
                columns = [[getattr(r, name) for r in chunk] for name in _ROW_COLUMNS]
                written = await s.execute(UPSERT_ARRAYS_SQL, row_id, network, now, now, *columns)
            else:
                bound = upsert_values_params(row_id, network, now, map(_ROW, chunk))
                written = await s.execute(upsert_values_sql(len(chunk)), *bound)
            # `written` counts the rows inserted and those updated (a row left as it stood
            # is not); no external_id twice, so the new ones are those not stored before.
            new = len(chunk) - stored
            inserted += new
            updated += written - new
            unchanged += stored - (written - new)
    if stream:
        await s.execute(f"DROP TABLE {_STREAMED_IDS}")
    return ImportResult(inserted, updated, unchanged)


# Seconds a stream's transaction may wait for its next chunk (a file's 10,000 rows read
# and checked: about a second); a longer wait is a caller gone, and the server ends it.
STREAM_IDLE = 600


# The external ids a stream of chunks has written, in its transaction: a temporary table
# (rolled back with it, dropped at its end), its primary key finding a repeat.
_STREAMED_IDS = "streamed_external_ids"


async def _note_written(s: Session, external_ids: list[str]) -> None:
    """Add `external_ids` to the ids this stream wrote; ValueError for one written already."""
    condition, params = _one_of(s, external_ids)
    again = await s.fetchval(
        f"SELECT external_id FROM {_STREAMED_IDS} WHERE external_id {condition} LIMIT 1", *params
    )
    if again is not None:
        raise ValueError(f"external_id: {again!r} appears twice")
    values = "SELECT unnest(?::text[])" if s.dialect.arrays else "SELECT value FROM json_each(?)"
    await s.execute(f"INSERT INTO {_STREAMED_IDS} (external_id) {values}", *params)


async def count_stored(s: Session, row_id: int, network: str, external_ids: list[str]) -> int:
    """How many of `external_ids` the account already holds for `network`."""
    condition, params = _one_of(s, external_ids)
    found = await s.fetchval(
        "SELECT count(*) FROM commissions "
        f"WHERE account_id = ? AND network = ? AND external_id {condition}",
        row_id,
        network,
        *params,
    )
    return int(found)
