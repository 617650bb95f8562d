"""Stage 1: find the submissions, read them, and get each one's validation outcome.

Outcomes come from the cache when a file is unchanged, else from `validation.check_file`,
run in worker processes when many files need it (both cores), in this process otherwise
(a pool costs more than it saves on a handful of files).
"""

from __future__ import annotations

import marshal
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from catalog import cache
from catalog.errors import Diagnostic, Problem
from catalog.model import Listing
from catalog.rendering import listing_of
from catalog.validation import Outcome, check_file

if TYPE_CHECKING:
    import multiprocessing.context

# multiprocessing and concurrent.futures.process are imported when workers are needed only:
# a cached rebuild has no use for them, and they take 25 ms to import.

PROGRAMS_DIR = "programs"
SUFFIX = ".yaml"
PARALLEL_THRESHOLD = 400  # files to check before worker processes pay off
CHUNK = 250  # files per task: big enough to amortise the round trip, small enough to balance


# Source and Loaded are NamedTuples, not frozen dataclasses: a rebuild makes 20,000 of each,
# and a frozen dataclass's __init__ (one object.__setattr__ per field) cost 30 ms of it.


class Source(NamedTuple):
    """One submission file."""

    path: str  # absolute (a str: 20,000 Path objects cost more than the rest of a rebuild)
    display: str  # as shown in messages
    stem: str  # the slug it claims


class Loaded(NamedTuple):
    """A submission file with its validation outcome (a published one's listing, no record:
    see `Outcome.listing`)."""

    source: Source
    outcome: Outcome
    cached: bool


def discover(content: Path) -> tuple[list[Source], list[Diagnostic]]:
    """Every `<content>/programs/*.yaml`, by name; misnamed YAML files are reported."""
    directory = content / PROGRAMS_DIR
    # The cache keys files by absolute path; normalised (no "..") as sources_of's are, so a
    # file named on the command line is recognised as the content's own.
    absolute = os.path.abspath(directory) + os.sep
    shown = str(directory) + os.sep
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except FileNotFoundError:
        problem = Problem(1, 1, "(content)", f"no {PROGRAMS_DIR}/ directory here; pass --content")
        return [], [Diagnostic(str(directory), problem)]
    sources: list[Source] = []
    problems: list[Diagnostic] = []
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue  # editors' swap files, .gitkeep
        if not entry.is_file():
            if name.endswith(SUFFIX):  # named like a submission: say why it is not read
                gone = entry.is_symlink() and not os.path.exists(entry.path)
                what = "a link to nothing" if gone else "not a regular file"
                problem = Problem(1, 1, "(file)", f"cannot be read: {what}")
                problems.append(Diagnostic(shown + name, problem))
            continue  # sub-directories are not submissions
        if name.endswith(SUFFIX):
            sources.append(Source(absolute + name, shown + name, name[: -len(SUFFIX)]))
        elif name.lower().endswith((".yaml", ".yml")):
            stem = name.rsplit(".", 1)[0]
            problems.append(
                Diagnostic(
                    shown + name,
                    Problem(1, 1, "(file)", f"submissions end in .yaml; rename it {stem}.yaml"),
                )
            )
    return sources, problems


def misnamed(paths: Iterable[Path]) -> list[Diagnostic]:
    """Files named on the command line that the build would not pick up."""
    return [
        Diagnostic(
            str(path),
            Problem(1, 1, "(file)", f"submissions end in .yaml; rename it {path.stem}.yaml"),
        )
        for path in paths
        if not path.name.endswith(SUFFIX)
    ]


def sources_of(paths: Iterable[Path]) -> list[Source]:
    """Sources for files named on the command line (`--check FILE...`)."""
    out = []
    for path in paths:
        name = path.name
        stem = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else path.stem
        out.append(Source(os.path.abspath(path), str(path), stem))
    return out


