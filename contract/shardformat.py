"""The on-disk format of the directory in dist/: written by the build, read by the edge.

Format version 5. Layout (all paths relative to the dist root):

- `manifest.json`: the only entry point. Format version, build id, counts, page size and
  the shard index `{combo key: [row count, byte offset, byte length]}` (see below). Written
  last.
- `api/rows.jsonl`: every published programme rendered once as the API's JSON object, one
  per line, in directory order (score descending, then slug). A row's line number is its
  *rank*; everything else refers to rows by rank. A row is the whole Programme resource
  (`contract.resources.PROGRAM`), the members the build computes included: `score`,
  `scoreVersion`, `scoreBreakdown` and `stale`, all counted against the build's reference
  day (the newest `lastVerifiedAt` of the rows, docs/scoring.md), so that a build stays a
  pure function of its content. The members that explain a programme (`detail`) are its
  last: a list row is the row's bytes before them (`list_head`), closed, so the edge serves
  both from the one copy of the rows, never re-deriving them.
- `api/keys.json`: `{"buildId", "scores": [...], "slugs": [...]}` by rank: the sort keys the
  edge needs to seek a cursor or a minScore cut without parsing rows.
- `api/shards.jsonl`: the ranks of the rows matching each combination of the categorical
  filters, ascending (so in directory order), cut into pages of `PAGE_SIZE`: one page per
  line, a compact JSON array of at most `pageSize` ranks, every page but a combination's
  last one full. Combinations follow each other in sorted key order, each one's pages
  consecutive; the manifest's `[count, offset, length]` gives the combination's row count
  and the byte range of its pages (whole lines, final newline included). Page n of a
  combination is its n-th line; a combination with no rows has one page, `[]`.
- `api/search.json` and `api/search.bin`: the columns, sort orders and token postings
  that search, typed filters, sorts and facets are answered from (`contract.searchindex`).
- `api/programs/<slug>.json`: `{"data": <row>}`, the by-slug document.
- `api/program-links.json`: `{"buildId", "links": [{"network", "programId", "slug"}, ...]}`,
  the programmes' ids at the networks (their `networks` in content/) mapped to their
  slugs, sorted by network then programId, each pair once, every slug a published
  programme's: what links a publisher's commissions to the directory, read by the edge
  with the rest of the build, so that a rebuild relinks every commission at once.

One file for every shard keeps a build at a handful of files whatever the number of
combinations (~15,000 for 20,000 programmes): creating a file or directory is the dominant
cost of writing a build, and one re-scored programme shifts the ranks of thousands of pages.

A static or CDN client needs no server code: it reads `manifest.json`, then fetches one
combination's pages with an HTTP Range request on `api/shards.jsonl`,
`Range: bytes=<offset>-<offset + length - 1>` (e.g. `[count, 1200, 35]` gives
`bytes=1200-1234`), and splits the body into lines. A range is only valid with the
manifest it came from: a build swapped in between shows as a body that does not parse into
`count` ranks or a changed ETag of the file (`If-Range`); then refetch the manifest.

A combination is (vertical, model, market, recurring), each either a value or "any"; its
key is those four joined with dots, e.g. `saas.any.fr.true` or `any.any.any.any`. Market
codes are lowercase in keys. A programme with k markets belongs to 8 * (k + 1) combinations.
"""

from __future__ import annotations

import itertools
import os
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import orjson

from contract import searchindex
from contract.resources import PROGRAM
from contract.searchindex import SearchIndex

FORMAT_VERSION = 5
PAGE_SIZE = 1000
ANY = "any"

MANIFEST = "manifest.json"
ROWS = "api/rows.jsonl"
KEYS = "api/keys.json"
SHARDS = "api/shards.jsonl"
SEARCH = searchindex.PATH
BINARY = searchindex.BINARY
PROGRAMS_DIR = "api/programs"
PROGRAM_LINKS = "api/program-links.json"

# A list row is its row cut before the first member that explains rather than lists
# (`detail` in contract.resources: the Programme's last members), then closed. Inside a
# JSON string a quote is always escaped, so these bytes only ever start that member.
DETAIL_START = b',"' + next(f.name for f in PROGRAM.fields if f.detail).encode() + b'":'

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


def program_path(slug: str) -> str:
    return f"{PROGRAMS_DIR}/{slug}.json"


