"""The incremental build: what a rebuild takes from the last build instead of redoing it.

The pipeline (`catalog.pipeline`) runs its stages through one `Incremental` per build;
the memory lives in `.build-cache/` beside the output directory (`catalog.cache`):

- validate and score: per content key (code version, file name, file bytes), the file's
  validation outcome and, once scored, its listing. An unchanged file is not even read
  again (its stat fingerprint is trusted), a changed one is read and checked, in worker
  processes when many need it. A file checked in this build is scored in this build, from
  its record; the others' listings come from the memory.
- site: the programme and listing pages `dist/` holds whose inputs did not change
  (`catalog.site.pages.Reuse`).
- write: what the output trees hold byte for byte (`cache.Outputs`), so unchanged files are
  linked from `dist/` and the spare tree, the build before the current one, is updated in
  place (`catalog.writing`).

With the cache disabled (`--no-cache`) nothing is read or written: every stage runs in
full and the previous build is deleted instead of kept as the spare.
"""

from __future__ import annotations

import marshal
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog import cache, rendering, scoring, writing
from catalog.errors import Problem
from catalog.loading import Checked, Source
from catalog.model import Existing, Listing, program_from_row
from catalog.validation import Outcome, check_file
from contract import vocabulary as v

if TYPE_CHECKING:
    import multiprocessing.context

# multiprocessing and concurrent.futures.process are imported when workers are needed only:
# a cached rebuild has no use for them, and they take 25 ms to import.

CACHE_DIR = ".build-cache"
TEMPLATES_CACHE = "templates"  # in CACHE_DIR: Jinja2's compiled templates
PARALLEL_THRESHOLD = 400  # files to check before worker processes pay off
CHUNK = 250  # files per task: big enough to amortise the round trip, small enough to balance
LISTING_AT = 5  # where a stored outcome keeps its listing (see cache.Records.outcomes)


def cache_dir(out: Path) -> Path:
    """Where the build into `out` keeps its cache."""
    return out.absolute().parent / CACHE_DIR


@dataclass(frozen=True)
class SitePages:
    """The site stage's files, and what the next build may reuse of them."""

    files: dict[str, bytes | Existing]
    reused: int = 0
    changed: dict[str, list[Any]] | None = None  # the pages to remember, when they changed


class Incremental:
    """One build's use of the cache: the memoised stages, and the memory they update."""

    def __init__(self, directory: Path | None) -> None:
        self.cache = cache.Cache(directory)
        self.records = cache.Records(cache.code_version())
        self._outputs: cache.Outputs | None = None
        self._live: dict[Path, Mapping[str, str] | None] = {}
        self._fresh: list[str] = []  # keys of files checked, not remembered, in this build
        self.reference = ""  # the reference day the listings are scored against (`score`)

    def validate(self, sources: Sequence[Source]) -> list[Checked]:
        """Every source with its outcome (`validate`, with this cache's memory)."""
        checked, self.records = validate(sources, self.cache.load_records(self.records.version))
        self._fresh = [item.key for item in checked if not item.cached and item.key]
        return checked

    def score(self, published: Sequence[Checked]) -> list[Listing]:
        """The listings of these published submissions (`score`); then remembers them."""
        listings, self.reference = score(published, self.records)
        self.save_outcomes()
        return listings

    def save_outcomes(self) -> None:
        """Remember the outcomes of this build's files, also when it stops on errors: a
        rebuild after a fix checks only the files that changed.

        A published file checked in this build but not scored (the build stopped first) is
        left out: its listing is unknown, and the record it is made from is not kept.
        """
        outcomes = self.records.outcomes
        unscored = {key for key in self._fresh if _unscored(outcomes[key])}
        if unscored:
            self.records.changed = True
            for key in unscored:
                del outcomes[key]
            fingerprints = self.records.fingerprints
            for path in [p for p, entry in fingerprints.items() if entry[cache.KEY_AT] in unscored]:
                del fingerprints[path]
        if self.records.changed:
            self.cache.save_records(self.records)

    @property
    def outputs(self) -> cache.Outputs:
        """What the output trees held before this build (read once)."""
        if self._outputs is None:
            self._outputs = self.cache.load_outputs()
        return self._outputs

    def live(self, out: Path) -> Mapping[str, str] | None:
        """{path: digest} of what `out` holds, when the cache knows it byte for byte."""
        if out not in self._live:
            tree = self.outputs.of_tree(out)
            self._live[out] = tree[1] if tree else None
        return self._live[out]

    def site(
        self, listings: Sequence[Listing], published: Sequence[Checked], base_url: str, out: Path
    ) -> SitePages:
        """The HTML directory of these programmes (`catalog.site`), reusing what `out` holds."""
        # Jinja2 and the templates: only for a build with the site.
        from catalog.site import pages as site

        programs = [program_from_row(listing.row) for listing in listings]
        if self.cache.directory is None:  # nothing to reuse without the cache
            return SitePages(site.render_site(programs, base_url))
        live = self.live(out)
        reuse = site.Reuse(
            # A page shows the score and the terms' age: both depend on the reference day.
            version=site.site_version(base_url) + self.reference.encode(),
            live=live or {},
            known=self.cache.load_pages() if live is not None else {},
            program_keys=_content_keys(published, self.records),
            compiled=self.cache.directory / TEMPLATES_CACHE,
        )
        files = site.render_site(programs, base_url, reuse)
        return SitePages(files, reuse.reused, reuse.pages if reuse.changed else None)

    def write(
        self, files: Mapping[str, bytes | Existing], out: Path, pages: SitePages, *, sync: bool
    ) -> writing.WriteStats:
        """Replace `out` with `files` (`catalog.writing`); then remember what it holds."""
        previous = self.outputs
        keep_spare = self.cache.enabled
        try:
            stats = writing.write(files, out, previous, sync=sync, keep_spare=keep_spare)
        except writing.LiveFileChangedError:
            # dist/ no longer holds what outputs.bin says: forget it, or every build after
            # this one would count on the same missing file. The next writes every file.
            self.cache.save_outputs(cache.Outputs())
            raise
        if stats.outputs != previous:
            self.cache.save_outputs(stats.outputs)
        if pages.changed is not None:
            self.cache.save_pages(pages.changed)
        return stats


