"""Stage 1: find the submission files, and name the records the next stages pass on.

`discover` lists the content's submissions; the files named on the command line
(`--check FILE...`) become sources too. Reading and checking them is the validate stage
(`catalog.validation`), run through `catalog.incremental`, which skips unchanged files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from catalog.errors import Diagnostic, Problem
from catalog.validation import Outcome

PROGRAMS_DIR = "programs"
SUFFIX = ".yaml"


# Source and Checked are NamedTuples, not frozen dataclasses: a rebuild makes 20,000 of each,
# and a frozen dataclass's __init__ (one object.__setattr__ per field) cost 30 ms of it.


class Source(NamedTuple):
    """One submission file."""

    path: str  # absolute (a str: 20,000 Path objects cost more than the rest of a rebuild)
    display: str  # as shown in messages
    stem: str  # the slug it claims


class Checked(NamedTuple):
    """A submission file with its validation outcome.

    `key` is its content key (`catalog.cache.content_key`; None when it could not be read),
    under which the incremental build remembers the outcome and, for a published file, its
    listing. `cached`: the outcome came from that memory, so `outcome.record` is None.
    """

    source: Source
    outcome: Outcome
    key: str | None
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
