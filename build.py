#!/usr/bin/env python3
"""Build the directory: validate content/programs/*.yaml, score, shard, write dist/ atomically.

    python build.py [--content DIR] [--out DIR] [--base-url URL] [--quiet]
    python build.py --check [FILE ...]     validate only (all of content/, or these files)
    python build.py --write-schema         regenerate content/schema/program.schema.json

Exit status: 0 built (or valid), 1 invalid submissions or the build failed (dist/ is then
left exactly as it was), 2 bad command line, 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM), dist/ again as it was. docs/build.md has the details.

This file is the table of contents of the pipeline; each stage is a module of `catalog/`:
loading (+ validation) -> scoring -> sharding -> site -> rendering -> writing.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TextIO, TypeVar

from catalog import loading, rendering, schema, scoring, sharding, validation, writing
from catalog.cache import KEY_AT, Cache, Outputs, Records, code_version
from catalog.errors import BuildError, Diagnostic, sort_diagnostics
from catalog.model import Existing, Listing, program_from_row
from catalog.progress import Progress
from catalog.site_meta import normalise_base_url
from contract import vocabulary as v

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
P = ParamSpec("P")
R = TypeVar("R")
CACHE_DIR = ".build-cache"
TEMPLATES_CACHE = "templates"  # in CACHE_DIR: Jinja2's compiled templates


@dataclass(frozen=True)
class Options:
    """Everything a build depends on besides the content itself."""

    content: Path = Path("content")
    out: Path = Path("dist")
    base_url: str = DEFAULT_BASE_URL
    cache: bool = True  # use and update .build-cache/ beside the output directory
    sync: bool = True  # flush the new build to disk before swapping it in
    site: bool = True  # render the HTML directory beside the API's files

    @property
    def cache_dir(self) -> Path | None:
        return self.out.absolute().parent / CACHE_DIR if self.cache else None


@dataclass
class Result:
    """What a run did, for the summary line and for callers (tests, benchmarks)."""

    counts: dict[str, int]
    warnings: list[Diagnostic] = field(default_factory=list)
    build_id: str = ""
    files: int = 0
    bytes: int = 0
    written: int = 0
    linked: int = 0
    kept: int = 0
    swap: str = ""
    assembled_in: str = ""
    seconds_to_swap: float = 0.0


def without_cycle_collector(function: Callable[P, R]) -> Callable[P, R]:
    """Run with Python's cyclic garbage collector paused.

    A build allocates millions of small objects and no reference cycles worth collecting;
    the collector's repeated passes over them cost about a third of a cached rebuild.
    """

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused


@without_cycle_collector
def build(options: Options, progress: Progress) -> Result:
    """Validate every submission and replace the output directory with the new build."""
    cache = Cache(options.cache_dir)
    with progress.stage("discover") as stage:
        sources, found = loading.discover(options.content)
        stage.note = f"{len(sources)} submissions in {options.content / loading.PROGRAMS_DIR}"
    with progress.stage("validate") as stage:
        loaded, records = loading.load(sources, cache.load_records(code_version()))
        stage.note = _loaded_note(loaded)
    diagnostics = found + list(loading.iter_problems(loaded))
    diagnostics += _duplicates(loaded, [])
    counts = _counts(loaded)
    if records.changed:
        cache.save_records(records)  # also after errors: the fixed rebuild is then quick
    warnings = _raise_on_errors(diagnostics)

    with progress.stage("score") as stage:
        listings = scoring.rank(item.outcome.listing for item in loaded if item.outcome.listing)
        stage.note = f"{len(listings)} published programmes ranked"
    with progress.stage("shard") as stage:
        shards = sharding.shard(listings)
        stage.note = f"{len(shards)} filter combinations"
    previous = cache.load_outputs()
    live = previous.of_tree(options.out)
    with progress.stage("site") as stage:
        if options.site:
            pages = _site(options, cache, live, listings, _content_keys(loaded, records))
            stage.note = f"{len(pages.files)} HTML and static files"
            if pages.reused:
                stage.note += f" ({pages.reused} pages unchanged, kept)"
        else:
            pages = SitePages({})
            stage.note = "skipped (--no-site)"
    with progress.stage("render") as stage:
        rendered = rendering.render(
            listings, shards, counts, pages.files, live[1] if live else None
        )
        stage.note = f"{len(rendered.files)} files, build {rendered.build_id}"
    with progress.stage("write") as stage:
        try:
            stats = writing.write(
                rendered.files, options.out, previous, sync=options.sync, keep_spare=options.cache
            )
        except writing.LiveFileChangedError:
            # dist/ no longer holds what outputs.bin says: forget it, or every build after
            # this one would count on the same missing file. The next writes every file.
            cache.save_outputs(Outputs())
            raise
        stage.note = (
            f"no file changed: {options.out} left as it was"
            if stats.swap == "unchanged"
            else f"{stats.written} written, {stats.linked} linked, {stats.kept} kept (in the "
            f"{stats.assembled_in}), {stats.swap} into {options.out}; live after "
            f"{stats.seconds_to_swap:.3f} s"
        )
    if stats.outputs != previous:
        cache.save_outputs(stats.outputs)
    if pages.changed is not None:
        cache.save_pages(pages.changed)
    return Result(
        counts=rendered.counts,
        warnings=warnings,
        build_id=rendered.build_id,
        files=stats.files,
        bytes=stats.bytes,
        written=stats.written,
        linked=stats.linked,
        kept=stats.kept,
        swap=stats.swap,
        assembled_in=stats.assembled_in,
        seconds_to_swap=stats.seconds_to_swap,
    )


@without_cycle_collector
def check(options: Options, files: Sequence[Path], progress: Progress) -> Result:
    """Validate all of the content, or only `files` against it; write nothing."""
    cache = Cache(options.cache_dir)
    with progress.stage("discover") as stage:
        content_sources, found = loading.discover(options.content)
        if files:
            sources, others = loading.sources_of(files), content_sources
            found = loading.misnamed(files)
        else:
            sources, others = content_sources, []
        stage.note = f"{len(sources)} submissions to check"
    with progress.stage("validate") as stage:
        loaded, _ = loading.load(sources, cache.load_records(code_version()))
        stage.note = _loaded_note(loaded)
    diagnostics = found + list(loading.iter_problems(loaded)) + _duplicates(loaded, others)
    warnings = _raise_on_errors(diagnostics)
    return Result(counts=_counts(loaded), warnings=warnings)


@dataclass(frozen=True)
class SitePages:
    """The site stage's files, and what the next build may reuse of them."""

    files: dict[str, bytes | Existing]
    reused: int = 0
    changed: dict[str, list[Any]] | None = None  # the pages to remember, when they changed


def _site(
    options: Options,
    cache: Cache,
    live: tuple[str, dict[str, str]] | None,
    listings: Sequence[Listing],
    program_keys: dict[str, str],
) -> SitePages:
    """The HTML directory of these programmes (`catalog.site`), reusing what dist/ holds."""
    from catalog import site  # Jinja2 and the templates: only for a build with the site

    programs = [program_from_row(listing.row) for listing in listings]
    if cache.directory is None:  # nothing to reuse without the cache
        return SitePages(site.render_site(programs, options.base_url))
    reuse = site.Reuse(
        version=site.site_version(options.base_url),
        live=live[1] if live else {},
        known=cache.load_pages() if live else {},
        program_keys=program_keys,
        compiled=cache.directory / TEMPLATES_CACHE,
    )
    files = site.render_site(programs, options.base_url, reuse)
    return SitePages(files, reuse.reused, reuse.pages if reuse.changed else None)


def _content_keys(loaded: Sequence[loading.Loaded], records: Records) -> dict[str, str]:
    """slug -> content key of every published submission the cache knows."""
    entries = records.fingerprints
    return {
        item.source.stem: entries[item.source.path][KEY_AT]
        for item in loaded
        if item.outcome.listing is not None and item.source.path in entries
    }


def _loaded_note(loaded: Sequence[loading.Loaded]) -> str:
    cached = sum(item.cached for item in loaded)
    return f"{len(loaded)} read and checked ({cached} unchanged, from the cache)"


def _counts(loaded: Sequence[loading.Loaded]) -> dict[str, int]:
    statuses = Counter(item.outcome.status for item in loaded)
    return {"submissions": len(loaded), **{s: statuses[s] for s in v.SUBMISSION_STATUSES}}


def _duplicates(
    loaded: Sequence[loading.Loaded], others: Sequence[loading.Source]
) -> list[Diagnostic]:
    if not others and len({item.source.stem for item in loaded}) == len(loaded):
        return []  # a build's usual case, decided without 20,000 claims
    checked_paths = {item.source.path for item in loaded}
    found = validation.duplicate_slugs(
        [
            (item.source.stem, item.source.path, item.source.display, item.outcome.slug_at)
            for item in loaded
        ],
        [(s.stem, s.path, s.display) for s in others if s.path not in checked_paths],
    )
    return [Diagnostic(display, problem) for display, problem in found]


def _raise_on_errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Stop with every error at once; otherwise return the warnings."""
    ordered = sort_diagnostics(diagnostics)
    if any(d.severity == "error" for d in ordered):
        raise BuildError(ordered)
    return ordered


# --- command line ------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked."""
    parser = argparse.ArgumentParser(
        prog="build.py",
        description="Validate programme submissions and build the directory into dist/.",
    )
    parser.add_argument(
        "--content",
        type=Path,
        default=Path("content"),
        metavar="DIR",
        help="content directory holding programs/*.yaml (default: content)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("dist"),
        metavar="DIR",
        help="output directory, replaced atomically (default: dist)",
    )
    parser.add_argument(
        "--check",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="validate only, write nothing: all of the content, or these files "
        "(their slugs are still checked against the content's)",
    )
    parser.add_argument(
        "--base-url",
        default=DEFAULT_BASE_URL,
        metavar="URL",
        help=f"absolute URL the site is served from (default: {DEFAULT_BASE_URL})",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="print only problems, no progress or summary"
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help=f"neither read nor write {CACHE_DIR}/ (a cold build)",
    )
    parser.add_argument(
        "--no-site",
        action="store_true",
        help="build the API's files only, without the HTML directory (dist/ then holds no "
        "site; for an edge that serves the API alone)",
    )
    parser.add_argument(
        "--no-sync",
        action="store_true",
        help="do not flush the new build to disk before swapping it in",
    )
    parser.add_argument(
        "--write-schema",
        action="store_true",
        help="regenerate <content>/schema/program.schema.json and exit",
    )
    args = parser.parse_args(argv)  # fmt: skip
    if args.write_schema and args.check is not None:
        parser.error("--write-schema writes the schema; --check writes nothing: give one")
    try:
        # The site's own check (catalog.site_meta), at once: not after validating everything.
        args.base_url = normalise_base_url(args.base_url)
    except ValueError:
        parser.error(
            "--base-url must be an absolute http(s) URL without user, query or fragment, "
            "e.g. https://affdir.example"
        )
    return args


def report(diagnostics: Sequence[Diagnostic], stream: TextIO, github: bool) -> None:
    """Print problems one per line; under GitHub Actions also as workflow annotations."""
    for diagnostic in diagnostics:
        print(diagnostic, file=stream)
    if github:
        for diagnostic in diagnostics:
            print(diagnostic.github(), flush=True)


class Terminated(BaseException):
    """SIGTERM, raised where the build is: a BaseException, like KeyboardInterrupt, so no
    `except Exception` on the way can swallow it, and every cleanup runs."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """The command line entry point; returns the exit status."""
    args = parse_args(argv)
    github = os.environ.get("GITHUB_ACTIONS") == "true"
    progress = Progress(quiet=args.quiet)
    if args.write_schema:
        path = schema.write(args.content)
        progress.say(f"wrote {path}")
        return 0
    options = Options(
        content=args.content,
        out=args.out,
        base_url=args.base_url,
        cache=not args.no_cache,
        sync=not args.no_sync,
        site=not args.no_site,
    )
    # A SIGTERM unwinds like Ctrl-C, so the staging directory is cleaned up either way.
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run(args, options, progress, github)
    except (KeyboardInterrupt, Terminated) as exc:
        # Also while problems are being printed: dist/ is whole either way.
        if args.check is not None:
            print("\ninterrupted; a check writes nothing", file=sys.stderr)
        else:
            print(
                f"\ninterrupted; {options.out} holds a whole build, never part of one",
                file=sys.stderr,
            )
        return 130 if isinstance(exc, KeyboardInterrupt) else 128 + signal.SIGTERM


def _run(args: argparse.Namespace, options: Options, progress: Progress, github: bool) -> int:
    """Check or build, then report; the exit status."""
    try:
        if args.check is not None:
            result = check(options, args.check, progress)
        else:
            result = build(options, progress)
    except BuildError as exc:
        report(exc.diagnostics, sys.stderr, github)
        if args.check is not None:
            print(f"check failed: {exc.summary}", file=sys.stderr)
        else:
            print(f"build failed: {exc.summary}; {options.out} left as it was", file=sys.stderr)
        return 1
    except (writing.WriteError, OSError) as exc:
        print(f"build failed: {exc}; {options.out} left as it was", file=sys.stderr)
        return 1
    report(result.warnings, sys.stderr, github)
    progress.say(_summary(result, options, args.check is not None, progress.elapsed))
    return 0


def _summary(result: Result, options: Options, checking: bool, elapsed: float) -> str:
    c = result.counts
    statuses = ", ".join(f"{c.get(s, 0)} {s}" for s in v.SUBMISSION_STATUSES)
    if checking:
        many = "" if c["submissions"] == 1 else "s"
        return f"check passed: {c['submissions']} submission{many} ({statuses}) in {elapsed:.2f} s"
    return (
        f"built {options.out}: {statuses}; {c['shards']} shards, {c['pages']} pages, "
        f"{result.files} files, {result.bytes / 1e6:.1f} MB in {elapsed:.2f} s"
    )


if __name__ == "__main__":
    sys.exit(main())
