"""One connection's sync: plan the windows, fetch each, commit each with the new position,
and record an honest outcome.

`sync_connection` is what the worker runs for every due connection and what the admin
command calls on demand, with a `Syncer`: what every sync of the process shares.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import functools
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiohttp

from accounts.statusmap import MapStatus
from contract.commission import latest_instant, problem
from contract.payment import NewPayment, NewPaymentLine
from contract.payment import problem as payment_problem
from store.base import SYNC_REASON_MAX, StoreError
from sync.clock import Clock, SystemClock
from sync.connectors import CONNECTORS
from sync.connectors.base import CallContext, Connector, Credentials, Send
from sync.errors import (
    AuthRejected,
    CredentialsChanged,
    CredentialsIncomplete,
    CredentialsUnreadable,
    CredentialsUnstorable,
    CurrencyMissing,
    MalformedResponse,
    PaymentsForbidden,
    RateLimitReached,
    RunDeadline,
    SyncError,
    UnsupportedNetwork,
    WindowTooLarge,
    redact,
)
from sync.events import SyncEvents, Unobserved
from sync.http import HttpRequest, HttpResponse, NetworkClient, RetryPolicy
from sync.lease import Lease
from sync.logs import CURRENT_SECRETS, logger
from sync.model import Counts, Outcome, Position, Reason, Refused, SyncReport, Transaction, Window
from sync.paginators import PageLimits, pages
from sync.planner import PlannedWindow, plan, split
from sync.ports import Connection, Decrypt, Seal, SyncStore
from sync.ratelimit import Limiters, credential_key
from sync.spec import ConnectorSpec, CurrencySource, Rate

log = logger("sync.runner")

_T = TypeVar("_T")

REFUSALS_KEPT = 20  # examples of refused records a run keeps for its report
# The latest a run a limit cut short is planned to resume: the longest period a network
# documents is a day; a network's Retry-After of weeks is not taken at its word (a run
# after a day asks again, and waits again if it must).
RESUME_AT_MOST = dt.timedelta(days=1)


@dataclass(frozen=True, slots=True)
class SyncSettings:
    """Overrides and limits of a deployment (or a test). Published rates stay declared in
    each spec; `rates` only ever replaces them on purpose (a test, a negotiated quota)."""

    base_urls: Mapping[str, str] = field(default_factory=dict)
    rates: Mapping[str, Rate] = field(default_factory=dict)
    page_sizes: Mapping[str, int] = field(default_factory=dict)
    timeouts: Mapping[str, float] = field(default_factory=dict)
    # How far back a connection's first sync starts, unless the connection says.
    backfill: dt.timedelta = dt.timedelta(days=90)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    # A window that needs more pages than this fails (`page_limit`): none of it is kept.
    max_pages: int = 1_000
    # The largest answer read, per network (bytes); the spec's cap otherwise.
    max_response_bytes: Mapping[str, int] = field(default_factory=dict)

    def spec_for(self, spec: ConnectorSpec) -> ConnectorSpec:
        """The spec with this deployment's overrides applied."""
        changes: dict[str, Any] = {}
        if spec.network in self.base_urls:
            changes["base_url"] = self.base_urls[spec.network]
        if spec.network in self.rates:
            changes["rate"] = self.rates[spec.network]
        if spec.network in self.page_sizes:
            changes["page_size"] = self.page_sizes[spec.network]
        if spec.network in self.timeouts:
            changes["timeout"] = self.timeouts[spec.network]
        if spec.network in self.max_response_bytes:
            changes["max_response_bytes"] = self.max_response_bytes[spec.network]
        return dataclasses.replace(spec, **changes) if changes else spec


@dataclass
class _Run:
    """The mutable state of one run."""

    counts: Counts = field(default_factory=Counts)
    failures: list[SyncError] = field(default_factory=list)
    # The first records refused (REFUSALS_KEPT at most: a run may refuse millions) and
    # the codes of all of them; counts.refused counts them all.
    refused: list[Refused] = field(default_factory=list)
    refusal_codes: set[str] = field(default_factory=set)
    position: Position | None = None
    forward_blocked: bool = False
    stopped_early: bool = False
    # A documented limit stopped the run: why, and in how many seconds it opens again.
    limited: RateLimitReached | None = None
    # The credentials' values, redacted from the outcome's reason and the log lines.
    secrets: list[str] = field(default_factory=list)
    # The stored ciphertext the run's credentials came from (replaced on a refresh).
    sealed: bytes = b""


