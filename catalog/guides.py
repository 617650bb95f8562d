"""The API's guides: Markdown files in docs/guides/, read as they are on GitHub.

`catalog.docpages` renders them into dist/docs/; the site's sitemap lists their pages, so
this module imports nothing of the project (the site's pages are keyed by what they import).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path


def guides_dir() -> Path:
    """The guides: the installed data package `catalog.guides_md` (pyproject.toml makes it of
    docs/guides/), else docs/guides/ beside the package in a checkout."""
    spec = importlib.util.find_spec("catalog.guides_md")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parents[1] / "docs" / "guides"


GUIDES_DIR = guides_dir()
# The folder in dist/, served at contract.openapi.DOCS_URL (tests/catalog check they agree).
DOCS = "docs"
INDEX = "README.md"
# The guides in reading order; any other guide in the folder follows, by name.
ORDER = (
    "getting-started",
    "pagination",
    "search",
    "rate-limits",
    "caching",
    "errors",
    "amounts",
)


def title_of(text: str) -> str:
    """The text of the first `# heading` of a Markdown page."""
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


@dataclass(frozen=True)
class Guide:
    name: str  # the file's name without .md, and the page's folder
    title: str
    text: str


def load_guides(folder: Path = GUIDES_DIR) -> tuple[Guide | None, list[Guide]]:
    """The index (README.md) and the guides of `folder`, in reading order."""
    if not folder.is_dir():
        return None, []
    found = {p.stem: p.read_text("utf-8") for p in folder.glob("*.md") if p.name != INDEX}
    names = [n for n in ORDER if n in found] + sorted(set(found) - set(ORDER))
    guides = [Guide(n, title_of(found[n]), found[n]) for n in names]
    index_path = folder / INDEX
    index = None
    if index_path.is_file():
        text = index_path.read_text("utf-8")
        index = Guide("", title_of(text), text)
    return index, guides


def urls(folder: Path = GUIDES_DIR) -> list[str]:
    """The docs pages' URL paths below the site root, for the sitemap (`docs/`, ...)."""
    _, guides = load_guides(folder)
    return [f"{DOCS}/", f"{DOCS}/reference/", *(f"{DOCS}/{g.name}/" for g in guides)]
