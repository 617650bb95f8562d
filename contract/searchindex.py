"""`api/search.json` and `api/search.bin`: what the edge needs to search, filter, sort and
count the directory without reading a row (part of the dist format, `contract.shardformat`).

Written by the build from the rows in rank order. `api/search.json` is a small JSON
object; the bulk is `api/search.bin`, arrays of fixed-size little-endian numbers one after
the other, in the order and with the lengths `sections` gives, so the edge reads each
straight into an `array` (parsed from JSON, the 2 million numbers of 17,000 programmes
were 70 MB of Python objects, and their leftovers kept the process 30 MB bigger).

`api/search.json`:

- `buildId`: the build it belongs to (`manifest.json`'s); `rows`: how many rows.
- `sections`: `[[name, typecode, count], ...]`, the arrays of `api/search.bin` in order
  (typecodes as Python's `array`: `I` unsigned 32-bit, `q` signed 64-bit, `d` float64).
- `values`: for each categorical column (`vertical`, `model`, `recurring`, `payout`,
  `platform` as written, "" in-house, `commissionMode`), its distinct values; the
  section of the same name holds each row's index into them. `markets`: the distinct
  upper-case market codes; section `marketStarts` (rows + 1 offsets) cuts section
  `markets` (indexes into them) into each row's markets.
- `nameKeys`: every row's `textsearch.name_key`, joined with newlines.
- `words` and `heads`: every token of the rows' name, pitch, host or commission
  (`textsearch.document_tokens`), sorted, and every token prefix of `textsearch.MIN_TERM`
  to `PREFIX_MAX` characters, sorted, each joined with newlines; sections `wordCounts` and
  `headCounts` give the length of each one's postings.

Sections of `api/search.bin`, besides those above: `cookieDays`, `minPayout`,
`verifiedAge` (whole days from `lastVerifiedAt` to the build's reference day,
docs/scoring.md: so `verifiedWithinDays` stays a pure function of the build), `createdAt`
(microseconds since the epoch, UTC); for each sort but `score` (whose order is the rank
itself), `order.<sort>`: every rank once, in that sort's order (`name` ascending,
`cookieDays` and `createdAt` descending, ties by slug ascending: each order is total);
`postings`: for each word, then each head, in that order, the ascending ranks (directory
order) of the rows holding it.
"""

from __future__ import annotations

import datetime as dt
import functools
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from contract import textsearch

PATH = "api/search.json"
BINARY = "api/search.bin"

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


# Categorical columns, stored as value indexes; numeric ones and their array typecodes.
CATEGORICAL = ("vertical", "model", "recurring", "payout", "platform", "commissionMode")
NUMERIC = {"cookieDays": "I", "minPayout": "d", "verifiedAge": "I", "createdAt": "q"}


def encode(
    build_id: str, rows: Sequence[dict[str, Any]], slugs: Sequence[str]
) -> tuple[bytes, bytes]:
    """`api/search.json` and `api/search.bin` for API rows in rank order (`slugs[rank]` is
    row rank's slug)."""
    columns = columns_of(rows)
    ranks = range(len(rows))
    sections: list[tuple[str, array]] = []
    values: dict[str, list[Any]] = {}
    for name in CATEGORICAL:
        distinct = sorted(set(columns[name]), key=str)
        index = {value: i for i, value in enumerate(distinct)}
        values[name] = distinct
        sections.append((name, array("I", [index[x] for x in columns[name]])))
    markets = sorted({m for row_markets in columns["markets"] for m in row_markets})
    market_index = {m: i for i, m in enumerate(markets)}
    starts, flat_markets = array("I", [0]), array("I")
    for row_markets in columns["markets"]:
        flat_markets.extend(market_index[m] for m in row_markets)
        starts.append(len(flat_markets))
    sections += [("marketStarts", starts), ("markets", flat_markets)]
    for name, typecode in NUMERIC.items():
        sections.append((name, array(typecode, columns[name])))
    for sort in ORDERED_SORTS:
        order = sorted(ranks, key=functools.partial(sort_key, sort, columns, slugs))
        sections.append((f"order.{sort}", array("I", order)))
    tokens, prefixes = postings(rows)
    sections.append(("wordCounts", array("I", [len(r) for r in tokens.values()])))
    sections.append(("headCounts", array("I", [len(r) for r in prefixes.values()])))
    flat = array("I")
    for lists in (tokens, prefixes):
        for ranks_of in lists.values():
            flat.extend(ranks_of)
    sections.append(("postings", flat))
    doc = orjson.dumps(
        {
            "buildId": build_id,
            "rows": len(rows),
            "sections": [[name, data.typecode, len(data)] for name, data in sections],
            "values": values,
            "markets": markets,
            "nameKeys": "\n".join(columns["nameKey"]),
            "words": "\n".join(tokens),
            "heads": "\n".join(prefixes),
        }
    )
    chunks = []
    for _, data in sections:
        if sys.byteorder != "little":
            data.byteswap()
        chunks.append(data.tobytes())
    return doc, b"".join(chunks)


