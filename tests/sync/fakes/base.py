"""What every fake network shares: the declaration a network's fake module makes (`Fake`),
the state of one fake network during a test, canned answers, and the helpers its handler
uses (windows, credentials, JSON written as the network writes it)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from aiohttp import web

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
_DECIMAL = "@@decimal@@"

Record = dict[str, Any]
Handler = Callable[[web.Request, "NetState"], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Flip:
    """A recorded record whose status word changes between two syncs, and the status it
    maps to (a record the change feeds or the re-scan reach)."""

    external_id: str
    member: str
    raw: str
    status: str


@dataclass(frozen=True)
class Reversal:
    """How the network reverses a commission: `apply(records, record, now)` changes the
    recorded answer as the network would (a status word, or a new negative row), and the
    row `external_id` then holds `status` and `amount`."""

    target: str  # the reversed record's id
    apply: Callable[[list[Record], Record, dt.datetime], None]
    external_id: str  # the row that shows the reversal (the target, or a new row)
    status: str
    amount: str
    # Whether a reversal row names the record it reverses (False: the network's reversal
    # is a row of its own that names no original, e.g. Rakuten's and Digistore24's).
    names_original: bool = True


# The four changes of the late-changes scenario, and a locking date still to come.
ALL_LATE = frozenset({"approval", "decline", "reversal", "amendment"})
FUTURE = "2027-06-01T00:00:00Z"


@dataclass(frozen=True)
class Late:
    """How the late-changes scenario (tests/sync/test_sync_late_changes.py) plants
    transactions on this network and changes them, each network its own way: the members
    dated with a transaction and their format (strftime, "epoch" or "epoch_ms"), the
    members planted records start with (a locking date still to come), the network's own
    status words, how a planted record gets its id, and which changes to a transaction older
    than any re-scan the network reports (of approval, decline, reversal, amendment) through
    a change filter, or through the new rows it dates when they happen, as docs/sync.md
    states."""

    # The members dated with the transaction (its date, and a last-modified date where a
    # new transaction carries one): a name, or a path into nested members.
    dates: tuple[str | tuple[str, ...], ...]
    date_format: str
    caught: frozenset[str] = frozenset()
    extra: Mapping[str, Any] = field(default_factory=dict)
    # The wire words the scenario sets, by what they mean (pending, approved, declined),
    # where they are not the first word the status table maps to that status (codes the
    # table leaves unknown, numbers). A meaning the network has no word for is a change it
    # cannot make, and the scenario makes none; a network without status words has none.
    words: Mapping[str, Any] | None = None
    # The network reverses with a row of its own (Fake.reversal.apply), not a status word.
    reversal_row: bool = False
    # Gives a planted record the id `n` makes (default: the id member set to it); for a
    # network whose id is made of several members (an order and its part).
    identify: Callable[[Record, str], None] | None = None

    def dated(self, moment: dt.datetime) -> Any:
        """`moment` as the network writes a transaction date."""
        if self.date_format == "epoch":
            return int(moment.timestamp())
        if self.date_format == "epoch_ms":
            return int(moment.timestamp() * 1000)
        return moment.strftime(self.date_format)


@dataclass(frozen=True)
class Fake:
    """A fake network, written from the network's published answer shapes, and what the
    conformance suite (tests/sync/test_sync_connectors.py) needs to know of it.

    One module of tests/sync/fakes/ declares one, as FAKE; it is found by its module."""

    network: str
    # The credential JSON the test connection holds (values with PLANTED are secrets that
    # no log line, error or output may show).
    credentials: Mapping[str, str]
    # Answers one request of the connector (after the fake's canned answers).
    serve: Handler
    # The longest window (days) the network answers; a longer one gets its error.
    max_days: int
    # The record member holding the network's transaction id.
    id_field: str
    # The status change the network makes to a record; None for a network with no status
    # to flip (a change of type is another row: Rakuten, Sovrn, ClickBank, AvantLink).
    flip: Flip | None
    # Sets a record's commission amount to a wire value.
    set_commission: Callable[[Record, object], None]
    # A corrected commission as the network sends it, and as it is stored.
    amended: tuple[object, str]
    reversal: Reversal
    # The connection's declared currency (networks whose records carry none).
    currency: str | None = None
    # The page size the tests ask for (small: a handful of records spans pages); None for
    # a network without pages, or whose page size is its own (`paged` says if it pages).
    page_size: int | None = None
    paged: bool = False
    # Where the change filters find a change: kind (status, reversal, amount) -> (member,
    # strftime format). A network without a change filter has none.
    change_dates: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # Takes a record's currency away (networks whose records carry one).
    drop_currency: Callable[[Record], None] | None = None
    # An answer cut short, as this network's body (JSON unless it answers otherwise).
    truncated: bytes = b'[{"id": 15919'
    truncated_type: str = "application/json"
    # The records as one whole answer of the network (the parsers' property tests), and
    # the headers the network sends with an answer (Daisycon's X-Total-Count).
    answer: Callable[[list[Record], int], bytes] | None = None
    answer_headers: Mapping[str, str] = field(default_factory=dict)
    # The recorded records (default: the one JSON file of recordings/<network>/).
    load: Callable[[], list[Record]] | None = None
    # The API takes one date per call (Sovrn's updateDate): a longer window cannot be asked
    # of it, so the connector refuses one itself and the network never sees it.
    one_day_per_call: bool = False
    # The late-changes scenario on this network (None: not planted on it yet).
    late: Late | None = None
    # A record the change feeds or the re-scan reach, for the poison and amendment cases:
    # the flipped record's unless the network has no flip.
    sample_id: str | None = None

    def __post_init__(self) -> None:
        if self.flip is None and self.sample_id is None:
            raise ValueError(f"{self.network}: a fake without a flip names its sample_id")

    @property
    def sample(self) -> str:
        """The id of the record the poison and amendment cases change."""
        if self.sample_id is not None:
            return self.sample_id
        assert self.flip is not None
        return self.flip.external_id

    def records(self) -> list[Record]:
        """A fresh copy of the recorded records (a test may change them)."""
        if self.load is not None:
            return self.load()
        return load_json_records(self.network)


@dataclass(frozen=True)
class Canned:
    """A response served before the network's own handling (429, 5xx, bodies...)."""

    status: int
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


