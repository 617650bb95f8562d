"""Status words: matching form, and a mapping built from the connectors' declarations.

The account store owns the published mapping table; the sync takes a `MapStatus` function
so it does not depend on where that table lives. `mapper_from_specs` builds one from the
words each connector declares, for a worker started without the table.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping

UNKNOWN = "unknown"
MapStatus = Callable[[str, str | None], str]
_SEPARATORS = re.compile(r"[\s_-]+")


def fold(word: str) -> str:
    """The matching form of a status word: lowercase ASCII, single spaces (as the
    account store's status map folds its keys)."""
    decomposed = unicodedata.normalize("NFKD", word)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SEPARATORS.sub(" ", bare.casefold()).strip()


def mapper(tables: Mapping[str, Mapping[str, str]]) -> MapStatus:
    """A MapStatus over `tables` (network -> folded word -> status). A word its network's
    table lacks is `unknown`: never a guess."""

    def map_status(network: str, raw: str | None) -> str:
        if raw is None or not raw.strip():
            return UNKNOWN
        return tables.get(network, {}).get(fold(raw), UNKNOWN)

    return map_status


def tables_from_specs(specs: Iterable[object]) -> dict[str, dict[str, str]]:
    """network -> declared status words, from ConnectorSpec-like objects."""
    return {s.network: dict(s.status_words) for s in specs}  # type: ignore[attr-defined]
