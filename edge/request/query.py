"""Strict query-string parsing against an endpoint's parameter table (pure functions).

Checks run in a fixed order and the first fault is reported:
1. a parameter the endpoint does not take: `unknown_parameter`;
2. each known parameter, in the endpoint's table order: empty, repeated (a list parameter
   may repeat: its values are joined as one comma-separated list), then its own type, range
   or enum check: `invalid_parameter`;
3. `from` later than `to`: `invalid_date_range`;
4. the cursor's signature and filters (done by the handler): `invalid_cursor`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from contract import textsearch
from contract import vocabulary as v
from contract.countries import COUNTRIES, NOT_ASSIGNED
from contract.endpoints import Endpoint, Param
from contract.resources import COMMISSION_ID_PATTERN, PAYMENT_ID_PATTERN
from contract.vocabulary import INSTANT_PATTERN
from edge.http.errors import ApiError, invalid
from store.publicids import PublicIds

_DIGITS = re.compile(r"[0-9]+")
# Leading zeros aside, more digits than this is out of every range (and int() of thousands
# of digits is slow, then refused): checked before converting.
_MAX_DIGITS = 9
_MARKET = re.compile(r"[A-Za-z]{2}")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_INSTANT = re.compile(INSTANT_PATTERN)
_COMMISSION_ID = re.compile(COMMISSION_ID_PATTERN.strip("^$"))
_PAYMENT_ID = re.compile(PAYMENT_ID_PATTERN.strip("^$"))
# Surrogates cannot arrive over HTTP (undecodable bytes become U+FFFD) but are refused too.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
MAX_STRING = 200
# Cursors we issue are under 500 characters (a `sort=name` cursor carries the folded name,
# at most textsearch.NAME_KEY_MAX characters); the bound keeps every valid URL far below
# the HTTP layer's 8 KiB request-line limit, even with other parameters percent-encoded.
MAX_CURSOR = 512


def _integer(p: Param, raw: str) -> int:
    lo, hi = p.minimum, p.maximum
    wanted = f"{p.name} must be an integer from {lo} to {hi}"
    digits = raw.lstrip("0")
    if not _DIGITS.fullmatch(raw) or len(digits) > _MAX_DIGITS:
        raise invalid(p.name, wanted)
    value = int(digits or "0")  # not int(raw): it refuses more than 4,300 digits, zeros too
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
    wanted = f"{p.name} must be an ISO 3166-1 alpha-2 country code, e.g. FR"
    if not _MARKET.fullmatch(raw):
        raise invalid(p.name, wanted)
    code = raw.upper()
    if code not in COUNTRIES:
        # `UK` answered an empty page, which reads as "no programme there", not as a typo.
        hint = NOT_ASSIGNED.get(code)
        raise invalid(p.name, f"{wanted}; {hint}" if hint else f"{wanted}; {code} is none")
    return code


def _date(p: Param, raw: str) -> dt.date:
    wanted = f"{p.name} must be a calendar date written YYYY-MM-DD"
    if not _DATE.fullmatch(raw):
        raise invalid(p.name, wanted)
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise invalid(p.name, wanted) from None


def _instant(p: Param, raw: str) -> dt.datetime:
    wanted = f"{p.name} must be an RFC 3339 instant with its offset, e.g. 2026-01-31T12:00:00Z"
    if not _INSTANT.fullmatch(raw):
        raise invalid(p.name, wanted)
    # Python's parser takes at most microseconds; further digits cannot change a comparison
    # with stored instants, which have microseconds at most.
    text = re.sub(r"(\.[0-9]{6})[0-9]+", r"\1", raw.upper().replace("Z", "+00:00"))
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise invalid(p.name, wanted) from None
    try:
        return moment.astimezone(dt.UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before the first representable UTC
        raise invalid(p.name, wanted) from None


def _string(p: Param, raw: str) -> str:
    # "Printable" is "no control character" (C0, DEL, C1): exactly what the OpenAPI
    # document's pattern for such parameters says, so both agree on every value.
    if len(raw) > MAX_STRING or _CONTROL.search(raw):
        raise invalid(p.name, f"{p.name} must be at most {MAX_STRING} printable characters")
    return raw


def _search(p: Param, raw: str) -> tuple[str, ...]:
    """A full-text query as its distinct folded terms (contract.textsearch)."""
    _string(p, raw)
    terms = textsearch.query_terms(raw)
    if not terms:
        raise invalid(
            p.name,
            f"{p.name} must hold a word of at least {textsearch.MIN_TERM} letters or digits",
        )
    if len(terms) > textsearch.MAX_TERMS:
        raise invalid(p.name, f"{p.name} may hold at most {textsearch.MAX_TERMS} words")
    return terms


def _cursor(p: Param, raw: str) -> str:
    if len(raw) > MAX_CURSOR:
        raise ApiError("invalid_cursor", "cursor is not one this API issued", param=p.name)
    return raw


def _groups(p: Param, raw: str) -> tuple[str, ...]:
    """A comma-separated list of distinct values of `p.enum`, in the order given."""
    assert p.enum is not None
    wanted = (
        f"{p.name} must be a comma-separated list of distinct values among: {', '.join(p.enum)}"
    )
    items = raw.split(",", len(p.enum))  # one more than can be valid: the rest is not split
    if len(items) > len(p.enum) or len(set(items)) < len(items):
        raise invalid(p.name, wanted)
    for item in items:
        if item not in p.enum:
            raise invalid(p.name, wanted)
    return tuple(items)


def _slug(p: Param, raw: str) -> str:
    if len(raw) > v.SLUG_MAX_LENGTH or not v.SLUG_RE.fullmatch(raw):
        raise invalid(
            p.name,
            f"{p.name} must be a programme slug: lowercase letters, digits and single "
            f"hyphens, at most {v.SLUG_MAX_LENGTH} characters",
        )
    return raw


def includes(p: Param, raw: str) -> frozenset[str]:
    """An `include` list: distinct values of `p.enum` (its allowed values, one enum of
    contract/), comma-separated, in any order; what each adds, its endpoint says."""
    return frozenset(_groups(p, raw))


def included(params: Mapping[str, Any], name: str) -> bool:
    """Whether the validated `include` list of `params` names `name` (one of the endpoint's
    include values, contract.resources)."""
    return name in params.get("include", ())


PARSERS: dict[str, Callable[[Param, str], Any]] = {
    "integer": _integer,
    "boolean": _boolean,
    "enum": _enum,
    "market": _market,
    "date": _date,
    "instant": _instant,
    "string": _string,
    "search": _search,
    "cursor": _cursor,
    "groups": _groups,
    "slug": _slug,
    "include": includes,
}


def commission_seq_of(ids: PublicIds, raw: str) -> int | None:
    """The row id a commission's public id names (`com_` + 16 hex digits, the inverse of
    the store's permutation), None for any other text: the endpoint answers 404 for it, as
    for an id of another account."""
    if not _COMMISSION_ID.fullmatch(raw):
        return None
    return ids.commission_seq(raw)


def payment_seq_of(ids: PublicIds, raw: str) -> int | None:
    """The row id a payment's public id names (`pay_` + 16 hex digits), None for any other
    text: the endpoint answers 404 for it, as for an id of another account."""
    if not _PAYMENT_ID.fullmatch(raw):
        return None
    return ids.payment_seq(raw)


def _param_name(name: str) -> str | None:
    """`param` for an unknown name: the name itself, control characters and all (JSON
    escapes them; only the message shows them in hex), since one parameter is at fault.
    None only for lone surrogates, which JSON cannot carry (HTTP cannot send them)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return name


