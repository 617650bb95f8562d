"""Stage 3: sort the checked submissions into published, unpublished, rejected and invalid.

One function decides what each submission amounts to, from its status and its problems,
so the later stages take a list each and never test a field to know what a file is. A
file is invalid when it has an error of its own, or claims a slug or a network's programme
(`networks`) another file claims.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from catalog import validation
from catalog.errors import Diagnostic
from catalog.loading import Checked, Source
from contract import vocabulary as v


@dataclass(frozen=True)
class Partition:
    """The checked submissions by what they amount to, in the order they were given."""

    published: list[Checked] = field(default_factory=list)  # valid: they reach dist/
    unpublished: list[Checked] = field(default_factory=list)  # counted only
    rejected: list[Checked] = field(default_factory=list)  # counted only
    invalid: list[Checked] = field(default_factory=list)  # the build stops on any
    problems: list[Diagnostic] = field(default_factory=list)  # errors and warnings, unsorted

    @property
    def counts(self) -> dict[str, int]:
        """The submission counts the manifest and the summary give, by status."""
        by_status = {
            v.PUBLISHED: len(self.published),
            "unpublished": len(self.unpublished),
            "rejected": len(self.rejected),
        }
        total = sum(by_status.values()) + len(self.invalid)
        return {"submissions": total, **{s: by_status[s] for s in v.SUBMISSION_STATUSES}}


def partition(checked: Sequence[Checked], others: Sequence[Source] = ()) -> Partition:
    """Each submission in its group, and every problem found in them.

    `others` are the content's files that were not checked (`--check FILE...`): a checked
    file may not claim one of their slugs either.
    """
    problems = _file_problems(checked)
    clashes = _duplicate_slugs(checked, others) + _duplicate_links(checked)
    problems += clashes
    clashing = {d.path for d in clashes}
    groups: dict[str, list[Checked]] = {status: [] for status in v.SUBMISSION_STATUSES}
    invalid: list[Checked] = []
    for item in checked:
        outcome = item.outcome
        if outcome.problems or outcome.status is None or item.source.display in clashing:
            invalid.append(item)
        else:
            groups[outcome.status].append(item)
    return Partition(
        published=groups[v.PUBLISHED],
        unpublished=groups["unpublished"],
        rejected=groups["rejected"],
        invalid=invalid,
        problems=problems,
    )


def _file_problems(checked: Sequence[Checked]) -> list[Diagnostic]:
    """Every error and warning of every file, with its path."""
    found: list[Diagnostic] = []
    for item in checked:
        display = item.source.display
        found += [Diagnostic(display, problem) for problem in item.outcome.problems]
        found += [Diagnostic(display, p, "warning") for p in item.outcome.warnings]
    return found


def _duplicate_slugs(checked: Sequence[Checked], others: Sequence[Source]) -> list[Diagnostic]:
    """A problem for each checked file whose slug another file claims too."""
    if not others and len({item.source.stem for item in checked}) == len(checked):
        return []  # a build's usual case, decided without 20,000 claims
    checked_paths = {item.source.path for item in checked}
    found = validation.duplicate_slugs(
        [
            (item.source.stem, item.source.path, item.source.display, item.outcome.slug_at)
            for item in checked
        ],
        [(s.stem, s.path, s.display) for s in others if s.path not in checked_paths],
    )
    return [Diagnostic(display, problem) for display, problem in found]


def _duplicate_links(checked: Sequence[Checked]) -> list[Diagnostic]:
    """A problem for each valid published file listing a (network, programId) pair that
    another one lists too (`validation.duplicate_links`). Drafts and rejected files are not
    read beyond their status, so they claim nothing."""
    claims = [
        (item.source.display, item.outcome.links)
        for item in checked
        if item.outcome.links and item.outcome.status == v.PUBLISHED and not item.outcome.problems
    ]
    found = validation.duplicate_links(claims)
    return [Diagnostic(display, problem) for display, problem in found]
