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
from collections.abc import Mapping
from dataclasses import dataclass

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
# Characters of each text field (NewCommission attribute names).
TEXT_LIMITS: Mapping[str, int] = {
    "external_id": 200,
    "program_name": 500,
    "program_external_id": 200,
    "raw_status": 100,
    "sub_id": 200,
}
_STATUSES = frozenset(COMMISSION_STATUSES)
_ID_MAX, _NAME_MAX, _PROGRAM_ID_MAX, _RAW_STATUS_MAX, _SUB_ID_MAX = TEXT_LIMITS.values()


# Not frozen: the sync makes one for every record it fetches, and a frozen dataclass's
# __init__ (object.__setattr__ per field) costs several times a plain one's.
@dataclass(slots=True)
class NewCommission:
    """One imported commission, validated and normalised (see accounts.importer and the sync).

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


# The compared (and updated) part of a stored commission, in NewCommission attribute
# names; the stores' columns carry the same names.
VALUE_FIELDS = (
    "program_name",
    "program_external_id",
    "status",
    "raw_status",
    "sale_amount",
    "commission_amount",
    "currency",
    "clicked_at",
    "transacted_at",
    "sub_id",
)


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
    clicked = row.clicked_at
    if (
        BOUNDED_AMOUNT_RE.fullmatch(row.commission_amount)
        and (row.sale_amount is None or BOUNDED_AMOUNT_RE.fullmatch(row.sale_amount))
        and row.currency in CURRENCIES
        and _EARLIEST_TEXT <= row.transacted_at <= latest
        and _INSTANT_RE.fullmatch(row.transacted_at)
        and (
            clicked is None
            or (_EARLIEST_TEXT <= clicked <= latest and _INSTANT_RE.fullmatch(clicked))
        )
        and row.status in _STATUSES
        and 0 < len(row.external_id) <= _ID_MAX
        and (row.program_name is None or len(row.program_name) <= _NAME_MAX)
        and (row.program_external_id is None or len(row.program_external_id) <= _PROGRAM_ID_MAX)
        and (row.raw_status is None or len(row.raw_status) <= _RAW_STATUS_MAX)
        and (row.sub_id is None or len(row.sub_id) <= _SUB_ID_MAX)
        and "\x00" not in f"{row.external_id}{row.program_name}{row.program_external_id}"
        and "\x00" not in f"{row.raw_status}{row.sub_id}"
        and _calendar(row.transacted_at)
        and (clicked is None or _calendar(clicked))
    ):
        return None
    for name in ("commission_amount", "sale_amount"):
        value = getattr(row, name)
        if value is not None and (why := amount_problem(value)) is not None:
            return name, why
    if (why := currency_problem(row.currency)) is not None:
        return "currency", why
    for name in ("transacted_at", "clicked_at"):
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
