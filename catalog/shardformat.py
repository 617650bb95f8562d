"""The on-disk format of the directory in dist/: written by the build, read by the edge.

Layout (all paths relative to the dist root):

- `manifest.json`: the only entry point. Format version, build id, counts, page size and
  the shard index `{combo key: row count}`. Written last.
- `api/rows.jsonl`: every published programme rendered once as the API's JSON object, one
  per line, in directory order (score descending, then slug). A row's line number is its
  *rank*; everything else refers to rows by rank.
- `api/keys.json`: `{"buildId", "scores": [...], "slugs": [...]}` by rank: the sort keys the
  edge needs to seek a cursor or a minScore cut without parsing rows.
- `api/shards/<combo key>/<n>.json`: the ranks of the rows matching one combination of the
  categorical filters, ascending (so in directory order), in pages of `PAGE_SIZE`.
- `api/programs/<slug>.json`: `{"data": <row>}`, the by-slug document.

A combination is (vertical, model, market, recurring), each either a value or "any"; its
key is those four joined with dots, e.g. `saas.any.fr.true` or `any.any.any.any`. Market
codes are lowercase in keys. A programme with k markets belongs to 8 * (k + 1) combinations.
"""

from __future__ import annotations

import itertools
import os
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import orjson

FORMAT_VERSION = 1
PAGE_SIZE = 1000
ANY = "any"

MANIFEST = "manifest.json"
ROWS = "api/rows.jsonl"
KEYS = "api/keys.json"
SHARDS_DIR = "api/shards"
PROGRAMS_DIR = "api/programs"

# (vertical, model, market, recurring); None means "any".
Combo = tuple[str | None, str | None, str | None, bool | None]


class FormatError(ValueError):
    """dist/ is missing, from another format version, or inconsistent."""


def combo_key(combo: Combo) -> str:
    """The shard key of a filter combination: `vertical.model.market.recurring`."""
    vertical, model, market, recurring = combo
    rec = ANY if recurring is None else ("true" if recurring else "false")
    return ".".join((vertical or ANY, model or ANY, market.lower() if market else ANY, rec))


def combos_of(
    vertical: str, model: str, markets: Iterable[str], recurring: bool
) -> Iterator[Combo]:
    """Every combination of filters a programme with these terms matches."""
    market_choices: list[str | None] = [None, *sorted({m.lower() for m in markets})]
    return itertools.product((None, vertical), (None, model), market_choices, (None, recurring))


def page_path(key: str, page: int) -> str:
    return f"{SHARDS_DIR}/{key}/{page}.json"


def program_path(slug: str) -> str:
    return f"{PROGRAMS_DIR}/{slug}.json"


def page_count(rows: int) -> int:
    return max(1, -(-rows // PAGE_SIZE))


# --- encoding (the build) -------------------------------------------------------------


def encode_row(program: dict) -> bytes:
    """One row: the API object, compact, no trailing newline (orjson never emits raw newlines)."""
    return orjson.dumps(program)


def encode_rows(rows: Iterable[bytes]) -> bytes:
    return b"".join(row + b"\n" for row in rows)


def encode_document(row: bytes) -> bytes:
    """The by-slug response body, built from the row bytes so both always agree."""
    return b'{"data":' + row + b"}"


def encode_keys(build_id: str, scores: list[int], slugs: list[str]) -> bytes:
    return orjson.dumps({"buildId": build_id, "scores": scores, "slugs": slugs})


def encode_pages(ranks: list[int]) -> list[bytes]:
    """A combination's ranks cut into pages of PAGE_SIZE (at least one page)."""
    return [orjson.dumps(ranks[i : i + PAGE_SIZE]) for i in range(0, max(len(ranks), 1), PAGE_SIZE)]


def encode_manifest(build_id: str, counts: dict[str, int], shards: dict[str, int]) -> bytes:
    return orjson.dumps(
        {
            "format": FORMAT_VERSION,
            "buildId": build_id,
            "pageSize": PAGE_SIZE,
            "counts": counts,
            "shards": shards,
        },
        option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2,
    )


# --- decoding (the edge, and tests) -------------------------------------------------


@dataclass(frozen=True)
class Directory:
    """A whole build in memory, as the edge serves it."""

    build_id: str
    rows: list[bytes]  # by rank, pre-serialised
    scores: list[int]  # by rank
    slugs: list[str]  # by rank
    shards: dict[str, array]  # combo key -> ascending ranks ('I' array)
    counts: dict[str, int]


def load(root: str | os.PathLike[str]) -> Directory:
    """Read and check a whole build; raise FormatError when it is absent or inconsistent.

    Every file is opened relative to one directory descriptor, so a build swapped in while
    this runs cannot mix files of two builds.
    """
    try:
        dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise FormatError(f"cannot open {os.fspath(root)}: {exc.strerror}") from exc
    try:
        return _load(dir_fd)
    except (OSError, ValueError, KeyError, TypeError, OverflowError) as exc:
        if isinstance(exc, FormatError):
            raise
        raise FormatError(f"unreadable build: {exc}") from exc
    finally:
        os.close(dir_fd)


def _read(dir_fd: int, path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY, dir_fd=dir_fd)
    with open(fd, "rb") as fh:
        return fh.read()


def _load(dir_fd: int) -> Directory:
    manifest = orjson.loads(_read(dir_fd, MANIFEST))
    if manifest.get("format") != FORMAT_VERSION:
        raise FormatError(f"format {manifest.get('format')!r}, expected {FORMAT_VERSION}")
    build_id = manifest["buildId"]
    page_size = manifest["pageSize"]
    keys = orjson.loads(_read(dir_fd, KEYS))
    if keys["buildId"] != build_id:
        raise FormatError("api/keys.json belongs to another build")
    scores, slugs = keys["scores"], keys["slugs"]
    blob = _read(dir_fd, ROWS)
    rows = blob.split(b"\n")
    if rows and rows[-1] == b"":
        rows.pop()
    if not (len(rows) == len(scores) == len(slugs)):
        raise FormatError("rows and keys disagree on the number of programmes")
    total = len(rows)
    shards: dict[str, array] = {}
    for key, count in manifest["shards"].items():
        ranks = array("I")
        for page in range(-(-count // page_size) if count else 1):
            ranks.extend(orjson.loads(_read(dir_fd, page_path(key, page))))
        if len(ranks) != count or (ranks and ranks[-1] >= total):
            raise FormatError(f"shard {key} is inconsistent with the manifest")
        shards[key] = ranks
    return Directory(
        build_id=build_id,
        rows=rows,
        scores=scores,
        slugs=slugs,
        shards=shards,
        counts=manifest["counts"],
    )
