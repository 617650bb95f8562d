"""What every connector shares: the call context, the page it parses, the connector shape
and the pure helpers that turn one record into a Transaction (or a reasoned refusal)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from accounts.statusmap import MapStatus
from contract import commission
from contract.payment import NewPayment, NewPaymentLine
from sync.errors import CredentialsUnstorable, MalformedResponse, UnexpectedStatus
from sync.formats import BadRow
from sync.http import HttpRequest, HttpResponse
from sync.model import Refused, Transaction, Window
from sync.spec import ConnectorSpec, CurrencySource
from sync.values import (
    ValueProblem,
    decode_json,
    optional_text,
    parse_amount,
    parse_currency,
    parse_timestamp,
)

PAID = "paid"
Send = Callable[[HttpRequest], Awaitable[HttpResponse]]
# Seals and stores a connection's whole credential JSON (sync.runner provides it).
Persist = Callable[[Mapping[str, str]], Awaitable[None]]


class Credentials:
    """Decrypted credentials, in memory for one sync. Neither repr nor str shows a value."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, object]) -> None:
        self._values = {str(k): "" if v is None else str(v) for k, v in values.items()}

    def __getitem__(self, name: str) -> str:
        return self._values[name]

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._values.get(name, default)

    def missing(self, required: Iterable[str]) -> list[str]:
        """The required field names that are absent or blank."""
        return [name for name in required if not self._values.get(name, "").strip()]

    def secret_values(self) -> list[str]:
        """Every value, for the last-resort redaction of messages."""
        return [v for v in self._values.values() if v]

    def as_dict(self) -> dict[str, str]:
        return dict(self._values)

    def __repr__(self) -> str:
        return f"Credentials(<{len(self._values)} fields redacted>)"

    __str__ = __repr__


@dataclass(slots=True)
class CallContext:
    """Everything one connection's requests need, for the length of one sync."""

    spec: ConnectorSpec
    base_url: str
    credentials: Credentials = field(repr=False)
    # The connection's declared currency (for networks whose records carry none).
    currency: str | None
    page_size: int
    map_status: MapStatus = field(repr=False)
    # Filled by authenticate() (an OAuth token): repr never shows it.
    auth_headers: dict[str, str] = field(default_factory=dict, repr=False)
    # What authenticate() learned that the requests need besides headers (TradeTracker's
    # affiliate sites, each read in turn).
    session: dict[str, Any] = field(default_factory=dict, repr=False)
    # map_status's answers so far: a network uses a handful of words, and folding one is
    # a large share of a record's parse. MapStatus is a table lookup, the same all sync.
    statuses: dict[str | None, str] = field(default_factory=dict, repr=False)
    # Stores refreshed credentials, sealed, before they are used (the runner's; None where
    # nothing can be stored, and a refresh then fails the run).
    persist: Persist | None = field(default=None, repr=False)
    # The run's clock (a token's lifetime is read against it).
    now: Callable[[], dt.datetime] = field(default=lambda: dt.datetime.now(dt.UTC), repr=False)

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    async def keep_credentials(self, changes: Mapping[str, str]) -> None:
        """Store the credentials with `changes` (a rotated refresh token, a token and its
        expiry) before anything uses them: sealed, in one atomic swap of the stored ones,
        so a run that dies after a refresh leaves the account with the credentials the
        network now honours. Only then do they become this context's credentials.
        CredentialsChanged when the stored ones were replaced meanwhile."""
        values = {**self.credentials.as_dict(), **{str(k): str(v) for k, v in changes.items()}}
        if self.persist is None:
            raise CredentialsUnstorable(
                f"{self.spec.network}: refreshed credentials cannot be stored by this run"
            )
        await self.persist(values)
        self.credentials = Credentials(values)

    def status(self, raw: str | None) -> str:
        """map_status(network, raw), asked once per word and sync."""
        found = self.statuses.get(raw)
        if found is None:
            found = self.statuses[raw] = self.map_status(self.spec.network, raw)
        return found


