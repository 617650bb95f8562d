"""Time as the sync sees it: injectable, so tests run on a fake clock."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from typing import Protocol


class Clock(Protocol):
    """Wall time for windows and records, monotonic time and sleep for waits."""

    def now(self) -> dt.datetime:
        """The current UTC moment."""
        ...

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))
