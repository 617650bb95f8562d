"""Pure conversions of wire values: amounts, timestamps, currencies, JSON.

Amounts never pass through float: JSON is decoded with Decimal numbers, cents are divided
exactly, and the sign is kept (a correction or a reversal is negative, and stays so).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from sync.model import format_timestamp
from sync.spec import AmountFormat

_AMOUNT_TEXT = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*")
_CURRENCY = re.compile(r"[A-Za-z]{3}")
_EPOCH = re.compile(r"[0-9]{9,11}")
# Already the stored form (a year of four digits, so strftime writes it back the same).
_CANONICAL = re.compile(r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
# Integers up to this many minor units are scaled exactly in int arithmetic; larger ones
# take Decimal's path (its context rounds beyond 28 digits, and that stays as it is).
_INT_FAST = 10**18
_INT_SLOW = -_INT_FAST
# Enum members as module constants: looking one up on its class costs ten times as much,
# and these are read for every amount of every record.
_CENTS = AmountFormat.CENTS
_DMY = re.compile(
    r"(?P<d>[0-9]{2})/(?P<m>[0-9]{2})/(?P<y>[0-9]{4})(?:\s+(?P<t>[0-9]{2}:[0-9]{2}(?::[0-9]{2})?))?"
)


class ValueProblem(ValueError):  # noqa: N818 - reads as what it reports
    """A record's field could not be read; the message names the field, never a secret."""


def decode_json(body: bytes) -> Any:
    """JSON with every non-integer number as a Decimal (never float)."""
    return json.loads(body, parse_float=Decimal)


def parse_amount(value: object, fmt: AmountFormat, name: str = "amount") -> str:
    """Signed plain decimal text (the store's amount form) from a wire amount."""
    if type(value) is int and _INT_SLOW < value < _INT_FAST:
        # Most networks' amounts: no Decimal needed for an exact answer.
        if fmt is not _CENTS:
            return str(value)
        if value < 0:
            digits = str(-value).rjust(3, "0")
            return f"-{digits[:-2]}.{digits[-2:]}"
        digits = str(value).rjust(3, "0")
        return f"{digits[:-2]}.{digits[-2:]}"
    if value is None or isinstance(value, bool):
        raise ValueProblem(f"{name}: missing")
    if isinstance(value, float):
        # A float has already lost the network's digits; refuse rather than guess.
        raise ValueProblem(f"{name}: decoded as float")
    if isinstance(value, int | Decimal):
        number = Decimal(value)
    elif isinstance(value, str) and _AMOUNT_TEXT.fullmatch(value):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            raise ValueProblem(f"{name}: not a number") from None
    else:
        raise ValueProblem(f"{name}: not a number")
    if fmt is _CENTS:
        if number != number.to_integral_value():
            raise ValueProblem(f"{name}: cents must be whole")
        number = number.scaleb(-2)
    return plain(number)


def plain(number: Decimal) -> str:
    """Decimal text without exponent or leading '+', scale kept ("12.30" stays)."""
    if not number.is_finite():
        raise ValueProblem("amount: not finite")
    text = format(number, "f")
    return text if text.startswith("-") or not text.startswith("+") else text[1:]


def parse_currency(value: object) -> str | None:
    """An ISO 4217 code upper case, or None when absent or not three letters."""
    if type(value) is str and len(value) == 3 and value.isascii() and value.isalpha():
        return value.upper()  # the usual form, told without a regular expression
    if isinstance(value, str) and _CURRENCY.fullmatch(value.strip()):
        return value.strip().upper()
    return None


def parse_timestamp(value: object, name: str = "date") -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` from ISO 8601 (naive means UTC), `dd/mm/YYYY[ HH:MM[:SS]]`
    or UNIX seconds."""
    if type(value) is str and _CANONICAL.fullmatch(value):
        # Already in the stored form: only the calendar is left to check (strftime is a
        # large share of a record's parse).
        try:
            dt.datetime.fromisoformat(value)
        except ValueError:
            raise ValueProblem(f"{name}: not a date") from None
        return value
    moment = parse_moment(value, name)
    return format_timestamp(moment)


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
