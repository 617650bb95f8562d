"""Helpers of the sync tests: a fake clock, an in-memory SyncStore, and loopback fake
networks replaying the recordings under recordings/<network>/."""

from __future__ import annotations

import asyncio
import base64
import csv
import datetime as dt
import io
import json
import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from aiohttp import web
from support.clock import WALL_START, FakeClock

from accounts.crypto import encrypt_credentials
from accounts.keyring import Keyring
from contract.vocabulary import COMMISSION_STATUSES
from store import AccountStore, accounts, connections
from store.base import VALUE_FIELDS, StoreError
from sync.model import Position, SyncReport, Transaction, Window, WriteResult
from sync.ports import Connection

HERE = Path(__file__).resolve().parent
RECORDINGS = HERE / "recordings"
NOW = WALL_START  # where the fake clock starts
ACCOUNT = "acc_sync_test"
NETWORKS = (
    "awin",
    "cj",
    "impact",
    "tradedoubler",
    "effiliation",
    "kwanko",
    "partnerize",
    "affilae",
    "admitad",
)
# Values no log line or error text may ever contain.
CREDENTIALS: dict[str, dict[str, str]] = {
    "awin": {"accessToken": "PLANTED-awin-token-7f3a91", "publisherId": "123456"},
    "cj": {"personalAccessToken": "PLANTED-cj-pat-2b8c44", "publisherId": "999"},
    "impact": {"accountSid": "IRplantedSID55", "authToken": "PLANTED-impact-auth-9d0e12"},
    "tradedoubler": {
        "clientId": "PLANTED-td-client-11aa",
        "clientSecret": "PLANTED-td-secret-22bb",
        "username": "planted-td-user",
        "password": "PLANTED-td-password-33cc",
    },
    "effiliation": {"apiKey": "PLANTED-effi-key-44dd"},
    "kwanko": {"apiToken": "PLANTED-kwanko-token-55ee"},
    "partnerize": {
        "applicationKey": "PLANTED-pz-app-66ff",
        "userApiKey": "PLANTED-pz-user-7700",
        "publisherId": "1l1007",
    },
    "affilae": {"apiToken": "PLANTED-affilae-token-8811", "affiliateProfileId": "p1"},
    "admitad": {
        "clientId": "PLANTED-admitad-id-9922",
        "clientSecret": "PLANTED-admitad-secret-aa33",
    },
}
# Values only (not ids that also appear in paths by design, e.g. publisher ids).
PLANTED: tuple[str, ...] = tuple(
    v for creds in CREDENTIALS.values() for v in creds.values() if "PLANTED" in v or "planted" in v
)
CONNECTION_CURRENCY = {"cj": "USD", "kwanko": "EUR"}
# The edge's secret of the real stores (EDGE_SECRET_KEY of the processes the tests run).
SECRET = "sync-test-secret-" + "s" * 32
AMOUNT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
_DECIMAL = "@@decimal@@"
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

    def add(self, conn: Connection, values: Mapping[str, str]) -> None:
        self.connections.append(conn)
        self.credentials[(conn.account_uid, conn.network)] = seal(conn, values)

    async def due_connections(
        self, not_synced_since: dt.datetime, limit: int
    ) -> Sequence[Connection]:
        now = self.clock.monotonic()
        # As the account store: an unreleased lease is an attempt that never ended (its
        # worker died), due again once the lease has run out.
        due = [
            c
            for c in self.connections
            if (
                self.attempts.get(key(c), dt.datetime.min.replace(tzinfo=dt.UTC)) < not_synced_since
                or key(c) in self.leases
            )
            and self.leases.get(key(c), ("", 0.0))[1] <= now
        ]
        return due[:limit]

    async def claim(self, conn: Connection, worker_id: str, lease_seconds: float) -> bool:
        holder, until = self.leases.get(key(conn), ("", 0.0))
        if holder and holder != worker_id and until > self.clock.monotonic():
            return False
        self.leases[key(conn)] = (worker_id, self.clock.monotonic() + lease_seconds)
        self.attempts[key(conn)] = self.clock.now()
        return True

    async def release(self, conn: Connection, worker_id: str) -> None:
        if self.leases.get(key(conn), ("",))[0] == worker_id:
            del self.leases[key(conn)]

    async def load_credentials(self, conn: Connection) -> bytes:
        return self.credentials[key(conn)]

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
    network: str
    records: list[dict[str, Any]]
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

    def times(self) -> list[float]:
        return [s.at for s in self.seen]


