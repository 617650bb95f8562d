"""The tests' one fake clock: time that moves only when a test moves it.

One object serves every clock the code takes: called, it is a monotonic clock (the key cache,
the rate limiter); `monotonic()`, `now()` (a UTC wall clock: the store's timestamps, the
sync) and `sleep()` are the sync's clock. `sleep` returns at once and moves both times, so
retries and back-offs run without waiting.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass, field

WALL_START = dt.datetime(2026, 3, 15, 12, 0, 0, tzinfo=dt.UTC)


@dataclass
class FakeClock:
    mono: float = 1000.0
    wall: dt.datetime = WALL_START
    slept: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.mono

    def monotonic(self) -> float:
        return self.mono

    def now(self) -> dt.datetime:
        return self.wall

    def advance(self, seconds: float) -> None:
        self.mono += seconds
        self.wall += dt.timedelta(seconds=seconds)

    async def sleep(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.slept.append(seconds)
        self.advance(seconds)
        await asyncio.sleep(0)
