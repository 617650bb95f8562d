"""Strict query-string parsing against an endpoint's parameter table (pure functions).

Checks run in a fixed order and the first fault is reported:
1. a parameter the endpoint does not take: `unknown_parameter`;
2. each known parameter, in the endpoint's table order: repeated, empty, then its own
   type, range or enum check: `invalid_parameter`;
3. `from` later than `to`: `invalid_date_range`;
4. the cursor's signature and filters (done by the handler): `invalid_cursor`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from typing import Any

from contract.endpoints import Endpoint, Param
from edge.errors import ApiError, invalid

_DIGITS = re.compile(r"[0-9]{1,9}")
_MARKET = re.compile(r"[A-Za-z]{2}")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
MAX_STRING = 200
MAX_CURSOR = 1024


def _integer(p: Param, raw: str) -> int:
    lo, hi = p.minimum, p.maximum
    wanted = f"{p.name} must be an integer from {lo} to {hi}"
    if not _DIGITS.fullmatch(raw):
        raise invalid(p.name, wanted)
    value = int(raw)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise invalid(p.name, wanted)
    return value


def _boolean(p: Param, raw: str) -> bool:
    if raw == "true":
        return True
    if raw == "false":
        return False
    raise invalid(p.name, f"{p.name} must be true or false")


def _enum(p: Param, raw: str) -> str:
    assert p.enum is not None
    if raw not in p.enum:
        raise invalid(p.name, f"{p.name} must be one of: {', '.join(p.enum)}")
    return raw


def _market(p: Param, raw: str) -> str:
    if not _MARKET.fullmatch(raw):
        raise invalid(p.name, f"{p.name} must be an ISO 3166-1 alpha-2 country code, e.g. FR")
    return raw.upper()


def _date(p: Param, raw: str) -> dt.date:
    wanted = f"{p.name} must be a calendar date written YYYY-MM-DD"
    if not _DATE.fullmatch(raw):
        raise invalid(p.name, wanted)
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise invalid(p.name, wanted) from None


def _string(p: Param, raw: str) -> str:
    if len(raw) > MAX_STRING or not raw.isprintable():
        raise invalid(p.name, f"{p.name} must be at most {MAX_STRING} printable characters")
    return raw


def _cursor(p: Param, raw: str) -> str:
    if len(raw) > MAX_CURSOR:
        raise ApiError("invalid_cursor", "cursor is not one this API issued", param=p.name)
    return raw


PARSERS: dict[str, Callable[[Param, str], Any]] = {
    "integer": _integer,
    "boolean": _boolean,
    "enum": _enum,
    "market": _market,
    "date": _date,
    "string": _string,
    "cursor": _cursor,
}


def parse_query(endpoint: Endpoint, items: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Validate a query string's (name, value) pairs; return the given values, parsed.

    Parameters with a default (limit) are always present in the result.
    """
    pairs = list(items)
    known = {p.name: p for p in endpoint.params}
    for name, _ in pairs:
        if name not in known:
            shown = name if len(name) <= 40 and name.isprintable() else name[:40].encode().hex()
            raise ApiError(
                "unknown_parameter",
                f"{endpoint.path} does not take the parameter {shown!r}; it takes: "
                + (", ".join(known) or "no parameters"),
                param=name if name.isprintable() else None,
            )
    values: dict[str, Any] = {}
    for p in endpoint.params:
        given = [value for name, value in pairs if name == p.name]
        if len(given) > 1:
            raise invalid(p.name, f"{p.name} is given {len(given)} times; give it once")
        if not given:
            if p.default is not None:
                values[p.name] = p.default
            continue
        if given[0] == "":
            raise invalid(p.name, f"{p.name} is empty; give a value or leave it out")
        values[p.name] = PARSERS[p.kind](p, given[0])
    lower, upper = values.get("from"), values.get("to")
    if lower is not None and upper is not None and lower > upper:
        raise ApiError("invalid_date_range", "from is later than to", param="from")
    return values