def load(sources: Sequence[Source], previous: cache.Records) -> tuple[list[Loaded], cache.Records]:
    """Every source with its outcome, and the cache records of exactly these sources."""
    records = cache.Records(previous.version, base=previous.base, base_id=previous.base_id)
    # Taken before any stat: a fingerprint is then never thought younger than it is.
    taken_ns = time.time_ns()
    results: list[Loaded | None] = [None] * len(sources)
    todo: list[tuple[int, Source, os.stat_result | None]] = []
    # The loop every cached rebuild runs 20,000 times: locals, and no call per file but the
    # stat when the file is unchanged.
    stat_of, trusted, key_at = os.stat, cache.trusted, cache.KEY_AT
    entries, outcomes = previous.fingerprints, previous.outcomes
    new_entries, new_outcomes = records.fingerprints, records.outcomes
    for index, source in enumerate(sources):
        path = source.path
        try:
            stat: os.stat_result | None = stat_of(path)
        except OSError:
            todo.append((index, source, None))
            continue
        entry = entries.get(path)
        if entry is not None and trusted(entry, stat):
            key = entry[key_at]
            stored = outcomes.get(key)
            if stored is not None:
                # Unchanged since a trusted fingerprint: the entry stays as it is.
                new_entries[path] = entry
                new_outcomes[key] = stored
                results[index] = Loaded(source, _outcome(stored), True)
                continue
        todo.append((index, source, stat))

    if len(todo) >= PARALLEL_THRESHOLD and not previous.outcomes:
        # Nothing cached (first build, or new code): workers read and check in one go.
        jobs = [(s.stem, s.path, records.version) for _, s, _ in todo]
        for (index, source, stat), (key, stored) in zip(
            todo, _parallel(_read_and_check, jobs), strict=True
        ):
            results[index] = _stored_miss(records, source, (stat, taken_ns), key, stored)
        return results, records  # type: ignore[return-value]  # every index is filled
    # Only trusted fingerprints, of the same files: the stored records are still exact.
    records.changed = bool(todo) or records.fingerprints.keys() != previous.fingerprints.keys()

    misses: list[tuple[int, Source, os.stat_result | None, str, bytes]] = []
    for index, source, stat in todo:
        data = _read(source.path)
        if isinstance(data, OSError):
            results[index] = Loaded(source, _unreadable(data), False)
            continue
        key = cache.content_key(records.version, source.stem, data)
        if key in previous.outcomes:
            results[index] = _hit(records, previous, source, (stat, taken_ns), key)
        else:
            misses.append((index, source, stat, key, data))
    items = [(source.stem, data) for _, source, _, _, data in misses]
    if len(misses) >= PARALLEL_THRESHOLD:
        stored_ = _parallel(_check_many, items)
    else:
        stored_ = [_stored(_checked(stem, data)) for stem, data in items]
    for (index, source, stat, key, _), stored in zip(misses, stored_, strict=True):
        results[index] = _stored_miss(records, source, (stat, taken_ns), key, stored)
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


def _checked(stem: str, data: bytes) -> Outcome:
    """`check_file`, and the listing of a published programme (see `Outcome.listing`)."""
    outcome = check_file(stem, data)
    if outcome.record is None:
        return outcome
    return outcome._replace(listing=listing_of(outcome.record))


def _outcome(stored: list) -> Outcome:
    """The outcome a cache entry stores (see `cache.Records.outcomes`), without its record."""
    status, problems, warnings, line, column, listing = stored
    return _new(
        Outcome,
        (
            status,
            None,
            [Problem(*p) for p in problems] if problems else [],
            [Problem(*p) for p in warnings] if warnings else [],
            (line, column),
            None if listing is None else _new(Listing, listing),
        ),
    )


# NamedTuples made from their values in order, without the generated __new__ (a Python
# call with defaults): the loop over 20,000 cached outcomes makes two each.
_new = tuple.__new__


def _hit(
    records: cache.Records, previous: cache.Records, source: Source, seen: Seen, key: str
) -> Loaded:
    stored = records.outcomes[key] = previous.outcomes[key]
    _remember(records, source, seen, key)
    return Loaded(source, _outcome(stored), True)


def _stored(outcome: Outcome) -> list:
    """An outcome as the cache stores it: plain lists and tuples, which marshal takes; the
    record is left out (its listing's row holds it)."""
    return [
        outcome.status,
        [list(p) for p in outcome.problems],
        [list(p) for p in outcome.warnings],
        *outcome.slug_at,
        None if outcome.listing is None else tuple(outcome.listing),
    ]


def _stored_miss(
    records: cache.Records, source: Source, seen: Seen, key: str | None, stored: list
) -> Loaded:
    """A file checked just now: its outcome is remembered (stored form) and returned."""
    if key is not None:  # None: the file could not be read, nothing to remember
        records.outcomes[key] = stored
        _remember(records, source, seen, key)
    return Loaded(source, _outcome(stored), False)


def _remember(records: cache.Records, source: Source, seen: Seen, key: str) -> None:
    stat, taken_ns = seen
    if stat is not None:
        records.fingerprints[source.path] = cache.file_entry(stat, key, taken_ns)


# --- worker processes ---------------------------------------------------------------------


# Workers send their results back as one marshal blob per chunk, in the form the cache
# stores: loading it takes the parent (busy with its own share of the two cores) a third
# of unpickling the same outcomes, and nothing needs converting afterwards.


def _read_and_check(items: list[tuple[str, str, str]]) -> bytes:
    """In a worker: read, key and check a chunk of files; [(key, stored outcome)]."""
    out: list[tuple[str | None, list]] = []
    for stem, path, version in items:
        data = _read(path)
        if isinstance(data, OSError):
            out.append((None, _stored(_unreadable(data))))
        else:
            out.append((cache.content_key(version, stem, data), _stored(_checked(stem, data))))
    return marshal.dumps(out, cache.MARSHAL_VERSION)


def _check_many(items: list[tuple[str, bytes]]) -> bytes:
    """In a worker: check a chunk of files already read; [stored outcome]."""
    return marshal.dumps(
        [_stored(_checked(stem, data)) for stem, data in items], cache.MARSHAL_VERSION
    )


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


def iter_problems(loaded: Iterable[Loaded]) -> Iterator[Diagnostic]:
    """Every error and warning of every file, with its path."""
    for item in loaded:
        for problem in item.outcome.problems:
            yield Diagnostic(item.source.display, problem)
        for problem in item.outcome.warnings:
            yield Diagnostic(item.source.display, problem, "warning")
