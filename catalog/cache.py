"""The incremental build cache in `.build-cache/` beside the output directory.

Two files, each written atomically and checked by a digest when read (a damaged or foreign
cache is ignored, never trusted):

- `records.bin`: validation outcomes keyed by blake2b(code version, file name, file bytes),
  and per file name the stat fingerprint under which its key was last computed, so an
  unchanged file is not even read again (git's index does the same). A fingerprint taken
  less than `RACY_NS` after the file's mtime is not trusted: the file could still change
  within the clock's granularity without its fingerprint changing.
- `outputs.bin`: the digest of every file of the output trees that exist (dist/ and the
  spare tree beside it, see `catalog.writing`), keyed by the digest of each tree's
  manifest. A tree whose manifest matches is known byte for byte: unchanged files are
  hard-linked from dist/, and the spare is updated in place instead of rebuilt.

The code version hashes the sources validation depends on (`VALIDATION_SOURCES`), PyYAML's
and Python's versions: any change to the rules invalidates every outcome.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

MAGIC = b"affdir-cache-1\n"
RECORDS = "records.bin"
OUTPUTS = "outputs.bin"
RACY_NS = 2_000_000_000

# [size, mtime_ns, ctime_ns, inode, device]: changes whenever the file is rewritten. A list,
# as it comes back from the JSON the cache is stored in.
Fingerprint = list[int]


# The sources a validation outcome depends on: catalog.validation and what it imports from
# the project (a test keeps this list complete). Other modules, such as the site's, can
# change without invalidating the cache.
VALIDATION_SOURCES = (
    "catalog/validation.py",
    "catalog/yamlstrict.py",
    "catalog/submission.py",
    "catalog/countries.py",
    "catalog/errors.py",
    "contract/vocabulary.py",
    "contract/resources.py",
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
    # content key -> [status, record, problems, warnings, slug position], JSON-ready
    outcomes: dict[str, list[Any]] = field(default_factory=dict)
    # file path -> [fingerprint, content key, when the fingerprint was taken]
    fingerprints: dict[str, list[Any]] = field(default_factory=dict)
    changed: bool = True  # False: identical to what is stored, no need to write it again

    def known_key(self, path: str, stat: os.stat_result) -> str | None:
        """The content key of a file whose fingerprint is unchanged and trustworthy."""
        entry = self.fingerprints.get(path)
        if entry is None:
            return None
        print_, key, taken_ns = entry
        if print_ != fingerprint(stat) or taken_ns - stat.st_mtime_ns < RACY_NS:
            return None
        return key if key in self.outcomes else None


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
        data = self._read(RECORDS)
        if not isinstance(data, dict) or data.get("version") != version:
            return Records(version)
        return Records(version, data["outcomes"], data["fingerprints"])

    def save_records(self, records: Records) -> None:
        """Replace the stored outcomes (only those of the files just built, so it stays small)."""
        self._write(
            RECORDS,
            {
                "version": records.version,
                "outcomes": records.outcomes,
                "fingerprints": records.fingerprints,
            },
        )

    def load_outputs(self) -> Outputs:
        """The digests of the output trees (empty when absent or unusable)."""
        data = self._read(OUTPUTS)
        if not isinstance(data, dict) or not isinstance(data.get("builds"), dict):
            return Outputs()
        return Outputs(data["builds"])

    def save_outputs(self, outputs: Outputs) -> None:
        """Remember what the output trees hold, for the next build's links and recycling."""
        self._write(OUTPUTS, {"builds": outputs.builds})

    def _read(self, name: str) -> Any:
        if self.directory is None:
            return None
        try:
            blob = (self.directory / name).read_bytes()
        except OSError:
            return None
        head, digest, payload = (
            blob[: len(MAGIC)],
            blob[len(MAGIC) : len(MAGIC) + 32],
            blob[len(MAGIC) + 32 :],
        )
        if head != MAGIC or hashlib.blake2b(payload, digest_size=32).digest() != digest:
            return None
        try:
            return orjson.loads(payload)
        except orjson.JSONDecodeError:
            return None

    def _write(self, name: str, value: Any) -> None:
        if self.directory is None:
            return
        # JSON (orjson): the fastest safe format to load here, and a cache file can never run
        # code, unlike a pickle.
        payload = orjson.dumps(value)
        blob = MAGIC + hashlib.blake2b(payload, digest_size=32).digest() + payload
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
