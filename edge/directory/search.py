"""Search, typed filters, sorts and facets of /v1/programs, over what the build wrote
(`contract.searchindex`): no row is parsed, and no request sorts or walks the catalogue.

Every filter of a query stands for one set of rows, held as a bitmap over a sort's
positions (a Python int, bit p set for the row at position p; under `sort=score` the
positions are the ranks): the combination shard (vertical, model, market, recurring), each
term's postings, the programmes of one payout, platform or commission mode, and for a
threshold (minScore, cookieDaysMin, minPayoutMax, verifiedWithinDays) the rows at or past
the cut, a prefix of the column's rows ordered by value. A page is the AND of the query's
bitmaps, shifted to the cursor's position (one bisection), from which the first `limit + 1`
set bits are read: the ANDs and the scan for non-zero bytes run in C over n / 8 bytes, and
Python touches only the bits it returns. No row is tested one by one, whatever the
selectivity of the filters (walking the smallest list and testing each row cost up to its
length when its rows rarely passed the others).

A list's bitmap in a sort's space is made once per build (one pass over its ranks, or for a
threshold a kept snapshot and at most n / SNAPSHOTS rows) and kept in a bounded memo charged
by its bytes (n / 8 a bitmap). A query of one shard, term or value under `sort=score` is a
slice of its ascending ranks, as is a query with no filter under any sort.

Facets AND the query's bitmap (under `sort=score`) with each facet value's bitmap, made at
load, and count the bits in C: O(values * n / 64) whatever the number of matches; a query
with few matches counts its rows instead. The counts of a list that answers a query exactly
are kept, and a repeat is a page-cache hit (`edge.directory.pages`).
"""

from __future__ import annotations

import dataclasses
import re
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from contract import searchindex, textsearch
from contract import vocabulary as v
from contract.resources import FACET_NAMES
from contract.searchindex import SCORE
from contract.shardformat import Combo, Directory, FormatError, combo_key

# Snapshots kept per threshold column and sort: the bitmap of any cut is a snapshot plus at
# most n / SNAPSHOTS rows (n / SNAPSHOTS / 8 bytes each: 270 kB for 17,000 rows).
SNAPSHOTS = 128
# Facet answers kept for queries one list answers exactly (a few kB each).
EXACT_FACETS = 1024
# Bytes held by the memo of bitmaps and merged lists: 8 MB, some 3,000 bitmaps of 20,000
# rows.
MEMO_BYTES = 8 * 1024 * 1024
# Up to this many matches, facets count the matching rows; above, each value's bitmap.
FEW_MATCHES = 256

Key = tuple[Any, str]
_EMPTY = array("I")
ListKey = tuple[Any, ...]  # names a narrowing list: ("shard", key), ("term", term) ...
# The offsets of the set bits of each byte value, and what finds the non-zero bytes.
_BITS: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i in range(8) if byte >> i & 1) for byte in range(256)
)
_NONZERO = re.compile(rb"[^\x00]")


def bits_of(positions: Iterable[int], total: int) -> int:
    """The bitmap of these positions (each below `total`)."""
    buffer = bytearray((total + 7) >> 3)
    for position in positions:
        buffer[position >> 3] |= 1 << (position & 7)
    return int.from_bytes(buffer, "little")