@dataclass(frozen=True, slots=True)
class Syncer:
    """What every sync of a process shares: the store, how stored credentials open, the
    status table, one HTTP client (its clock is the runs' clock), one rate limiter per
    credential, the deployment's settings and the connectors by network."""

    store: SyncStore
    decrypt: Decrypt
    map_status: MapStatus
    client: NetworkClient
    limiters: Limiters
    settings: SyncSettings = field(default_factory=SyncSettings)
    connectors: Mapping[str, Connector] = field(default_factory=lambda: CONNECTORS)
    # Seals refreshed credentials (None: a network that rotates them fails its run
    # before using the new ones).
    seal: Seal | None = None


@asynccontextmanager
async def syncing(
    store: SyncStore,
    decrypt: Decrypt,
    map_status: MapStatus,
    settings: SyncSettings | None = None,
    *,
    clock: Clock | None = None,
    events: SyncEvents | None = None,
    connectors: Mapping[str, Connector] = CONNECTORS,
    seal: Seal | None = None,
) -> AsyncIterator[Syncer]:
    """A Syncer over an HTTP session of its own, closed on exit."""
    clock = clock or SystemClock()
    settings = settings or SyncSettings()
    # No cookie jar: a session cookie one account's network set must never be sent for
    # another account; a connector that needs one sends it itself.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session:
        client = NetworkClient(session, clock, settings.retry, events=events or Unobserved())
        yield Syncer(
            store, decrypt, map_status, client, Limiters(clock), settings, connectors, seal
        )


async def sync_connection(
    syncer: Syncer,
    connection: Connection,
    *,
    deadline: float | None = None,
    lease: Lease | None = None,
) -> SyncReport:
    """Sync one connection now and record its outcome through the store.

    `deadline` (on the client's `clock.monotonic()`): no window or page starts after it,
    no request or wait runs past it; the run then ends `partial` (`deadline`), the window
    under way uncommitted. `lease`: the worker's lease, renewed as the run goes (no wait
    longer than a third of it); LeaseLost, raised, when another worker took it. A
    documented limit that leaves no request within the longest wait ends the run
    `partial` (`rate_limited`) with `resume_at`, the moment it opens again.
    Raises only what the store raises (and cancellation, LeaseLost); every failure of
    the network, or of reading what it sent, becomes the recorded outcome.
    """
    clock = syncer.client.clock
    started = clock.now()
    run = _Run()
    outcome: Outcome
    reason: Reason | None
    # Every log line of this run is redacted with its credentials (sync.logs).
    redacting = CURRENT_SECRETS.set(run.secrets)
    try:
        await _sync(syncer, connection, run, deadline, lease)
        outcome, reason = _verdict(run)
    except RateLimitReached as exc:
        run.stopped_early, run.limited = True, exc
        outcome, reason = _verdict(run)
    except RunDeadline:
        run.stopped_early = True
        outcome, reason = _verdict(run)
    except (AuthRejected, CredentialsIncomplete) as exc:
        outcome, reason = Outcome.AUTH_FAILED, Reason(exc.code, exc.message)
    except SyncError as exc:
        outcome, reason = Outcome.ERROR, Reason(exc.code, exc.message)
    finally:
        CURRENT_SECRETS.reset(redacting)
    if reason is not None:
        reason = Reason(reason.code, shown(redact(reason.message, run.secrets)))
    finished = clock.now()
    resume_at = None
    if run.limited is not None:
        resume_in = dt.timedelta(seconds=max(1.0, run.limited.resume_in))
        resume_at = finished + min(resume_in, RESUME_AT_MOST)
    report = SyncReport(outcome, reason, run.counts, started, finished, run.position, resume_at)
    await syncer.store.record_outcome(connection, report)
    _log_report(connection, report)
    return report


