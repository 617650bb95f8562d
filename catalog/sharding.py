"""Stage 4: which ranks each combination of the categorical filters lists.

A programme with k markets belongs to 8 * (k + 1) combinations (`shardformat.combos_of`).
Programmes arrive in directory order, so every combination's ranks come out ascending,
which is directory order again; a minScore cut is then a prefix the edge finds by bisection.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.model import Listing
from contract import shardformat


def shard(programs: Sequence[Listing]) -> dict[str, list[int]]:
    """{combination key: ascending ranks} for every non-empty combination, keys sorted.

    Several keys may share one list: treat the lists as read-only.
    """
    # Group ranks by exact terms first: (vertical, model, recurring) -> market -> ranks, one
    # append per programme and market. Each group then feeds its 8 combinations with list
    # extends, in C, instead of 8 * (k + 1) appends per programme in Python.
    groups: dict[tuple[str, str, bool], dict[str, list[int]]] = {}
    # Programmes share market lists: each distinct one is lowered and deduplicated once.
    market_keys: dict[tuple[str, ...], tuple[str, ...]] = {}
    any_market = shardformat.ANY
    for rank, program in enumerate(programs):
        triple = (program.vertical, program.model, program.recurring)
        by_market = groups.get(triple)
        if by_market is None:
            by_market = groups[triple] = {}
        markets = program.markets
        keys = market_keys.get(markets)
        if keys is None:
            keys = market_keys[markets] = (any_market, *{m.lower() for m in markets})
        for market in keys:
            ranks = by_market.get(market)
            if ranks is None:
                by_market[market] = [rank]
            else:
                ranks.append(rank)
    shards: dict[str, list[int]] = {}
    merged: set[str] = set()  # keys fed by more than one group: their ranks need sorting
    for triple, by_market in groups.items():
        parts = _triple_parts(*triple)
        for market, ranks in by_market.items():
            for vertical, model, recurring in parts:
                key = f"{vertical}.{model}.{market}.{recurring}"
                existing = shards.get(key)
                if existing is None:
                    shards[key] = ranks  # shared with the group's other keys, read-only
                elif key in merged:
                    existing.extend(ranks)
                else:
                    shards[key] = existing + ranks  # copy on the first merge only
                    merged.add(key)
    for key in merged:
        shards[key].sort()  # ascending ranks: directory order (timsort merges the runs)
    return {key: shards[key] for key in sorted(shards)}


def _triple_parts(vertical: str, model: str, recurring: bool) -> list[tuple[str, str, str]]:
    """The key parts of the 8 (vertical, model, recurring) choices, as combo_key spells them."""
    out = []
    for combo in shardformat.combos_of(vertical, model, (), recurring):
        v_part, m_part, _, r_part = shardformat.combo_key(combo).split(".")
        out.append((v_part, m_part, r_part))
    return out