def _unscored(stored: list[Any]) -> bool:
    """A valid published outcome without its listing yet."""
    return stored[LISTING_AT] is None and stored[0] == v.PUBLISHED and not stored[1]


def _content_keys(published: Sequence[Checked], records: cache.Records) -> dict[str, str]:
    """slug -> content key of every published submission the cache knows."""
    entries = records.fingerprints
    return {
        item.source.stem: entries[item.source.path][cache.KEY_AT]
        for item in published
        if item.source.path in entries
    }


def score(published: Sequence[Checked], records: cache.Records) -> tuple[list[Listing], str]:
    """Each published submission's listing, and the reference day they are scored against
    (`scoring.reference_day`): remembered, rescored from its row when the reference day
    moved, or scored now from its record (a file checked in this build); then remembered in
    `records`."""
    outcomes = records.outcomes
    kept: list[Listing | None] = []
    verified: list[str] = []
    for item in published:
        stored = outcomes.get(item.key) if item.key is not None else None
        remembered = stored[LISTING_AT] if stored is not None else None
        if remembered is not None:
            listing = Listing._make(remembered)
            kept.append(listing)
            verified.append(listing.verified)
        else:
            kept.append(None)
            verified.append(item.outcome.record["lastVerifiedAt"])  # type: ignore[index]
    reference = scoring.reference_day(verified)
    listings: list[Listing] = []
    for item, old in zip(published, kept, strict=True):
        if old is not None and old.reference == reference:
            listings.append(old)
            continue
        if old is None:
            listing = rendering.listing_of(item.outcome.record, reference)  # type: ignore[arg-type]
        else:
            listing = rendering.rescored(old, reference)
            records.changed = True
            # The outcome may be one of records.bin's, which only a whole rewrite updates.
            records.base_id = b""
        stored = outcomes.get(item.key) if item.key is not None else None
        if stored is not None:
            stored[LISTING_AT] = tuple(listing)
        listings.append(listing)
    return listings, reference


def validate(
    sources: Sequence[Source], previous: cache.Records
) -> tuple[list[Checked], cache.Records]:
    """Every source with its outcome, and the cache records of exactly these sources.

    Outcomes come from `previous` when a file is unchanged, else from
    `validation.check_file`, run in worker processes when many files need it (both cores),
    in this process otherwise (a pool costs more than it saves on a handful of files).
    """
    records = cache.Records(previous.version, base=previous.base, base_id=previous.base_id)
    # Taken before any stat: a fingerprint is then never thought younger than it is.
    taken_ns = time.time_ns()
    results: list[Checked | None] = [None] * len(sources)
    todo: list[tuple[int, Source, os.stat_result | None]] = []
    entries, outcomes = previous.fingerprints, previous.outcomes
    new_entries, new_outcomes = records.fingerprints, records.outcomes
    for index, source in enumerate(sources):
        path = source.path
        try:
            found = os.stat(path)
        except OSError:
            todo.append((index, source, None))
            continue
        entry = entries.get(path)
        if entry is not None and cache.trusted(entry, found):
            key = entry[cache.KEY_AT]
            stored = outcomes.get(key)
            if stored is not None:
                # Unchanged since a trusted fingerprint: the entry stays as it is.
                new_entries[path] = entry
                new_outcomes[key] = stored
                results[index] = Checked(source, _outcome(stored), key, True)
                continue
        todo.append((index, source, found))

    if len(todo) >= PARALLEL_THRESHOLD and not previous.outcomes:
        # Nothing cached (first build, or new code): workers read and check in one go.
        jobs = [(s.stem, s.path, records.version) for _, s, _ in todo]
        for (index, source, stat), (key, stored, record) in zip(
            todo, _parallel(_read_and_check, jobs), strict=True
        ):
            results[index] = _miss(records, source, (stat, taken_ns), key, stored, record)
        return results, records  # type: ignore[return-value]  # every index is filled
    # Only trusted fingerprints, of the same files: the stored records are still exact.
    records.changed = bool(todo) or records.fingerprints.keys() != previous.fingerprints.keys()

    misses: list[tuple[int, Source, os.stat_result | None, str, bytes]] = []
    for index, source, stat in todo:
        data = _read(source.path)
        if isinstance(data, OSError):
            results[index] = Checked(source, _unreadable(data), None, False)
            continue
        key = cache.content_key(records.version, source.stem, data)
        if key in previous.outcomes:
            results[index] = _hit(records, previous, source, (stat, taken_ns), key)
        else:
            misses.append((index, source, stat, key, data))
    items = [(source.stem, data) for _, source, _, _, data in misses]
    if len(misses) >= PARALLEL_THRESHOLD:
        checked = _parallel(_check_many, items)
    else:
        checked = [_checked(stem, data) for stem, data in items]
    for (index, source, stat, key, _), (stored, record) in zip(misses, checked, strict=True):
        results[index] = _miss(records, source, (stat, taken_ns), key, stored, record)
    return results, records  # type: ignore[return-value]  # every index is filled


