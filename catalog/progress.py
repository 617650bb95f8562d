"""Per-stage counts and timings on stderr (silenced by --quiet), kept for the summary."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class Stage:
    """One stage's timing and what it reports about itself."""

    name: str
    seconds: float = 0.0
    note: str = ""


@dataclass
class Progress:
    """Times the stages of one run and reports each as it ends."""

    quiet: bool = False
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    started: float = field(default_factory=time.perf_counter)
    stages: list[Stage] = field(default_factory=list)

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[Stage]:
        """Time the block; the block may set `.note` (counts) on the stage it gets."""
        stage = Stage(name)
        start = time.perf_counter()
        try:
            yield stage
        finally:
            stage.seconds = time.perf_counter() - start
            self.stages.append(stage)
        self.say(f"  {name:<9} {stage.seconds:7.3f} s  {stage.note}".rstrip())

    @property
    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.started

    def say(self, line: str) -> None:
        """One line of progress, unless quiet."""
        if not self.quiet:
            print(line, file=self.stream, flush=True)

    def timings(self) -> dict[str, float]:
        """{stage name: seconds}, for benchmarks."""
        return {stage.name: stage.seconds for stage in self.stages}