async def _sync(
    syncer: Syncer,
    connection: Connection,
    run: _Run,
    deadline: float | None,
    lease: Lease | None,
) -> None:
    """Plan the connection's windows from its position, then fetch and commit each."""
    connector, ctx = await _open(syncer, connection, run)
    spec = ctx.spec
    clock = syncer.client.clock
    run.position = await syncer.store.load_position(connection)
    windows = plan(
        run.position,
        clock.now(),
        max_window=spec.max_window,
        granularity=spec.granularity,
        rescan=spec.rescan,
        horizon=spec.horizon,
        backfill=connection.backfill or syncer.settings.backfill,
        changes=[feed.name for feed in spec.change_feeds],
        change_lookback=spec.change_lookback,
        ahead={feed.name: feed.ahead for feed in spec.change_feeds if feed.ahead},
    )
    run.counts.windows_planned = len(windows)
    send = _sender(syncer, connection, ctx, deadline, run, lease)
    paging = PageLimits(syncer.settings.max_pages, clock, deadline)
    limits = _Limits(paging, latest_instant(clock.now()), lease)
    await _authenticate(connector, ctx, send)
    await _windows(syncer.store, connection, connector, ctx, send, windows, run, limits)
    # Payments after the transactions, unless the run stopped or the network failed every
    # window (one more request would only add to its trouble).
    failing = bool(run.failures) and run.counts.windows_ok == 0
    if spec.payments is not None and not run.stopped_early and not failing:
        await _payments(syncer.store, connection, connector, ctx, send, run, limits)


async def _open(syncer: Syncer, connection: Connection, run: _Run) -> tuple[Connector, CallContext]:
    """The connection's connector, and its call context with the credentials opened."""
    connector = syncer.connectors.get(connection.network)
    if connector is None:
        raise UnsupportedNetwork(f"no connector for network {connection.network!r}")
    spec = syncer.settings.spec_for(connector.spec)
    run.sealed = await syncer.store.load_credentials(connection)
    creds = open_sealed(run.sealed, connection, syncer.decrypt, spec)
    run.secrets.extend(creds.secret_values())
    if spec.currency_source is CurrencySource.CONNECTION and not connection.currency:
        raise CurrencyMissing(
            f"{spec.network} records carry no currency: the connection must declare its currency"
        )
    ctx = CallContext(
        spec=spec,
        base_url=spec.base_url,
        credentials=creds,
        currency=connection.currency,
        page_size=spec.page_size or 0,
        map_status=syncer.map_status,
        persist=_persister(syncer, connection, run),
        now=syncer.client.clock.now,
    )
    return connector, ctx


def _persister(
    syncer: Syncer, connection: Connection, run: _Run
) -> Callable[[Mapping[str, str]], Awaitable[None]]:
    """How this run stores credentials a network rotated: sealed, swapped for the ones it
    read in one atomic step, before the connector may use them."""

    async def persist(values: Mapping[str, str]) -> None:
        # The new values are secrets from now on, whatever happens next.
        run.secrets.extend(v for v in values.values() if v and v not in run.secrets)
        if syncer.seal is None:
            raise CredentialsUnstorable(
                f"{connection.network}: this process cannot store refreshed credentials"
            )
        sealed = syncer.seal(connection, values)
        if not await syncer.store.replace_credentials(connection, run.sealed, sealed):
            raise CredentialsChanged(
                f"{connection.network}: the credentials were replaced while this run "
                "refreshed them; the next run uses the stored ones"
            )
        run.sealed = sealed
        log.info("%s: refreshed credentials stored", connection)

    return persist


def _sender(
    syncer: Syncer,
    connection: Connection,
    ctx: CallContext,
    deadline: float | None,
    run: _Run,
    lease: Lease | None,
) -> Send:
    """How this run sends a request: through the credential's rate limiter (every
    documented rate, counted in the store over every worker's requests, its concurrency),
    within the network's time limit and answer size,
    never past the deadline, under a renewed lease, counted in its report."""
    spec = ctx.spec
    limiter = syncer.limiters.get(
        credential_key(spec.network, ctx.credentials.as_dict()),
        spec.rate,
        spec.more_rates,
        spec.concurrency,
    )
    max_wait = None if lease is None else lease.longest_wait
    rates = limiter.rates

    async def reserve() -> float:
        # The documented rates over the requests of every worker (the store's count).
        return await syncer.store.reserve_call(connection, rates)

    async def send(request: HttpRequest) -> HttpResponse:
        if lease is not None:
            await lease.keep()
        return await syncer.client.send(
            spec.network,
            request,
            limiter,
            spec.timeout,
            max_bytes=spec.response_cap,
            cutoff=deadline,
            attempted=counted,
            max_wait=max_wait,
            reserve=reserve,
        )

    def counted() -> None:
        run.counts.requests += 1

    return send


def _log_report(connection: Connection, report: SyncReport) -> None:
    counts, reason = report.counts, report.reason
    log.info(
        "sync %s: %s%s (windows %d/%d, rows +%d ~%d =%d, refused %d, requests %d)",
        connection,
        report.outcome.value,
        f" [{reason.code}] {reason.message}" if reason else "",
        counts.windows_ok,
        counts.windows_planned,
        counts.inserted,
        counts.updated,
        counts.unchanged,
        counts.refused,
        counts.requests,
    )