@dataclass(frozen=True)
class Seen:
    at: float
    method: str
    path: str
    query: Mapping[str, str]


@dataclass
class NetState:
    fake: Fake
    records: list[Record]
    inject: deque[Canned] = field(default_factory=deque)
    seen: list[Seen] = field(default_factory=list)
    # Windows asked for: (first moment, last moment) inclusive.
    windows: list[tuple[dt.datetime, dt.datetime]] = field(default_factory=list)
    too_long: int = 0
    reject_auth: bool = False
    # Records a single query may return before the network errors (Impact's 10x PageSize).
    cap: int | None = None
    # CJ's watermark page size (its `limit`).
    cj_limit: int = 2
    tokens: list[str] = field(default_factory=list)
    revoke_token_after: int | None = None
    data_calls: int = 0
    on_request: Callable[[NetState], None] | None = None
    # Real seconds each answer takes (a slow network).
    delay: float = 0.0
    # Requests being answered at this moment, and the most at once (concurrency limits).
    in_flight: int = 0
    most_in_flight: int = 0
    # The payments a network publishes (Awin's list) and each one's breakdown, by its id.
    payments: list[Record] = field(default_factory=list)
    breakdowns: dict[str, list[Record]] = field(default_factory=dict)
    # Payments whose breakdown answers 500 (a network's bad moment).
    failing_breakdowns: set[str] = field(default_factory=set)
    # The credentials lack the role payments need (Awin's Full Access): 403 on them.
    payments_forbidden: bool = False

    @property
    def network(self) -> str:
        return self.fake.network

    def times(self) -> list[float]:
        return [s.at for s in self.seen]

    def window(self, first: dt.datetime, last: dt.datetime, unit: dt.timedelta) -> bool:
        """Record the window; False (and count it) when longer than the network allows."""
        self.windows.append((first, last))
        if last + unit - first > dt.timedelta(days=self.fake.max_days):
            self.too_long += 1
            return False
        return True

    def authorised(self, request: web.Request, expected_header: str) -> bool:
        return not self.reject_auth and request.headers.get("Authorization") == expected_header


def load_json_records(network: str) -> list[Record]:
    folder = RECORDINGS / network
    (path,) = [p for p in folder.glob("*.json") if p.stem not in ("expected", "bad_credentials")]
    return json.loads(path.read_text("utf-8"), parse_float=Decimal)


def recording(network: str, name: str) -> bytes:
    return (RECORDINGS / network / name).read_bytes()


def refused(network: str, status: int = 401, name: str = "bad_credentials.json") -> web.Response:
    """The network's recorded answer to bad credentials."""
    kind = "application/json" if name.endswith(".json") else "text/html"
    return web.Response(status=status, body=recording(network, name), content_type=kind)


def utc(text: str, fmt: str) -> dt.datetime:
    return dt.datetime.strptime(text, fmt).replace(tzinfo=dt.UTC)


def iso(text: str) -> dt.datetime:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def shown(records: Sequence[Record]) -> list[Record]:
    """Records as the network answers them: without the fake's own `__` members (a change
    date the network filters on but does not send, e.g. Awin's amendment date)."""
    return [{k: v for k, v in r.items() if not k.startswith("__")} for r in records]


def dumps(data: Any) -> bytes:
    """JSON with Decimal numbers written as recorded ("85.20" stays 85.20 on the wire)."""
    text = json.dumps(data, default=lambda d: f"{_DECIMAL}{d}{_DECIMAL}")
    return re.sub(f'"{_DECIMAL}(.*?){_DECIMAL}"', r"\1", text).encode()


def json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=dumps(data), content_type="application/json")


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def setter(*path: str | int) -> Callable[[Record, object], None]:
    """Sets the member at `path` of a record."""

    def change(record: Record, value: object) -> None:
        *parents, last = path
        target: Any = record
        for step in parents:
            target = target[step]
        target[last] = value

    return change


def stamp(record: Record, found: tuple[str, str] | None, moment: dt.datetime) -> None:
    """Date a change in the member a change filter reads (`found`: member, format)."""
    if found is not None:
        member, fmt = found
        record[member] = moment.astimezone(dt.UTC).strftime(fmt)


def by_status(
    fake_dates: Mapping[str, tuple[str, str]], member: str, word: str
) -> Callable[[list[Record], Record, dt.datetime], None]:
    """A reversal the network reports as a status word on the same record."""

    def apply(records: list[Record], record: Record, now: dt.datetime) -> None:
        record[member] = word
        stamp(record, fake_dates.get("reversal"), now)

    return apply
