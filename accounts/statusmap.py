"""Normalisation of each network's own commission status words (the mapping is data).

`accounts/data/status_map.json` maps, per network, the words the network uses to the API's
statuses. Matching ignores case, accents, surrounding spaces and runs of spaces, `-` or
`_` ("Validée", "VALIDEE " and "validee" are one word). A word its network's table lacks
becomes `unknown`; the network's own wording is always kept as rawStatus.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from contract.vocabulary import COMMISSION_STATUSES

UNKNOWN = "unknown"
DEFAULT_TABLE = "*"
# (network, the network's word or None) -> the API's status: what the sync maps words with.
MapStatus = Callable[[str, str | None], str]
_SEPARATORS = re.compile(r"[\s_-]+")


def fold(word: str) -> str:
    """The matching form of a status word: lowercase ASCII, single spaces."""
    decomposed = unicodedata.normalize("NFKD", word)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SEPARATORS.sub(" ", bare.casefold()).strip()


@dataclass(frozen=True)
class StatusMap:
    """The table of every network's words: the one the sync, the importer and the tests use."""

    tables: Mapping[str, Mapping[str, str]]

    def normalise(self, network: str, raw: str | None) -> tuple[str, str | None]:
        """(normalised status, raw status as given, or None when the network gave none)."""
        if raw is None or not raw.strip():
            return UNKNOWN, None
        table = self.tables.get(network, self.tables.get(DEFAULT_TABLE, {}))
        return table.get(fold(raw), UNKNOWN), raw

    def status(self, network: str, raw: str | None) -> str:
        """The API's status for the network's word (a MapStatus)."""
        return self.normalise(network, raw)[0]

    @property
    def networks(self) -> tuple[str, ...]:
        return tuple(sorted(n for n in self.tables if n != DEFAULT_TABLE))


def parse_status_map(data: Mapping[str, object]) -> StatusMap:
    """Check a decoded mapping file; ValueError names the entry at fault."""
    allowed = set(COMMISSION_STATUSES) - {UNKNOWN}
    tables: dict[str, dict[str, str]] = {}
    for network, table in data.items():
        if network.startswith("_"):
            continue  # comments
        if not isinstance(table, dict):
            raise ValueError(f"{network}: expected an object of word -> status")
        for word, status in table.items():
            if status not in allowed:
                raise ValueError(f"{network}.{word}: {status!r} is not one of {sorted(allowed)}")
            if fold(word) != word:
                raise ValueError(f"{network}.{word}: write the word folded, as {fold(word)!r}")
        tables[network] = dict(table)
    return StatusMap(tables)


def load_status_map(path: Path | None = None) -> StatusMap:
    """The packaged mapping, or the one at `path`."""
    if path is None:
        text = resources.files("accounts").joinpath("data/status_map.json").read_text("utf-8")
    else:
        text = path.read_text("utf-8")
    return parse_status_map(json.loads(text))
