"""The incremental build cache in `.build-cache/` beside the output directory.

Four files, each written atomically and checked by its SHA-256 when read (a damaged or
foreign cache is ignored, never trusted):

- `records.bin`: validation outcomes (with the listings of published files: score, row,
  document digest, `catalog.model.Listing`) keyed by blake2b(code version, file name, file
  bytes). Rewritten only when it has drifted from the content (`COMPACT_AT`), not on every
  change: at 20,000 submissions it holds 20 MB, which a rebuild after one change should
  not have to write again. The validated records themselves are not kept: each row holds
  its record, and 17,000 dicts of strings took three times as long to load as the rest.
- `files.bin`: per file name the stat fingerprint under which its key was last computed,
  so an unchanged file is not even read again (git's index does the same), and the
  outcomes added since `records.bin` was written, tied to it by its digest. A fingerprint
  taken less than `RACY_NS` after the file's mtime is not trusted: the file could still
  change within the clock's granularity without its fingerprint changing.
- `pages.bin`: per HTML page the site can reuse (programme and listing pages), the key of
  what it was rendered from and the digest and size of its bytes (`catalog.site.pages.Reuse`).
- `outputs.bin`: the digest of every file of the output trees that exist (dist/ and the
  spare tree beside it, see `catalog.writing`), keyed by the digest of each tree's
  manifest. A tree whose manifest matches is known byte for byte: unchanged files are
  hard-linked from dist/, and the spare is updated in place instead of rebuilt.

The records and pages files are `marshal` blobs of plain lists, dicts and strings (entries are flat
lists: a cached rebuild starts by loading 20,000 of them, and marshal loads them in about
0.6 times orjson's time); `outputs.bin` is JSON. Neither format can run code, unlike a
pickle; marshal is not meant for hostile input, and these files are only ever the build's
own (a digest checks each one before it is decoded).

The code version hashes the sources validation and the rows depend on
(`VALIDATION_SOURCES`), PyYAML's and Python's versions: any change to the rules or to the
row's shape invalidates every outcome.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

MAGIC = b"affdir-cache-5\n"  # 2: marshal, flat entries, files.bin; 3: + rows; 4: SHA-256;
# 5: listings in place of records
RECORDS = "records.bin"
FILES = "files.bin"
OUTPUTS = "outputs.bin"
PAGES = "pages.bin"
RACY_NS = 2_000_000_000
# records.bin is rewritten when the outcomes added since, plus those it holds of files gone
# or changed, exceed this share of the current outcomes.
COMPACT_AT = 0.2
MARSHAL_VERSION = 4

# [size, mtime_ns, ctime_ns, inode, device]: changes whenever the file is rewritten. A list,
# as it comes back from the JSON the cache is stored in.
Fingerprint = list[int]
# A file's entry: [*fingerprint, content key, when the fingerprint was taken (ns)].
KEY_AT, TAKEN_AT = 5, 6


# The sources a cached outcome depends on: catalog.validation, catalog.rendering (the
# listing stored with it: score, row, and the document's digest, made here by
# output_digest), catalog.incremental (the form outcomes are stored in) and what they
# import from the project (a test keeps this list complete). Other modules, such as the
# site's, can change without invalidating the cache.
VALIDATION_SOURCES = (
    "catalog/validation.py",
    "catalog/incremental.py",
    "catalog/loading.py",
    "catalog/cache.py",
    "catalog/yamlstrict.py",
    "catalog/submission.py",
    "contract/countries.py",
    "contract/currencies.py",
    "catalog/errors.py",
    "catalog/rendering.py",
    "catalog/scoring.py",
    "catalog/model.py",
    "contract/shardformat.py",
    "contract/vocabulary.py",
    "contract/resources.py",
    "contract/openapi.py",
    "contract/examples.py",
    "contract/ratelimit.py",
    "contract/endpoints.py",
    "contract/searchindex.py",
    "contract/textsearch.py",
    "contract/webhooks.py",
    "contract/exports.py",
    "contract/networks.py",
    "contract/commission.py",
)


def code_version() -> str:
    """A digest of everything that decides a validation outcome."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{sys.version}\0{yaml.__version__}\0".encode())
    root = Path(__file__).resolve().parent.parent
    for name in VALIDATION_SOURCES:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes())
    return digest.hexdigest()


def content_key(version: str, name: str, data: bytes) -> str:
    """The cache key of one submission: its outcome depends on the code, its name and bytes."""
    digest = hashlib.blake2b(digest_size=20, person=b"affdir-record")
    digest.update(version.encode() + b"\0" + name.encode() + b"\0")
    digest.update(data)
    return digest.hexdigest()


def _file_digest(payload: bytes | memoryview) -> bytes:
    # SHA-256, not BLAKE2b: with the CPU's SHA extensions it checks the 20 MB records.bin
    # of 20,000 submissions in half the time, on every rebuild.
    return hashlib.sha256(payload).digest()


