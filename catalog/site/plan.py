"""Which pages the HTML directory has and where they live (pure functions, no rendering).

Every page is a directory with an `index.html`, so its URL ends with a slash and works on
any static host. Links between pages are relative (`../../programs/x/`), so the site also
works when it is mounted under a sub-path or previewed on another host; only canonical URLs,
Open Graph, JSON-LD and the sitemap use the absolute base URL.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from catalog.model import Program
from contract import textsearch
from contract.vocabulary import (
    COMMISSION_MODES,
    MODELS,
    PAYOUTS,
    SLUG_MAX_LENGTH,
    SLUG_RE,
    VERTICALS,
)

# 24 divides into rows of 2, 3, 4 and 6 cards: full rows at every breakpoint of the grid.
PER_PAGE = 24
# How many of the best programmes the home page shows.
HOME_TOP = 12

_MARKET = re.compile(r"^[a-z]{2}$")
_ASCII_WORD = re.compile(r"[a-z0-9]+")

# The sections of the URL, in the order the site lists them: one listing per value of the
# vocabulary (verticals, models, payouts, commission modes), or per value present (markets,
# platforms). The typed ones are the API's facets `payout`, `commissionMode`, `platform`.
SECTIONS: tuple[str, ...] = (
    "verticals",
    "models",
    "markets",
    "payouts",
    "commission-modes",
    "platforms",
)
# The path segment of the programmes no affiliate platform tracks (`platform` empty).
IN_HOUSE = "in-house"


@dataclass(frozen=True, slots=True)
class Listing:
    """All programmes of one vertical, model or market, in directory order."""

    section: str  # one of SECTIONS
    value: str  # vocabulary value, lowercase market code or platform_key: the path segment
    programs: tuple[Program, ...]
    name: str = ""  # a platform's name as its first programme writes it; "" elsewhere

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.programs) // PER_PAGE))

    def page(self, number: int) -> tuple[Program, ...]:
        start = (number - 1) * PER_PAGE
        return self.programs[start : start + PER_PAGE]


def checked_slug(slug: str) -> str:
    """The slug, if it is safe to use as a path segment (the build has validated it already).

    Pages are written to `programs/<slug>/`: a slug like `../x` must never get that far.
    """
    if not (0 < len(slug) <= SLUG_MAX_LENGTH and SLUG_RE.fullmatch(slug)):
        raise ValueError(f"programme slug {slug!r} is not a valid slug")
    return slug


def market_key(code: str) -> str:
    """The lowercase path segment of a market code, after checking it is two letters."""
    key = code.lower()
    if not _MARKET.match(key):
        raise ValueError(f"market {code!r} is not a two-letter country code")
    return key


def group_by_market(programs: Iterable[Program]) -> dict[str, tuple[Program, ...]]:
    """market key -> its programmes, in input (directory) order; keys sorted."""
    groups: dict[str, list[Program]] = {}
    keys: dict[str, str] = {}  # market code -> its checked key: 249 codes, 60,000 uses
    for program in programs:
        unique: dict[str, None] = {}  # a programme listing a market twice appears once
        for market in program.markets:
            key = keys.get(market)
            if key is None:
                key = keys[market] = market_key(market)
            unique[key] = None
        for key in unique:
            groups.setdefault(key, []).append(program)
    return {key: tuple(groups[key]) for key in sorted(groups)}


def platform_key(platform: str) -> str:
    """The path segment of a platform's listing: a pure function of the name as written,
    so that a programme's page links to it without knowing the other programmes.

    Its words folded as the API's `platform` filter folds them (accents and case aside),
    joined by hyphens (`Rakuten Advertising` -> `rakuten-advertising`); IN_HOUSE for none.
    A name with letters outside a-z and 0-9 gets a short hash of its folded form after
    what remains, so that two such names do not share a page by accident."""
    if not platform:
        return IN_HOUSE
    words = textsearch.tokens(platform)
    plain = [w for w in words if _ASCII_WORD.fullmatch(w)]
    key = "-".join(plain)[: SLUG_MAX_LENGTH - 9].strip("-")
    if plain != words or not key:
        digest = hashlib.blake2b(" ".join(words).encode(), digest_size=4).hexdigest()
        key = f"{key}-{digest}" if key else digest
    return key


def group_by_platform(programs: Iterable[Program]) -> dict[str, tuple[Program, ...]]:
    """platform_key -> its programmes, in input (directory) order; keys sorted."""
    groups: dict[str, list[Program]] = {}
    keys: dict[str, str] = {}  # a few dozen platforms, 20,000 programmes
    for program in programs:
        key = keys.get(program.platform)
        if key is None:
            key = keys[program.platform] = platform_key(program.platform)
        groups.setdefault(key, []).append(program)
    return {key: tuple(groups[key]) for key in sorted(groups)}


def listings(programs: Sequence[Program]) -> dict[str, tuple[Listing, ...]]:
    """section -> its listings, sections in SECTIONS' order. Every value of a vocabulary
    (vertical, model, payout, commission mode) gets one, even when empty, so that the links
    to them from every page always resolve; markets and platforms only where programmes are."""
    by_vertical: dict[str, list[Program]] = {v: [] for v in VERTICALS}
    by_model: dict[str, list[Program]] = {m: [] for m in MODELS}
    by_payout: dict[str, list[Program]] = {p: [] for p in PAYOUTS}
    by_mode: dict[str, list[Program]] = {m: [] for m in COMMISSION_MODES}
    for program in programs:
        by_vertical[program.vertical].append(program)
        by_model[program.model].append(program)
        by_payout[program.payout].append(program)
        by_mode[program.commissionTerms["mode"]].append(program)
    return {
        "verticals": tuple(Listing("verticals", v, tuple(ps)) for v, ps in by_vertical.items()),
        "models": tuple(Listing("models", m, tuple(ps)) for m, ps in by_model.items()),
        "markets": tuple(Listing("markets", k, ps) for k, ps in group_by_market(programs).items()),
        "payouts": tuple(Listing("payouts", p, tuple(ps)) for p, ps in by_payout.items()),
        "commission-modes": tuple(
            Listing("commission-modes", m, tuple(ps)) for m, ps in by_mode.items()
        ),
        "platforms": tuple(
            Listing("platforms", k, ps, ps[0].platform)
            for k, ps in group_by_platform(programs).items()
        ),
    }


def listing_dir(section: str, value: str, page: int = 1) -> str:
    """The directory of one listing page, relative to the site root, e.g. `models/cps/page/2/`.

    Page 1 has no `/page/1/` twin: one URL per page, so nothing to canonicalise."""
    base = f"{section}/{value}/"
    return base if page == 1 else f"{base}page/{page}/"


def program_dir(slug: str) -> str:
    return f"programs/{checked_slug(slug)}/"


def root_of(directory: str) -> str:
    """The relative prefix that leads from a page in `directory` back to the site root."""
    return "../" * directory.count("/")


def file_of(directory: str) -> str:
    """The file a page directory is written to."""
    return f"{directory}index.html"


def markdown_of(directory: str) -> str:
    """The Markdown twin of a page directory's file (llmstxt.org: the page's URL + `.md`)."""
    return f"{file_of(directory)}.md"
