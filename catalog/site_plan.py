"""Which pages the HTML directory has and where they live (pure functions, no rendering).

Every page is a directory with an `index.html`, so its URL ends with a slash and works on
any static host. Links between pages are relative (`../../programs/x/`), so the site also
works when it is mounted under a sub-path or previewed on another host; only canonical URLs,
Open Graph, JSON-LD and the sitemap use the absolute base URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from catalog.model import Program
from contract.vocabulary import MODELS, SLUG_MAX_LENGTH, SLUG_RE, VERTICALS

# 24 divides into rows of 2, 3, 4 and 6 cards: full rows at every breakpoint of the grid.
PER_PAGE = 24
# How many of the best programmes the home page shows.
HOME_TOP = 12

_MARKET = re.compile(r"^[a-z]{2}$")

# section of the URL -> the Program attribute it groups by
SECTIONS: dict[str, str] = {"verticals": "vertical", "models": "model", "markets": "markets"}


@dataclass(frozen=True, slots=True)
class Listing:
    """All programmes of one vertical, model or market, in directory order."""

    section: str  # "verticals" | "models" | "markets"
    value: str  # vocabulary value, or lowercase market code
    programs: tuple[Program, ...]

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


def listings(programs: Sequence[Program]) -> dict[str, tuple[Listing, ...]]:
    """section -> its listings. Every vertical and model gets one, even when empty, so that
    the links to them from every page always resolve; markets only where programmes are."""
    by_vertical: dict[str, list[Program]] = {v: [] for v in VERTICALS}
    by_model: dict[str, list[Program]] = {m: [] for m in MODELS}
    for program in programs:
        by_vertical[program.vertical].append(program)
        by_model[program.model].append(program)
    return {
        "verticals": tuple(Listing("verticals", v, tuple(ps)) for v, ps in by_vertical.items()),
        "models": tuple(Listing("models", m, tuple(ps)) for m, ps in by_model.items()),
        "markets": tuple(Listing("markets", k, ps) for k, ps in group_by_market(programs).items()),
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
