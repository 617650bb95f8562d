"""The account store's value types, errors, checks and write outcomes.

Both stores (store.engines.sqlite and store.engines.postgres, running the operations of
store.accounts, .connections, .commissions and .summary) keep these conventions, which
the API and the cursors rely on:

- Timestamps are UTC text in exactly one form, `YYYY-MM-DDTHH:MM:SSZ` (`TIMESTAMP_FORMAT`),
  so text order is time order and values go out on the wire verbatim.
- Amounts are decimal text matching `AMOUNT_PATTERN` (a JSON number literal without
  exponent, scale kept as the network wrote it: "12.30" stays "12.30"). No float ever.
- Commissions are ordered by (transacted_at DESC, seq DESC); `seq` is the store's integer
  identity of a row, stable across re-imports. Its public form is the store's
  `ids.commission(seq)` (store.publicids): a keyed permutation, whose order means nothing.
- Reads of the API never touch network credentials; the store only receives them already
  encrypted (accounts.crypto) and never returns them.
- A write is one transaction, and what its caller is told is what the store holds: it
  returns once committed and raises when it was not. Reads are bounded by the store's
  `timeout`; writes by `write_timeout`, none by default (an import of millions of rows
  takes minutes). A write asked to stop (its deadline, or its caller cancelled: Ctrl-C) is
  rolled back, unless it was committing already: then it returns its result as usual
  (`WriteWait`). Only a store that cannot learn what became of a cut-off COMMIT raises
  `OutcomeUnknown`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Decimal
from operator import attrgetter
from typing import Any, NoReturn, TypeVar

from contract import commission, vocabulary
from contract.commission import VALUE_FIELDS as VALUE_FIELDS
from contract.commission import CommissionRow as CommissionRow
from contract.commission import NewCommission as NewCommission
from contract.resources import RATE_PLACES, SYNC_REASON_CODE_PATTERN

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
TIMESTAMP_PATTERN = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"
TIMESTAMP_RE = re.compile(TIMESTAMP_PATTERN)
AMOUNT_PATTERN = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
AMOUNT_RE = re.compile(AMOUNT_PATTERN)
NETWORK_PATTERN = r"[a-z0-9][a-z0-9_-]{0,31}"
NETWORK_RE = re.compile(NETWORK_PATTERN)

T = TypeVar("T")


class About(enum.Enum):
    """What a refusal of the store is about, for a caller to say what to do next (the admin
    CLI names the command that lists or makes one)."""

    ACCOUNT = "account"
    KEY = "key"
    CONNECTION = "connection"
    CREDENTIALS = "credentials"
    WEBHOOK = "webhook endpoint"


class StoreError(Exception):
    """Base of the store's own errors; `about` names what a refusal is about, if anything."""

    def __init__(self, message: str, about: About | None = None) -> None:
        super().__init__(message)
        self.about = about


class StoreUnavailable(StoreError):  # noqa: N818 - the interface's name, used by both stores
    """The store cannot be read or written right now (I/O error, lock, timeout, closed)."""


class NotFound(StoreError):  # noqa: N818 - reads as the outcome it reports
    """No such account or key."""


class Conflict(StoreError):  # noqa: N818 - reads as the outcome it reports
    """The write contradicts what is stored (e.g. an ambiguous key prefix)."""


class OutcomeUnknown(StoreUnavailable):
    """A write was cut off while committing, and the store could not learn whether the
    commit happened: it may or may not have been applied."""


def format_timestamp(moment: dt.datetime) -> str:
    """The one stored and wire form of a moment: UTC, whole seconds, `Z`."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no defined UTC moment")
    # Not strftime: its %Y gives "999", not "0999", for the first millennium on glibc.
    utc = moment.astimezone(dt.UTC)
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}"
        f"T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"
    )


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# --- What the store returns -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CapabilityView:
    enabled: bool
    configured: bool
    enabled_at: str | None  # None while never enabled


@dataclass(frozen=True, slots=True)
class NetworkView:
    """A connected network as the API shows it: never its credentials."""

    network: str
    status: str
    connected_at: str | None
    last_sync_at: str | None
    accounts: int
    programs: int
    transactions: int
    # Coverage: when the sync last tried and last succeeded (outcome ok), the reason code
    # of its last outcome, and the instant through which the store holds every record.
    last_attempt_at: str | None = None
    last_success_at: str | None = None
    reason_code: str | None = None
    complete_through: str | None = None
    # When the sync plans its next attempt (a run a documented limit cut short).
    next_attempt_at: str | None = None
    # Connected for file imports only (never synced): the latest import's time, and the
    # earliest and latest transaction date of what is stored for it.
    import_only: bool = False
    last_import_at: str | None = None
    imported_from: str | None = None
    imported_through: str | None = None


@dataclass(frozen=True, slots=True)
class AccountView:
    uid: str
    email: str | None
    plan: str
    suspended: bool
    created_at: str
    capabilities: Mapping[str, CapabilityView]  # every name of vocabulary.CAPABILITIES
    networks: tuple[NetworkView, ...]  # ordered by network id


@dataclass(frozen=True, slots=True)
class KeyView:
    """An API key as listings show it: never the key, never its hash."""

    id: str
    account_uid: str
    prefix: str
    label: str
    scopes: tuple[str, ...]
    created_at: str
    revoked_at: str | None

    @property
    def state(self) -> str:
        return "active" if self.revoked_at is None else "revoked"


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """What an active key's hash resolves to: the key and its account, read together."""

    key: KeyView
    account: AccountView


