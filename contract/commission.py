"""What a valid commission is: the one definition the store's check, the importer and the
sync's mapping all apply, so that a value one of them refuses is refused by every other.

A commission's fields, in their stored forms (see store.base):

- amounts: plain decimal text, at most `AMOUNT_DIGITS` digits before the point and
  `AMOUNT_SCALE` after it, no exponent, no leading zeros;
- currency: an ISO 4217 code of `contract.currencies.CODES` (current or withdrawn);
- instants: `YYYY-MM-DDTHH:MM:SSZ`, not before `EARLIEST` (affiliate networks reported
  nothing before) nor more than `AHEAD` past now (a clock's skew, not a year 9999);
- text: the id non-empty, every text field within its `TEXT_LIMITS`, no NUL character;
- status: one of the contract's commission statuses.

`problem(row, latest)` names the first field at fault and why; `check(row, now)` raises
`InvalidCommission` with it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from operator import attrgetter
from typing import Any, Literal

from contract import currencies
from contract.vocabulary import COMMISSION_STATUSES

AMOUNT_DIGITS = 18  # before the decimal point
AMOUNT_SCALE = 12  # after it
# The stored form within those bounds (a JSON number literal without exponent).
BOUNDED_AMOUNT_RE = re.compile(
    rf"-?(?:0|[1-9][0-9]{{0,{AMOUNT_DIGITS - 1}}})(?:\.[0-9]{{1,{AMOUNT_SCALE}}})?"
)
CURRENCIES: frozenset[str] = currencies.CODES
EARLIEST = dt.datetime(1990, 1, 1, tzinfo=dt.UTC)
AHEAD = dt.timedelta(days=1)
_INSTANT_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_EARLIEST_TEXT = "1990-01-01T00:00:00Z"
Kind = Literal["text", "status", "amount", "currency", "instant"]


@dataclass(frozen=True, slots=True)
class CommissionField:
    """One field of a commission: what the store, the API, the events, the importer and the
    sync derive their lists of it from (FIELDS).

    `name` is the NewCommission and CommissionRow attribute and the store's column; `member`
    the API's (and the events') JSON member and the import column. `kind` says how it is
    stored, checked and shown: text (within `limit` characters), the normalised status,
    an amount (decimal text, a JSON number in the API), a currency code, an instant.
    """

    name: str
    member: str
    kind: Kind
    description: str  # the API's (and the OpenAPI document's)
    nullable: bool = True
    limit: int | None = None  # characters, for text
    # Compared, and written, when an import or the sync meets a stored row; False for the
    # row's identity (external_id), which is what it is matched by.
    value: bool = True
    # The import column that states it, when not its own member (raw_status: `status`).
    import_column: str | None = None
    # Further header names an export may give its column (matched as column names are).
    aliases: tuple[str, ...] = ()
    # The member of sync.connectors.base.Fields a connector reads it into; None: the
    # connector gives it in `Fields.more`, by `name`, and it is read as its kind says.
    wire: str | None = None

    @property
    def column(self) -> str:
        """The import column that states it."""
        return self.import_column or self.member


# A commission's fields, in the API's member order (after `id` and `network`), which is
# also the order of the store's columns in CommissionRow.
FIELDS: tuple[CommissionField, ...] = (
    CommissionField(
        "external_id",
        "externalId",
        "text",
        "Identifier used by the network itself.",
        nullable=False,
        limit=200,
        value=False,
        wire="external_id",
    ),
    CommissionField(
        "program_name", "programName", "text", "Programme name.", limit=500, wire="program_name"
    ),
    CommissionField(
        "program_external_id",
        "programExternalId",
        "text",
        "Programme identifier at the network.",
        limit=200,
        wire="program_id",
    ),
    # The sync reads the status from the network's word (and its payment evidence).
    CommissionField(
        "status", "status", "status", "Normalised status.", nullable=False, wire="raw_status"
    ),
    CommissionField(
        "raw_status",
        "rawStatus",
        "text",
        "The network's own wording of the status.",
        limit=100,
        import_column="status",
        wire="raw_status",
    ),
    CommissionField(
        "sale_amount",
        "saleAmount",
        "amount",
        "Order value, when the network reports it.",
        wire="sale",
    ),
    CommissionField(
        "commission_amount",
        "commissionAmount",
        "amount",
        "Amount owed to the publisher.",
        nullable=False,
        wire="commission",
    ),
    CommissionField(
        "currency",
        "currency",
        "currency",
        "ISO 4217 currency code. Never converted.",
        nullable=False,
        wire="currency",
    ),
    CommissionField(
        "clicked_at",
        "clickedAt",
        "instant",
        "ISO 8601 timestamp of the click.",
        wire="clicked_at",
    ),
    CommissionField(
        "transacted_at",
        "transactedAt",
        "instant",
        "ISO 8601 timestamp of the transaction.",
        nullable=False,
        wire="transacted_at",
    ),
    CommissionField(
        "sub_id",
        "subId",
        "text",
        "Publisher sub-identifier, when one was passed.",
        limit=200,
        wire="sub_ids",
    ),
)
FIELD_OF: Mapping[str, CommissionField] = {f.name: f for f in FIELDS}
NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
MEMBERS: tuple[str, ...] = tuple(f.member for f in FIELDS)
# Characters of each text field (NewCommission attribute names).
TEXT_LIMITS: Mapping[str, int] = {f.name: f.limit for f in FIELDS if f.limit is not None}
# The compared (and updated) part of a stored commission, in NewCommission attribute
# names; the stores' columns carry the same names.
VALUE_FIELDS: tuple[str, ...] = tuple(f.name for f in FIELDS if f.value)
_STATUSES = frozenset(COMMISSION_STATUSES)
_ID_MAX = TEXT_LIMITS["external_id"]
# The nullable text fields and their limits, checked together by `problem`.
_TEXTS = tuple(f.name for f in FIELDS if f.kind == "text" and f.nullable)
_TEXT_MAX = tuple(TEXT_LIMITS[name] for name in _TEXTS)
_AMOUNTS = tuple(f.name for f in FIELDS if f.kind == "amount")
_INSTANTS = tuple(f.name for f in FIELDS if f.kind == "instant")


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The named attributes of an object, always as a tuple (attrgetter's of one name is
    the value itself)."""
    if len(names) > 1:
        return attrgetter(*names)
    return lambda row: (getattr(row, names[0]),)


