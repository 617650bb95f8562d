"""Helpers of the sync tests: a fake clock, an in-memory SyncStore, and loopback fake
networks replaying the recordings under recordings/<network>/."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from aiohttp import web
from fakes import FAKES
from fakes.base import (
    RECORDINGS,
    Canned,
    NetState,
    Seen,
    basic,
    dumps,
    iso,
    json_response,
    recording,
    shown,
    stamp,
    utc,
)
from support.clock import WALL_START, FakeClock

from accounts.crypto import encrypt_credentials
from accounts.keyring import Keyring
from contract.payment import NewPayment, reconcile
from contract.vocabulary import COMMISSION_STATUSES
from store import AccountStore, accounts, connections
from store.base import VALUE_FIELDS, StoreError
from sync.connectors import CONNECTORS
from sync.model import Position, SyncReport, Transaction, Window, WriteResult
from sync.ports import Connection
from sync.spec import Rate

# Re-exported for the tests: the fakes' shared parts.
__all__ = [
    "CHANGE_DATES",
    "MAX_DAYS",
    "Canned",
    "NetState",
    "basic",
    "dumps",
    "iso",
    "json_response",
    "recording",
    "shown",
    "utc",
]

NOW = WALL_START  # where the fake clock starts
ACCOUNT = "acc_sync_test"
# Every fake network (tests/sync/fakes/<network>.py), in name order.
NETWORKS: tuple[str, ...] = tuple(FAKES)
# The networks with a status word to flip (the others report a change as another row).
FLIPPING: tuple[str, ...] = tuple(n for n, f in FAKES.items() if f.flip is not None)
# Values no log line or error text may ever contain.
CREDENTIALS: dict[str, dict[str, str]] = {n: dict(f.credentials) for n, f in FAKES.items()}
# Values only (not ids that also appear in paths by design, e.g. publisher ids).
PLANTED: tuple[str, ...] = tuple(
    v for creds in CREDENTIALS.values() for v in creds.values() if "PLANTED" in v or "planted" in v
)
CONNECTION_CURRENCY = {n: f.currency for n, f in FAKES.items() if f.currency}
# The edge's secret of the real stores (EDGE_SECRET_KEY of the processes the tests run).
SECRET = "sync-test-secret-" + "s" * 32
AMOUNT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
TIMESTAMP_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def connection(network: str, **changes: Any) -> Connection:
    base = Connection(ACCOUNT, network, currency=CONNECTION_CURRENCY.get(network))
    return replace(base, **changes)


def seal(conn: Connection, values: Mapping[str, str]) -> bytes:
    """A stand-in ciphertext bound to its row (the real one is AES-GCM in the store)."""
    return b"sealed:" + json.dumps([conn.account_uid, conn.network, dict(values)]).encode()


def decrypt(conn: Connection, blob: bytes) -> Mapping[str, object]:
    if not blob.startswith(b"sealed:"):
        raise ValueError("not sealed")
    account, network, values = json.loads(blob[len(b"sealed:") :])
    if (account, network) != (conn.account_uid, conn.network):
        raise ValueError("sealed for another row")
    return values


class StoreCrashError(StoreError):
    """The store failed while writing (the process died there): a store's own error, so the
    worker blames the store and records no outcome."""


@dataclass
class MemoryStore:
    """An in-memory SyncStore enforcing the protocol's contract: atomic, idempotent upsert
    by (account, network, external_id), position committed with the rows."""

    clock: FakeClock
    credentials: dict[tuple[str, str], bytes] = field(default_factory=dict)
    connections: list[Connection] = field(default_factory=list)
    rows: dict[tuple[str, str, str], Transaction] = field(default_factory=dict)
    positions: dict[tuple[str, str], Position] = field(default_factory=dict)
    reports: list[tuple[Connection, SyncReport]] = field(default_factory=list)
    leases: dict[tuple[str, str], tuple[str, float]] = field(default_factory=dict)
    attempts: dict[tuple[str, str], dt.datetime] = field(default_factory=dict)
    writes: int = 0
    crash_on_write: int | None = None
    windows_written: list[Window] = field(default_factory=list)
    # The next attempt each connection's last run planned (SyncReport.resume_at).
    next_attempts: dict[tuple[str, str], dt.datetime] = field(default_factory=dict)
    # Every worker's requests per connection (wall-clock seconds), as the store counts them.
    calls: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    # Payments by (account, network, external id), reconciled as the account store keeps them.
    payments: dict[tuple[str, str, str], NewPayment] = field(default_factory=dict)

    async def stored_payments(self, conn: Connection, external_ids: Sequence[str]) -> set[str]:
        return {i for i in external_ids if (conn.account_uid, conn.network, i) in self.payments}

    async def write_payment(self, conn: Connection, payment: NewPayment) -> bool:
        k = (conn.account_uid, conn.network, payment.external_id)
        if k in self.payments:
            return False
        self.payments[k] = reconcile(payment)
        return True

    def add(self, conn: Connection, values: Mapping[str, str]) -> None:
        self.connections.append(conn)
        self.credentials[(conn.account_uid, conn.network)] = seal(conn, values)

    async def due_connections(
        self, not_synced_since: dt.datetime, limit: int
    ) -> Sequence[Connection]:
        now = self.clock.monotonic()
        never = dt.datetime.min.replace(tzinfo=dt.UTC)

        def due(c: Connection) -> bool:
            # As the account store: an unreleased lease is an attempt that never ended (its
            # worker died), due again once the lease has run out; a planned attempt decides
            # when there is one, else the interval.
            planned = self.next_attempts.get(key(c))
            if key(c) in self.leases:
                return True
            if planned is not None:
                return planned <= self.clock.now()
            return self.attempts.get(key(c), never) < not_synced_since

        free = [c for c in self.connections if self.leases.get(key(c), ("", 0.0))[1] <= now]
        return [c for c in free if due(c)][:limit]

    async def claim(self, conn: Connection, worker_id: str, lease_seconds: float) -> bool:
        holder, until = self.leases.get(key(conn), ("", 0.0))
        if holder and holder != worker_id and until > self.clock.monotonic():
            return False
        self.leases[key(conn)] = (worker_id, self.clock.monotonic() + lease_seconds)
        self.attempts[key(conn)] = self.clock.now()
        return True

    async def renew(self, conn: Connection, worker_id: str, lease_seconds: float) -> bool:
        if self.leases.get(key(conn), ("",))[0] != worker_id:
            return False
        self.leases[key(conn)] = (worker_id, self.clock.monotonic() + lease_seconds)
        return True

    async def release(self, conn: Connection, worker_id: str) -> None:
        if self.leases.get(key(conn), ("",))[0] == worker_id:
            del self.leases[key(conn)]

    async def load_credentials(self, conn: Connection) -> bytes:
        return self.credentials[key(conn)]

    async def replace_credentials(self, conn: Connection, old: bytes, new: bytes) -> bool:
        if self.credentials.get(key(conn)) != old:
            return False
        self.credentials[key(conn)] = new
        return True

    async def load_position(self, conn: Connection) -> Position | None:
        return self.positions.get(key(conn))

    async def write_window(
        self,
        conn: Connection,
        window: Window,
        rows: Sequence[Transaction],
        position: Position | None,
    ) -> WriteResult:
        self.writes += 1
        if self.crash_on_write is not None and self.writes >= self.crash_on_write:
            raise StoreCrashError("the store went away")
        ids = [r.external_id for r in rows]
        assert len(ids) == len(set(ids)), "one window's rows repeat an id"
        for row in rows:
            check_row(conn, row)
        inserted = updated = unchanged = 0
        staged = {}
        for row in rows:
            k = (conn.account_uid, conn.network, row.external_id)
            old = self.rows.get(k)
            # As the account store: a field the row does not state keeps the stored value.
            kept = (
                {}
                if old is None or row.stated is None
                else {name: getattr(old, name) for name in VALUE_FIELDS if name not in row.stated}
            )
            row = replace(row, stated=None, **kept)
            if old is None:
                inserted += 1
            elif old == row:
                unchanged += 1
            else:
                updated += 1
            staged[k] = row
        # Everything above may fail; only now is anything applied: one commit.
        self.rows.update(staged)
        if position is not None:
            self.positions[key(conn)] = position
        self.windows_written.append(window)
        return WriteResult(inserted, updated, unchanged)

    async def record_outcome(self, conn: Connection, report: SyncReport) -> None:
        self.reports.append((conn, report))
        if report.resume_at is None:
            self.next_attempts.pop(key(conn), None)
        else:
            self.next_attempts[key(conn)] = report.resume_at

    async def reserve_call(self, conn: Connection, rates: Sequence[Rate]) -> float:
        now = self.clock.now().timestamp()
        sent = self.calls.setdefault(key(conn), [])
        wait = 0.0
        for rate in rates:
            recent = [t for t in sent if t > now - rate.seconds]
            if len(recent) >= rate.requests:
                wait = max(wait, recent[-rate.requests] + rate.seconds - now)
        if wait > 0:
            return wait
        sent.append(now)
        return 0.0

    def rows_of(self, network: str) -> dict[str, Transaction]:
        return {k[2]: v for k, v in self.rows.items() if k[1] == network}


async def seed_store(
    store: AccountStore, keyring: Keyring, networks: Sequence[str] = NETWORKS
) -> None:
    """The test account in a real store, connected to `networks` as `network connect`
    leaves it: credentials sealed, the currency set where records carry none."""
    await store.write(accounts.create, None, "free", uid=ACCOUNT)
    for network in networks:
        values = CREDENTIALS[network]
        sealed = encrypt_credentials(keyring, ACCOUNT, network, json.dumps(values).encode())
        await store.write(connections.connect, ACCOUNT, network, sealed)
        if network in CONNECTION_CURRENCY:
            await store.write(
                connections.set_currency, ACCOUNT, network, CONNECTION_CURRENCY[network]
            )


def key(conn: Connection) -> tuple[str, str]:
    return (conn.account_uid, conn.network)


def check_row(conn: Connection, row: Transaction) -> None:
    """The account store's invariants on a commission row."""
    assert row.network == conn.network
    assert row.external_id
    assert row.status in COMMISSION_STATUSES, row.status
    for amount in (row.commission_amount, row.sale_amount):
        assert amount is None or AMOUNT_RE.fullmatch(amount), amount
    assert re.fullmatch(r"[A-Z]{3}", row.currency), row.currency
    for moment in (row.transacted_at, row.clicked_at):
        assert moment is None or TIMESTAMP_RE.fullmatch(moment), moment


