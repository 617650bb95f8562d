"""The records that flow between the build's stages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import orjson

from contract.resources import PROGRAM


@dataclass(frozen=True, slots=True)
class Program:
    """A validated, published, scored programme, ready to render.

    Attributes use the API's field names so that rendering is a plain copy in the spec's
    order (`contract.resources.PROGRAM`).
    """

    slug: str
    name: str
    host: str
    site: str
    pitch: str
    vertical: str
    model: str
    commission: str
    recurring: bool
    cookieDays: int  # noqa: N815 - the API's own field name
    payout: str
    minPayout: int | float  # noqa: N815
    markets: tuple[str, ...]
    platform: str
    signupUrl: str  # noqa: N815
    score: int
    image: str
    createdAt: str  # noqa: N815
    commissionTerms: dict[str, Any]  # noqa: N815
    holdbackDays: int | None  # noqa: N815
    currency: str | None
    evidence: str
    lastVerifiedAt: str  # noqa: N815
    stale: bool
    scoreVersion: int  # noqa: N815
    scoreBreakdown: list[dict[str, Any]]  # noqa: N815

    def to_api(self) -> dict[str, Any]:
        """The Programme resource, members in the spec's order."""
        return {name: _plain(getattr(self, name)) for name in PROGRAM.names}

    @property
    def sort_key(self) -> tuple[int, str]:
        """Directory order: score descending, then slug ascending (slugs are unique)."""
        return (-self.score, self.slug)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# Every field of a Program but the score, which `program_of` is given on its own.
_RECORD_FIELDS = tuple(f.name for f in fields(Program) if f.name != "score")


def program_of(record: Mapping[str, Any], score: int) -> Program:
    """The programme of a validated record (it holds every field but the score: validation
    guarantees it, with the formula's other members, `catalog.rendering.listing_of`) and its
    score. Members that are not fields are left out."""
    return Program(**{name: record[name] for name in _RECORD_FIELDS}, score=score)


class Listing(NamedTuple):
    """What the API's half of a build needs of a published programme, cached with its outcome.

    The row is the whole programme (`program_from_row` gives it back); the other members are
    copies of its sort and filter terms, so that ranking and sharding 17,000 cached
    programmes reads no JSON and builds no `Program`. `digest` is that of its by-slug document
    (`catalog.cache.output_digest`), so an unchanged document is linked, not hashed again.
    `verified` is its `lastVerifiedAt`, `reference` the reference day it was scored against
    (`catalog.scoring.reference_day`): a listing of another reference day is rescored.
    """

    slug: str
    score: int
    vertical: str
    model: str
    recurring: bool
    markets: tuple[str, ...]
    row: bytes
    digest: str
    verified: str
    reference: str


def program_from_row(row: bytes) -> Program:
    """The programme a row was rendered from (rows hold every field, the score included)."""
    fields_ = orjson.loads(row)
    fields_["markets"] = tuple(fields_["markets"])
    return program_of(fields_, fields_["score"])


@dataclass(frozen=True, slots=True)
class Existing:
    """An output file that dist/ already holds byte for byte: the writer links it from there
    instead of being handed its bytes (see catalog.site.pages.Reuse)."""

    digest: str  # catalog.cache.output_digest of the bytes
    size: int
