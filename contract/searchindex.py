"""`api/search.json` and `api/postings.bin`: what the edge needs to search, filter, sort and count the directory
without reading a row (part of the dist format, `contract.shardformat`).

One JSON object, written by the build from the rows in rank order:

- `buildId`: the build it belongs to (`manifest.json`'s).
- `columns`: per rank, the terms the typed filters and facets test: `vertical`, `model`,
  `recurring`, `markets` (upper case), `payout`, `platform` (as written, "" in-house),
  `commissionMode`, `cookieDays`, `minPayout`, `verifiedAge` (whole days from
  `lastVerifiedAt` to the build's reference day, docs/scoring.md: so `verifiedWithinDays`
  stays a pure function of the build), `createdAt` (microseconds since the epoch, UTC) and
  `nameKey` (`textsearch.name_key`).
- `orders`: for each sort but `score` (whose order is the rank itself), every rank once, in
  that sort's order: `name` ascending, `cookieDays` and `createdAt` descending, ties broken
  by slug ascending, so each order is total.
- `tokens`: `[[token, count], ...]` in sorted token order, every token of the rows' name,
  pitch, host or commission (`textsearch.document_tokens`); `prefixes`: the same for every
  token prefix of `textsearch.MIN_TERM` to `PREFIX_MAX` characters.

`api/postings.bin` holds the postings: for each token, then each prefix, in that order,
the `count` ascending ranks (directory order) of the rows holding it, as unsigned 32-bit
little-endian integers, one after the other. Binary because the edge reads them straight
into arrays: about 1.9 million ranks for 17,000 programmes would be 70 MB of Python
integers, transiently, when parsed from JSON.
"""

from __future__ import annotations

import datetime as dt
import functools
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from contract import textsearch

PATH = "api/search.json"
POSTINGS = "api/postings.bin"

# Sorts of /v1/programs: the first is the directory order.
SCORE, NAME, COOKIE_DAYS, CREATED_AT = "score", "name", "cookieDays", "createdAt"
SORTS: tuple[str, ...] = (SCORE, NAME, COOKIE_DAYS, CREATED_AT)
# Bound of verifiedWithinDays: ten years, as cookieDays.
VERIFIED_WITHIN_DAYS_MAX = 3650
ORDERED_SORTS: tuple[str, ...] = (NAME, COOKIE_DAYS, CREATED_AT)  # those with an `orders` entry

COLUMNS: tuple[str, ...] = (
    "vertical",
    "model",
    "recurring",
    "markets",
    "payout",
    "platform",
    "commissionMode",
    "cookieDays",
    "minPayout",
    "verifiedAge",
    "createdAt",
    "nameKey",
)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def instant_micros(text: str) -> int:
    """An ISO 8601 instant with its offset as microseconds since the epoch (UTC)."""
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (moment - _EPOCH) // dt.timedelta(microseconds=1)


def sort_key(sort: str, columns: dict[str, list[Any]], slugs: Sequence[str], rank: int) -> tuple:
    """The ascending key of a rank under an ordered sort (directory order is the rank)."""
    if sort == NAME:
        return (columns["nameKey"][rank], slugs[rank])
    if sort == COOKIE_DAYS:
        return (-columns["cookieDays"][rank], slugs[rank])
    if sort == CREATED_AT:
        return (-columns["createdAt"][rank], slugs[rank])
    raise ValueError(f"no order for sort {sort!r}")


def reference_day(rows: Sequence[dict[str, Any]]) -> str:
    """The build's reference day: the newest `lastVerifiedAt`, YYYY-MM-DD (docs/scoring.md)."""
    return max((str(row["lastVerifiedAt"]) for row in rows), default="")[:10]


def _age(verified: str, reference: str) -> int:
    days = (dt.date.fromisoformat(reference) - dt.date.fromisoformat(verified[:10])).days
    return max(days, 0)