def parse_query(endpoint: Endpoint, items: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Validate a query string's (name, value) pairs; return the given values, parsed.

    Parameters with a default (limit) are always present in the result.
    """
    known = {p.name: p for p in endpoint.params}
    # One pass groups the values by name (this runs on every list request).
    given_by_name: dict[str, list[str]] = {}
    for name, value in items:
        if name in known:
            given_by_name.setdefault(name, []).append(value)
        else:
            shown = (
                name
                if len(name) <= 40 and name.isprintable()
                else name[:40].encode("utf-8", "surrogatepass").hex()
            )
            raise ApiError(
                "unknown_parameter",
                f"{endpoint.path} does not take the parameter {shown!r}; it takes: "
                + (", ".join(known) or "no parameters"),
                param=_param_name(name),
            )
    values: dict[str, Any] = {}
    for p in endpoint.params:
        given = given_by_name.get(p.name) or []
        if not given:
            if p.default is not None:
                values[p.name] = p.default
            continue
        if "" in given:
            raise invalid(p.name, f"{p.name} is empty; give a value or leave it out")
        if len(given) > 1:
            if p.kind not in ("groups", "include"):
                raise invalid(p.name, f"{p.name} is given {len(given)} times; give it once")
            # A list may also come as the parameter repeated (`groupBy=a&groupBy=b`, what
            # generated clients send for an array): the same list as `groupBy=a,b`.
            given = [",".join(given)]
        values[p.name] = PARSERS[p.kind](p, given[0])
    lower, upper = values.get("from"), values.get("to")
    if lower is not None and upper is not None and lower > upper:
        # Neither parameter alone is at fault: the pair is (param null, per the decisions).
        raise ApiError("invalid_date_range", "from is later than to")
    return values