class Postings(Mapping[str, memoryview]):
    """word -> its ascending ranks: a view of the one array of every word's postings.

    No object per word but its string: an `array` per word cost 64 bytes of header for
    a few ranks, 4.5 MB of the edge's memory for the 70,000 words and prefixes of 17,000
    programmes. A lookup is a bisection of the sorted words."""

    def __init__(self, words: list[str], starts: array, flat: memoryview) -> None:
        self.words = words  # sorted
        self._starts = starts  # word i's ranks are flat[starts[i]:starts[i + 1]]
        self._flat = flat

    def __getitem__(self, word: str) -> memoryview:
        i = bisect_left(self.words, word)
        if i == len(self.words) or self.words[i] != word:
            raise KeyError(word)
        return self._flat[self._starts[i] : self._starts[i + 1]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.words)

    def __len__(self) -> int:
        return len(self.words)


@dataclass(frozen=True)
class SearchIndex:
    """The search index decoded and checked for shape (the edge checks that the orders
    are sorted). `columns` as `columns_of` names them: numbers in arrays, other values
    as lists sharing one object per distinct value, markets as tuples."""

    columns: dict[str, Any]
    orders: dict[str, array]  # 'I' arrays
    tokens: Postings  # word -> ascending ranks, words in sorted order
    prefixes: Postings


class SearchFormatError(ValueError):
    """`api/search.json` or `api/search.bin` does not belong to the build or is
    inconsistent."""


def _sections(doc: dict[str, Any], blob: bytes) -> dict[str, array]:
    out: dict[str, array] = {}
    at = 0
    for name, typecode, count in doc["sections"]:
        if typecode not in ("I", "q", "d") or type(count) is not int or count < 0:
            raise SearchFormatError(f"{PATH}: section {name!r} is not an array")
        data = array(typecode)
        size = data.itemsize * count
        if at + size > len(blob):
            raise SearchFormatError(f"{BINARY} is shorter than {PATH} says")
        data.frombytes(blob[at : at + size])
        if sys.byteorder != "little":
            data.byteswap()
        out[name] = data
        at += size
    if at != len(blob):
        raise SearchFormatError(f"{BINARY} holds bytes {PATH} does not describe")
    return out


def decode(blob: bytes, binary: bytes, build_id: str, total: int) -> SearchIndex:
    """Read the search index of a build of `total` rows; SearchFormatError when it is off."""
    doc = orjson.loads(blob)
    if not isinstance(doc, dict) or doc.get("buildId") != build_id:
        raise SearchFormatError(f"{PATH} belongs to another build")
    if doc["rows"] != total:
        raise SearchFormatError(f"{PATH} describes {doc['rows']} rows, not {total}")
    sections = _sections(doc, binary)
    columns: dict[str, Any] = {}
    for name in CATEGORICAL:
        values, ids = doc["values"][name], sections[name]
        if len(ids) != total or (ids and max(ids) >= len(values)):
            raise SearchFormatError(f"{PATH}: column {name} disagrees with the rows")
        columns[name] = [values[i] for i in ids]
    for name, typecode in NUMERIC.items():
        if len(sections[name]) != total or sections[name].typecode != typecode:
            raise SearchFormatError(f"{PATH}: column {name} disagrees with the rows")
        columns[name] = sections[name]
    codes, starts, flat = doc["markets"], sections["marketStarts"], sections["markets"]
    cuts = starts.tolist()
    if len(cuts) != total + 1 or cuts[0] != 0 or cuts[-1] != len(flat) or cuts != sorted(cuts):
        raise SearchFormatError(f"{PATH}: markets disagree with the rows")
    if flat and max(flat) >= len(codes):
        raise SearchFormatError(f"{PATH}: markets disagree with the rows")
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    markets = []
    for rank in range(total):
        row_markets = tuple(codes[i] for i in flat[starts[rank] : starts[rank + 1]])
        markets.append(shared.setdefault(row_markets, row_markets))
    columns["markets"] = markets
    names = doc["nameKeys"].split("\n") if total else []
    if len(names) != total:
        raise SearchFormatError(f"{PATH}: nameKeys disagree with the rows")
    columns["nameKey"] = names
    everyone = list(range(total))
    orders = {sort: sections[f"order.{sort}"] for sort in ORDERED_SORTS}
    if any(sorted(order.tolist()) != everyone for order in orders.values()):
        raise SearchFormatError(f"{PATH}: an order is not a permutation of the rows")
    postings_flat = sections["postings"]
    view = memoryview(postings_flat)
    at = 0
    decoded: list[Postings] = []
    for member, counts_name in (("words", "wordCounts"), ("heads", "headCounts")):
        words = doc[member].split("\n") if doc[member] else []
        counts = sections[counts_name]
        if len(words) != len(counts) or words != sorted(set(words)):
            raise SearchFormatError(f"{PATH}: {member} are not sorted words with counts")
        offsets = array("I", [at])
        for word, count in zip(words, counts, strict=True):
            listed = postings_flat[at : at + count].tolist()
            at += count
            if not listed or len(listed) != count or listed[-1] >= total:
                raise SearchFormatError(f"{BINARY}: {member} {word!r} is not ascending ranks")
            if listed != sorted(set(listed)):
                raise SearchFormatError(f"{BINARY}: {member} {word!r} is not ascending ranks")
            offsets.append(at)
        decoded.append(Postings(words, offsets, view))
    if at != len(postings_flat):
        raise SearchFormatError(f"{BINARY} holds postings {PATH} does not index")
    return SearchIndex(columns, orders, decoded[0], decoded[1])