@dataclass(frozen=True, slots=True)
class Page:
    """One answer, parsed: its transactions, the records refused and why, and what it says
    of the pages after it, as the spec's pagination kind reads it (sync.paginators)."""

    transactions: list[Transaction]
    refused: list[Refused]
    # PAGE, CURSOR, WATERMARK: the next page's state the answer names (None: the last page).
    next: Any = None
    # OFFSET: the records in this answer, and in the whole window.
    records: int = 0
    total: int | None = None


class Connector:
    """A network's connector: its spec, its requests, and pure parsing of its answers.

    Subclasses set `spec` (its `pagination` picks how the pages are walked) and implement
    `request` and `parse`; those with a token exchange
    override `authenticate` and set `reauthenticates` (an expired token is then renewed
    once instead of failing the sync as auth_failed)."""

    spec: ClassVar[ConnectorSpec]
    reauthenticates: ClassVar[bool] = False

    async def authenticate(self, ctx: CallContext, send: Send) -> None:
        """Prepare ctx.auth_headers (default: nothing to exchange)."""

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        """The request for `window` at page `state` (sync.paginators: None, or an offset
        from 0, or the state the previous answer named)."""
        raise NotImplementedError

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        """Pure: an answer to the request for (window, state) -> Page, or a SyncError."""
        raise NotImplementedError

    # A connector whose spec declares `payments` (sync.spec.PaymentsStream) implements these.

    def payments_request(self, ctx: CallContext, offset: int) -> HttpRequest:
        """The request for the page of payments at `offset` (newest first)."""
        raise NotImplementedError

    def parse_payments(self, ctx: CallContext, response: HttpResponse) -> PaymentPage:
        """Pure: an answer to payments_request -> its payments (lines not yet read)."""
        raise NotImplementedError

    def lines_request(self, ctx: CallContext, payment: NewPayment, offset: int) -> HttpRequest:
        """The request for the page of `payment`'s lines at `offset`."""
        raise NotImplementedError

    def parse_lines(
        self, ctx: CallContext, payment: NewPayment, response: HttpResponse
    ) -> LinePage:
        """Pure: an answer to lines_request -> its lines, in `payment`'s currency unless
        a line names its own."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class PaymentPage:
    """One page of a network's payments: those read, those refused, and how many records
    the page held (a short page is the last)."""

    payments: list[NewPayment]
    refused: list[Refused]
    records: int


@dataclass(frozen=True, slots=True)
class LinePage:
    """One page of a payment's lines, and how many records it held."""

    lines: list[NewPaymentLine]
    records: int


# --- Helpers for parsing --------------------------------------------------------------


def expect_ok(network: str, response: HttpResponse) -> None:
    """Raise for a non-2xx answer the HTTP layer passed on (auth and retries are done)."""
    if not 200 <= response.status < 300:
        raise UnexpectedStatus(f"{network}: HTTP {response.status}")


def json_body(network: str, response: HttpResponse) -> Any:
    """The decoded JSON body, or MalformedResponse (truncated, not JSON)."""
    try:
        return decode_json(response.body)
    except (ValueError, RecursionError, MemoryError):  # UnicodeDecodeError is a ValueError
        # RecursionError: nesting deeper than the decoder goes (200,000 `[`).
        pass
    # Raised outside the handler: the decoder's error holds the whole body.
    raise MalformedResponse(f"{network}: the answer is not valid JSON")


def member(data: Any, *path: str | int) -> Any:
    """data[path[0]][path[1]]..., None when any step is absent."""
    for step in path:
        if isinstance(data, dict):  # keys are text: an index step finds None
            data = data.get(step)
        elif isinstance(step, int) and isinstance(data, list) and 0 <= step < len(data):
            data = data[step]
        else:
            return None
    return data