def load_records(network: str) -> list[dict[str, Any]]:
    folder = RECORDINGS / network
    if network == "effiliation":
        text = (folder / "transactions.csv").read_text("utf-8")
        return list(csv.DictReader(io.StringIO(text), delimiter="|"))
    (path,) = [p for p in folder.glob("*.json") if p.stem not in ("expected", "bad_credentials")]
    return json.loads(path.read_text("utf-8"), parse_float=Decimal)


def recording(network: str, name: str) -> bytes:
    return (RECORDINGS / network / name).read_bytes()


def expected(network: str) -> dict[str, dict[str, Any]]:
    return json.loads((RECORDINGS / network / "expected.json").read_text("utf-8"))


# The record member each network's date filter reads (`__` members the network does not send).
AWIN_DATES = {
    "transaction": "transactionDate",
    "validation": "validationDate",
    "amendment": "__amendmentDate",
}
IMPACT_DATES = (
    ("ActionDateStart", "ActionDateEnd", "EventDate"),
    ("LockingDateStart", "LockingDateEnd", "LockingDate"),
    ("StartDate", "EndDate", "__UpdatedDate"),
)
PARTNERIZE_DATES = {"": "conversion_time", "last_modified": "__last_modified"}

# Where each network's change filter finds a change of status or of amount: the member it
# reads and that member's format. A network without such a filter has none.
CHANGE_DATES: dict[str, dict[str, tuple[str, str]]] = {
    "awin": {
        "status": ("validationDate", "%Y-%m-%dT%H:%M:%S"),
        "reversal": ("__amendmentDate", "%Y-%m-%dT%H:%M:%S"),
        "amount": ("__amendmentDate", "%Y-%m-%dT%H:%M:%S"),
    },
    "cj": {"status": ("lockingDate", "%Y-%m-%dT%H:%M:%SZ")},
    "impact": {
        "status": ("LockingDate", "%Y-%m-%dT%H:%M:%SZ"),
        "reversal": ("LockingDate", "%Y-%m-%dT%H:%M:%SZ"),
        "amount": ("__UpdatedDate", "%Y-%m-%dT%H:%M:%SZ"),
    },
    "admitad": {
        "status": ("status_updated", "%Y-%m-%d %H:%M:%S"),
        "reversal": ("status_updated", "%Y-%m-%d %H:%M:%S"),
    },
    "partnerize": {
        kind: ("__last_modified", "%Y-%m-%d %H:%M:%S") for kind in ("status", "reversal", "amount")
    },
}


def stamp_change(network: str, record: dict[str, Any], kind: str, moment: dt.datetime) -> None:
    """Date a change of `kind` (status, reversal, amount) in `record` as the network does: in the
    member its change filter reads, if it has one."""
    found = CHANGE_DATES.get(network, {}).get(kind)
    if found is not None:
        member, fmt = found
        record[member] = moment.astimezone(dt.UTC).strftime(fmt)


MAX_DAYS = {
    "awin": 31,
    "cj": 31,
    "impact": 45,
    "tradedoubler": 31,
    "effiliation": 31,
    "kwanko": 31,
    "partnerize": 31,
    "affilae": 31,
    "admitad": 31,
}


def utc(text: str, fmt: str) -> dt.datetime:
    return dt.datetime.strptime(text, fmt).replace(tzinfo=dt.UTC)