async def open_credentials(
    store: SyncStore, connection: Connection, decrypt: Decrypt, spec: ConnectorSpec
) -> Credentials:
    """The connection's credentials, decrypted in memory and checked against the spec."""
    return open_sealed(await store.load_credentials(connection), connection, decrypt, spec)


def open_sealed(
    blob: bytes, connection: Connection, decrypt: Decrypt, spec: ConnectorSpec
) -> Credentials:
    """Stored credentials, decrypted in memory and checked against the spec."""
    failed: str | None = None
    try:
        values = decrypt(connection, blob)
    except Exception as exc:
        # The exception is not trusted to be free of secrets: keep its type only, and
        # raise outside the handler so it is not even kept as the context.
        failed = type(exc).__name__
    if failed is not None:
        raise CredentialsUnreadable(f"the stored credentials could not be opened ({failed})")
    if not isinstance(values, Mapping):
        raise CredentialsUnreadable("the stored credentials are not a JSON object")
    creds = Credentials(values)
    missing = creds.missing(spec.required_credentials)
    if missing:
        raise CredentialsIncomplete(
            f"{spec.network} credentials lack: {', '.join(missing)} (reconnect the network)"
        )
    return creds


@dataclass(frozen=True, slots=True)
class _Limits:
    """What bounds one run's fetching: its pages (per window, and the time limit) and the
    latest instant a record may carry (contract.commission)."""

    pages: PageLimits
    latest: str
    lease: Lease | None = None


async def _authenticate(connector: Connector, ctx: CallContext, send: Send) -> None:
    """connector.authenticate, with an answer it cannot read reported as malformed."""
    try:
        await connector.authenticate(ctx, send)
    except (SyncError, StoreError):
        raise
    except Exception as exc:
        failed = type(exc).__name__
    else:
        return
    # Raised outside the handler: the exception's text may quote the answer.
    raise MalformedResponse(f"{ctx.spec.network}: unreadable token answer ({failed})")


async def _windows(
    store: SyncStore,
    connection: Connection,
    connector: Connector,
    ctx: CallContext,
    send: Send,
    planned: Sequence[PlannedWindow],
    run: _Run,
    limits: _Limits,
) -> None:
    """Fetch and commit each window in order; splits capped windows; stops moving the
    position at the first forward window that fails.

    A window's write overlaps the next window's fetch: the store works in its own thread
    (SQLite) or server while this one waits on the network and parses. Writes stay one at
    a time and in order, and every write is awaited before this returns or raises, so a
    store failure still ends the run, and what was committed is what the counts say."""
    queue = deque(planned)
    writing: asyncio.Task[None] | None = None
    try:
        while queue:
            item = queue.popleft()
            if item.advances and run.forward_blocked:
                continue
            if limits.pages.past_deadline():
                run.stopped_early = True
                return
            failed: str | None = None
            try:
                rows, refused = await _fetch_renewing(connector, ctx, send, item.window, limits)
            except RateLimitReached as exc:
                run.stopped_early, run.limited = True, exc
                return
            except RunDeadline:
                run.stopped_early = True
                return
            except WindowTooLarge as exc:
                halves = split(item.window, ctx.spec.granularity)
                if halves is None:
                    _failed(run, item, exc)
                    continue
                run.counts.windows_split += 1
                queue.extendleft(PlannedWindow(h, item.advances) for h in reversed(halves))
                continue
            except (AuthRejected, StoreError):
                raise  # the store's failure is this deployment's, not the window's
            except SyncError as exc:
                _failed(run, item, exc)
                continue
            except Exception as exc:
                # Anything else while fetching, parsing or mapping an answer (a value past
                # every range, nesting past the decoder's depth, a connector's KeyError):
                # the answer is unreadable, the window fails, the run goes on. Only the
                # type is kept, outside the handler: the text may quote the answer.
                failed = type(exc).__name__
            if failed is not None:
                _failed(
                    run,
                    item,
                    MalformedResponse(f"{ctx.spec.network}: unreadable answer ({failed})"),
                )
                continue
            if writing is not None:
                previous, writing = writing, None
                await previous
            if limits.lease is not None:
                await limits.lease.keep()
            writing = asyncio.ensure_future(_commit(store, connection, item, rows, refused, run))
    finally:
        # The write under way ends before the run does (its failure raised in place of a
        # later fetch's: it happened first).
        if writing is not None:
            await writing


