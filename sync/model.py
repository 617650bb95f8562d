"""The neutral values of a sync: windows, transactions, outcomes and reports."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from store.base import NewCommission, format_timestamp

__all__ = ["format_timestamp"]  # the store's one form of a moment, for the connectors


@dataclass(frozen=True, slots=True, order=True)
class Window:
    """A half-open span of time [start, end), both ends UTC-aware, of transaction dates,
    or of change dates when `feed` names one of the spec's change feeds."""

    start: dt.datetime
    end: dt.datetime
    feed: str = ""

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError("window ends must be timezone-aware")
        if self.end <= self.start:
            raise ValueError("a window must end after it starts")

    @property
    def length(self) -> dt.timedelta:
        return self.end - self.start

    def __str__(self) -> str:
        span = f"{format_timestamp(self.start)}..{format_timestamp(self.end)}"
        return f"{span} by {self.feed}" if self.feed else span


@dataclass(frozen=True, slots=True)
class Position:
    """How far a connection's sync got: every window before `complete_through` was fetched
    in full and committed at least once."""

    complete_through: dt.datetime


# A NewCommission, so the store takes it as it is: the sync makes one for every record a
# network sends, and a second object per record would be a large share of the sync's work.
@dataclass(slots=True, kw_only=True)
class Transaction(NewCommission):
    """One commission as a network reported it, normalised (amounts are signed decimal text,
    timestamps are `YYYY-MM-DDTHH:MM:SSZ`): the store's row, upserted by (account,
    network, external_id), and what the sync knows of it besides.

    `stated` names the fields the record gave (None: all of them): a member a later answer
    omits, or sends null, keeps the value stored before, never erases it (see
    sync.connectors.base.transaction)."""

    network: str
    # Every sub-id the network sent (Awin clickRef..clickRef6, Impact SubId1-3, ...);
    # `sub_id` is the spec's primary one.
    sub_ids: Mapping[str, str] = field(default_factory=dict)
    # Why the status is what it is when not the plain mapping (e.g. "awin:paidToPublisher").
    status_reason: str | None = None
    # A correction's original record (CJ originalActionId).
    original_id: str | None = None


@dataclass(frozen=True, slots=True)
class Refused:
    """A record the sync could not turn into a Transaction, and why (never silently)."""

    external_id: str | None
    code: str
    message: str


class Outcome(enum.StrEnum):
    """The outcome a connection records after a run (`NETWORK_SYNC_STATUSES` minus never)."""

    OK = "ok"
    PARTIAL = "partial"
    AUTH_FAILED = "auth_failed"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Reason:
    """Why an outcome is not plainly ok: a stable code and a message without secrets."""

    code: str
    message: str


@dataclass(slots=True)
class Counts:
    """What one run did."""

    windows_planned: int = 0
    windows_ok: int = 0
    windows_failed: int = 0
    windows_split: int = 0
    requests: int = 0
    fetched: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    refused: int = 0
    # Payments stored by this run (those stored before are not read again).
    payments: int = 0


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What the store did with one window's rows."""

    inserted: int
    updated: int
    unchanged: int


@dataclass(frozen=True, slots=True)
class SyncReport:
    """The result of one connection's run, as recorded by the store."""

    outcome: Outcome
    reason: Reason | None
    counts: Counts
    started_at: dt.datetime
    finished_at: dt.datetime
    position: Position | None
    # When a documented limit (or a 429) stopped the run: when it opens again, and the
    # run may resume (sooner than the sync interval).
    resume_at: dt.datetime | None = None