def iso(text: str) -> dt.datetime:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def shown(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


class FakeNetworks:
    """One loopback server for every network, each under /<network>."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.states = {n: NetState(n, load_records(n)) for n in NETWORKS}
        self.app = web.Application()
        self.app.router.add_route("*", "/{network}/{tail:.*}", self.handle)

    def __getitem__(self, network: str) -> NetState:
        return self.states[network]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        st = self.states[request.match_info["network"]]
        st.seen.append(
            Seen(self.clock.monotonic(), request.method, request.path, dict(request.query))
        )
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
        handler = getattr(self, f"_{st.network}")
        return await handler(request, st)

    def _window(
        self, st: NetState, first: dt.datetime, last: dt.datetime, unit: dt.timedelta
    ) -> bool:
        """Record the window; False (and count it) when longer than the network allows."""
        st.windows.append((first, last))
        if last + unit - first > dt.timedelta(days=MAX_DAYS[st.network]):
            st.too_long += 1
            return False
        return True

    def _auth(self, st: NetState, request: web.Request, expected_header: str) -> bool:
        return not st.reject_auth and request.headers.get("Authorization") == expected_header

    # Awin: no paging; the window bounds the answer.
    async def _awin(self, request: web.Request, st: NetState) -> web.Response:
        creds = CREDENTIALS["awin"]
        if (
            not self._auth(st, request, f"Bearer {creds['accessToken']}")
            or f"/{creds['publisherId']}/" not in request.path
        ):
            return web.Response(
                status=401,
                body=recording("awin", "bad_credentials.json"),
                content_type="application/json",
            )
        q = request.query
        first = utc(q["startDate"], "%Y-%m-%dT%H:%M:%S")
        last = utc(q["endDate"], "%Y-%m-%dT%H:%M:%S")
        if not self._window(st, first, last, dt.timedelta(seconds=1)):
            return json_response({"error": "date range must not exceed 31 days"}, 400)
        # dateType picks the date the window bounds (transaction, validation, amendment).
        member = AWIN_DATES.get(q.get("dateType", "transaction"))
        if member is None:
            return json_response({"error": "invalid dateType"}, 400)
        hits = [
            r
            for r in st.records
            if r.get(member) and first <= utc(r[member], "%Y-%m-%dT%H:%M:%S") <= last
        ]
        return json_response(shown(hits))

    # CJ: GraphQL, watermark pages of `cj_limit` records.
    async def _cj(self, request: web.Request, st: NetState) -> web.Response:
        if not self._auth(st, request, f"Bearer {CREDENTIALS['cj']['personalAccessToken']}"):
            return web.Response(
                status=200,
                body=recording("cj", "bad_credentials.json"),
                content_type="application/json",
            )
        text = (await request.json())["query"]
        # The dates the query bounds: posting dates, or locking dates.
        kind = "Locking" if "sinceLockingDate" in text else "Posting"
        member = f"{kind[0].lower()}{kind[1:]}Date"
        since = iso(re.search(rf'since{kind}Date: "([^"]+)"', text)[1])
        before = iso(re.search(rf'before{kind}Date: "([^"]+)"', text)[1])
        after = re.search(r'sinceCommissionId: "([^"]+)"', text)
        if not self._window(st, since, before - dt.timedelta(seconds=1), dt.timedelta(seconds=1)):
            return json_response({"errors": [{"message": "date range too large"}], "data": None})
        hits = sorted(
            (
                r
                for r in st.records
                if r.get(member)
                and since <= iso(r[member]) < before
                and (after is None or int(r["commissionId"]) > int(after[1]))
            ),
            key=lambda r: int(r["commissionId"]),
        )
        page = hits[: st.cj_limit]
        result = {
            "count": len(page),
            "limit": st.cj_limit,
            "maxCommissionId": page[-1]["commissionId"] if page else (after[1] if after else "0"),
            "payloadComplete": len(hits) <= st.cj_limit,
            "records": shown(page),
        }
        return json_response({"data": {"publisherCommissions": result}})

    # Impact: pages with @nextpageuri; too many records for one query is an error.
    async def _impact(self, request: web.Request, st: NetState) -> web.Response:
        creds = CREDENTIALS["impact"]
        if not self._auth(st, request, basic(creds["accountSid"], creds["authToken"])):
            return web.Response(
                status=401,
                body=recording("impact", "bad_credentials.json"),
                content_type="application/json",
            )
        q = request.query
        # The dates the query bounds: the action date, the locking date or the last update.
        (start, end, member) = next((s, e, m) for s, e, m in IMPACT_DATES if s in q)
        first, last = iso(q[start]), iso(q[end])
        if not self._window(st, first, last, dt.timedelta(seconds=1)):
            return json_response(
                {"Status": "ERROR", "Message": "Date range cannot exceed 45 days"}, 400
            )
        size = int(q["PageSize"])
        number = int(q.get("Page", "1"))
        hits = [r for r in st.records if r.get(member) and first <= iso(r[member]) <= last]
        if st.cap is not None and len(hits) > st.cap:
            return json_response(
                {"Status": "ERROR", "Message": "Too many results: total exceeds 10 x PageSize"}, 400
            )
        pages = max(1, -(-len(hits) // size))
        chunk = hits[(number - 1) * size : number * size]
        following = ""
        if number < pages:
            following = (
                f"/Mediapartners/{creds['accountSid']}/Actions?{start}={q[start]}"
                f"&{end}={q[end]}&PageSize={size}&Page={number + 1}"
            )
        return json_response(
            {
                "@page": str(number),
                "@numpages": str(pages),
                "@total": str(len(hits)),
                "@nextpageuri": following,
                "Actions": shown(chunk),
            }
        )

    # Tradedoubler: a password-grant token, then offset pages.
    async def _tradedoubler(self, request: web.Request, st: NetState) -> web.Response:
        creds = CREDENTIALS["tradedoubler"]
        if request.path.endswith("/uaa/oauth/token"):
            form = await request.post()
            ok = (
                self._auth(st, request, basic(creds["clientId"], creds["clientSecret"]))
                and form.get("username") == creds["username"]
                and form.get("password") == creds["password"]
            )
            if not ok:
                return web.Response(
                    status=401,
                    body=recording("tradedoubler", "bad_credentials.json"),
                    content_type="application/json",
                )
            st.tokens.append(f"td-token-{len(st.tokens) + 1}")
            return json_response(
                {"access_token": st.tokens[-1], "token_type": "bearer", "expires_in": 3600}
            )
        st.data_calls += 1
        if (
            st.revoke_token_after is not None
            and st.data_calls > st.revoke_token_after
            and len(st.tokens) == 1
        ):
            st.tokens.append("expired")  # the first token expires: the next one works
        valid = st.tokens[-1] if st.tokens and st.tokens[-1] != "expired" else None
        if valid is None or request.headers.get("Authorization") != f"Bearer {valid}":
            return json_response({"error": "invalid_token"}, 401)
        q = request.query
        first = utc(q["fromDate"], "%Y%m%d")
        last = utc(q["toDate"], "%Y%m%d") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
        if not self._window(st, first, last, dt.timedelta(seconds=1)):
            return json_response({"message": "Period too long"}, 400)
        hits = [
            r
            for r in st.records
            if first <= utc(r["timeOfTransaction"], "%Y-%m-%dT%H:%M:%S") <= last
        ]
        offset, limit = int(q["offset"]), int(q["limit"])
        return json_response(
            {
                "items": hits[offset : offset + limit],
                "offset": offset,
                "limit": limit,
                "total": len(hits),
            }
        )

    # Effiliation: one CSV; a bad key answers 200 "bad credentials !".
    async def _effiliation(self, request: web.Request, st: NetState) -> web.Response:
        q = request.query
        if st.reject_auth or q.get("key") != CREDENTIALS["effiliation"]["apiKey"]:
            return web.Response(
                status=200,
                body=recording("effiliation", "bad_credentials.txt"),
                content_type="text/html",
            )
        first = utc(q["start"], "%d/%m/%Y")
        last = utc(q["end"], "%d/%m/%Y") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
        if not self._window(st, first, last, dt.timedelta(seconds=1)):
            return web.Response(status=400, text="periode trop longue")
        hits = [
            r
            for r in st.records
            if first <= utc(r["date_transaction"], "%d/%m/%Y %H:%M:%S") <= last
        ]
        out = io.StringIO()
        writer = csv.DictWriter(
            out, fieldnames=list(load_records("effiliation")[0]), delimiter="|", lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(hits)
        return web.Response(body=out.getvalue().encode(), content_type="text/csv")

    # Kwanko: one JSON answer per window.
    async def _kwanko(self, request: web.Request, st: NetState) -> web.Response:
        if not self._auth(st, request, f"Bearer {CREDENTIALS['kwanko']['apiToken']}"):
            return web.Response(
                status=401,
                body=recording("kwanko", "bad_credentials.json"),
                content_type="application/json",
            )
        q = request.query
        first, last = iso(q["completion_date_from"]), iso(q["completion_date_to"])
        if not self._window(st, first, last, dt.timedelta(seconds=1)):
            return json_response({"error": "range too long"}, 400)
        hits = [
            r
            for r in st.records
            if first <= dt.datetime.fromtimestamp(r["completed_at_timestamp"], dt.UTC) <= last
        ]
        return json_response({"conversions": hits})

    # Partnerize: cursor pages, hypermedia next_page.
    async def _partnerize(self, request: web.Request, st: NetState) -> web.Response:
        creds = CREDENTIALS["partnerize"]
        if (
            not self._auth(st, request, basic(creds["applicationKey"], creds["userApiKey"]))
            or creds["publisherId"] not in request.path
        ):
            return web.Response(
                status=401,
                body=recording("partnerize", "bad_credentials.json"),
                content_type="application/json",
            )
        q = request.query
        first = utc(q["start_date"], "%Y-%m-%d %H:%M:%S")
        last = utc(q["end_date"], "%Y-%m-%d %H:%M:%S")
        if not self._window(st, first, last, dt.timedelta(seconds=1)):
            return json_response({"error": {"message": "date range too long"}}, 400)
        member = PARTNERIZE_DATES.get(q.get("date_type", ""))
        if member is None:
            return json_response({"error": {"message": "invalid date_type"}}, 400)
        hits = [
            r
            for r in st.records
            if r.get(member) and first <= utc(r[member], "%Y-%m-%d %H:%M:%S") <= last
        ]
        limit = int(q["limit"])
        start = int(q.get("cursor_id", "c0")[1:])
        chunk = hits[start : start + limit]
        following = None
        if start + limit < len(hits):
            following = f"{request.path}?cursor_id=c{start + limit}&limit={limit}"
        return json_response(
            {
                "conversions": [{"conversion_data": r} for r in shown(chunk)],
                "hypermedia": {"pagination": {"next_page": following}},
            }
        )

    # Affilae: offset pages, amounts in cents.
    async def _affilae(self, request: web.Request, st: NetState) -> web.Response:
        creds = CREDENTIALS["affilae"]
        q = request.query
        if (
            not self._auth(st, request, f"Bearer {creds['apiToken']}")
            or q.get("affiliateProfile") != creds["affiliateProfileId"]
        ):
            return web.Response(
                status=401,
                body=recording("affilae", "bad_credentials.json"),
                content_type="application/json",
            )
        first, last = iso(q["from"]), iso(q["to"])
        if not self._window(st, first, last, dt.timedelta(seconds=1)):
            return json_response({"error": "range too long"}, 400)
        hits = [r for r in st.records if first <= iso(r["createdAt"]) <= last]
        offset, limit = int(q["offset"]), int(q["limit"])
        return json_response(
            {"conversions": {"data": hits[offset : offset + limit], "total": len(hits)}}
        )

    # Admitad: a client-credentials token, then offset pages.
    async def _admitad(self, request: web.Request, st: NetState) -> web.Response:
        creds = CREDENTIALS["admitad"]
        if request.path.endswith("/token/"):
            form = await request.post()
            if (
                not self._auth(st, request, basic(creds["clientId"], creds["clientSecret"]))
                or form.get("scope") != "statistics"
            ):
                return web.Response(
                    status=401,
                    body=recording("admitad", "bad_credentials.json"),
                    content_type="application/json",
                )
            st.tokens.append(f"adm-token-{len(st.tokens) + 1}")
            return json_response({"access_token": st.tokens[-1], "expires_in": 604800})
        if not st.tokens or request.headers.get("Authorization") != f"Bearer {st.tokens[-1]}":
            return json_response({"error": "invalid_token"}, 401)
        q = request.query
        # date_start/date_end bound the action date, status_updated_start/_end the last
        # change of status.
        prefix, member = (
            ("status_updated", "status_updated")
            if "status_updated_start" in q
            else ("date", "action_date")
        )
        first = utc(q[f"{prefix}_start"], "%d.%m.%Y")
        last = utc(q[f"{prefix}_end"], "%d.%m.%Y") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
        if not self._window(st, first, last, dt.timedelta(seconds=1)):
            return json_response({"error": "range too long"}, 400)
        hits = [
            r
            for r in st.records
            if r.get(member) and first <= utc(r[member], "%Y-%m-%d %H:%M:%S") <= last
        ]
        offset, limit = int(q["offset"]), int(q["limit"])
        return json_response(
            {
                "results": shown(hits[offset : offset + limit]),
                "_meta": {"count": len(hits), "limit": limit, "offset": offset},
            }
        )