def limited(network: str, **changes: Any) -> dict[str, Any]:
    """The connectors with `network`'s spec changed (a network's documented limits)."""
    connector = copy.copy(CONNECTORS[network])
    connector.spec = replace(connector.spec, **changes)
    return {**CONNECTORS, network: connector}


def max_in_any_period(times: Sequence[float], period: float) -> int:
    """The most requests seen in any half-open period [t, t + period)."""
    ordered = sorted(times)
    best = 0
    start = 0
    for end, t in enumerate(ordered):
        while t - ordered[start] >= period:
            start += 1
        best = max(best, end - start + 1)
    return best


# --- Fake networks ----------------------------------------------------------------------


def load_records(network: str) -> list[dict[str, Any]]:
    return FAKES[network].records()


def expected(network: str) -> dict[str, dict[str, Any]]:
    return json.loads((RECORDINGS / network / "expected.json").read_text("utf-8"))


CHANGE_DATES = {n: f.change_dates for n, f in FAKES.items()}
MAX_DAYS = {n: f.max_days for n, f in FAKES.items()}


def stamp_change(network: str, record: dict[str, Any], kind: str, moment: dt.datetime) -> None:
    """Date a change of `kind` (status, reversal, amount) in `record` as the network does: in the
    member its change filter reads, if it has one."""
    stamp(record, FAKES[network].change_dates.get(kind), moment)


class FakeNetworks:
    """One loopback server for every fake network, each under /<network>."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.states = {n: NetState(f, f.records()) for n, f in FAKES.items()}
        self.app = web.Application()
        self.app.router.add_route("*", "/{network}/{tail:.*}", self.handle)

    def __getitem__(self, network: str) -> NetState:
        return self.states[network]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        st = self.states[request.match_info["network"]]
        st.seen.append(
            Seen(self.clock.monotonic(), request.method, request.path, dict(request.query))
        )
        st.in_flight += 1
        st.most_in_flight = max(st.most_in_flight, st.in_flight)
        try:
            if st.on_request is not None:
                st.on_request(st)
            if st.delay:
                await asyncio.sleep(st.delay)
            if st.inject:
                canned = st.inject.popleft()
                return web.Response(
                    status=canned.status,
                    body=canned.body,
                    headers=dict(canned.headers),
                    content_type=canned.content_type,
                )
            return await st.fake.serve(request, st)
        finally:
            st.in_flight -= 1
