"""Text normalisation of the directory's full-text search, defined once for the build
(which indexes) and the edge (which parses `q`).

- `fold`: Unicode NFKD, combining marks dropped, case folded: `Académie` and `ACADEMIE`
  both become `academie`, `Straße` becomes `strasse`. Language-neutral, so French and
  English read alike.
- `tokens`: a folded text cut on every character that is not a letter or a digit
  (`l'académie-du-code.fr` gives `l`, `academie`, `du`, `code`, `fr`).
- A query term matches every token it is a prefix of (`affili` finds `affilies`,
  `affiliation`, `affiliate`): no stemming, whose French and English rules would each
  mis-stem the other language, but the same reach for plurals and derived words. Terms
  shorter than `MIN_TERM` are dropped (`l`, `a`, `5` would match nearly everything).
- The build writes postings for whole tokens and for every token prefix of `MIN_TERM` to
  `PREFIX_MAX` characters, so a short term is one lookup; a longer term matches the few
  whole tokens of its range in the sorted token list (a bisection).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

MIN_TERM = 2
PREFIX_MAX = 3
MAX_TERMS = 8  # AND of more words than this is refused, not truncated silently
# Length of the folded name that orders `sort=name` (then the slug): enough to tell names
# apart, and keeps a cursor carrying it short.
NAME_KEY_MAX = 64

_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """`text` without accents nor case: NFKD, combining marks removed, casefolded."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    # Casefolding can compose anew (rarely): normalise once more so equal texts fold equal.
    return unicodedata.normalize("NFKD", bare.casefold())


def tokens(text: str) -> list[str]:
    """The folded words of `text`, in order, repeats kept."""
    return _WORD.findall(fold(text))


def document_tokens(texts: Iterable[str]) -> set[str]:
    """The distinct tokens of a programme's searchable texts (name, pitch, host, terms)."""
    out: set[str] = set()
    for text in texts:
        out.update(tokens(text))
    return out


def prefixes(token: str) -> Iterable[str]:
    """The prefixes of `token` the build writes postings for: MIN_TERM to PREFIX_MAX
    characters long, the token itself when it is that short."""
    return (token[:n] for n in range(MIN_TERM, min(PREFIX_MAX, len(token)) + 1))


def query_terms(q: str) -> tuple[str, ...]:
    """The distinct terms of a query, in order: tokens of at least MIN_TERM characters."""
    seen: dict[str, None] = {}
    for token in tokens(q):
        if len(token) >= MIN_TERM:
            seen.setdefault(token, None)
    return tuple(seen)


def name_key(name: str) -> str:
    """What `sort=name` orders by (then the slug): the folded name, bounded."""
    return " ".join(tokens(name))[:NAME_KEY_MAX]