async def _commit(
    store: SyncStore,
    connection: Connection,
    item: PlannedWindow,
    rows: list[Transaction],
    refused: list[Refused],
    run: _Run,
) -> None:
    """Write one fetched window (with the new position for a forward one) and count it."""
    position = Position(item.window.end) if item.advances else None
    result = await store.write_window(connection, item.window, rows, position)
    if position is not None:
        run.position = position
    run.counts.windows_ok += 1
    run.counts.fetched += len(rows) + len(refused)
    run.counts.inserted += result.inserted
    run.counts.updated += result.updated
    run.counts.unchanged += result.unchanged
    run.counts.refused += len(refused)
    run.refused.extend(refused[: max(0, REFUSALS_KEPT - len(run.refused))])
    run.refusal_codes.update(r.code for r in refused)


async def _payments(
    store: SyncStore,
    connection: Connection,
    connector: Connector,
    ctx: CallContext,
    send: Send,
    run: _Run,
    limits: _Limits,
) -> None:
    """Read the network's payments newest first, and store each one not stored yet with
    its lines, until a page holds only stored ones (a payment does not change once made)
    or the list ends. A failure is the run's (partial), never the commissions'."""
    stream = ctx.spec.payments
    assert stream is not None
    offset = 0
    failed: str | None = None
    try:
        while offset <= stream.max_offset:
            if limits.pages.past_deadline():
                run.stopped_early = True
                return
            page = await _renewing_call(
                connector,
                ctx,
                send,
                functools.partial(connector.payments_request, ctx, offset),
                lambda response: connector.parse_payments(ctx, response),
            )
            _refused(run, page.refused)
            stored = await store.stored_payments(connection, [p.external_id for p in page.payments])
            for payment in page.payments:
                if payment.external_id in stored:
                    continue
                lines = await _payment_lines(connector, ctx, send, payment, stream.page_size)
                if limits.lease is not None:
                    await limits.lease.keep()
                invalid = payment_problem(
                    dataclasses.replace(payment, lines=tuple(lines)), limits.latest
                )
                if invalid is not None:
                    _refused(
                        run, [Refused(payment.external_id, "record_invalid", ": ".join(invalid))]
                    )
                    continue
                if await store.write_payment(
                    connection, dataclasses.replace(payment, lines=tuple(lines))
                ):
                    run.counts.payments += 1
            if page.payments and len(stored) == len(page.payments):
                return
            if not stream.paged or page.records < stream.page_size:
                return
            offset += page.records
    except (RateLimitReached, RunDeadline):
        raise
    except AuthRejected:
        # The same credentials were just taken for the transactions: these are refused
        # the payments only (a role the token lacks), not rejected.
        forbidden = PaymentsForbidden(
            f"{ctx.spec.network}: the credentials may not read payments; commissions are "
            "synced (a role the token lacks)"
        )
        run.failures.append(forbidden)
        log.warning("payments failed: [%s] %s", forbidden.code, forbidden.message)
        return
    except SyncError as exc:
        run.failures.append(exc)
        log.warning("payments failed: [%s] %s", exc.code, exc.message)
        return
    except Exception as exc:
        # Only the type: the text may quote the answer (as for a window).
        failed = type(exc).__name__
    if failed is not None:
        unreadable = MalformedResponse(f"{ctx.spec.network}: unreadable payments answer ({failed})")
        run.failures.append(unreadable)
        log.warning("payments failed: [%s] %s", unreadable.code, unreadable.message)


async def _payment_lines(
    connector: Connector, ctx: CallContext, send: Send, payment: NewPayment, page_size: int
) -> list[NewPaymentLine]:
    """Every line of `payment`: its breakdown's pages, until a short one."""
    stream = ctx.spec.payments
    assert stream is not None
    if stream.lines_endpoint is None:
        return list(payment.lines)
    lines: list[NewPaymentLine] = []
    offset = 0
    while offset <= stream.max_offset:
        page = await _renewing_call(
            connector,
            ctx,
            send,
            functools.partial(connector.lines_request, ctx, payment, offset),
            lambda response: connector.parse_lines(ctx, payment, response),
        )
        lines += page.lines
        if not stream.paged or page.records < page_size:
            break
        offset += page.records
    return lines


