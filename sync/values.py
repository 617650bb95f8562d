"""Pure conversions of wire values: amounts, timestamps, currencies, JSON.

Amounts never pass through float: JSON is decoded with Decimal numbers, cents are divided
exactly, and the sign is kept (a correction or a reversal is negative, and stays so).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any

from contract import commission
from sync.model import format_timestamp
from sync.spec import Amount, AmountFormat, TimeFormat

_AMOUNT_TEXT = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*")
_CURRENCY = re.compile(r"[A-Za-z]{3}")
_CODES = commission.CURRENCIES
_EPOCH = re.compile(r"[0-9]{9,11}")
# Already the stored form (a year of four digits, so strftime writes it back the same).
_CANONICAL = re.compile(r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
# Integers up to this many minor units are scaled exactly in int arithmetic; larger ones
# take Decimal's path (its context rounds beyond 28 digits, and that stays as it is).
_INT_FAST = 10**18
_INT_SLOW = -_INT_FAST
_DMY = re.compile(
    r"(?P<d>[0-9]{2})/(?P<m>[0-9]{2})/(?P<y>[0-9]{4})(?:\s+(?P<t>[0-9]{2}:[0-9]{2}(?::[0-9]{2})?))?"
)


# A decimal exponent past this is no amount (the longest valid one has 18 digits before
# the point and 12 after): refused before any digit of it is written out.
_EXPONENT_LIMIT = commission.AMOUNT_DIGITS + commission.AMOUNT_SCALE + 2
# The most digits a JSON integer is read with; a longer one is kept as its text.
_INT_DIGITS = 40


class ValueProblem(ValueError):  # noqa: N818 - reads as what it reports
    """A record's field could not be read; the message names the field, never a secret.
    `code` is the refusal's reason code (record_invalid, currency_missing)."""

    def __init__(self, message: str, code: str = "record_invalid") -> None:
        super().__init__(message)
        self.code = code


class UnreadNumber(str):
    """A JSON number kept as its text: written with an exponent (`1e309`) or with more
    digits than any amount has. An amount or a date refuses it; an id reads its text."""

    __slots__ = ()


def _json_number(text: str) -> Decimal | UnreadNumber:
    if "e" in text or "E" in text or len(text) > _INT_DIGITS:
        return UnreadNumber(text)
    return Decimal(text)


def _json_int(text: str) -> int | UnreadNumber:
    # Python reads at most 4,300 digits into an int, and slowly: past an amount's, text.
    return UnreadNumber(text) if len(text) > _INT_DIGITS else int(text)


def decode_json(body: bytes) -> Any:
    """JSON with every non-integer number as a Decimal (never float); a number with an
    exponent or too many digits stays text (UnreadNumber)."""
    return json.loads(body, parse_float=_json_number, parse_int=_json_int)


def parse_amount(value: object, fmt: AmountFormat | Amount, name: str = "amount") -> str:
    """Signed plain decimal text (the store's amount form) from a wire amount written as
    `fmt` declares (an AmountFormat alone: its usual scale, cents for CENTS)."""
    if isinstance(fmt, AmountFormat):
        fmt = _USUAL[fmt]
    scale = fmt.scale
    if type(value) is int and _INT_SLOW < value < _INT_FAST:
        # Most networks' amounts: no Decimal needed for an exact answer.
        if not scale:
            return str(value)
        sign, digits = ("-", str(-value)) if value < 0 else ("", str(value))
        digits = digits.rjust(scale + 1, "0")
        return f"{sign}{digits[:-scale]}.{digits[-scale:]}"
    if value is None or isinstance(value, bool):
        raise ValueProblem(f"{name}: missing")
    if isinstance(value, float):
        # A float has already lost the network's digits; refuse rather than guess.
        raise ValueProblem(f"{name}: decoded as float")
    if isinstance(value, UnreadNumber):
        raise ValueProblem(f"{name}: a number with an exponent or too many digits")
    if isinstance(value, int | Decimal):
        number = Decimal(value)
    elif isinstance(value, str) and fmt.form is AmountFormat.FORMATTED:
        number = formatted_amount(value, fmt.decimal_comma, name)
    elif isinstance(value, str) and _AMOUNT_TEXT.fullmatch(value):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            raise ValueProblem(f"{name}: not a number") from None
    else:
        raise ValueProblem(f"{name}: not a number")
    if not number.is_finite() or abs(number.adjusted()) > _EXPONENT_LIMIT:
        raise ValueProblem(f"{name}: out of range")
    if scale:
        if number != number.to_integral_value():
            raise ValueProblem(f"{name}: minor units must be whole")
        number = number.scaleb(-scale)
    text = plain(number)
    why = commission.amount_problem(text)
    if why is not None:
        raise ValueProblem(f"{name}: {why}")
    return text


_USUAL = {
    AmountFormat.STRING: Amount(AmountFormat.STRING),
    AmountFormat.NUMBER: Amount(AmountFormat.NUMBER),
    AmountFormat.CENTS: Amount(AmountFormat.CENTS, scale=2),
    AmountFormat.FORMATTED: Amount(AmountFormat.FORMATTED),
}
# The longest amount text read (a report's cell: signs, separators and 30 digits fit).
_FORMATTED_MAX = 64
# Digits grouped by thousands (the first group 1 to 3 digits), or not grouped at all.
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+")
_SPACES = frozenset(" \u00a0\u202f\u2009")


