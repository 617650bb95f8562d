"""The programme links of a loaded build: which directory programme a commission belongs to.

A build's `api/program-links.json` (contract.shardformat) maps each (network, programme id
at the network) that a published programme lists in its `networks` to the programme's
slug. The edge reads it with the rest of the build, so the link is made when a commission
is read, never stored: a rebuild that adds, moves or removes a pair relinks every
commission, past ones included, the moment the new build is served.

`ProgramLinks` also keeps what `include=terms` shows of each linked programme (its
advertised terms, from the row the build rendered), made once per build.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from contract.resources import COMMISSION_TERMS, PROGRAM_TERMS, compact
from contract.shardformat import Directory

# The members of a programme row that `ProgramTerms` carries, under the same names.
_ROW_MEMBERS = tuple(f.name for f in PROGRAM_TERMS.fields if f.name != "url")


@dataclass(frozen=True, slots=True)
class ProgramLinks:
    """One build's links: (network, programme id) -> slug, the pairs of each slug, and the
    advertised terms of each linked programme (`ProgramTerms` without its url)."""

    slugs: Mapping[tuple[str, str], str] = field(default_factory=dict)
    pairs: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    terms: Mapping[str, dict[str, Any]] = field(default_factory=dict)

    def slug(self, network: str, program_id: str | None) -> str | None:
        """The slug of the programme a commission's network and programme id are linked to;
        None when unlinked (or the commission carries no programme id)."""
        if program_id is None:
            return None
        return self.slugs.get((network, program_id))

    def pairs_of(self, slug: str) -> tuple[tuple[str, str], ...]:
        """The (network, programme id) pairs linked to `slug`: none for a slug no published
        programme has, or one that lists no network."""
        return self.pairs.get(slug, ())


NO_LINKS = ProgramLinks()


def program_links(directory: Directory) -> ProgramLinks:
    """The links of a loaded build, with the terms of each linked programme (CPU only)."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for pair, slug in directory.program_links.items():
        pairs.setdefault(slug, []).append(pair)
    terms: dict[str, dict[str, Any]] = {}
    if pairs:
        rank = {slug: index for index, slug in enumerate(directory.slugs)}
        for slug in pairs:
            row = orjson.loads(directory.rows[rank[slug]])
            terms[slug] = {name: row[name] for name in _ROW_MEMBERS}
            # As answers carry them: the members that do not apply left out.
            terms[slug]["commissionTerms"] = compact(row["commissionTerms"], COMMISSION_TERMS)
    return ProgramLinks(
        slugs=dict(directory.program_links),
        pairs={slug: tuple(sorted(found)) for slug, found in pairs.items()},
        terms=terms,
    )
