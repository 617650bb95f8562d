"""Whether the sync worker still makes progress: what its `/healthz` answers.

Progress is anything that shows the worker is not stuck: the store answering the list of
due connections (every `--poll-seconds` while a slot is free), a network answering a
request, a sync ending with its outcome recorded. A worker with every slot taken by a
network that never answers, or a store that stays unreachable, or an event loop that no
longer turns, makes none: after `stall_seconds` of that, `/healthz` answers 503.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contract.version import VERSION

# The default --stall-seconds is the larger of this and three poll intervals: longer than
# the longest Retry-After the sync honours (900 s, sync.http.RetryPolicy) followed by the
# longest request timeout of any network (300 s), so slow but working syncs do not read as
# stalled.
MIN_DEFAULT_STALL_SECONDS = 1800.0


def default_stall_seconds(poll_seconds: float) -> float:
    """The --stall-seconds used when none is given."""
    return max(3 * poll_seconds, MIN_DEFAULT_STALL_SECONDS)


@dataclass
class Progress:
    """When the worker last made progress, on a monotonic clock."""

    stall_seconds: float
    clock: Callable[[], float] = time.monotonic
    last: float = field(init=False)

    def __post_init__(self) -> None:
        self.last = self.clock()  # starting counts: a worker is given a full period

    def mark(self) -> None:
        """Progress was made now."""
        self.last = self.clock()

    def seconds_since(self) -> float:
        return max(0.0, self.clock() - self.last)


def health(progress: Progress, running: int) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body of GET /healthz."""
    age = progress.seconds_since()
    stalled = age > progress.stall_seconds
    body = {
        "status": "stalled" if stalled else "ok",
        "version": VERSION,
        # Up to the millisecond, so a stalled worker never shows an age of just the limit.
        "secondsSinceProgress": math.ceil(age * 1000) / 1000,
        "stallSeconds": progress.stall_seconds,
        "running": running,
    }
    return (503 if stalled else 200), body
