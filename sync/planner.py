"""Which windows a run fetches: pure functions of the position, the clock and the spec.

A run re-scans the network's lock period behind the position (so late approvals, declines,
amendments and payments update stored rows), then fetches forward from the position to now.
Every window respects the network's largest window and falls on its granularity (whole days
for date-only APIs). Only forward windows advance the position, and only in order: a run
killed at any point resumes from its last committed window.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sync.model import Position, Window

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# A capped window is not split below this (nor below the network's granularity).
MIN_SPLIT = dt.timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class PlannedWindow:
    window: Window
    # True for forward windows: committing one moves the position to its end.
    advances: bool


def floor_to(moment: dt.datetime, step: dt.timedelta) -> dt.datetime:
    """The latest multiple of `step` (counted from the UNIX epoch) at or before `moment`."""
    steps = (moment - EPOCH) // step
    return EPOCH + steps * step


def cut(
    start: dt.datetime, end: dt.datetime, longest: dt.timedelta, step: dt.timedelta
) -> list[Window]:
    """[start, end) cut into windows of at most `longest`, inner boundaries on `step`."""
    windows: list[Window] = []
    current = start
    while current < end:
        boundary = floor_to(current + longest, step)
        if boundary <= current:  # `longest` shorter than a step: take what fits
            boundary = current + longest
        following = min(end, boundary)
        windows.append(Window(current, following))
        current = following
    return windows


def plan(
    position: Position | None,
    now: dt.datetime,
    *,
    max_window: dt.timedelta,
    granularity: dt.timedelta,
    rescan: dt.timedelta,
    horizon: dt.timedelta,
    backfill: dt.timedelta,
) -> list[PlannedWindow]:
    """The windows of one run, re-scans first, then forward windows in time order.

    `backfill`: how far back a connection's first run starts (bounded by the horizon).
    """
    now = now.astimezone(dt.UTC).replace(microsecond=0)
    earliest = now - horizon
    if position is None:
        complete = floor_to(max(now - backfill, earliest), granularity)
        rescans: list[Window] = []
    else:
        complete = min(position.complete_through, now)
        rescan_from = floor_to(max(now - rescan, earliest), granularity)
        rescans = (
            cut(rescan_from, complete, max_window, granularity) if rescan_from < complete else []
        )
    forward_from = floor_to(complete, granularity)
    forwards = cut(forward_from, now, max_window, granularity) if complete < now else []
    return [PlannedWindow(w, False) for w in rescans] + [PlannedWindow(w, True) for w in forwards]


def split(window: Window, granularity: dt.timedelta) -> tuple[Window, Window] | None:
    """Two halves of a window a network capped, on its granularity; None when it cannot
    be cut any smaller."""
    step = max(granularity, MIN_SPLIT)
    if window.length < 2 * step:
        return None
    middle = floor_to(window.start + window.length / 2, step)
    if middle <= window.start:
        middle = window.start + step
    return Window(window.start, middle), Window(middle, window.end)
