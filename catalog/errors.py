"""Problems found in submissions, and how they are shown to people and to CI."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from catalog.submission import INVISIBLE_CHARS


class Problem(NamedTuple):
    """One thing wrong in one file; positions are 1-based.

    A NamedTuple rather than a dataclass so the cache can store it as a plain tuple.
    """

    line: int
    column: int
    field: str
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem (or a warning) located in a file, ready to print."""

    path: str
    problem: Problem
    severity: str = "error"  # error | warning

    def __str__(self) -> str:
        p = self.problem
        prefix = "" if self.severity == "error" else "warning: "
        # One problem a line, whatever a file name, key or value quoted in it holds.
        text = f"{self.path}:{p.line}:{p.column}: {prefix}{p.field}: {p.message}"
        return _LINE_BREAKS.sub(_escaped, text)

    def github(self) -> str:
        """The GitHub Actions workflow command that annotates the file in a pull request."""
        p = self.problem
        props = ",".join(
            (
                f"file={_escape_property(_LINE_BREAKS.sub(_escaped, self.path))}",
                f"line={p.line}",
                f"col={p.column}",
            )
        )
        text = _LINE_BREAKS.sub(_escaped, f"{p.field}: {p.message}")
        return f"::{self.severity} {props}::{_escape_data(text)}"


class BuildError(Exception):
    """The build stops: every diagnostic found so far, all files included."""

    def __init__(self, diagnostics: Sequence[Diagnostic], summary: str = "") -> None:
        self.diagnostics = tuple(diagnostics)
        errors = sum(d.severity == "error" for d in self.diagnostics)
        self.summary = summary or f"{errors} error{'s' * (errors != 1)}"
        super().__init__(self.summary)


def located(path: str, problems: Iterable[Problem], severity: str = "error") -> list[Diagnostic]:
    """Attach a file's display path to its problems."""
    return [Diagnostic(path, Problem(*p), severity) for p in problems]


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """File by file, then top to bottom: the order an editor shows them."""
    return sorted(diagnostics, key=lambda d: (d.path, d.problem.line, d.problem.column))


# Characters that end a line in a terminal or an editor, drive the terminal (ESC...) or
# hide or reorder text (catalog.submission.INVISIBLE_CHARS: zero-width, bidirectional):
# shown escaped, as \\n, \\x1b or \\u202e. Tabs stay.
_LINE_BREAKS = re.compile(f"[\\x00-\\x08\\x0a-\\x1f\\x7f{INVISIBLE_CHARS}]")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def _escape_data(text: str) -> str:
    # The escapes GitHub's runner undoes in a workflow command's message.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