def resolve_currency(ctx: CallContext, record_currency: object) -> str:
    """The record's currency, or the connection's where the spec allows: ValueProblem when
    neither is known (the record is refused, never given a guessed currency)."""
    source = ctx.spec.currency_source
    from_record = (
        parse_currency(record_currency) if source is not CurrencySource.CONNECTION else None
    )
    if from_record:
        return from_record
    if source is not CurrencySource.RECORD and ctx.currency:
        return ctx.currency
    if source is CurrencySource.CONNECTION:
        raise ValueProblem(
            "currency: the connection declares none and the network sends none",
            "currency_missing",
        )
    raise ValueProblem("currency: missing", "currency_missing")


@dataclass(slots=True)
class Fields:
    """One record's fields, as the connector read them from the wire."""

    external_id: object
    raw_status: object
    commission: object
    currency: object
    transacted_at: object
    sale: object = None
    clicked_at: object = None
    program_id: object = None
    program_name: object = None
    sub_ids: Mapping[str, object] = field(default_factory=dict)
    # The commission fields without a member above (contract.commission.FIELDS whose `wire`
    # is None), by their NewCommission name; each read as its kind says.
    more: Mapping[str, object] = field(default_factory=dict)
    # Explicit payment evidence: the status is then `paid`, whatever the word.
    paid_reason: str | None = None
    status_reason: str | None = None
    original_id: object = None
    # The status of a record whose network sends no status word at all (Rakuten's Events):
    # used only when no word came, and, being no word of the network's, it never replaces
    # a stored status (a new row takes it; a stored one keeps its own).
    implied_status: str | None = None


def transaction(ctx: CallContext, f: Fields) -> Transaction:
    """A Transaction from a record's fields, or ValueProblem naming the field at fault."""
    spec = ctx.spec
    external_id = optional_text(f.external_id)
    if external_id is None:
        raise ValueProblem("id: missing")
    raw = optional_text(f.raw_status)
    sub_ids = {k: t for k, v in f.sub_ids.items() if (t := optional_text(v)) is not None}
    program_name = optional_text(f.program_name)
    program_id = optional_text(f.program_id)
    sub_id = sub_ids.get(spec.sub_id_field)
    clicked = None if f.clicked_at in (None, "") else f.clicked_at
    # A member the record lacks (or sends null) keeps the stored value: see `stated`.
    stated = None
    if (
        raw is None
        or f.sale is None
        or clicked is None
        or program_name is None
        or program_id is None
        or sub_id is None
    ):
        stated = _stated(
            f.paid_reason is not None,
            raw,
            f.sale,
            clicked,
            program_name,
            program_id,
            sub_id,
        )
    more: dict[str, str | None] = {}
    if _MORE or f.more:
        # Fields.more's fields are stated as the others are: when the record has them.
        more = _more(spec, f.more)
        given = {name for name, value in more.items() if value is not None}
        if stated is not None:
            stated |= given
        elif given != _MORE.keys():
            stated = _ALL_STATED - (_MORE.keys() - given)
    return Transaction(
        **more,
        external_id=external_id,
        status=PAID
        if f.paid_reason
        else (f.implied_status if raw is None and f.implied_status else ctx.status(raw)),
        raw_status=raw,
        commission_amount=parse_amount(f.commission, spec.amount("commission"), "commission"),
        currency=resolve_currency(ctx, f.currency),
        transacted_at=parse_timestamp(f.transacted_at, "transaction date", spec.time("transacted")),
        program_name=program_name,
        program_external_id=program_id,
        sale_amount=None if f.sale is None else parse_amount(f.sale, spec.amount("sale"), "sale"),
        clicked_at=None
        if clicked is None
        else parse_timestamp(clicked, "click date", spec.time("clicked")),
        sub_id=sub_id,
        stated=stated,
        network=spec.network,
        sub_ids=sub_ids,
        status_reason=f.paid_reason or f.status_reason,
        original_id=optional_text(f.original_id),
    )


_ALWAYS_STATED = frozenset({"commission_amount", "currency", "transacted_at"})
_ALL_STATED = frozenset(commission.NAMES)
# The fields a connector gives in Fields.more.
_MORE = {f.name: f for f in commission.FIELDS if f.wire is None}