async def _renewing_call(
    connector: Connector,
    ctx: CallContext,
    send: Send,
    build: Callable[[], HttpRequest],
    read: Callable[[HttpResponse], _T],
) -> _T:
    """`read` of the answer to `build()`, with a session the network ended mid-run opened
    again once (connectors that re-authenticate), as a window's pages are: the request is
    built again, with the new session's headers."""
    try:
        return read(await send(build()))
    except AuthRejected:
        if not connector.reauthenticates:
            raise
    log.info("%s: credentials refused mid-sync; renewing the session once", ctx.spec.network)
    await _authenticate(connector, ctx, send)
    return read(await send(build()))


def _refused(run: _Run, refused: list[Refused]) -> None:
    run.counts.refused += len(refused)
    run.refused.extend(refused[: max(0, REFUSALS_KEPT - len(run.refused))])
    run.refusal_codes.update(r.code for r in refused)


def _failed(run: _Run, item: PlannedWindow, exc: SyncError) -> None:
    run.failures.append(exc)
    run.counts.windows_failed += 1
    if item.advances:
        run.forward_blocked = True
    log.warning("window %s failed: [%s] %s", item.window, exc.code, exc.message)


async def _fetch_renewing(
    connector: Connector, ctx: CallContext, send: Send, window: Window, limits: _Limits
) -> tuple[list[Transaction], list[Refused]]:
    """fetch_window, renewing an expired token once for connectors that exchange one."""
    try:
        return await fetch_window(connector, ctx, send, window, limits)
    except AuthRejected:
        if not connector.reauthenticates:
            raise
        log.info("%s: credentials refused mid-sync; renewing the token once", ctx.spec.network)
        await _authenticate(connector, ctx, send)
        return await fetch_window(connector, ctx, send, window, limits)


async def fetch_window(
    connector: Connector, ctx: CallContext, send: Send, window: Window, limits: _Limits
) -> tuple[list[Transaction], list[Refused]]:
    """Every page of one window: its valid transactions and the records refused.

    A record outside contract.commission's definition is refused (`record_invalid`). An id
    sent twice is kept once when both copies are equal; copies that differ are refused
    (`record_ambiguous`): which one the network meant cannot be told. The pages are
    walked by sync.paginators.pages, which bounds them."""
    rows: dict[str, Transaction] = {}
    ambiguous: set[str] = set()
    refused: list[Refused] = []
    async for page in pages(connector, ctx, send, window, limits.pages):
        for row in page.transactions:
            found = problem(row, limits.latest)
            if found is not None:
                refused.append(Refused(row.external_id, "record_invalid", ": ".join(found)))
                continue
            external_id = row.external_id
            before = rows.get(external_id)
            if before is None:
                if external_id not in ambiguous:
                    rows[external_id] = row
            elif before != row:
                del rows[external_id]
                ambiguous.add(external_id)
                refused.append(
                    Refused(
                        external_id,
                        "record_ambiguous",
                        "sent twice in one window with different values",
                    )
                )
        refused.extend(page.refused)
    return list(rows.values()), refused


def shown(message: str, limit: int = SYNC_REASON_MAX) -> str:
    """`message` as an outcome's reason may hold it: printable, at most `limit` characters
    (a refused record's id or value, quoted in it, came from the network)."""
    text = "".join(c if c.isprintable() else "\ufffd" for c in message)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _verdict(run: _Run) -> tuple[Outcome, Reason | None]:
    """ok only when every planned window was fetched whole and every record kept."""
    if run.failures:
        first = run.failures[0]
        if run.counts.windows_ok == 0:
            return Outcome.ERROR, Reason(first.code, first.message)
        failed = run.counts.windows_failed
        if not failed:
            # Every window was kept; the payments could not be read.
            return Outcome.PARTIAL, Reason(first.code, f"payments not read: {first.message}")
        return Outcome.PARTIAL, Reason(
            first.code, f"{failed} window(s) failed; first: {first.message}"
        )
    if run.limited is not None:
        done, planned = run.counts.windows_ok, run.counts.windows_planned
        return Outcome.PARTIAL, Reason(
            run.limited.code,
            f"{run.limited.message} ({done} of {planned} window(s) done; "
            f"resumes in {run.limited.resume_in:.0f}s)",
        )
    if run.stopped_early:
        return Outcome.PARTIAL, Reason(
            "deadline", "the run reached its time limit; the rest follows next run"
        )
    if run.refused:
        codes = sorted(run.refusal_codes)
        example = run.refused[0]
        named = shown(example.external_id, 60) if example.external_id else "a record"
        return Outcome.PARTIAL, Reason(
            "records_refused",
            f"{run.counts.refused} record(s) refused ({', '.join(codes)}); e.g. {named}: {example.message}",
        )
    return Outcome.OK, None
