"""Search, typed filters, sorts and facets of /v1/programs, over what the build wrote
(`contract.searchindex`): no row is parsed, and no request sorts or walks the catalogue.

Every filter of a query stands for a rank list, ascending (directory order), that holds at
least its matches: the combination shard (vertical, model, market, recurring), each term's
postings, the programmes of one payout, platform or commission mode, and for a threshold
(minScore, cookieDaysMin, minPayoutMax, verifiedWithinDays) the programmes past the nearest
of at most `MAX_EDGES` precomputed cut values. A page walks the *smallest* of those lists,
in the order of the sort and from the cursor's position (one bisection), and keeps the rows
that pass every filter's exact test, until `limit + 1` rows passed. A page therefore costs
O(log n + k), k the rows of the smallest list visited; at worst the length of that list.

A list is mapped into a sort's positions once per build (sorting it by that order) and kept
in a bounded memo, as are a long term's merged postings, another term's byte-per-rank
membership and a threshold cut's list (one pass over its column, the first time that cut
is asked for); under `sort=score` positions are ranks and nothing is mapped.

Facets walk the same smallest list whole, then count each facet's values over the matches
in C (`collections.Counter`): O(k + m) for m matches, per distinct query; the counts of a
list that answers a query exactly are kept, and a repeat is a page-cache hit
(`edge.directory`).
"""

from __future__ import annotations

import dataclasses
import functools
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

from contract import searchindex, textsearch
from contract import vocabulary as v
from contract.resources import FACET_NAMES
from contract.searchindex import SCORE
from contract.shardformat import Combo, Directory, FormatError, combo_key

# Cut values per threshold filter: every distinct value when there are at most this many,
# otherwise values at even steps of the sorted column (a list then holds at most about
# n / MAX_EDGES rows beyond the filter's matches).
MAX_EDGES = 64
# Facet answers kept for queries one list answers exactly (a few kB each).
EXACT_FACETS = 1024
# Ranks held by the memo of mapped and merged lists (4 bytes each): 16 MB.
MEMO_RANKS = 4_000_000

Key = tuple[Any, str]
_EMPTY = array("I")
ListKey = tuple[Any, ...]  # names a narrowing list: ("shard", key), ("term", term) ...


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed directory query (edge.query values), filters only."""

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
        the shard seek of `edge.directory.select_page` answers it."""
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
    """A bounded LRU of derived rank lists, charged by their length."""

    def __init__(self, max_ranks: int) -> None:
        self.max_ranks = max_ranks
        self.size = 0
        self._lists: OrderedDict[Hashable, array[int]] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], array[int]]) -> array[int]:
        found = self._lists.get(key)
        if found is not None:
            self._lists.move_to_end(key)
            return found
        made = make()
        if len(made) <= self.max_ranks:
            self._lists[key] = made
            self.size += len(made)
            while self.size > self.max_ranks:
                _, old = self._lists.popitem(last=False)
                self.size -= len(old)
        return made


@dataclass(frozen=True)
class Threshold:
    """A numeric column and its cut values, for `value >= t` (at_least) or `value <= t`."""

    name: str
    values: Sequence[float]  # by rank
    at_least: bool
    edges: list[float]  # ascending

    @classmethod
    def of(cls, name: str, values: Sequence[float], at_least: bool) -> Threshold:
        distinct = sorted(set(values))
        if len(distinct) > MAX_EDGES:
            step = len(distinct) / MAX_EDGES
            distinct = sorted({distinct[int(i * step)] for i in range(MAX_EDGES)} | {distinct[-1]})
        return cls(name, values, at_least, distinct)

    def edge(self, t: float) -> float | None:
        """The cut value whose list holds every match of `t` (the nearest on the safe
        side), or None when that list would hold every row: nothing to narrow."""
        edges = self.edges
        if not edges:
            return None
        if self.at_least:
            i = bisect_right(edges, t) - 1  # the largest edge <= t
            return None if i <= 0 else edges[i]
        i = bisect_left(edges, t)  # the smallest edge >= t
        return None if i >= len(edges) - 1 else edges[i]

    def ranks(self, edge: float) -> array[int]:
        """The ascending ranks past `edge` (one pass; the caller keeps the result)."""
        if self.at_least:
            return array("I", (r for r, x in enumerate(self.values) if x >= edge))
        return array("I", (r for r, x in enumerate(self.values) if x <= edge))