def first_positions(bits: int, start: int, count: int) -> list[int]:
    """The `count` smallest set positions of `bits` from `start` on, ascending."""
    if start:
        bits >>= start
    data = bits.to_bytes((bits.bit_length() + 7) >> 3, "little")
    found: list[int] = []
    for match in _NONZERO.finditer(data):
        at = match.start()
        base = start + (at << 3)
        for offset in _BITS[data[at]]:
            found.append(base + offset)
        if len(found) >= count:
            del found[count:]
            break
    return found


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed directory query (edge.request.query values), filters only."""

    combo: Combo = (None, None, None, None)
    min_score: int | None = None
    terms: tuple[str, ...] = ()
    cookie_days_min: int | None = None
    min_payout_max: int | None = None
    payout: str | None = None
    platform: str | None = None  # folded
    commission_mode: str | None = None
    verified_within_days: int | None = None
    sort: str = SCORE

    @classmethod
    def of(cls, values: dict[str, Any]) -> Query:
        platform = values.get("platform")
        return cls(
            combo=(
                values.get("vertical"),
                values.get("model"),
                values.get("market"),
                values.get("recurring"),
            ),
            min_score=values.get("minScore"),
            terms=values.get("q") or (),
            cookie_days_min=values.get("cookieDaysMin"),
            min_payout_max=values.get("minPayoutMax"),
            payout=values.get("payout"),
            platform=textsearch.fold(platform) if platform is not None else None,
            commission_mode=values.get("commissionMode"),
            verified_within_days=values.get("verifiedWithinDays"),
            sort=values.get("sort") or SCORE,
        )

    @property
    def plain(self) -> bool:
        """True when only the categorical filters and minScore are set, in directory order:
        the shard seek of `edge.directory.pages.select_page` answers it."""
        return (
            self.sort == SCORE
            and not self.terms
            and self.cookie_days_min is None
            and self.min_payout_max is None
            and self.payout is None
            and self.platform is None
            and self.commission_mode is None
            and self.verified_within_days is None
        )


class Memo:
    """A bounded LRU of derived bitmaps and rank lists, charged by their bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
            return found[0]
        made = make()
        cost = _bytes(made)
        if cost <= self.max_bytes:
            self._items[key] = (made, cost)
            self.size += cost
            while self.size > self.max_bytes:
                _, (_, old) = self._items.popitem(last=False)
                self.size -= old
        return made


def _bytes(value: Any) -> int:
    """What the memo charges for a value: its numbers' bytes (and 64 for the object)."""
    if isinstance(value, int):
        return 64 + (value.bit_length() + 7) // 8
    if isinstance(value, array):
        return 64 + len(value) * value.itemsize
    return 64 + sum(map(_bytes, value))


@dataclass(frozen=True)
class Cut:
    """A numeric column's rows ordered by value, matches of a threshold first: descending
    for `value >= t` (at_least), ascending for `value <= t`. The rows passing a cut are a
    prefix of `ranks`, its length one bisection of `keys`."""

    ranks: array[int]  # 'I', every rank once
    keys: array[float]  # 'd', ascending: -value (at_least) or value, in `ranks`' order
    at_least: bool

    @classmethod
    def of(cls, values: Sequence[float], at_least: bool) -> Cut:
        order = sorted(range(len(values)), key=values.__getitem__, reverse=at_least)
        sign = -1 if at_least else 1
        return cls(array("I", order), array("d", [sign * values[r] for r in order]), at_least)

    def count(self, t: float) -> int:
        """How many rows pass the cut `t`."""
        return bisect_right(self.keys, -t if self.at_least else t)