@dataclass(frozen=True, slots=True)
class CommissionQuery:
    """One page of one account's commissions, filters already validated."""

    account_uid: str
    limit: int  # rows to return; callers ask for page size + 1 to learn hasMore
    network: str | None = None
    status: str | None = None
    since: dt.date | None = None  # inclusive, on the UTC date of transacted_at
    until: dt.date | None = None  # inclusive
    after: tuple[str, int] | None = None  # (transacted_at, seq) of the last row already seen
    # Only rows whose stored state changed at or after this timestamp (TIMESTAMP_FORMAT).
    updated_since: str | None = None
    program_external_id: str | None = None  # exact; with network only (the edge checks it)
    sub_id: str | None = None  # exact
    # A programSlug filter: the (network, programme id) pairs linked to the programme (the
    # edge reads them from the build); empty matches nothing, None filters nothing.
    program_pairs: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True, slots=True)
class StatusChange:
    """A state of a commission that a later write replaced: its status (with the network's
    word), its amounts and currency, when the store first held it and when it was replaced."""

    status: str
    raw_status: str | None
    commission_amount: str
    sale_amount: str | None
    currency: str
    recorded_at: str
    replaced_at: str


@dataclass(frozen=True, slots=True)
class CommissionDetail:
    """One commission and the states it went through, oldest first (at most
    contract.resources.HISTORY_MAX, the latest ones)."""

    row: CommissionRow
    history: tuple[StatusChange, ...]


_VALUES = attrgetter(*VALUE_FIELDS)


def values(row: NewCommission) -> tuple[Any, ...]:
    """A row's VALUE_FIELDS, in order: what is compared with, and written to, the store."""
    found: tuple[Any, ...] = _VALUES(row)
    return found


def with_stored(
    rows: Sequence[NewCommission], stored: Mapping[str, tuple[Any, ...]]
) -> list[NewCommission]:
    """`rows` with each field a row does not state taken from the stored row of its
    external_id (values in VALUE_FIELDS order); new rows, and rows stating every field,
    as they are."""
    out = []
    for row in rows:
        old = stored.get(row.external_id) if row.stated is not None else None
        if old is not None:
            kept = {
                name: value
                for name, value in zip(VALUE_FIELDS, old, strict=True)
                if name not in row.stated  # type: ignore[operator]  # not None here
            }
            row = replace(row, stated=None, **kept)
        out.append(row)
    return out


@dataclass(frozen=True, slots=True)
class ImportResult:
    inserted: int
    updated: int
    unchanged: int


def check_commission(row: NewCommission, latest: str | None = None) -> None:
    """The invariants every stored commission keeps (contract.commission, the one
    definition the importer and the sync apply too), its instants at most `latest`
    (default: a day from now; a batch computes it once); InvalidCommission, a ValueError,
    names the field at fault."""
    found = commission.problem(row, latest or commission.latest_instant(utc_now()))
    if found is not None:
        raise commission.InvalidCommission(*found)


def latest_instant() -> str:
    """The latest instant a commission stored now may carry (contract.commission)."""
    return commission.latest_instant(utc_now())


# --- Writes that report what they did ---------------------------------------------------