def _read(path: str) -> bytes | OSError:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        return exc


def _unreadable(exc: OSError) -> Outcome:
    return Outcome(None, None, [Problem(1, 1, "(file)", f"cannot be read: {exc.strerror}")], [])


Seen = tuple[os.stat_result | None, int]  # a file's stat, and when it was taken


def _checked(stem: str, data: bytes) -> tuple[list[Any], dict[str, Any] | None]:
    """`check_file`'s outcome as the cache stores it, and the record it leaves out."""
    outcome = check_file(stem, data)
    return _stored(outcome), outcome.record


def _outcome(stored: list) -> Outcome:
    """The outcome a cache entry stores (see `cache.Records.outcomes`), without its record."""
    status, problems, warnings, line, column, _, links = stored
    return Outcome(
        status,
        None,
        [Problem(*p) for p in problems] if problems else [],
        [Problem(*p) for p in warnings] if warnings else [],
        (line, column),
        tuple(tuple(link) for link in links),  # type: ignore[misc]  # (str, str, int, int)
    )


def _hit(
    records: cache.Records, previous: cache.Records, source: Source, seen: Seen, key: str
) -> Checked:
    stored = records.outcomes[key] = previous.outcomes[key]
    _remember(records, source, seen, key)
    return Checked(source, _outcome(stored), key, True)


def _stored(outcome: Outcome) -> list:
    """An outcome as the cache stores it: plain lists and tuples, which marshal takes. The
    record is left out (the listing's row holds it); the listing is added when scored, at
    LISTING_AT; the programme's network links follow it."""
    return [
        outcome.status,
        [list(p) for p in outcome.problems],
        [list(p) for p in outcome.warnings],
        *outcome.slug_at,
        None,
        [list(link) for link in outcome.links],
    ]


def _miss(
    records: cache.Records,
    source: Source,
    seen: Seen,
    key: str | None,
    stored: list,
    record: dict[str, Any] | None,
) -> Checked:
    """A file checked just now: its outcome is remembered (stored form) and returned."""
    if key is not None:  # None: the file could not be read, nothing to remember
        records.outcomes[key] = stored
        _remember(records, source, seen, key)
    return Checked(source, _outcome(stored)._replace(record=record), key, False)


def _remember(records: cache.Records, source: Source, seen: Seen, key: str) -> None:
    stat, taken_ns = seen
    if stat is not None:
        records.fingerprints[source.path] = cache.file_entry(stat, key, taken_ns)


# --- worker processes ---------------------------------------------------------------------


# Workers send their results back as one marshal blob per chunk, outcomes in the form the
# cache stores: loading it takes the parent (busy with its own share of the two cores) a
# third of unpickling the same outcomes, and nothing needs converting afterwards.


def _read_and_check(items: list[tuple[str, str, str]]) -> bytes:
    """In a worker: read, key and check a chunk of files; [(key, stored outcome, record)]."""
    out: list[tuple[str | None, list, dict[str, Any] | None]] = []
    for stem, path, version in items:
        data = _read(path)
        if isinstance(data, OSError):
            out.append((None, _stored(_unreadable(data)), None))
        else:
            out.append((cache.content_key(version, stem, data), *_checked(stem, data)))
    return marshal.dumps(out, cache.MARSHAL_VERSION)


def _check_many(items: list[tuple[str, bytes]]) -> bytes:
    """In a worker: check a chunk of files already read; [(stored outcome, record)]."""
    return marshal.dumps([_checked(stem, data) for stem, data in items], cache.MARSHAL_VERSION)


def _parallel(function, items: list) -> list:
    """function over chunks of items in worker processes, results (marshalled) in order."""
    from concurrent.futures import ProcessPoolExecutor

    chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]
    workers = min(_cpus(), len(chunks))
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        return [result for blob in pool.map(function, chunks) for result in marshal.loads(blob)]


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    # fork starts workers in milliseconds with everything imported, but forking a process
    # that runs other threads can deadlock; then pay for a fresh interpreter instead.
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