def _more(spec: ConnectorSpec, values: Mapping[str, object]) -> dict[str, str | None]:
    """The fields of Fields.more, each parsed as its kind says (None: not stated)."""
    out: dict[str, str | None] = {}
    for name, value in values.items():
        f = _MORE.get(name)
        if f is None:
            raise ValueError(f"Fields.more: {name!r} is no commission field read from it")
        if value is None or value == "":
            out[name] = None
        elif f.kind == "amount":
            out[name] = parse_amount(value, spec.amount(name), f.member)
        elif f.kind == "instant":
            out[name] = parse_timestamp(value, f.member, spec.time(name))
        else:
            out[name] = optional_text(value)
    return out


def _stated(
    paid: bool,
    raw: object,
    sale: object,
    clicked: object,
    program_name: object,
    program_id: object,
    sub_id: object,
) -> frozenset[str]:
    """The fields a record states: a field it lacks is left as stored, never erased (a
    network's answer that omits a member, or sends it null, says nothing of it). Without
    a status word the status is stated only by payment evidence, and the stored word stays."""
    given = {
        "status": paid or raw is not None,
        "raw_status": raw is not None,
        "sale_amount": sale is not None,
        "clicked_at": clicked is not None,
        "program_name": program_name is not None,
        "program_external_id": program_id is not None,
        "sub_id": sub_id is not None,
    }
    return _ALWAYS_STATED | {name for name, present in given.items() if present}


def collect(
    ctx: CallContext, records: Iterable[Any], read: Callable[[Any], Fields | None]
) -> tuple[list[Transaction], list[Refused]]:
    """Every record turned into a Transaction, or into a Refused with its reason; a record
    `read` answers None for is no commission (a network's non-commissionable event)."""
    done: list[Transaction] = []
    refused: list[Refused] = []
    for record in records:
        if isinstance(record, BadRow):
            refused.append(Refused(None, "record_malformed", record.reason))
            continue
        if not isinstance(record, dict):
            refused.append(Refused(None, "record_malformed", "a record is not an object"))
            continue
        fields: Fields | None = None
        try:
            fields = read(record)
            if fields is not None:
                done.append(transaction(ctx, fields))
        except (KeyError, TypeError, AttributeError, IndexError):
            external_id = optional_text(fields.external_id) if fields is not None else None
            refused.append(Refused(external_id, "record_malformed", "a record lacks its shape"))
        except ValueProblem as problem:
            external_id = optional_text(fields.external_id) if fields is not None else None
            refused.append(Refused(external_id, problem.code, str(problem)))
        except (ArithmeticError, ValueError, RecursionError) as exc:
            # A value no parser above expected (a number past every range): this record
            # is refused, the others stand. The text may quote the value: its type only.
            external_id = optional_text(fields.external_id) if fields is not None else None
            refused.append(
                Refused(external_id, "record_invalid", f"unreadable value ({type(exc).__name__})")
            )
    return done, refused


