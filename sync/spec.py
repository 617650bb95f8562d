"""What each connector declares about its network, in one place."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

# The default caps of an answer's size: a page holds at most a few thousand records (some
# kilobytes each); a network without pages answers a whole window (31 days) at once.
RESPONSE_CAP_PAGED = 16 * 2**20
RESPONSE_CAP_WHOLE = 64 * 2**20


class Pagination(enum.StrEnum):
    """How a network hands out a result set larger than one answer."""

    NONE = "none"  # one answer per window: the window bounds the result set
    OFFSET = "offset"  # offset + limit
    PAGE = "page"  # page number, or a next-page link
    CURSOR = "cursor"  # an opaque cursor the answer gives
    WATERMARK = "watermark"  # "since id" the last answer's highest id


class AmountFormat(enum.StrEnum):
    """How amounts arrive on the wire."""

    STRING = "string"  # decimal text, e.g. "6.00"
    NUMBER = "number"  # JSON numbers (parsed as Decimal, never float)
    CENTS = "cents"  # integers of minor units: 1250 means 12.50
    # Text as a report shows it: currency signs or codes, thousands separators, and a
    # negative as `-4.26`, `$-4.26` or `($4.26)` (never read as positive).
    FORMATTED = "formatted"


@dataclass(frozen=True, slots=True)
class Amount:
    """How one amount field is written: its form, its scale (the wire value counts units
    of 10**-scale: 2 for cents, 4 for ten-thousandths) and, for text, which character
    separates the decimals (the other of `.` and `,`, and spaces, group thousands)."""

    form: AmountFormat = AmountFormat.NUMBER
    scale: int = 0
    decimal_comma: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.scale <= 8:
            raise ValueError("an amount's scale is 0 to 8 decimal places")


class TimeFormat(enum.StrEnum):
    """How a moment arrives on the wire."""

    TEXT = "text"  # ISO 8601 (naive means UTC), dd/mm/YYYY[ HH:MM[:SS]], or UNIX seconds
    UNIX_SECONDS = "unix_seconds"  # an integer (or its digits) of seconds since 1970
    UNIX_MILLIS = "unix_millis"  # an integer (or its digits) of milliseconds since 1970


class CurrencySource(enum.StrEnum):
    """Where a record's currency comes from."""

    RECORD = "record"  # each record names its currency
    CONNECTION = "connection"  # records carry none: the connection declares it
    RECORD_OR_CONNECTION = "record_or_connection"  # the record's, else the connection's


@dataclass(frozen=True, slots=True)
class CredentialField:
    """One member of the credential JSON `network connect` must require."""

    name: str
    description: str


@dataclass(frozen=True, slots=True)
class Rate:
    """At most `requests` per `seconds`, per credential."""

    requests: int
    seconds: float

    def __post_init__(self) -> None:
        if self.requests < 1 or self.seconds <= 0:
            raise ValueError("a rate needs at least one request per positive period")


@dataclass(frozen=True, slots=True)
class ChangeFeed:
    """A filter by which the network reports changes to transactions of any age: it
    selects records by the date of their last change of a kind (validation, amendment,
    locking, status update, last modification), not by their transaction date."""

    # The connector's name for it, carried by the windows that read it (Window.feed);
    # empty for the date the forward windows read already (CJ's posting date: a correction
    # is a new record, posted when it is made), which needs no window of its own.
    name: str
    # The request parameter(s) the network documents, for the docs (e.g. dateType=validation).
    parameter: str
    # Which changes it reports, for the docs ("approvals and declines").
    catches: str
    # How far past now this feed's dates run: a date the network sets ahead (Impact's
    # LockingDate, the end of the lock period, is known when the action is made). Its
    # windows reach now plus this, so a change dated in the future is read now.
    ahead: dt.timedelta = dt.timedelta(0)


@dataclass(frozen=True, slots=True)
class PaymentsStream:
    """A network's publisher payments, read beside its commissions (sync.runner): a list
    newest first in offset pages (or whole in one answer), and per payment its lines from a
    breakdown of their own (`lines_endpoint`) or on the payment itself (None). Reading stops
    at the first page whose payments are all stored already: a payment, once made, does not
    change."""

    # The request paths the network documents, for the docs.
    endpoint: str
    # What a line stands for: an advertiser's share or a commission (vocabulary's kinds),
    # `unallocated` where the network publishes no breakdown.
    lines: str
    lines_endpoint: str | None
    # Records per page asked for, and the deepest offset the network answers; both 0 for
    # a network that answers the whole list at once (no offset is then asked for).
    page_size: int
    max_offset: int

    @property
    def paged(self) -> bool:
        """Whether the list comes in offset pages (else in one answer)."""
        return self.page_size > 0