class WriteWait:
    """Waits out one write transaction, so that its caller is told what the store holds.

    A write asked to stop (past `timeout`, or its caller cancelled: Ctrl-C) may commit
    anyway: it may have been committing already, and nobody knows until it has ended. So the
    wait goes on until it has, holding back cancellations of the waiting task meanwhile. The
    store then calls `committed` (the result stands; the cancellations are withdrawn) or
    `rolled_back` (CancelledError for a cancelled caller, so it unwinds as asked).
    """

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.timed_out = False
        self.cancellations = 0

    async def until_done(self, work: asyncio.Future[Any], stop: Callable[[], object]) -> None:
        """Wait for `work` to end; past the deadline or when cancelled, `stop()` it first."""
        try:
            async with asyncio.timeout(self.timeout):
                await asyncio.wait({work})
            return
        except TimeoutError:
            self.timed_out = True
        except asyncio.CancelledError:
            self.cancellations += 1
        stop()
        await self.outlast(work)

    async def outlast(self, work: asyncio.Future[Any]) -> None:
        """Wait for `work` to end, holding back any cancellation of the waiting task."""
        while not work.done():
            try:
                await asyncio.wait({work})
            except asyncio.CancelledError:
                self.cancellations += 1

    def committed(self, result: T) -> T:
        """`result` of a write that committed: it stands, whatever asked it to stop."""
        self.withdraw_cancellations()
        return result

    def withdraw_cancellations(self) -> None:
        """Forget the cancellations held back: they came too late to stop anything."""
        task = asyncio.current_task()
        for _ in range(self.cancellations):
            if task is not None:
                task.uncancel()
        self.cancellations = 0

    def rolled_back(self, error: BaseException) -> NoReturn:
        """Raise for a write that did not commit (`error`: what ended it)."""
        if self.cancellations:
            raise asyncio.CancelledError
        if self.timed_out:
            raise StoreUnavailable(
                f"the write did not finish within {self.timeout:g}s and was rolled back: "
                "nothing was written"
            ) from error
        raise error

    def unknown(self, error: OutcomeUnknown) -> NoReturn:
        """Raise `error` even for a cancelled caller: "interrupted" would claim a rollback."""
        self.withdraw_cancellations()
        raise error


@dataclass(frozen=True, slots=True)
class ConnectionView:
    """A connected network as its operators and the sync worker see it: the sync's state,
    why it ended as it did, never the credentials."""

    account_uid: str
    network: str
    status: str
    connected_at: str | None
    last_sync_at: str | None
    last_attempt_at: str | None
    reason_code: str | None
    reason_message: str | None
    currency: str | None  # the account's currency at a network whose records carry none
    position: str | None  # the sync's committed position: complete through this instant
    lease_owner: str | None
    lease_expires_at: str | None
    accounts: int
    programs: int
    transactions: int
    # When the sync plans its next attempt (a run a documented limit cut short); None: the
    # sync interval decides.
    next_attempt_at: str | None = None
    # Connected for file imports only (no credentials: never synced), and the latest
    # import's time.
    import_only: bool = False
    last_import_at: str | None = None


@dataclass(frozen=True, slots=True)
class SealedCredentials:
    """One connection's stored ciphertext, for the sync worker and re-encryption only."""

    account_uid: str
    network: str
    ciphertext: bytes


# --- The interface --------------------------------------------------------------------


# --- Row helpers every implementation shares --------------------------------------------


def check_plan(plan: str) -> None:
    if plan not in vocabulary.PLANS:
        raise ValueError(f"plan must be one of: {', '.join(vocabulary.PLANS)}")


def check_network(network: str) -> None:
    if not NETWORK_RE.fullmatch(network):
        raise ValueError(f"network {network!r} must be 1-32 lowercase letters, digits, '-' or '_'")


# A sync's counts fit PostgreSQL's integer columns (SQLite's are wider) and JavaScript's
# exact integers, which read them from /v1/me.
MAX_SYNC_COUNT = 2**31 - 1
EMAIL_MAX = 254  # RFC 5321's longest forward path
LABEL_MAX = 100
_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+")


def check_sync(status: str, counts: Iterable[int]) -> None:
    """A synchronisation outcome the stores record; ValueError says what is wrong."""
    if status not in vocabulary.NETWORK_SYNC_STATUSES or status == "never":
        raise ValueError("a sync outcome is one of: ok, partial, auth_failed, error")
    if not all(0 <= count <= MAX_SYNC_COUNT for count in counts):
        raise ValueError(f"counts must be whole numbers from 0 to {MAX_SYNC_COUNT}")


SYNC_REASON_CODE = re.compile(SYNC_REASON_CODE_PATTERN.strip("^$"))
SYNC_REASON_MAX = 500  # characters of a reason's message


