"""Stage 5: every byte of the new dist/, in memory, as `contract/shardformat.py` lays it out.

Nothing here depends on time or on the machine: the same programmes give the same bytes,
and the build id is a digest of the rendered rows (what the API serves).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from catalog import scoring
from catalog.cache import output_digest
from catalog.model import Existing, Listing, Program, program_of
from contract import openapi, searchindex, shardformat
from contract.resources import COMMISSION_TERMS, PROGRAM, compact, complete
from contract.vocabulary import SCORE_VERSION

OPENAPI = "openapi.json"
# The site may not write over the API's files.
RESERVED = (shardformat.MANIFEST, "api", OPENAPI, openapi.REFERENCE_PATH.split("/")[0])


@dataclass(frozen=True)
class Rendered:
    """A whole build: {path relative to dist/: bytes}, manifest last, and what it holds."""

    build_id: str
    files: dict[str, bytes | Existing]  # Existing: a site page dist/ holds as it is
    counts: dict[str, int]


def build_id(rows_blob: bytes, links: Mapping[tuple[str, str], str] | None = None) -> str:
    """Digest of what the API serves: the rows, the programme links (a change of a
    programme's `networks` alone is a new build, which the edge loads), and the format that
    cuts them into pages."""
    digest = hashlib.sha256(
        f"affdir/{shardformat.FORMAT_VERSION}/{shardformat.PAGE_SIZE}\n".encode()
    )
    digest.update(rows_blob)
    if links:
        digest.update(shardformat.encode_links("", links))
    return digest.hexdigest()[:32]


def listing_of(record: Mapping[str, Any], reference: str) -> Listing:
    """The listing of a validated, published record scored against the reference day
    (`scoring.reference_day`): its score, row and document digest."""
    scored = scoring.scored(record, reference)
    full = dict(
        record,
        # The row carries the terms as answers do: the members that do not apply left out.
        commissionTerms=compact(record["commissionTerms"], COMMISSION_TERMS),
        stale=scored.stale,
        scoreVersion=SCORE_VERSION,
        scoreBreakdown=scored.breakdown,
    )
    program = program_of(full, scored.score)
    program_row = row(program)
    return Listing(
        program.slug,
        program.score,
        program.vertical,
        program.model,
        program.recurring,
        program.markets,
        program_row,
        output_digest(shardformat.encode_document(program_row)),
        program.lastVerifiedAt,
        reference,
    )


def rescored(listing: Listing, reference: str) -> Listing:
    """A listing scored against another reference day, from its own row."""
    if listing.reference == reference:
        return listing
    record = orjson.loads(listing.row)
    record["markets"] = tuple(record["markets"])
    record["commissionTerms"] = complete(record["commissionTerms"], COMMISSION_TERMS)
    return listing_of(record, reference)


def render(
    listings: Sequence[Listing],
    shards: Mapping[str, list[int]],
    counts: Mapping[str, int],
    site_files: Mapping[str, bytes | Existing],
    live: Mapping[str, str] | None = None,
    docs: Mapping[str, bytes] | None = None,
    links: Mapping[tuple[str, str], str] | None = None,
) -> Rendered:
    """All output files of a build: the API's, then the site's (`catalog.site.pages.render_site`).

    `listings` are in directory order (`scoring.rank`); `counts` are the submission counts
    for the manifest. `live`: {path: digest} of what dist/ holds (`cache.Outputs`); a
    programme document it already holds is handed to the writer as `Existing`, neither
    encoded nor hashed again. `docs`: the API's docs pages, the
    reference among them (`catalog.docpages.render_docs`), written with the document.
    `links`: {(network, programId): slug} of the published programmes (`program_links`).
    """
    live = live or {}
    rows = [listing.row for listing in listings]
    rows_blob = shardformat.encode_rows(rows)
    links = links or {}
    bid = build_id(rows_blob, links)
    files: dict[str, bytes | Existing] = {
        shardformat.ROWS: rows_blob,
        shardformat.KEYS: shardformat.encode_keys(
            bid, [p.score for p in listings], [p.slug for p in listings]
        ),
        # The same document the edge serves at /openapi.json, for static hosts and tools.
        OPENAPI: openapi.render(),
        shardformat.PROGRAM_LINKS: shardformat.encode_links(bid, links),
    }
    # The guides and the same document as pages to read, made at build time.
    files.update(docs or {})
    shards_blob, index = shardformat.encode_shards(shards)
    files[shardformat.SHARDS] = shards_blob
    files[shardformat.SEARCH], files[shardformat.BINARY] = search_files(bid, listings)
    for slug, _, _, _, _, _, row, digest, _, _ in listings:
        path = shardformat.program_path(slug)
        if live.get(path) == digest:
            files[path] = Existing(digest, len(row) + _DOCUMENT_OVERHEAD)
        else:
            files[path] = shardformat.encode_document(row)
    for path, data in sorted(site_files.items()):
        files[_site_path(path)] = data
    all_counts = {
        **counts,
        "programs": len(listings),
        "shards": len(shards),
        "pages": shards_blob.count(b"\n"),
        "files": len(files) + 1,  # and the manifest
    }
    files[shardformat.MANIFEST] = shardformat.encode_manifest(bid, all_counts, index)
    return Rendered(bid, files, all_counts)


def program_links(
    published: Sequence[tuple[str, Sequence[tuple[str, str, int, int]]]],
) -> dict[tuple[str, str], str]:
    """{(network, programId): slug} of the published programmes' `networks`, given as (slug,
    Outcome.links) pairs; the partition has refused a pair that two programmes list."""
    return {
        (network, program_id): slug
        for slug, links in published
        for network, program_id, _, _ in links
    }


def search_files(build_id: str, listings: Sequence[Listing]) -> tuple[bytes, bytes]:
    """`api/search.json` and `api/search.bin` (`contract.searchindex`), from the rows as
    the API serves them."""
    rows = [orjson.loads(listing.row) for listing in listings]
    return searchindex.encode(build_id, rows, [listing.slug for listing in listings])


_DOCUMENT_OVERHEAD = len(shardformat.encode_document(b""))  # a document's bytes beside its row

# orjson serialises a dataclass natively, members in field order, tuples as arrays: the same
# bytes as encode_row(program.to_api()) at a fraction of the cost, as long as Program lists
# its fields in the spec's order (tests/catalog check both).
_NATIVE_ROWS = tuple(f.name for f in dataclasses.fields(Program)) == PROGRAM.names


def row(program: Program) -> bytes:
    """The programme as the API serves it: one JSON object, members in the spec's order."""
    if _NATIVE_ROWS:
        return orjson.dumps(program)
    return shardformat.encode_row(program.to_api())


def _site_path(path: str) -> str:
    """A site page's path, refused if it could escape dist/ or replace an API file."""
    # Relative and normalised: no empty, "." or ".." part (so no leading, doubled or trailing
    # slash either). Plain string checks: a build has 21,000 of these.
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"render_site returned an unsafe path: {path!r}")
    if parts[0] in RESERVED:
        raise ValueError(f"render_site may not write {path!r}: reserved for the API")
    return path
