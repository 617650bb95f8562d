"""A faithful mini-writer of dist/ (contract.shardformat's encode_* functions) and random
catalogues, so the edge's tests do not depend on the real build pipeline.

Programmes here are API dicts (the Programme resource), already published and scored.
`publish` installs a build the way the build does: write a complete sibling directory, then
exchange it with dist/ in one rename.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import random
import shutil
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from contract import searchindex
from contract import shardformat as sf
from contract import vocabulary as v
from contract.resources import PROGRAM

Programme = dict[str, Any]

MARKETS = ("FR", "BE", "CH", "DE", "US")
# Few distinct scores, so that ties (broken by slug) are common.
SCORES = (0, 1, 35, 50, 50, 64, 64, 64, 80, 99, 100)


def sort_key(p: Programme) -> tuple[int, str]:
    return (-p["score"], p["slug"])


def random_programme(rng: random.Random, slug: str, *, verticals: Sequence[str] = v.VERTICALS):
    recurring = rng.random() < 0.4
    fields: Programme = {
        "slug": slug,
        "name": f"Programme {slug}",
        "host": f"{slug}.example",
        "site": f"https://{slug}.example/",
        "pitch": (f"{slug} pays affiliates well. " * rng.randint(1, 30)).strip(),
        "vertical": rng.choice(verticals),
        "model": rng.choice(v.MODELS),
        "commission": f"{rng.randint(1, 50)}% per sale",
        "recurring": recurring,
        "cookieDays": rng.randint(0, 120),
        "payout": rng.choice(v.PAYOUTS),
        "minPayout": rng.choice((0, 20, 50.5, 100)),
        "markets": sorted(rng.sample(MARKETS, rng.randint(1, 3))),
        "platform": rng.choice(("", "Awin", "Rakuten")),
        "signupUrl": f"https://{slug}.example/join",
        "score": rng.choice(SCORES),
        "image": "",
        "createdAt": "2025-01-02T03:04:05Z",
        "commissionTerms": _terms(rng, recurring),
        "holdbackDays": rng.choice((None, 0, 30)),
        "currency": rng.choice((None, "EUR", "USD")),
        "evidence": f"https://{slug}.example/join/terms",
        "lastVerifiedAt": f"2025-{rng.randint(1, 12):02d}-0{rng.randint(1, 9)}T00:00:00Z",
        "stale": rng.random() < 0.2,
        "scoreVersion": v.SCORE_VERSION,
        "scoreBreakdown": [
            {"component": c, "input": "unknown", "weight": 0, "points": 0}
            for c in v.SCORE_COMPONENTS
        ],
    }
    return {name: fields[name] for name in PROGRAM.names}


def _terms(rng: random.Random, recurring: bool) -> dict[str, Any]:
    """Typed terms of any mode, complete as the build renders them (not tied to the score:
    these programmes only feed the edge)."""
    terms: dict[str, Any] = {
        "mode": v.PERCENTAGE,
        "value": rng.randint(1, 50),
        "upTo": None,
        "unit": v.PERCENT,
        "durationMonths": rng.choice((None, 12)) if recurring else None,
        "lifetime": False,
        "tiers": [],
        "parts": [],
    }
    kind = rng.randrange(4)
    if kind == 1:
        terms.update(mode=v.FLAT, unit="EUR", upTo=rng.choice((None, 200)))
    elif kind == 2:
        terms.update(
            mode=v.TIERED, value=None, tiers=[{"from": 0, "value": 5}, {"from": 50, "value": 8}]
        )
    elif kind == 3:
        terms.update(
            mode=v.HYBRID,
            value=None,
            unit=None,
            parts=[
                {"value": 10, "upTo": None, "unit": "EUR"},
                {"value": 5, "upTo": None, "unit": v.PERCENT},
            ],
        )
    return terms


def random_catalogue(rng: random.Random, n: int, **kwargs: Any) -> list[Programme]:
    slugs = sorted({f"p{rng.randrange(10**6):06d}-{i}" for i in range(n)})
    return [random_programme(rng, slug, **kwargs) for slug in slugs]


def shards_of(ordered: Sequence[Programme]) -> dict[str, list[int]]:
    shards: dict[str, list[int]] = {sf.combo_key((None, None, None, None)): []}
    for rank, p in enumerate(ordered):
        for combo in sf.combos_of(p["vertical"], p["model"], p["markets"], p["recurring"]):
            shards.setdefault(sf.combo_key(combo), []).append(rank)
    return shards


def directory_of(
    programmes: Iterable[Programme],
    build_id: str = "in-memory",
    links: dict[tuple[str, str], str] | None = None,
) -> sf.Directory:
    """The Directory that `shardformat.load` would return for a build of `programmes`
    (and these programme links)."""
    ordered = sorted(programmes, key=sort_key)
    return sf.Directory(
        build_id=build_id,
        rows=[sf.encode_row(p) for p in ordered],
        scores=[p["score"] for p in ordered],
        slugs=[p["slug"] for p in ordered],
        shards={key: array("I", ranks) for key, ranks in shards_of(ordered).items()},
        counts={"programs": len(ordered)},
        search=searchindex.decode(*search_blobs(build_id, ordered), build_id, len(ordered)),
        program_links=dict(links or {}),
    )


def search_blobs(build_id: str, ordered: Sequence[Programme]) -> tuple[bytes, bytes]:
    """`api/search.json` and `api/search.bin` of programmes in directory order."""
    return searchindex.encode(build_id, ordered, [p["slug"] for p in ordered])


def write_dist(
    root: Path,
    programmes: Iterable[Programme],
    build_id: str,
    links: dict[tuple[str, str], str] | None = None,
) -> None:
    """Write a complete build into the directory `root` (created), manifest last; `links`:
    (network, programId) -> slug of `api/program-links.json`."""
    ordered = sorted(programmes, key=sort_key)
    rows = [sf.encode_row(p) for p in ordered]
    shards = shards_of(ordered)
    files: dict[str, bytes] = {
        sf.ROWS: sf.encode_rows(rows),
        sf.KEYS: sf.encode_keys(
            build_id, [p["score"] for p in ordered], [p["slug"] for p in ordered]
        ),
    }
    files[sf.SHARDS], index = sf.encode_shards(shards)
    files[sf.SEARCH], files[sf.BINARY] = search_blobs(build_id, ordered)
    files[sf.PROGRAM_LINKS] = sf.encode_links(build_id, links or {})
    for p, row in zip(ordered, rows, strict=True):
        files[sf.program_path(p["slug"])] = sf.encode_document(row)
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    counts = {"programs": len(ordered)}
    manifest = sf.encode_manifest(build_id, counts, index)
    (root / sf.MANIFEST).write_bytes(manifest)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """renameat2(RENAME_EXCHANGE): swap two directories atomically; False if unsupported."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def install(staged: Path, dist: Path, *, exchange: bool = True) -> None:
    """Put the complete build in `staged` in place of `dist`, as the build does: one atomic
    exchange, or (`exchange=False`, or where renameat2 is missing) two renames, between
    which dist/ does not exist."""
    if not dist.exists():
        staged.rename(dist)
        return
    if exchange and _exchange(staged, dist):
        shutil.rmtree(staged)  # now holds the old build
        return
    old = dist.with_name(dist.name + ".old")
    dist.rename(old)
    staged.rename(dist)
    shutil.rmtree(old)


def publish(
    dist: Path,
    programmes: Iterable[Programme],
    build_id: str,
    *,
    exchange: bool = True,
    links: dict[tuple[str, str], str] | None = None,
) -> None:
    """Write a build beside `dist` and swap it in."""
    staged = dist.with_name(f".{dist.name}-{build_id}")
    if staged.exists():
        shutil.rmtree(staged)
    write_dist(staged, programmes, build_id, links)
    install(staged, dist, exchange=exchange)


def brute_force(
    programmes: Iterable[Programme],
    *,
    vertical: str | None = None,
    model: str | None = None,
    market: str | None = None,
    recurring: bool | None = None,
    min_score: int | None = None,
) -> list[str]:
    """The slugs a list query must return, filtered and sorted the slow, obvious way."""
    kept = [
        p
        for p in programmes
        if (vertical is None or p["vertical"] == vertical)
        and (model is None or p["model"] == model)
        and (market is None or market.upper() in {m.upper() for m in p["markets"]})
        and (recurring is None or p["recurring"] == recurring)
        and (min_score is None or p["score"] >= min_score)
    ]
    return [p["slug"] for p in sorted(kept, key=sort_key)]