def check_sync_reason(reason: tuple[str, str] | None) -> None:
    """A sync outcome's reason: a stable code and a short message, or none."""
    if reason is None:
        return
    code, message = reason
    if not SYNC_REASON_CODE.fullmatch(code):
        raise ValueError("a sync reason code is 1-64 lowercase letters, digits or '_'")
    if not message or len(message) > SYNC_REASON_MAX or not message.isprintable():
        raise ValueError(f"a sync reason message is 1-{SYNC_REASON_MAX} printable characters")


def check_email(email: str | None) -> None:
    """None (no address) or one address: text@domain, printable, at most EMAIL_MAX."""
    if email is None:
        return
    if not (0 < len(email) <= EMAIL_MAX and email.isprintable() and _EMAIL_RE.fullmatch(email)):
        raise ValueError(
            f"email must be an address such as pub@example.com (at most {EMAIL_MAX} "
            "characters), or left out"
        )


def check_label(label: str) -> None:
    """A key's label: 1 to LABEL_MAX printable characters (it is printed in listings)."""
    if not (label.strip() and len(label) <= LABEL_MAX and label.isprintable()):
        raise ValueError(
            f"label must be 1 to {LABEL_MAX} printable characters (no line breaks or controls)"
        )


def key_view(row: Sequence[Any]) -> KeyView:
    """A KeyView from (id, account uid, prefix, label, space-separated scopes, created, revoked)."""
    key_id, uid, prefix, label, scopes, created_at, revoked_at = row
    return KeyView(key_id, uid, prefix, label, tuple(scopes.split()), created_at, revoked_at)


def account_view(
    account: Sequence[Any], capabilities: Iterable[Sequence[Any]], networks: Iterable[Sequence[Any]]
) -> AccountView:
    """An AccountView from its rows: (uid, email, plan, suspended, created_at), capability rows
    (name, enabled, configured, enabled_at) and network rows ordered by network id."""
    caps = {
        name: CapabilityView(bool(enabled), bool(configured), enabled_at)
        for name, enabled, configured, enabled_at in capabilities
    }
    return AccountView(
        uid=account[0],
        email=account[1],
        plan=account[2],
        suspended=bool(account[3]),
        created_at=account[4],
        capabilities={
            name: caps.get(name, CapabilityView(False, False, None))
            for name in vocabulary.CAPABILITIES
        },
        networks=tuple(_network_view(row) for row in networks),
    )


def _network_view(row: Sequence[Any]) -> NetworkView:
    values = list(row)
    values[12] = bool(values[12])  # import_only: PostgreSQL's boolean, SQLite's 0/1
    return NetworkView(*values)


# --- Realised terms (store.outcomes computes them) ---------------------------------------

# A rate is rounded half to even to RATE_PLACES; the counts beside it make it exact.
_RATE_QUANTUM = Decimal(1).scaleb(-RATE_PLACES)


@dataclass(frozen=True, slots=True)
class StatusTotal:
    """The commissions of a group presently in one status: how many, their exact sums."""

    count: int
    commission: str  # amount text (`units_amount`)
    sale: str | None  # None when none of them reports a sale amount


@dataclass(frozen=True, slots=True)
class Outcomes:
    """A group's realised terms (see the module's docstring for each count)."""

    by_status: tuple[tuple[str, StatusTotal], ...]  # every status, in COMMISSION_STATUSES order
    decided: int  # presently approved, paid or declined
    approved: int  # presently approved or paid
    ever_approved: int
    reversed: int
    timed: int  # commissions whose first decision's instant is known (present status aside)
    median_days: str | None  # of those; "12" or "12.5" (the mean of the middle two)

    @property
    def approval_rate(self) -> str | None:
        """approved / decided, to RATE_PLACES places; None when nothing is decided."""
        return rate(self.approved, self.decided)

    @property
    def reversal_rate(self) -> str | None:
        """reversed / ever_approved, to RATE_PLACES places; None when none was approved."""
        return rate(self.reversed, self.ever_approved)


def rate(part: int, whole: int) -> str | None:
    """part / whole as decimal text of RATE_PLACES places (half to even); None for 0 / 0."""
    if not whole:
        return None
    return str((Decimal(part) / Decimal(whole)).quantize(_RATE_QUANTUM, ROUND_HALF_EVEN))


def median(values: Sequence[int]) -> str | None:
    """The median of whole numbers as exact text ("3", "3.5"); None for none."""
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return str(ordered[middle])
    twice = ordered[middle - 1] + ordered[middle]
    return str(twice // 2) if twice % 2 == 0 else f"{twice // 2}.5"
