"""Which windows a run fetches: pure functions of the position, the clock and the spec.

A run first reads the network's change feeds (windows of change dates: validation,
amendment, locking, status-update or last-modified dates) over the spec's change lookback,
or from the position when it lags further, so a transaction of any age that changed
reaches the store; then re-scans, by transaction
date, the period in which changes the feeds do not report still happen; then fetches
forward from the position to now.
Every window respects the network's largest window and falls on its granularity (whole days
for date-only APIs). Only forward windows advance the position, and only in order: a run
killed at any point resumes from its last committed window.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
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
    start: dt.datetime,
    end: dt.datetime,
    longest: dt.timedelta,
    step: dt.timedelta,
    feed: str = "",
) -> list[Window]:
    """[start, end) cut into windows of at most `longest`, inner boundaries on `step`
    (windows of `feed`'s change dates when one is named)."""
    windows: list[Window] = []
    current = start
    while current < end:
        boundary = floor_to(current + longest, step)
        if boundary <= current:  # `longest` shorter than a step: take what fits
            boundary = current + longest
        following = min(end, boundary)
        windows.append(Window(current, following, feed))
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
    changes: Sequence[str] = (),
    change_lookback: dt.timedelta = dt.timedelta(0),
    ahead: Mapping[str, dt.timedelta] | None = None,
) -> list[PlannedWindow]:
    """The windows of one run: re-scans, then the change feeds and forward windows in time
    order, each feed window before the forward window its start falls in (`interleaved`).

    `backfill`: how far back a connection's first run starts (bounded by the horizon).
    `changes`: the names of the network's change feeds, each read from `change_lookback`
    before now, or from the position when it lags further (the runs that did not move it
    read no change to trust either), never past the horizon. A first run reads none: it
    fetches every transaction in its present state. `ahead`: for a feed whose dates the
    network sets in the future (a locking date), how far past now its windows reach.
    """
    now = now.astimezone(dt.UTC).replace(microsecond=0)
    earliest = now - horizon
    changed: list[Window] = []
    if position is None:
        complete = floor_to(max(now - backfill, earliest), granularity)
        rescans: list[Window] = []
    else:
        complete = min(position.complete_through, now)
        rescan_from = floor_to(max(now - rescan, earliest), granularity)
        rescans = (
            cut(rescan_from, complete, max_window, granularity)
            if rescan and rescan_from < complete
            else []
        )
        changes_from = floor_to(max(earliest, min(complete, now - change_lookback)), granularity)
        for feed in filter(None, changes):
            until = now + (ahead or {}).get(feed, dt.timedelta(0))
            changed += cut(changes_from, until, max_window, granularity, feed)
    forward_from = floor_to(complete, granularity)
    forwards = cut(forward_from, now, max_window, granularity) if complete < now else []
    return [PlannedWindow(w, False) for w in rescans] + interleaved(changed, forwards)


def interleaved(changed: Sequence[Window], forwards: Sequence[Window]) -> list[PlannedWindow]:
    """The change-feed windows and the forward windows in the order a run may be stopped
    in at any point (a documented limit, a deadline) without losing a change: before the
    position moves to a forward window's end, every feed window that starts before that
    end has been read, so the next run's feeds, read from the position, miss nothing.
    A backfill under a tight limit then goes forward run after run, with its feeds."""
    pending = sorted(changed, key=lambda w: w.start)  # stable: the spec's feed order
    ordered: list[PlannedWindow] = []
    taken = 0
    for forward in forwards:
        while taken < len(pending) and pending[taken].start < forward.end:
            ordered.append(PlannedWindow(pending[taken], False))
            taken += 1
        ordered.append(PlannedWindow(forward, True))
    ordered += [PlannedWindow(w, False) for w in pending[taken:]]
    return ordered


def split(window: Window, granularity: dt.timedelta) -> tuple[Window, Window] | None:
    """Two halves of a window a network capped, on its granularity; None when it cannot
    be cut any smaller."""
    step = max(granularity, MIN_SPLIT)
    if window.length < 2 * step:
        return None
    middle = floor_to(window.start + window.length / 2, step)
    if middle <= window.start:
        middle = window.start + step
    return Window(window.start, middle, window.feed), Window(middle, window.end, window.feed)