def page_count(rows: int, page_size: int | None = None) -> int:
    """How many pages a combination of `rows` rows has (at least one)."""
    return max(1, -(-rows // (page_size or PAGE_SIZE)))


# --- encoding (the build) -------------------------------------------------------------


def encode_row(program: dict) -> bytes:
    """One row: the API object, compact, no trailing newline (orjson never emits raw newlines)."""
    return orjson.dumps(program)


def encode_rows(rows: Sequence[bytes]) -> bytes:
    """`api/rows.jsonl`: one row a line, in rank order."""
    # One join and one copy: a join over `row + b"\n"` made 17,000 temporary rows first.
    return b"\n".join(rows) + b"\n" if rows else b""


def list_head(row: bytes | memoryview) -> bytes | memoryview:
    """The row's bytes before its first detail member: a list row once followed by `}`
    (a slice of `row`, a view of it when it is one). FormatError when it has none."""
    cut = bytes(row).find(DETAIL_START)
    if cut < 0:
        raise FormatError(f"a row has no {DETAIL_START.decode()!r} member")
    return row[:cut]


def encode_document(row: bytes | memoryview) -> bytes:
    """The by-slug response body, built from the row bytes so both always agree."""
    return b'{"data":' + row + b"}"


def encode_keys(build_id: str, scores: list[int], slugs: list[str]) -> bytes:
    return orjson.dumps({"buildId": build_id, "scores": scores, "slugs": slugs})


def encode_pages(ranks: list[int]) -> list[bytes]:
    """A combination's ranks cut into pages of PAGE_SIZE (at least one page), one line each."""
    size = PAGE_SIZE
    if len(ranks) <= size:  # one page: most of the 15,000 combinations of a big catalogue
        return [orjson.dumps(ranks) + b"\n"]
    return [orjson.dumps(ranks[i : i + size]) + b"\n" for i in range(0, len(ranks), size)]


def encode_shards(shards: Mapping[str, list[int]]) -> tuple[bytes, dict[str, list[int]]]:
    """`api/shards.jsonl` and the manifest's shard index `{key: [count, offset, length]}`.

    Combinations are laid out in sorted key order whatever the mapping's order.
    """
    chunks: list[bytes] = []
    index: dict[str, list[int]] = {}
    offset = 0
    for key in sorted(shards):
        ranks = shards[key]
        pages = encode_pages(ranks)
        length = sum(map(len, pages))
        index[key] = [len(ranks), offset, length]
        chunks += pages
        offset += length
    return b"".join(chunks), index


def encode_links(build_id: str, links: Mapping[tuple[str, str], str]) -> bytes:
    """`api/program-links.json`: {(network, programId): slug}, sorted by the pair."""
    return orjson.dumps(
        {
            "buildId": build_id,
            "links": [
                {"network": network, "programId": program_id, "slug": links[network, program_id]}
                for network, program_id in sorted(links)
            ],
        }
    )


def encode_manifest(
    build_id: str, counts: dict[str, int], shards: Mapping[str, list[int]]
) -> bytes:
    """The manifest; `shards` is the index from `encode_shards`, written one entry a line."""
    head = orjson.dumps(
        {"format": FORMAT_VERSION, "buildId": build_id, "pageSize": PAGE_SIZE, "counts": counts},
        option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2,
    )
    # "shards" sorts last among the keys: splice it in before the closing "\n}".
    entries = b",\n".join(
        b"    " + orjson.dumps(key) + b": " + orjson.dumps(shards[key]) for key in sorted(shards)
    )
    body = b'  "shards": {\n' + entries + b"\n  }" if shards else b'  "shards": {}'
    return head[:-2] + b",\n" + body + b"\n}"


# --- decoding (the edge, and tests) -------------------------------------------------


@dataclass(frozen=True)
class Directory:
    """A whole build in memory, as the edge serves it."""

    build_id: str
    rows: Sequence[bytes | memoryview]  # by rank, pre-serialised (the edge keeps views)
    scores: list[int]  # by rank
    slugs: list[str]  # by rank
    shards: dict[str, array]  # combo key -> ascending ranks ('I' array)
    counts: dict[str, int]
    search: SearchIndex
    # (network, programId) -> slug of a published programme (`api/program-links.json`).
    program_links: dict[tuple[str, str], str]


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
    if not isinstance(manifest, dict):
        raise FormatError("manifest.json is not an object")
    if manifest.get("format") != FORMAT_VERSION:
        raise FormatError(f"format {manifest.get('format')!r}, expected {FORMAT_VERSION}")
    build_id = manifest["buildId"]
    page_size = manifest["pageSize"]
    if not isinstance(page_size, int) or page_size < 1:
        raise FormatError(f"bad page size {page_size!r}")
    keys = orjson.loads(_read(dir_fd, KEYS))
    if keys["buildId"] != build_id:
        raise FormatError("api/keys.json belongs to another build")
    scores, slugs = keys["scores"], keys["slugs"]
    rows = _lines(_read(dir_fd, ROWS))
    if not (len(rows) == len(scores) == len(slugs)):
        raise FormatError("rows and keys disagree on the number of programmes")
    program_links = _load_links(_read(dir_fd, PROGRAM_LINKS), build_id, set(slugs))
    return Directory(
        build_id=build_id,
        rows=rows,
        scores=scores,
        slugs=slugs,
        shards=_load_shards(_read(dir_fd, SHARDS), manifest["shards"], page_size, len(rows)),
        counts=manifest["counts"],
        search=searchindex.decode(
            _read(dir_fd, SEARCH), _read(dir_fd, BINARY), build_id, len(rows)
        ),
        program_links=program_links,
    )


def _load_links(blob: bytes, build_id: str, slugs: set[str]) -> dict[tuple[str, str], str]:
    """The programme links, checked: this build's, each pair once, every slug published."""
    data = orjson.loads(blob)
    if not isinstance(data, dict) or data.get("buildId") != build_id:
        raise FormatError(f"{PROGRAM_LINKS} belongs to another build")
    links: dict[tuple[str, str], str] = {}
    for entry in data["links"]:
        network, program_id, slug = entry["network"], entry["programId"], entry["slug"]
        if not all(isinstance(value, str) for value in (network, program_id, slug)):
            raise FormatError(f"{PROGRAM_LINKS}: an entry is not three strings")
        if slug not in slugs:
            raise FormatError(f"{PROGRAM_LINKS}: {slug!r} is no programme of this build")
        if (network, program_id) in links:
            raise FormatError(f"{PROGRAM_LINKS}: {network} {program_id!r} is listed twice")
        links[network, program_id] = slug
    return links


def _lines(blob: bytes) -> list[memoryview]:
    """The lines of `blob` without their newlines, as views of it: the rows' bytes are not
    copied line by line (a reader that keeps them, like the edge, copies what it keeps, and
    the one block of the file is freed whole)."""
    view = memoryview(blob)
    lines = []
    start, end = 0, len(blob)
    while start < end:
        stop = blob.find(b"\n", start)
        if stop < 0:
            stop = end
        lines.append(view[start:stop])
        start = stop + 1
    return lines


def _load_shards(
    blob: bytes, index: dict[str, list[int]], page_size: int, total: int
) -> dict[str, array]:
    """Every combination's ranks, checked against the index: the ranges tile the file in
    key order, each holds ceil(count / page size) full pages (the last may be short), and
    every rank is below `total`."""
    shards: dict[str, array] = {}
    expected_offset = 0
    previous = ""
    for key, entry in index.items():
        count, offset, length = entry
        if shards and key <= previous:
            raise FormatError(f"shard index is not in key order at {key}")
        if offset != expected_offset or length < 1 or offset + length > len(blob):
            raise FormatError(f"shard {key}: byte range {offset}+{length} is not where expected")
        expected_offset = offset + length
        previous = key
        pages = blob[offset : offset + length].split(b"\n")
        if pages.pop() != b"":
            raise FormatError(f"shard {key}: its byte range does not end a line")
        if len(pages) != page_count(count, page_size):
            raise FormatError(f"shard {key} is inconsistent with the manifest")
        ranks = array("I")
        for page in pages:
            if len(ranks) % page_size:
                raise FormatError(f"shard {key}: a page before the last is not full")
            ranks.extend(orjson.loads(page))
        if len(ranks) != count or (ranks and max(ranks) >= total):
            raise FormatError(f"shard {key} is inconsistent with the manifest")
        shards[key] = ranks
    if expected_offset != len(blob):
        raise FormatError(f"{SHARDS} holds bytes the manifest does not index")
    return shards