def iso_z(moment: dt.datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ`, the form most networks take."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def last_second(window: Window) -> dt.datetime:
    """The window's last whole second, for APIs whose end bound is inclusive."""
    return window.end - dt.timedelta(seconds=1)


def last_day(window: Window) -> dt.date:
    """The window's last day, for date-only APIs whose end date is inclusive."""
    return (window.end - dt.timedelta(microseconds=1)).date()


# --- Declared JSON networks -----------------------------------------------------------

# Where a value sits in an answer: member names and list indexes, as `member` follows them.
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Where a network's record keeps each of Fields' members: the whole parse of a plain
    JSON network. A path that finds nothing reads as None (the member is not stated)."""

    external_id: Path
    raw_status: Path | None
    commission: Path
    currency: Path | None
    transacted_at: Path
    sale: Path | None = None
    clicked_at: Path | None = None
    program_id: Path | None = None
    program_name: Path | None = None
    # The sub-id's name in Transaction.sub_ids -> where the record keeps it.
    sub_ids: Mapping[str, Path] = field(default_factory=dict)
    # A commission field of Fields.more (by its NewCommission name) -> where the record
    # keeps it.
    more: Mapping[str, Path] = field(default_factory=dict)

    def read(self, record: Any) -> Fields:
        """The record's Fields, every member taken from its declared path."""

        def at(path: Path | None) -> Any:
            return None if path is None else member(record, *path)

        return Fields(
            external_id=at(self.external_id),
            raw_status=at(self.raw_status),
            commission=at(self.commission),
            currency=at(self.currency),
            transacted_at=at(self.transacted_at),
            sale=at(self.sale),
            clicked_at=at(self.clicked_at),
            program_id=at(self.program_id),
            program_name=at(self.program_name),
            sub_ids={name: at(path) for name, path in self.sub_ids.items()},
            more={name: at(path) for name, path in self.more.items()},
        )


class JsonConnector(Connector):
    """A network answering JSON: each answer's records sit at `records` (an empty path: the
    answer is the list) and each is read by `fields`. A subclass declares those and writes
    `request`; it overrides `read` only for what a map cannot say (payment evidence, a
    status reason), `following` for PAGE and CURSOR pages, and `check` for error answers
    of its own."""

    records: ClassVar[Path] = ()
    fields: ClassVar[FieldMap]
    # OFFSET: where the answer states how many records the whole window holds.
    total: ClassVar[Path | None] = None
    # Statuses that answer "no records" without a body (FlexOffers' 204).
    empty_statuses: ClassVar[frozenset[int]] = frozenset()

    def read(self, record: Any) -> Fields | None:
        """One record's Fields (default: as `fields` declares them); None for a record
        that is no commission."""
        return self.fields.read(record)

    def check(self, ctx: CallContext, response: HttpResponse) -> None:
        """Raise for an answer that is an error (default: any non-2xx)."""
        expect_ok(ctx.spec.network, response)

    def empty(self, body: Any) -> bool:
        """Whether an answer without its records list means "no records" (Adtraction's
        message); otherwise such an answer is malformed."""
        return False

    def following(self, ctx: CallContext, state: Any, body: Any, records: list[Any]) -> Any:
        """PAGE and CURSOR: the next page's state this answer names (None: the last)."""
        return None

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        network = ctx.spec.network
        self.check(ctx, response)
        if response.status in self.empty_statuses:
            return Page([], [], records=0, total=0)
        body = json_body(network, response)
        found = member(body, *self.records) if self.records else body
        if not isinstance(found, list):
            if not self.empty(body):
                where = ".".join(map(str, self.records)) or "a list"
                raise MalformedResponse(f"{network}: the answer lacks its records ({where})")
            found = []
        total = None
        if self.total is not None:
            total = member(body, *self.total)
            if type(total) is not int or total < 0:
                raise MalformedResponse(f"{network}: the answer's record count is not a count")
        done, refused = collect(ctx, found, self.read)
        following = self.following(ctx, state, body, found) if found else None
        return Page(done, refused, following, records=len(found), total=total)


def next_page_when_full(ctx: CallContext, state: Any, records: list[Any]) -> int | None:
    """Page numbers from 1, for a network whose last page is the first one not full."""
    return (state or 1) + 1 if len(records) >= ctx.page_size else None


def next_page_until(ctx: CallContext, current: Any, last: Any) -> int | None:
    """Page numbers, for a network naming its current and last page; MalformedResponse when
    they are not page numbers."""
    if type(current) is not int or type(last) is not int or current < 0:
        raise MalformedResponse(f"{ctx.spec.network}: the answer's page numbers are not numbers")
    return current + 1 if current < last else None


def in_zone(value: object, zone: dt.tzinfo) -> object:
    """A moment a network writes without an offset, in its zone (`zone`), as ISO 8601 text
    with the offset; a value with one, or not a date, as it came (the date's own parser then
    reads it, or refuses it)."""
    if not isinstance(value, str):
        return value
    try:
        moment = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return value
    if moment.tzinfo is not None:
        return value
    return moment.replace(tzinfo=zone).isoformat()