_TEXT_VALUES = _getter(_TEXTS)
_AMOUNT_VALUES = _getter(_AMOUNTS)
_INSTANT_VALUES = _getter(_INSTANTS)


# Not frozen: the sync makes one for every record it fetches, and a frozen dataclass's
# __init__ (object.__setattr__ per field) costs several times a plain one's.
@dataclass(slots=True)
class NewCommission:
    """One imported commission, validated and normalised (see accounts.importer and the sync).
    Its attributes are FIELDS' names (the required ones first, then those defaulting to None).

    `stated`: the fields its export gave (a column it has, a member its line has), None
    for all of them. Updating a stored row keeps the stored value of every other field:
    an export without a `status` column says nothing about the status, so it must not
    reset a `paid` row to `unknown`. A new row gets them as they are (null, `unknown`).
    """

    external_id: str
    status: str
    raw_status: str | None
    commission_amount: str
    currency: str
    transacted_at: str
    program_name: str | None = None
    program_external_id: str | None = None
    sale_amount: str | None = None
    clicked_at: str | None = None
    sub_id: str | None = None
    stated: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class CommissionRow:
    """A stored commission as the API shows it: its row id (the public id's source), its
    network, then FIELDS' names in order (the store reads its columns in that order)."""

    seq: int
    network: str
    external_id: str
    program_name: str | None
    program_external_id: str | None
    status: str
    raw_status: str | None
    sale_amount: str | None
    commission_amount: str
    currency: str
    clicked_at: str | None
    transacted_at: str
    sub_id: str | None


def _check_model() -> None:
    """Refuse, on import, a table the code cannot follow: NewCommission and CommissionRow
    carry exactly FIELDS' names, a text (and only a text) has a limit, a status or a
    currency is never null."""
    fields = tuple(f.name for f in dataclass_fields(NewCommission))
    if sorted(fields) != sorted((*NAMES, "stated")):
        raise TypeError(f"NewCommission's attributes {fields} are not FIELDS' names")
    columns = tuple(f.name for f in dataclass_fields(CommissionRow))
    if columns != ("seq", "network", *NAMES):
        raise TypeError(f"CommissionRow's attributes {columns} are not seq, network, FIELDS'")
    for f in FIELDS:
        if (f.kind == "text") != (f.limit is not None):
            raise TypeError(f"{f.name}: a text field, and only a text field, has a limit")
        if f.kind in ("status", "currency") and f.nullable:
            raise TypeError(f"{f.name}: a {f.kind} is never null")