def columns_of(rows: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """The `columns` member for API rows in rank order."""
    reference = reference_day(rows)
    return {
        "vertical": [r["vertical"] for r in rows],
        "model": [r["model"] for r in rows],
        "recurring": [r["recurring"] for r in rows],
        "markets": [sorted({m.upper() for m in r["markets"]}) for r in rows],
        "payout": [r["payout"] for r in rows],
        "platform": [r["platform"] for r in rows],
        "commissionMode": [r["commissionTerms"]["mode"] for r in rows],
        "cookieDays": [r["cookieDays"] for r in rows],
        "minPayout": [r["minPayout"] for r in rows],
        "verifiedAge": [_age(r["lastVerifiedAt"], reference) for r in rows],
        "createdAt": [instant_micros(r["createdAt"]) for r in rows],
        "nameKey": [textsearch.name_key(r["name"]) for r in rows],
    }


def searchable(row: dict[str, Any]) -> tuple[str, ...]:
    """The texts `q` searches: name, pitch, host and the commission as advertised."""
    return (row["name"], row["pitch"], row["host"], row["commission"])


def postings(rows: Sequence[dict[str, Any]]) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """`tokens` and `prefixes`: ascending ranks per token and per short prefix, keys sorted."""
    by_token: dict[str, list[int]] = {}
    by_prefix: dict[str, list[int]] = {}
    for rank, row in enumerate(rows):
        words = textsearch.document_tokens(searchable(row))
        heads = {p for word in words for p in textsearch.prefixes(word)}
        for word in words:
            by_token.setdefault(word, []).append(rank)
        for head in heads:
            by_prefix.setdefault(head, []).append(rank)
    return (
        {k: by_token[k] for k in sorted(by_token)},
        {k: by_prefix[k] for k in sorted(by_prefix)},
    )


def encode(
    build_id: str, rows: Sequence[dict[str, Any]], slugs: Sequence[str]
) -> tuple[bytes, bytes]:
    """`api/search.json` and `api/postings.bin` for API rows in rank order (`slugs[rank]` is
    row rank's slug)."""
    columns = columns_of(rows)
    ranks = range(len(rows))
    orders = {
        sort: sorted(ranks, key=functools.partial(sort_key, sort, columns, slugs))
        for sort in ORDERED_SORTS
    }
    tokens, prefixes = postings(rows)
    flat = array("I")
    for lists in (tokens, prefixes):
        for ranks_of in lists.values():
            flat.extend(ranks_of)
    if sys.byteorder != "little":
        flat.byteswap()
    doc = orjson.dumps(
        {
            "buildId": build_id,
            "columns": columns,
            "orders": orders,
            "tokens": [[word, len(r)] for word, r in tokens.items()],
            "prefixes": [[head, len(r)] for head, r in prefixes.items()],
        }
    )
    return doc, flat.tobytes()


@dataclass(frozen=True)
class SearchIndex:
    """`api/search.json` and `api/postings.bin` decoded and checked for shape (the edge
    checks that the orders are sorted)."""

    columns: dict[str, Any]  # numbers in arrays, other values shared (see _compact)
    orders: dict[str, array]  # 'I' arrays
    tokens: dict[str, array]  # word -> ascending ranks, words in sorted order
    prefixes: dict[str, array]


class SearchFormatError(ValueError):
    """`api/search.json` or `api/postings.bin` does not belong to the build or is
    inconsistent."""


def decode(blob: bytes, postings_blob: bytes, build_id: str, total: int) -> SearchIndex:
    """Read the search index of a build of `total` rows; SearchFormatError when it is off."""
    doc = orjson.loads(blob)
    if not isinstance(doc, dict) or doc.get("buildId") != build_id:
        raise SearchFormatError(f"{PATH} belongs to another build")
    columns, orders = doc["columns"], doc["orders"]
    if set(columns) != set(COLUMNS) or any(len(columns[c]) != total for c in COLUMNS):
        raise SearchFormatError(f"{PATH}: columns disagree with the rows")
    everyone = list(range(total))
    if set(orders) != set(ORDERED_SORTS) or any(sorted(orders[s]) != everyone for s in orders):
        raise SearchFormatError(f"{PATH}: an order is not a permutation of the rows")
    if len(postings_blob) % 4:
        raise SearchFormatError(f"{POSTINGS} is not whole 32-bit ranks")
    flat = array("I")
    flat.frombytes(postings_blob)
    if sys.byteorder != "little":
        flat.byteswap()
    at = 0
    decoded: list[dict[str, array]] = []
    for member in ("tokens", "prefixes"):
        out: dict[str, array] = {}
        previous = ""
        for word, count in doc[member]:
            if not isinstance(word, str) or word <= previous or type(count) is not int or count < 1:
                raise SearchFormatError(f"{PATH}: {member} are not sorted words with counts")
            previous = word
            ranks = flat[at : at + count]
            at += count
            listed = ranks.tolist()
            if len(listed) != count or listed[-1] >= total or listed != sorted(set(listed)):
                raise SearchFormatError(f"{POSTINGS}: {member} {word!r} is not ascending ranks")
            out[word] = ranks
        decoded.append(out)
    if at != len(flat):
        raise SearchFormatError(f"{POSTINGS} holds ranks {PATH} does not index")
    return SearchIndex(
        _compact(columns),
        {sort: array("I", orders[sort]) for sort in orders},
        decoded[0],
        decoded[1],
    )


# Columns held as arrays (typecode), the others as lists sharing one object per value.
_NUMERIC = {"cookieDays": "q", "minPayout": "d", "verifiedAge": "q", "createdAt": "q"}


def _compact(columns: dict[str, list[Any]]) -> dict[str, Any]:
    """The columns as the edge keeps them: numbers in arrays, and one object per distinct
    value or market list (JSON gives a new string per row: 17,000 times "monthly")."""
    out: dict[str, Any] = {}
    for name, values in columns.items():
        if name in _NUMERIC:
            out[name] = array(_NUMERIC[name], values)
        elif name == "markets":
            shared: dict[tuple[str, ...], tuple[str, ...]] = {}
            out[name] = [shared.setdefault(tuple(m), tuple(m)) for m in values]
        elif name == "nameKey":
            out[name] = values  # nearly one per row: nothing to share
        else:
            canonical: dict[Any, Any] = {}
            out[name] = [canonical.setdefault(v, v) for v in values]
    return out