@dataclass
class Searcher:
    """One build's search structures (built at load, off the event loop)."""

    directory: Directory
    total: int
    orders: dict[str, array[int]]  # sort -> ranks by position (not for score)
    positions: dict[str, array[int]]  # sort -> position by rank (not for score)
    keys: dict[str, list[Key]]  # sort -> ascending key by position
    by_value: dict[str, dict[str, array[int]]]  # payout / platform (folded) / commissionMode
    cuts: dict[str, Cut]
    # facet -> value as the facet reports it -> bitmap of its ranks (sort=score)
    facet_bits: dict[str, dict[str, int]]
    memo: Memo = field(default_factory=lambda: Memo(MEMO_BYTES))
    _exact_facets: OrderedDict[ListKey, dict[str, Any]] = field(default_factory=OrderedDict)

    @classmethod
    def of(cls, directory: Directory, score_keys: list[Key]) -> Searcher:
        """Index a loaded build; FormatError when an order is not its sort's order."""
        index = directory.search
        columns = index.columns
        total = len(directory.rows)
        orders: dict[str, array[int]] = {}
        positions: dict[str, array[int]] = {}
        keys: dict[str, list[Key]] = {SCORE: score_keys}
        for sort in searchindex.ORDERED_SORTS:
            order = array("I", index.orders[sort])
            by_position = [
                searchindex.sort_key(sort, columns, directory.slugs, rank) for rank in order
            ]
            if any(by_position[i] >= by_position[i + 1] for i in range(total - 1)):
                raise FormatError(f"api/search.json: the {sort} order is not sorted")
            where = array("I", bytes(4 * total))
            for position, rank in enumerate(order):
                where[rank] = position
            orders[sort], positions[sort], keys[sort] = order, where, by_position
        folded: dict[str, str] = {}
        platform_folded = [
            folded.get(p) or folded.setdefault(p, textsearch.fold(p)) for p in columns["platform"]
        ]
        by_value: dict[str, dict[str, array[int]]] = {}
        for name, values in (
            ("payout", columns["payout"]),
            ("platform", platform_folded),
            ("commissionMode", columns["commissionMode"]),
        ):
            groups: dict[str, array[int]] = {}
            for rank, value in enumerate(values):
                groups.setdefault(value, array("I")).append(rank)
            by_value[name] = groups
        cuts = {
            "minScore": Cut.of(directory.scores, at_least=True),
            "cookieDaysMin": Cut.of(columns["cookieDays"], at_least=True),
            "minPayoutMax": Cut.of(columns["minPayout"], at_least=False),
            "verifiedWithinDays": Cut.of(columns["verifiedAge"], at_least=False),
        }
        return cls(
            directory=directory,
            total=total,
            orders=orders,
            positions=positions,
            keys=keys,
            by_value=by_value,
            cuts=cuts,
            facet_bits=_facet_bits(directory, by_value, total),
        )

    # --- the lists of a query -----------------------------------------------------

    def term_ranks(self, term: str) -> Sequence[int]:
        """The ascending ranks of the rows holding a token that starts with `term`."""
        index = self.directory.search
        if len(term) <= textsearch.PREFIX_MAX:
            return index.prefixes.get(term, _EMPTY)
        sorted_words = index.tokens.words
        lo = bisect_left(sorted_words, term)
        hi = bisect_left(sorted_words, term + "\U0010ffff", lo)
        words = sorted_words[lo:hi]
        if len(words) <= 1:
            return index.tokens[words[0]] if words else _EMPTY

        def merged() -> array[int]:
            return array("I", sorted({r for w in words for r in index.tokens[w]}))

        found: Sequence[int] = self.memo.get(("term", term), merged)
        return found

    def lists(self, query: Query) -> list[tuple[ListKey, Sequence[int]]]:
        """(memo key, ascending ranks) of every list of rows the query's categorical
        filters and terms stand for."""
        out: list[tuple[ListKey, Sequence[int]]] = []
        if query.combo != (None, None, None, None):
            key = combo_key(query.combo)
            out.append((("shard", key), self.directory.shards.get(key, _EMPTY)))
        for term in query.terms:
            out.append((("term", term), self.term_ranks(term)))
        for name, value in (
            ("payout", query.payout),
            ("platform", query.platform),
            ("commissionMode", query.commission_mode),
        ):
            if value is not None:
                out.append(((name, value), self.by_value[name].get(value, _EMPTY)))
        return out

    def cut_lengths(self, query: Query) -> list[tuple[str, int]]:
        """(column, rows passing) of every threshold filter that leaves some row out."""
        out = []
        for name, t in (
            ("minScore", query.min_score),
            ("cookieDaysMin", query.cookie_days_min),
            ("minPayoutMax", query.min_payout_max),
            ("verifiedWithinDays", query.verified_within_days),
        ):
            if t is not None:
                passing = self.cuts[name].count(t)
                if passing < self.total:
                    out.append((name, passing))
        return out

    # --- bitmaps in a sort's space --------------------------------------------------

    def list_bits(self, sort: str, key: ListKey, ranks: Sequence[int]) -> int:
        """The bitmap of a list's rows over `sort`'s positions (memoised)."""
        bits: int = self.memo.get(
            (sort, key), lambda: bits_of(self._placed(sort, ranks), self.total)
        )
        return bits

    def cut_bits(self, sort: str, name: str, passing: int) -> int:
        """The bitmap of the first `passing` rows of a cut over `sort`'s positions: the
        snapshot below it and at most a snapshot's step of rows (memoised)."""

        def make() -> int:
            ranks = self.cuts[name].ranks
            step, snapshots = self._snapshots(sort, name)
            base = passing // step
            rest = self._placed(sort, ranks[base * step : passing])
            return snapshots[base] | bits_of(rest, self.total)

        bits: int = self.memo.get((sort, name, passing), make)
        return bits

    def _snapshots(self, sort: str, name: str) -> tuple[int, list[int]]:
        """(step, the bitmaps of the first 0, step, 2 step ... rows of a cut)."""
        step = max(1, -(-self.total // SNAPSHOTS))

        def make() -> list[int]:
            buffer = bytearray((self.total + 7) >> 3)
            out = [0]
            placed = self._placed(sort, self.cuts[name].ranks)
            for i, position in enumerate(placed, start=1):
                buffer[position >> 3] |= 1 << (position & 7)
                if i % step == 0:
                    out.append(int.from_bytes(buffer, "little"))
            return out

        return step, self.memo.get((sort, name, "snapshots"), make)

    def _placed(self, sort: str, ranks: Iterable[int]) -> Iterable[int]:
        """Ranks as positions of `sort` (themselves under sort=score)."""
        if sort == SCORE:
            return ranks
        return map(self.positions[sort].__getitem__, ranks)

    def matches(
        self, sort: str, lists: list[tuple[ListKey, Sequence[int]]], cuts: list[tuple[str, int]]
    ) -> int | None:
        """The bitmap over `sort`'s positions of the rows in every list and past every cut
        (`lists`, `cut_lengths`); None when there are none: every row matches."""
        found: int | None = None
        for key, ranks in lists:
            bits = self.list_bits(sort, key, ranks)
            found = bits if found is None else found & bits
            if not found:
                return 0
        for name, passing in cuts:
            bits = self.cut_bits(sort, name, passing)
            found = bits if found is None else found & bits
            if not found:
                return 0
        return found

    # --- answers ------------------------------------------------------------------

    def select(self, query: Query, after: Key | None, limit: int) -> tuple[list[int], bool]:
        """The ranks of the page after the sort key `after`, and whether more follow."""
        sort = query.sort
        start = 0 if after is None else bisect_right(self.keys[sort], after)
        lists, cuts = self.lists(query), self.cut_lengths(query)
        if sort == SCORE and len(lists) == 1 and not cuts:
            ranks = lists[0][1]  # one exact list in directory order: a slice
            at = bisect_left(ranks, start)
            found = list(ranks[at : at + limit + 1])
        else:
            bits = self.matches(sort, lists, cuts)
            if bits is None:
                found = list(range(start, min(start + limit + 1, self.total)))
            else:
                found = first_positions(bits, start, limit + 1)
            order = self.orders.get(sort)
            if order is not None:
                found = [order[p] for p in found]
        return found[:limit], len(found) > limit

    def facets(self, query: Query) -> dict[str, Any]:
        """The ProgramFacets resource (contract.resources) of the query's matches.

        When one list holds exactly the matches (no filter, one combination, one word, one
        value), its counts are kept: each such list is counted once per build."""
        query = dataclasses.replace(query, sort=SCORE)
        lists, cuts = self.lists(query), self.cut_lengths(query)
        exact: ListKey | None = None
        if not cuts and len(lists) <= 1:
            exact = lists[0][0] if lists else ("all",)
            kept = self._exact_facets.get(exact)
            if kept is not None:
                self._exact_facets.move_to_end(exact)
                return kept
        bits = self.matches(SCORE, lists, cuts)
        if bits is None:
            bits = (1 << self.total) - 1
        found = self._count(bits)
        if exact is not None:
            self._exact_facets[exact] = found
            if len(self._exact_facets) > EXACT_FACETS:
                self._exact_facets.popitem(last=False)
        return found

    def _count(self, bits: int) -> dict[str, Any]:
        total = bits.bit_count()
        tallies: dict[str, dict[str, int]]
        if total <= FEW_MATCHES:
            tallies = self._tally_rows(first_positions(bits, 0, total))
        else:
            tallies = {
                name: {value: n for value, own in values.items() if (n := (bits & own).bit_count())}
                for name, values in self.facet_bits.items()
            }
        facets = []
        for name, allowed in FACETS:
            tally = tallies[name]
            counted: Iterable[tuple[str, int]]
            if allowed:
                counted = [(value, tally.get(value, 0)) for value in allowed]
            else:  # open sets: most frequent first, then by value
                counted = sorted(tally.items(), key=_by_count)
            facets.append({"facet": name, "values": [{"value": k, "count": n} for k, n in counted]})
        return {"total": total, "facets": facets}

    def _tally_rows(self, matched: Sequence[int]) -> dict[str, dict[str, int]]:
        columns = self.directory.search.columns
        tallies: dict[str, dict[str, int]] = {}
        for name, _ in FACETS:
            if name == "market":
                found = Counter(chain.from_iterable(map(columns["markets"].__getitem__, matched)))
            else:
                found = Counter(map(columns[name].__getitem__, matched))
            tallies[name] = {_facet_value(value): n for value, n in found.items()}
        return tallies


def _facet_bits(
    directory: Directory, by_value: dict[str, dict[str, array[int]]], total: int
) -> dict[str, dict[str, int]]:
    """facet -> value as reported -> the bitmap of its ranks, from the lists the build
    wrote or the edge grouped already: the shards of one vertical, model, market or
    recurring value, the programmes of one payout or commission mode; platforms are
    grouped as written (the lists group them folded)."""
    columns = directory.search.columns
    shards = directory.shards
    lists: dict[str, dict[str, Sequence[int]]] = {
        "vertical": {x: shards[combo_key((x, None, None, None))] for x in set(columns["vertical"])},
        "model": {x: shards[combo_key((None, x, None, None))] for x in set(columns["model"])},
        "market": {
            x: shards[combo_key((None, None, x, None))]
            for x in set(chain.from_iterable(columns["markets"]))
        },
        "recurring": {
            _facet_value(x): shards[combo_key((None, None, None, x))]
            for x in set(columns["recurring"])
        },
        "payout": dict(by_value["payout"]),
        "commissionMode": dict(by_value["commissionMode"]),
    }
    platforms: dict[str, list[int]] = {}
    for rank, platform in enumerate(columns["platform"]):
        platforms.setdefault(platform, []).append(rank)
    lists["platform"] = dict(platforms)
    return {
        name: {value: bits_of(ranks, total) for value, ranks in lists[name].items()}
        for name, _ in FACETS
    }


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _facet_value(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


# Each facet (in the resource's order) and its closed set of values (every one listed, zeros included); () for an
# open set (markets, platforms), which lists only the values present.
_CLOSED: dict[str, tuple[str, ...]] = {
    "vertical": v.VERTICALS,
    "model": v.MODELS,
    "recurring": ("true", "false"),
    "payout": v.PAYOUTS,
    "commissionMode": v.COMMISSION_MODES,
}
FACETS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (name, _CLOSED.get(name, ())) for name in FACET_NAMES
)
