"""The account store's core: what an operation sees (`Session`), what differs between the
databases (`Dialect`) and the two doors every caller goes through (`AccountStore`). The
schema is store.schema's.

An operation is a plain `async def op(s: Session, ...)` in the module of what it touches
(store.accounts, .connections, .commissions, .summary), written once for both
databases: one SQL text per statement with `?` placeholders (the PostgreSQL layer numbers
them `$1, $2, ...`). A caller runs it through one of the store's two doors:

    rows = await store.read(commissions.page, query)
    uid = await store.write(accounts.create, email, "pro")

`read` runs it on a read connection, its statements seeing one state (a snapshot
transaction), unless the operation is marked `@one_statement` (one statement sees one
state by itself: no BEGIN and COMMIT around it). `write` runs it in one write transaction
and returns once that committed. An operation awaits nothing but its session, so the
SQLite layer drives it in its connection's thread without an event loop
(store.engines.sqlite). A real difference between the databases (arrays as parameters,
row locks, how a page comes back) is a field of `Dialect`, read where it matters, never a
second copy of an operation. Operations compose: one that awaits another runs it in the
same transaction. The wall clock is the session's (`s.now()`, `s.moment()`), so that a
store opened with a test clock writes that clock's time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

if TYPE_CHECKING:
    from store.publicids import PublicIds

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between the databases, as far as the operations care."""

    # A list of values travels as one array parameter (`= ANY(?::text[])`, `unnest`);
    # otherwise as one JSON text (`json_each`), and rows to write as chunks of bound values.
    arrays: bool
    # Write transactions run side by side: one that decides on what it read locks those
    # rows (FOR UPDATE), and imports of one (account, network) queue on an advisory lock.
    # A database that runs one write at a time (SQLite's BEGIN IMMEDIATE) needs neither.
    concurrent_writes: bool
    # A page of commissions comes back as one JSON array made by the database: Python's
    # sqlite3 gives up the GIL at every row, and each row then waits for the busy event
    # loop's thread; one aggregated row waits once.
    json_pages: bool
    # The server ends a transaction left idle past a limit (PostgreSQL's
    # idle_in_transaction_session_timeout, the store's timeout plus a second): a stream of
    # chunks, idle while its caller reads the next one, sets STREAM_IDLE for its own.
    idle_timeout: bool


class Session(Protocol):
    """One connection inside the layer's transaction, as the operations use it.

    SQL has `?` placeholders. `fetchrow` and `fetchval` read the first row (None if
    there is none); `execute` returns the number of rows the statement touched. `moment()`
    is the store's wall clock, `now()` the same as a stored timestamp."""

    @property
    def dialect(self) -> Dialect: ...

    def now(self) -> str: ...

    def moment(self) -> dt.datetime: ...

    async def fetch(self, sql: str, *args: Any) -> list[Any]: ...

    async def fetchrow(self, sql: str, *args: Any) -> Any: ...

    async def fetchval(self, sql: str, *args: Any) -> Any: ...

    async def execute(self, sql: str, *args: Any) -> int: ...

    async def executemany(self, sql: str, args: Iterable[Sequence[Any]]) -> None: ...


# What a door runs: a coroutine function of a session and the caller's arguments.
# Coroutines, not any awaitable: the SQLite layer drives them to their end in its threads.
Op = Callable[Concatenate[Session, P], Coroutine[Any, Any, T]]

F = TypeVar("F", bound=Callable[..., Any])


def one_statement(fn: F) -> F:
    """Mark a read operation of one statement: the read door runs it without the snapshot
    transaction a read of several statements needs (one BEGIN and COMMIT less)."""
    vars(fn)["one_statement"] = True
    return fn


class AccountStore(Protocol):
    """The account store as every caller sees it: two doors and `close`.

    Every call may raise StoreUnavailable; a write raises only when it did not commit (or
    OutcomeUnknown: see store.base)."""

    async def read(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(session, *args, **kwargs)` on a read connection, seeing one state."""
        ...

    async def write(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(session, *args, **kwargs)` in one write transaction; returns once committed."""
        ...

    @property
    def ids(self) -> PublicIds:
        """The store's public ids (store.publicids): row ids to and from the ids the API
        shows, with the store's own key."""
        ...

    async def close(self) -> None:
        """Let running calls end, then close every connection."""
        ...


# --- Identifiers ------------------------------------------------------------------------

_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def account_filters(
    account_uid: str, network: str | None, status: str | None
) -> tuple[list[str], list[Any]]:
    """The conditions (and their parameters) a read of one account's commissions or totals
    starts from: the account, and the network and status when given."""
    where = ["account_id = (SELECT id FROM accounts WHERE uid = ?)"]
    params: list[Any] = [account_uid]
    if network is not None:
        where.append("network = ?")
        params.append(network)
    if status is not None:
        where.append("status = ?")
        params.append(status)
    return where, params


def pairs_filter(
    pairs: Sequence[tuple[str, str]], program_column: str, key: bool = False
) -> tuple[str, list[Any]]:
    """The condition of a programSlug filter: the commission's (network, programme id) is
    one of `pairs` (none: nothing matches). `program_column` holds the programme id, or
    with `key` its dimension key (`store.summary.dimension_key`: '=' and the id)."""
    if not pairs:
        return "1 = 0", []
    one = f"(network = ? AND {program_column} = ?)"
    params: list[Any] = []
    for network, program_id in pairs:
        params += [network, "=" + program_id if key else program_id]
    return "(" + " OR ".join([one] * len(pairs)) + ")", params


def new_id(kind: str) -> str:
    """A random identifier like `acc_7k2m...` (80 bits)."""
    return kind + "_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(16))


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for `name` (pg_advisory_xact_lock(bigint))."""
    digest = hashlib.blake2b(f"affdir:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


# Tables of ciphertext no read path selects: each layer refuses them on its read connections.
SECRET_TABLES = ("network_credentials", "webhook_secrets", "id_key")
# What a history row keeps of the state a change replaced: the status with the network's
# word for it, and the amounts with their currency (written by the trigger of schema step 3).
HISTORY_FIELDS = ("status", "raw_status", "commission_amount", "sale_amount", "currency")