def output_digest(data: bytes) -> str:
    """The digest under which an output file's bytes are known."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def fingerprint(stat: os.stat_result) -> Fingerprint:
    """What must stay equal for a file to be taken as unchanged without reading it."""
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev]


@dataclass
class Records:
    """Validation outcomes by content key, and content keys by file fingerprint."""

    version: str
    # content key -> [status, problems, warnings, slug line, slug column, listing or None]
    outcomes: dict[str, list[Any]] = field(default_factory=dict)
    # file path -> [*fingerprint, content key, when the fingerprint was taken] (see KEY_AT)
    fingerprints: dict[str, list[Any]] = field(default_factory=dict)
    changed: bool = True  # False: identical to what is stored, no need to write it again
    # What records.bin holds (outcomes by key) and its digest: outcomes not in it go to
    # files.bin until it is rewritten.
    base: dict[str, list[Any]] = field(default_factory=dict)
    base_id: bytes = b""

    def known_key(self, path: str, stat: os.stat_result) -> str | None:
        """The content key of a file whose fingerprint is unchanged and trustworthy."""
        entry = self.fingerprints.get(path)
        if entry is None or not trusted(entry, stat):
            return None
        key = entry[KEY_AT]
        return key if key in self.outcomes else None


def trusted(entry: list[Any], stat: os.stat_result) -> bool:
    """Whether a file entry's fingerprint is the file's current one, and old enough to trust."""
    return (
        entry[0] == stat.st_size
        and entry[1] == stat.st_mtime_ns
        and entry[2] == stat.st_ctime_ns
        and entry[3] == stat.st_ino
        and entry[4] == stat.st_dev
        and entry[TAKEN_AT] - stat.st_mtime_ns >= RACY_NS
    )


def file_entry(stat: os.stat_result, key: str, taken_ns: int) -> list[Any]:
    """A file's entry in `Records.fingerprints`."""
    return [*fingerprint(stat), key, taken_ns]


@dataclass
class Outputs:
    """The files of the output trees that exist (dist/ and its spare), by manifest digest."""

    builds: dict[str, dict[str, str]] = field(default_factory=dict)  # -> {path: digest}

    def of_tree(self, root: Path) -> tuple[str, dict[str, str]] | None:
        """(manifest digest, {path: digest}) of the build in `root`, if it is a known one."""
        if not self.builds:
            return None
        try:
            with open(root / "manifest.json", "rb") as fh:
                manifest = output_digest(fh.read())
        except OSError:
            return None
        files = self.builds.get(manifest)
        return None if files is None else (manifest, files)


class Cache:
    """Reads and writes the cache directory; a disabled cache reads nothing, writes nothing."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def load_records(self, version: str) -> Records:
        """The cached outcomes of this code version (empty when absent or unusable)."""
        base = self._read(RECORDS, marshal.loads)
        files = self._read(FILES, marshal.loads)
        if base is None or files is None:
            return Records(version)
        try:
            (base_version, outcomes), base_id = base
            (files_version, files_base_id, fingerprints, added), _ = files
        except (TypeError, ValueError):  # not this format's shape
            return Records(version)
        if base_version != version or files_version != version or files_base_id != base_id:
            return Records(version)  # another code version, or files.bin of another base
        all_outcomes = dict(outcomes)
        all_outcomes.update(added)
        return Records(version, all_outcomes, fingerprints, base=outcomes, base_id=base_id)

    def save_records(self, records: Records) -> None:
        """Store the outcomes of the files just built (only theirs, so it stays small).

        Outcomes missing from records.bin are added to files.bin; records.bin is rewritten
        with exactly the current outcomes when the difference grows past COMPACT_AT.
        """
        base, current = records.base, records.outcomes
        added = {key: outcome for key, outcome in current.items() if key not in base}
        stale = len(base) - (len(current) - len(added))  # outcomes of files gone or changed
        if not records.base_id or len(added) + stale > COMPACT_AT * len(current):
            payload = marshal.dumps((records.version, current), MARSHAL_VERSION)
            records.base, records.base_id = current, self._write(RECORDS, payload)
            added = {}
        self._write(
            FILES,
            marshal.dumps(
                (records.version, records.base_id, records.fingerprints, added), MARSHAL_VERSION
            ),
        )

    def load_outputs(self) -> Outputs:
        """The digests of the output trees (empty when absent or unusable)."""
        read = self._read(OUTPUTS, orjson.loads)
        data = read[0] if read else None
        if not isinstance(data, dict) or not isinstance(data.get("builds"), dict):
            return Outputs()
        return Outputs(data["builds"])

    def save_outputs(self, outputs: Outputs) -> None:
        """Remember what the output trees hold, for the next build's links and recycling."""
        self._write(OUTPUTS, orjson.dumps({"builds": outputs.builds}))

    def load_pages(self) -> dict[str, list[Any]]:
        """The site's reusable pages of the last build: {path: [key, digest, size]}."""
        read = self._read(PAGES, marshal.loads)
        data = read[0] if read else None
        return data if isinstance(data, dict) else {}

    def save_pages(self, pages: dict[str, list[Any]]) -> None:
        """Remember the reusable pages of the build just written."""
        self._write(PAGES, marshal.dumps(pages, MARSHAL_VERSION))

    def _read(self, name: str, decode: Callable[[Any], Any]) -> tuple[Any, bytes] | None:
        """(decoded payload, its digest), or None when absent, damaged or foreign."""
        if self.directory is None:
            return None
        try:
            blob = (self.directory / name).read_bytes()
        except OSError:
            return None
        view = memoryview(blob)  # no copy of a 20 MB payload
        head, digest, payload = (
            view[: len(MAGIC)],
            view[len(MAGIC) : len(MAGIC) + 32],
            view[len(MAGIC) + 32 :],
        )
        if head != MAGIC or _file_digest(payload) != digest:
            return None
        try:
            return decode(payload), bytes(digest)
        except (ValueError, EOFError, TypeError):  # orjson.JSONDecodeError is a ValueError
            return None

    def _write(self, name: str, payload: bytes) -> bytes:
        """Replace the file with this payload; returns the payload's digest."""
        digest = _file_digest(payload)
        if self.directory is None:
            return digest
        blob = MAGIC + digest + payload
        self.directory.mkdir(parents=True, exist_ok=True)
        # A cache needs no fsync: after a crash a torn file fails its digest and is ignored.
        fd, tmp = tempfile.mkstemp(prefix=f".{name}-", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, self.directory / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest
