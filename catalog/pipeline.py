"""The build, stage by stage, top to bottom; `build.py` is its table of contents.

load -> validate -> partition -> score -> shard -> write. Each stage is one module of
`catalog/` (loading, validation, partition, scoring, sharding, writing); write first renders
the HTML site (site) and every byte of the API's files (rendering), then swaps them in. The
stages a rebuild can take from the last build (validate, score, write) run through
`catalog.incremental`, which holds every use of the cache.
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ParamSpec, TypeVar

from catalog import docpages, loading, rendering, scoring, sharding
from catalog.errors import BuildError, Diagnostic, sort_diagnostics
from catalog.incremental import Incremental, SitePages, cache_dir
from catalog.loading import Checked
from catalog.partition import Partition, partition
from catalog.progress import Progress

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
P = ParamSpec("P")
R = TypeVar("R")


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
        return cache_dir(self.out) if self.cache else None


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
    memo = Incremental(options.cache_dir)
    with progress.stage("load") as stage:
        sources, misnamed = loading.discover(options.content)
        stage.note = f"{len(sources)} submissions in {options.content / loading.PROGRAMS_DIR}"
    with progress.stage("validate") as stage:
        checked = memo.validate(sources)
        stage.note = _checked_note(checked)
    with progress.stage("partition") as stage:
        parts = partition(checked)
        diagnostics = sort_diagnostics(misnamed + parts.problems)
        stage.note = _partition_note(parts)
    if _has_errors(diagnostics):
        memo.save_outcomes()  # the rebuild after the fix then checks only what changed
        raise BuildError(diagnostics)
    with progress.stage("score") as stage:
        listings = scoring.rank(memo.score(parts.published))
        stage.note = f"{len(listings)} published programmes ranked"
    with progress.stage("shard") as stage:
        shards = sharding.shard(listings)
        stage.note = f"{len(shards)} filter combinations"
    with progress.stage("write") as stage:
        started = time.perf_counter()
        if options.site:
            pages = memo.site(listings, parts.published, options.base_url, options.out)
            site = f"site: {len(pages.files)} HTML and static files"
            if pages.reused:
                site += f" ({pages.reused} pages unchanged, kept)"
        else:
            pages = SitePages({})
            site = "site: skipped (--no-site)"
        site += f" in {time.perf_counter() - started:.3f} s"
        live = memo.live(options.out)
        links = rendering.program_links(
            [(item.source.stem, item.outcome.links) for item in parts.published]
        )
        rendered = rendering.render(
            listings, shards, parts.counts, pages.files, live, docpages.render_docs(), links
        )
        swap_started = time.perf_counter()
        files = f"{len(rendered.files)} files, build {rendered.build_id}"
        stats = memo.write(rendered.files, options.out, pages, sync=options.sync)
        # From the start of the stage, as the progress line times it.
        to_swap = swap_started - started + stats.seconds_to_swap
        stage.note = f"{site}; {files}; " + (
            f"no file changed: {options.out} left as it was"
            if stats.swap == "unchanged"
            else f"{stats.written} written, {stats.linked} linked, {stats.kept} kept (in the "
            f"{stats.assembled_in}), {stats.swap} into {options.out}; live after "
            f"{to_swap:.3f} s"
        )
    return Result(
        counts=rendered.counts,
        warnings=diagnostics,
        build_id=rendered.build_id,
        files=stats.files,
        bytes=stats.bytes,
        written=stats.written,
        linked=stats.linked,
        kept=stats.kept,
        swap=stats.swap,
        assembled_in=stats.assembled_in,
        seconds_to_swap=to_swap,
    )


@without_cycle_collector
def check(options: Options, files: Sequence[Path], progress: Progress) -> Result:
    """Validate all of the content, or only `files` against it; write nothing."""
    memo = Incremental(options.cache_dir)
    with progress.stage("load") as stage:
        content_sources, misnamed = loading.discover(options.content)
        if files:
            sources, others = loading.sources_of(files), content_sources
            misnamed = loading.misnamed(files)
        else:
            sources, others = content_sources, []
        stage.note = f"{len(sources)} submissions to check"
    with progress.stage("validate") as stage:
        checked = memo.validate(sources)
        stage.note = _checked_note(checked)
    with progress.stage("partition") as stage:
        parts = partition(checked, others)
        diagnostics = sort_diagnostics(misnamed + parts.problems)
        stage.note = _partition_note(parts)
    if _has_errors(diagnostics):
        raise BuildError(diagnostics)
    return Result(counts=parts.counts, warnings=diagnostics)


def _checked_note(checked: Sequence[Checked]) -> str:
    cached = sum(item.cached for item in checked)
    return f"{len(checked)} read and checked ({cached} unchanged, from the cache)"


def _partition_note(parts: Partition) -> str:
    return (
        f"{len(parts.published)} published, {len(parts.unpublished)} unpublished, "
        f"{len(parts.rejected)} rejected, {len(parts.invalid)} invalid"
    )


def _has_errors(diagnostics: Sequence[Diagnostic]) -> bool:
    """Whether the build stops: it reports every error at once, then stops."""
    return any(d.severity == "error" for d in diagnostics)