_check_model()


class InvalidCommission(ValueError):  # noqa: N818 - reads as what it reports
    """A commission outside the definition: `field` (a NewCommission attribute) and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def latest_instant(now: dt.datetime) -> str:
    """The latest instant a commission may carry, seen at `now` (stored form)."""
    moment = (now + AHEAD).astimezone(dt.UTC)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


def amount_problem(text: str) -> str | None:
    """Why `text` is not a valid stored amount, None when it is."""
    if BOUNDED_AMOUNT_RE.fullmatch(text):
        return None
    whole, _, fraction = text.lstrip("-").partition(".")
    if whole.isdigit() and len(whole) > AMOUNT_DIGITS:
        return f"more than {AMOUNT_DIGITS} digits before the decimal point"
    if fraction.isdigit() and len(fraction) > AMOUNT_SCALE:
        return f"more than {AMOUNT_SCALE} digits after the decimal point"
    return "not a plain decimal number"


def instant_problem(text: str, latest: str) -> str | None:
    """Why `text` is not a valid stored instant at most `latest`, None when it is."""
    if not _INSTANT_RE.fullmatch(text):
        return "not YYYY-MM-DDTHH:MM:SSZ"
    # The stored form sorts as time does: comparing the text compares the instants.
    if text < _EARLIEST_TEXT:
        return f"before {_EARLIEST_TEXT}"
    if text > latest:
        return "more than a day in the future"
    return None if _calendar(text) else "not a calendar date and time"


def currency_problem(code: str) -> str | None:
    """Why `code` is not a valid stored currency, None when it is."""
    if code in CURRENCIES:
        return None
    return "not an ISO 4217 currency code"


def text_problem(name: str, value: str | None) -> str | None:
    """Why a text field's value is not valid, None when it is."""
    if value is None:
        return "empty" if name == "external_id" else None
    if not value and name == "external_id":
        return "empty"
    if len(value) > TEXT_LIMITS[name]:
        return f"longer than {TEXT_LIMITS[name]} characters"
    if "\x00" in value:
        # PostgreSQL's text holds no NUL, and SQLite's JSON reading would cut there.
        return "holds a NUL character"
    return None


def problem(row: NewCommission, latest: str) -> tuple[str, str] | None:
    """The first (field, reason) at fault in `row`, None when it is a valid commission
    whose instants are at most `latest` (see `latest_instant`)."""
    # Every row the sync fetches is checked (twice: mapped, then stored): a valid row,
    # nearly all of them, is told by one expression; the checks below find the fault.
    texts = _TEXT_VALUES(row)
    if (
        all(a is None or BOUNDED_AMOUNT_RE.fullmatch(a) for a in _AMOUNT_VALUES(row))
        and row.currency in CURRENCIES
        and all(
            i is None or (_EARLIEST_TEXT <= i <= latest and _INSTANT_RE.fullmatch(i))
            for i in _INSTANT_VALUES(row)
        )
        and row.status in _STATUSES
        and 0 < len(row.external_id) <= _ID_MAX
        and all(
            text is None or len(text) <= most for text, most in zip(texts, _TEXT_MAX, strict=True)
        )
        and "\x00" not in row.external_id
        and not any(text and "\x00" in text for text in texts)
        and all(i is None or _calendar(i) for i in _INSTANT_VALUES(row))
    ):
        return None
    for name in _AMOUNTS:
        value = getattr(row, name)
        if value is not None and (why := amount_problem(value)) is not None:
            return name, why
    if (why := currency_problem(row.currency)) is not None:
        return "currency", why
    for name in _INSTANTS:
        value = getattr(row, name)
        if value is not None and (why := instant_problem(value, latest)) is not None:
            return name, why
    for name in TEXT_LIMITS:
        if (why := text_problem(name, getattr(row, name))) is not None:
            return name, why
    if row.status not in _STATUSES:
        return "status", f"not one of {', '.join(COMMISSION_STATUSES)}"
    return None


def _calendar(text: str) -> bool:
    try:
        dt.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def check(row: NewCommission, now: dt.datetime) -> None:
    """Raise InvalidCommission naming the first field of `row` at fault (seen at `now`)."""
    found = problem(row, latest_instant(now))
    if found is not None:
        raise InvalidCommission(*found)