@dataclass(frozen=True, slots=True)
class ConnectorSpec:
    """A network's reporting API as the sync needs to know it. `[U]` in a comment marks a
    value the public research could not confirm (a conservative choice)."""

    network: str
    base_url: str
    credential_fields: tuple[CredentialField, ...]
    # How the credentials are presented (documentation for `network connect`).
    auth: str
    # The longest window one request may ask for.
    max_window: dt.timedelta
    # Window boundaries fall on multiples of this (one day for date-only APIs).
    granularity: dt.timedelta
    pagination: Pagination
    # The published rate limit; None would mean unpublished, so every spec sets a cautious one.
    rate: Rate
    rate_source: str
    amount_format: AmountFormat
    currency_source: CurrencySource
    # The record field holding the primary sub-id.
    sub_id_field: str
    # How far back, by transaction date, each run re-reads what it stored: the one way
    # to learn of changes a network reports through no change feed (the network's lock
    # period plus a margin); zero where the change feeds report every change.
    rescan: dt.timedelta
    # How far back the network's API answers at all (the backfill horizon).
    horizon: dt.timedelta
    # Records per page asked for (None when the API has no page size).
    page_size: int | None = None
    # Seconds one request may take before it counts as failed.
    timeout: float = 60.0
    # The network's change-oriented filters, read over every run's change lookback; a
    # transaction of any age within the horizon is fetched again once it changes.
    change_feeds: tuple[ChangeFeed, ...] = ()
    # How far back of change dates each run reads the feeds (further back after a run
    # that could not move the position: see sync.planner).
    change_lookback: dt.timedelta = dt.timedelta(days=31)
    # Which changes the transaction-date re-scan is there for (docs: "late changes caught").
    rescan_catches: str = "approvals, declines, reversals, amendments and payments"
    # The largest answer read (bytes, once decompressed); None: RESPONSE_CAP_PAGED, or
    # RESPONSE_CAP_WHOLE for a network that answers a whole window at once.
    max_response_bytes: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    # Every sub-id member a record carries besides the primary one (clickRef2..6).
    more_sub_ids: tuple[str, ...] = ()
    # Further documented limits over other periods (1,000 a day besides 20 a minute): a
    # request is sent only when it fits every one (sync.ratelimit).
    more_rates: tuple[Rate, ...] = ()
    # Requests in flight at once per credential (1: the network refuses concurrent calls);
    # None: no documented limit.
    concurrency: int | None = None
    # Per field ("commission", "sale"): how an amount is written, where it differs from
    # `amount_format` (a scale other than cents, text with thousands separators).
    amounts: Mapping[str, Amount] = field(default_factory=dict)
    # Per field ("transacted", "clicked"): how a moment is written (default TEXT).
    times: Mapping[str, TimeFormat] = field(default_factory=dict)
    # The network's payments, where it publishes them (None: it does not, or the public
    # research found no such endpoint; a commission is then paid on its own evidence only).
    payments: PaymentsStream | None = None

    @property
    def all_sub_ids(self) -> tuple[str, ...]:
        """The sub-id members, the primary one first."""
        return (self.sub_id_field, *self.more_sub_ids)

    @property
    def rates(self) -> tuple[Rate, ...]:
        """Every documented rate, the primary one first."""
        return (self.rate, *self.more_rates)

    def amount(self, name: str) -> Amount:
        """How the amount field `name` is written."""
        declared = self.amounts.get(name)
        if declared is not None:
            return declared
        cents = self.amount_format is AmountFormat.CENTS
        return Amount(self.amount_format, scale=2 if cents else 0)

    def time(self, name: str) -> TimeFormat:
        """How the moment field `name` is written."""
        return self.times.get(name, TimeFormat.TEXT)

    @property
    def response_cap(self) -> int:
        """The largest answer read from this network, in bytes."""
        if self.max_response_bytes is not None:
            return self.max_response_bytes
        return RESPONSE_CAP_WHOLE if self.pagination is Pagination.NONE else RESPONSE_CAP_PAGED

    @property
    def required_credentials(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.credential_fields)

    def late_changes_caught(self) -> str:
        """Which changes to stored transactions the sync learns of, and up to what age of
        the transaction: docs/sync.md's column, generated from this declaration."""
        parts = [
            f"{feed.catches}: any transaction up to {_days(self.horizon)} old "
            f"(`{feed.parameter}`, "
            + (
                f"changes of the last {_days(self.change_lookback)} at least)"
                if feed.name
                else "read by the forward windows)"
            )
            for feed in self.change_feeds
        ]
        if self.rescan:
            parts.append(
                f"{self.rescan_catches}: transactions up to {_days(self.rescan)} old (re-scan)"
            )
        if not self.change_feeds:
            parts.append("no change filter is published, so none to an older one")
        return "; ".join(parts)


def _days(delta: dt.timedelta) -> str:
    return f"{delta.days} days" if delta % dt.timedelta(days=1) == dt.timedelta(0) else str(delta)