def formatted_amount(value: str, decimal_comma: bool, name: str = "amount") -> Decimal:
    """A Decimal from an amount as a report writes it: `$1,234.56`, `-€3.10`, `$-3.10`,
    `($4.26)` (negative: never +4.26), `4.26 USD`, `1.234,56 €` with `decimal_comma`.

    Refused: a sign inside the parentheses as well as outside them, two signs, digits
    grouped other than by thousands, letters that are not one currency code."""
    if len(value) > _FORMATTED_MAX:
        raise ValueProblem(f"{name}: not a number")
    text = _unmarked(value)
    negative = False
    if text.startswith("(") and text.endswith(")"):
        negative, text = True, _unmarked(text[1:-1])
    if text[:1] in ("-", "+", "\u2212"):
        sign, text = text[0], _unmarked(text[1:])
        if negative:
            raise ValueProblem(f"{name}: a sign inside parentheses")
        negative = sign != "+"
    elif text[-1:] == "-":  # a trailing minus, as some ledgers write it
        if negative:
            raise ValueProblem(f"{name}: a sign inside parentheses")
        negative, text = True, _unmarked(text[:-1])
    point, group = (",", ".") if decimal_comma else (".", ",")
    whole, has_point, fraction = text.partition(point)
    whole = "".join(group if c in _SPACES else c for c in whole)
    if (
        not _GROUPED.fullmatch((whole or "0").replace(group, ","))
        or (has_point and not (fraction.isascii() and fraction.isdigit()))
        or not (whole or fraction)
    ):
        raise ValueProblem(f"{name}: not a number")
    number = Decimal((whole or "0").replace(group, "") + (f".{fraction}" if fraction else ""))
    return -number if negative else number


def _unmarked(text: str) -> str:
    """`text` without spaces, currency signs or one ISO 4217 code at either end."""
    text = text.strip()
    if len(text) > 3 and text[:3] in _CODES:
        text = text[3:]
    if len(text) > 3 and text[-3:] in _CODES:
        text = text[:-3]
    text = text.strip()
    while text and unicodedata.category(text[0]) == "Sc":
        text = text[1:].lstrip()
    while text and unicodedata.category(text[-1]) == "Sc":
        text = text[:-1].rstrip()
    return text


def plain(number: Decimal) -> str:
    """Decimal text without exponent or leading '+', scale kept ("12.30" stays)."""
    if not number.is_finite():
        raise ValueProblem("amount: not finite")
    text = format(number, "f")
    return text if text.startswith("-") or not text.startswith("+") else text[1:]


def parse_currency(value: object) -> str | None:
    """An ISO 4217 code (contract.commission's list) upper case, None when absent or
    blank; ValueProblem for anything else (`XYZ`, `EURO`: a typo is no currency)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and _CURRENCY.fullmatch(value.strip()):
        code = value.strip().upper()
        if code in _CODES:
            return code
    raise ValueProblem("currency: not an ISO 4217 currency code")


def parse_timestamp(value: object, name: str = "date", fmt: TimeFormat = TimeFormat.TEXT) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` from ISO 8601 (naive means UTC), `dd/mm/YYYY[ HH:MM[:SS]]`
    or UNIX seconds; with `fmt` UNIX_SECONDS or UNIX_MILLIS, only that count (an integer
    or its digits) is read, milliseconds rounded down to the second."""
    if fmt is not TimeFormat.TEXT:
        moment = epoch_moment(value, fmt, name)
    elif type(value) is str and _CANONICAL.fullmatch(value):
        # Already in the stored form: only the calendar is left to check (strftime is a
        # large share of a record's parse).
        try:
            dt.datetime.fromisoformat(value)
        except ValueError:
            raise ValueProblem(f"{name}: not a date") from None
        return value
    else:
        moment = parse_moment(value, name)
    try:
        return format_timestamp(moment)
    except OverflowError:
        # Year 9999 with a negative offset is past year 9999 in UTC.
        raise ValueProblem(f"{name}: out of range") from None


_DIGITS = re.compile(r"-?[0-9]{1,16}")


def epoch_moment(value: object, fmt: TimeFormat, name: str = "date") -> dt.datetime:
    """The moment of a count of seconds or milliseconds since 1970 (an integer, or its
    digits as text); ValueProblem for anything else, a float included."""
    if isinstance(value, int) and not isinstance(value, bool):
        count = value
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        count = int(value.strip())
    elif value is None or value == "":
        raise ValueProblem(f"{name}: missing")
    else:
        raise ValueProblem(f"{name}: not a count of {fmt.value.removeprefix('unix_')}")
    if fmt is TimeFormat.UNIX_MILLIS:
        count //= 1000  # floor: -1 ms is the second before the epoch, not the epoch
    return _from_epoch(count, name)


def _from_epoch(seconds: int, name: str) -> dt.datetime:
    # A network sending a number of seconds past year 9999 sent a broken record, not a date.
    try:
        return dt.datetime.fromtimestamp(seconds, dt.UTC)
    except (ValueError, OverflowError, OSError):
        raise ValueProblem(f"{name}: out of range") from None


def parse_moment(value: object, name: str = "date") -> dt.datetime:
    """An aware datetime from the forms `parse_timestamp` accepts."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _from_epoch(value, name)
    if isinstance(value, UnreadNumber):
        raise ValueProblem(f"{name}: not a date")
    if not isinstance(value, str) or not value.strip():
        raise ValueProblem(f"{name}: missing")
    text = value.strip()
    if _EPOCH.fullmatch(text):
        return _from_epoch(int(text), name)
    match = _DMY.fullmatch(text)
    if match:
        time = match["t"] or "00:00:00"
        text = f"{match['y']}-{match['m']}-{match['d']}T{time}"
    try:
        moment = dt.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise ValueProblem(f"{name}: not a date") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment


def optional_text(value: object) -> str | None:
    """Text of a scalar field, None when absent or blank. A NUL character, which no store
    keeps, reads as U+FFFD: the record is kept, with the text as garbled as it came."""
    if type(value) is str:
        text = value.strip()
    elif value is None or isinstance(value, bool):
        return None
    else:
        text = str(value).strip()
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text or None