@dataclass
class Searcher:
    """One build's search structures (built at load, off the event loop)."""

    directory: Directory
    total: int
    orders: dict[str, array[int]]  # sort -> ranks by position (not for score)
    positions: dict[str, array[int]]  # sort -> position by rank (not for score)
    keys: dict[str, list[Key]]  # sort -> ascending key by position
    by_value: dict[str, dict[str, array[int]]]  # payout / platform (folded) / commissionMode
    thresholds: dict[str, Threshold]
    token_list: list[str]  # sorted
    platform_folded: list[str]
    memo: Memo = field(default_factory=lambda: Memo(MEMO_RANKS))
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
        thresholds = {
            "minScore": Threshold.of("minScore", directory.scores, at_least=True),
            "cookieDaysMin": Threshold.of("cookieDaysMin", columns["cookieDays"], at_least=True),
            "minPayoutMax": Threshold.of("minPayoutMax", columns["minPayout"], at_least=False),
            "verifiedWithinDays": Threshold.of(
                "verifiedWithinDays", columns["verifiedAge"], at_least=False
            ),
        }
        return cls(
            directory=directory,
            total=total,
            orders=orders,
            positions=positions,
            keys=keys,
            by_value=by_value,
            thresholds=thresholds,
            token_list=list(index.tokens),
            platform_folded=platform_folded,
        )

    # --- the lists and tests of a query ---------------------------------------------

    def term_ranks(self, term: str) -> array[int]:
        """The ascending ranks of the rows holding a token that starts with `term`."""
        index = self.directory.search
        if len(term) <= textsearch.PREFIX_MAX:
            return index.prefixes.get(term, _EMPTY)
        lo = bisect_left(self.token_list, term)
        hi = bisect_left(self.token_list, term + "\U0010ffff", lo)
        words = self.token_list[lo:hi]
        if len(words) <= 1:
            return index.tokens[words[0]] if words else _EMPTY

        def merged() -> array[int]:
            return array("I", sorted({r for w in words for r in index.tokens[w]}))

        return self.memo.get(("term", term), merged)

    def lists(self, query: Query) -> list[tuple[ListKey, array[int]]]:
        """(memo key, ascending ranks) of every narrowing list of the query."""
        out: list[tuple[ListKey, array[int]]] = []
        if query.combo != (None, None, None, None):
            key = combo_key(query.combo)
            out.append((("shard", key), self.directory.shards.get(key, array("I"))))
        for term in query.terms:
            out.append((("term", term), self.term_ranks(term)))
        for name, value in (
            ("payout", query.payout),
            ("platform", query.platform),
            ("commissionMode", query.commission_mode),
        ):
            if value is not None:
                out.append(((name, value), self.by_value[name].get(value, array("I"))))
        for name, t in self._thresholds(query):
            threshold = self.thresholds[name]
            edge = threshold.edge(t)
            if edge is not None:
                narrowing: ListKey = (name, edge)
                out.append(
                    (narrowing, self.memo.get(narrowing, functools.partial(threshold.ranks, edge)))
                )
        return out

    def _thresholds(self, query: Query) -> Iterator[tuple[str, float]]:
        for name, t in (
            ("minScore", query.min_score),
            ("cookieDaysMin", query.cookie_days_min),
            ("minPayoutMax", query.min_payout_max),
            ("verifiedWithinDays", query.verified_within_days),
        ):
            if t is not None:
                yield name, t

    def test(
        self, query: Query, lists: list[tuple[ListKey, array[int]]], driver: ListKey | None
    ) -> Callable[[int], bool] | None:
        """The exact test of a rank against every filter the driving list does not already
        guarantee; None when it guarantees them all."""
        columns = self.directory.search.columns
        kind = driver[0] if driver is not None else None
        vertical, model, market, recurring = query.combo
        if kind == "shard":  # the shard holds exactly its combination
            vertical = model = market = recurring = None
        equal: list[tuple[Sequence[Any], Any]] = []
        for name, column, value in (
            ("vertical", columns["vertical"], vertical),
            ("model", columns["model"], model),
            ("recurring", columns["recurring"], recurring),
            ("payout", columns["payout"], query.payout),
            ("platform", self.platform_folded, query.platform),
            ("commissionMode", columns["commissionMode"], query.commission_mode),
        ):
            if value is not None and name != kind:
                equal.append((column, value))
        bitmaps = [
            self.memo.get(("bits", key), functools.partial(self._bitmap, ranks))
            for key, ranks in lists
            if key != driver and key[0] == "term"
        ]
        at_least: list[tuple[Sequence[float], float]] = []
        at_most: list[tuple[Sequence[float], float]] = []
        for name, t in self._thresholds(query):
            if kind == name and driver is not None and driver[1] == t:
                continue  # the list of exactly this cut: nothing more to test
            h = self.thresholds[name]
            (at_least if h.at_least else at_most).append((h.values, t))
        markets = columns["markets"]  # a short tuple per row: `in` is a few comparisons
        if not (equal or bitmaps or at_least or at_most or market is not None):
            return None

        def passes(rank: int) -> bool:
            for column, value in equal:
                if column[rank] != value:
                    return False
            if market is not None and market not in markets[rank]:
                return False
            for numbers, t in at_least:
                if numbers[rank] < t:
                    return False
            for numbers, t in at_most:
                if numbers[rank] > t:
                    return False
            return all(bits[rank] for bits in bitmaps)

        return passes

    def _bitmap(self, ranks: array[int]) -> array[int]:
        """One byte per rank, 1 for those in `ranks`: membership in one index operation."""
        bits = array("B", bytes(self.total))
        for rank in ranks:
            bits[rank] = 1
        return bits

    def driving(self, query: Query) -> tuple[ListKey, Sequence[int], Callable[[int], bool] | None]:
        """The driving list's name, its positions (in the sort's order) to walk, and the
        exact test of a rank."""
        lists = self.lists(query)
        sort = query.sort
        if not lists:
            return ("all",), range(self.total), self.test(query, lists, None)
        key, ranks = min(lists, key=_length)
        test = self.test(query, lists, key)
        if sort == SCORE:
            return key, ranks, test
        where = self.positions[sort]
        mapped = self.memo.get((sort, key), lambda: array("I", sorted(where[r] for r in ranks)))
        return key, mapped, test

    # --- answers ------------------------------------------------------------------

    def select(self, query: Query, after: Key | None, limit: int) -> tuple[list[int], bool]:
        """The ranks of the page after the sort key `after`, and whether more follow."""
        _, walk, test = self.driving(query)
        keys = self.keys[query.sort]
        start = 0 if after is None else bisect_right(walk, after, key=keys.__getitem__)
        order = self.orders.get(query.sort)
        if test is None:  # every position of the list matches: a slice
            positions = walk[start : start + limit + 1]
            found = list(positions) if order is None else [order[p] for p in positions]
            return found[:limit], len(found) > limit
        found = []
        for position in islice(walk, start, None):
            rank = position if order is None else order[position]
            if test(rank):
                found.append(rank)
                if len(found) > limit:
                    return found[:limit], True
        return found, False

    def facets(self, query: Query) -> dict[str, Any]:
        """The ProgramFacets resource (contract.resources) of the query's matches.

        When one list holds exactly the matches (no filter, one combination, one word, one
        value), its counts are kept: each such list is counted once per build."""
        key, walk, test = self.driving(dataclasses.replace(query, sort=SCORE))
        if test is not None:
            return self._count(list(filter(test, walk)))
        found = self._exact_facets.get(key)
        if found is None:
            found = self._count(walk)
            self._exact_facets[key] = found
            if len(self._exact_facets) > EXACT_FACETS:
                self._exact_facets.popitem(last=False)
        else:
            self._exact_facets.move_to_end(key)
        return found

    def _count(self, matched: Sequence[int]) -> dict[str, Any]:
        columns = self.directory.search.columns
        facets = []
        for name, allowed in FACETS:
            if name == "market":
                found = Counter(chain.from_iterable(map(columns["markets"].__getitem__, matched)))
            else:
                found = Counter(map(columns[name].__getitem__, matched))
            tally = {_facet_value(value): n for value, n in found.items()}
            counted: Iterable[tuple[str, int]]
            if allowed:
                counted = [(value, tally.get(value, 0)) for value in allowed]
            else:  # open sets: most frequent first, then by value
                counted = sorted(tally.items(), key=_by_count)
            facets.append({"facet": name, "values": [{"value": k, "count": n} for k, n in counted]})
        return {"total": len(matched), "facets": facets}


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


def _length(item: tuple[ListKey, array[int]]) -> int:
    return len(item[1])


def _holds(ranks: array[int], rank: int) -> bool:
    i = bisect_left(ranks, rank)
    return i < len(ranks) and ranks[i] == rank
