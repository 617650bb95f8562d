"""A network that sends poison: values past every range, answers too large or unreadable,
pages without end, exceptions of every kind. Each ends as an honest recorded outcome with
its reason, and leaves the stored rows as they were; no run outlives its time limit, and a
worker's memory stays bounded."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import os
import re
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hostile_support import Hostile
from sync_support import (
    ACCOUNT,
    SECRET,
    Canned,
    MemoryStore,
    connection,
    dumps,
    seed_store,
)

from accounts.keyring import keyring_from_env
from store import CommissionQuery, commissions, connections, open_store
from sync.clock import SystemClock
from sync.connectors.awin import Awin
from sync.errors import REASON_CODES, REFUSAL_CODES
from sync.http import HttpResponse
from sync.model import Outcome
from sync.runner import SyncSettings
from sync.storage import AccountSyncStore, credential_opener
from sync.worker import REPORTS_KEPT, Worker, WorkerConfig

ROOT = Path(__file__).resolve().parents[2]
STORED_ID = "1591984036"  # an Awin record of the recording, in a re-scanned window


def awin_answer(networks, **changes: Any) -> Canned:
    """One Awin answer: the stored record STORED_ID with `changes` (member: value; a
    dotted member reaches into commissionAmount)."""
    record = dict(next(r for r in networks["awin"].records if str(r["id"]) == STORED_ID))
    for name, value in changes.items():
        if "." in name:
            outer, inner = name.split(".")
            record[outer] = {**record[outer], inner: value}
        else:
            record[name] = value
    return Canned(200, dumps([record]))


async def synced_once(run_sync, store: MemoryStore) -> dict:
    """The first sync of Awin (ok), and the rows it stored."""
    report = await run_sync("awin")
    assert report.outcome is Outcome.OK, report.reason
    rows = dict(store.rows_of("awin"))
    assert STORED_ID in rows
    return rows


# --- Values the definition refuses --------------------------------------------------------


POISON = [
    ({"commissionAmount.amount": Decimal("1e309")}, "commission: a number with an exponent"),
    ({"commissionAmount.amount": Decimal("1e10000000")}, "commission: a number with an"),
    ({"commissionAmount.amount": Decimal("1e999999999999")}, "commission: a number with an"),
    ({"commissionAmount.amount": Decimal("9" * 31)}, "more than 18 digits before"),
    ({"commissionAmount.amount": Decimal("0." + "1" * 13)}, "more than 12 digits after"),
    ({"saleAmount.amount": Decimal("-" + "9" * 19)}, "sale: more than 18 digits"),
    ({"commissionAmount.currency": "XYZ"}, "currency: not an ISO 4217"),
    ({"transactionDate": "2099-01-01T00:00:00"}, "transacted_at: more than a day in the future"),
    ({"transactionDate": "9999-12-31T23:00:00"}, "transacted_at: more than a day"),
    ({"transactionDate": "9999-12-31T23:00:00-05:00"}, "transaction date: out of range"),
    ({"transactionDate": "0001-01-01T00:30:00+01:00"}, "transaction date: out of range"),
    ({"transactionDate": "1989-12-31T23:59:59"}, "transacted_at: before 1990"),
    ({"clickDate": "2031-05-05T00:00:00"}, "clicked_at: more than a day in the future"),
    ({"id": "9" * 201}, "external_id: longer than 200"),
    ({"advertiserName": "n" * 501}, "program_name: longer than 500"),
]


@pytest.mark.parametrize(("changes", "why"), POISON, ids=[p[1][:40] for p in POISON])
async def test_a_poisoned_value_is_refused_and_leaves_the_stored_row(
    changes, why, networks, store, run_sync, clock
):
    before = await synced_once(run_sync, store)
    clock.advance(3600)
    networks["awin"].inject.append(awin_answer(networks, **changes))
    report = await run_sync("awin")
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "records_refused"
    assert why in report.reason.message
    assert report.counts.refused == 1
    assert store.rows_of("awin") == before  # the stored row as it was


async def test_a_record_a_day_ahead_is_kept_and_one_past_it_refused(
    networks, store, run_sync, clock
):
    await synced_once(run_sync, store)
    ahead = (clock.now() + dt.timedelta(hours=23)).strftime("%Y-%m-%dT%H:%M:%S")
    networks["awin"].inject.append(awin_answer(networks, id="A1", transactionDate=ahead))
    report = await run_sync("awin")
    assert report.outcome is Outcome.OK, report.reason
    assert store.rows_of("awin")["A1"].transacted_at == ahead + "Z"


# --- Duplicates within one answer ---------------------------------------------------------


async def test_an_id_sent_twice_with_different_values_is_refused_as_ambiguous(
    networks, store, run_sync, clock
):
    before = await synced_once(run_sync, store)
    clock.advance(3600)
    record = next(r for r in networks["awin"].records if str(r["id"]) == STORED_ID)
    other = {**record, "commissionStatus": "declined"}
    networks["awin"].inject.append(Canned(200, dumps([record, other])))
    report = await run_sync("awin")
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "records_refused"
    assert "record_ambiguous" in report.reason.message
    assert store.rows_of("awin") == before


async def test_an_id_sent_twice_identically_is_kept_once(networks, store, run_sync, clock):
    before = await synced_once(run_sync, store)
    clock.advance(3600)
    record = next(r for r in networks["awin"].records if str(r["id"]) == STORED_ID)
    networks["awin"].inject.append(Canned(200, dumps([record, record])))
    report = await run_sync("awin")
    assert report.outcome is Outcome.OK, report.reason
    assert store.rows_of("awin") == before


# --- Exceptions of every kind -------------------------------------------------------------


UNREADABLE = [
    (b"[" * 200_000, "malformed_response", "not valid JSON"),  # RecursionError in the decoder
    (b"\xff\xfe not text", "malformed_response", "not valid JSON"),  # UnicodeDecodeError
    (b'{"truncated": ', "malformed_response", "not valid JSON"),
    (b"{}", "malformed_response", "expected a list"),
    # Past int's 4,300 digits (a ValueError in the decoder): kept as text, refused as a record.
    (b"[" + b"9" * 5000 + b"]", "records_refused", "not an object"),
]


@pytest.mark.parametrize(
    ("body", "code", "why"), UNREADABLE, ids=["nested", "bytes", "cut", "shape", "digits"]
)
async def test_an_unreadable_answer_fails_its_window_as_malformed(
    body, code, why, networks, store, run_sync, clock
):
    before = await synced_once(run_sync, store)
    clock.advance(3600)
    networks["awin"].inject.append(Canned(200, body))
    report = await run_sync("awin")
    assert report.outcome is Outcome.PARTIAL
    assert (report.reason.code, why in report.reason.message) == (code, True), report.reason
    assert store.rows_of("awin") == before


class Raising(Awin):
    """Awin, whose parsing of the first answer raises `error` (what a connector might
    meet in an answer no test thought of)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.raised = False

    def parse(self, ctx, window, state, response: HttpResponse):
        if not self.raised:
            self.raised = True
            raise self.error
        return super().parse(ctx, window, state, response)


EXCEPTIONS = [
    OverflowError("date value out of range"),
    RecursionError("maximum recursion depth exceeded"),
    MemoryError(),
    ValueError("bad"),
    KeyError("amount"),
    TypeError("unsupported"),
    AttributeError("get"),
    IndexError("list index out of range"),
    ZeroDivisionError("division by zero"),
    UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    TimeoutError(),
    aiohttp.ClientPayloadError("cut"),
    aiohttp.ClientConnectionError("reset"),
    RuntimeError("anything"),
]


@pytest.mark.parametrize("error", EXCEPTIONS, ids=[type(e).__name__ for e in EXCEPTIONS])
async def test_any_exception_reading_an_answer_is_recorded_never_a_stale_ok(
    error, networks, store, run_sync, clock
):
    before = await synced_once(run_sync, store)
    clock.advance(3600)
    report = await run_sync("awin", connectors={"awin": Raising(error)})
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "malformed_response"
    assert type(error).__name__ in report.reason.message
    assert store.reports[-1][1] is report  # recorded, not only returned
    assert store.rows_of("awin") == before


async def test_every_window_unreadable_ends_as_error(networks, store, run_sync, clock):
    before = await synced_once(run_sync, store)
    clock.advance(3600)
    networks["awin"].inject.extend(Canned(200, b"[" * 200_000) for _ in range(10))
    report = await run_sync("awin")
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "malformed_response"
    assert report.counts.windows_ok == 0
    assert store.rows_of("awin") == before


# --- Answers too large, cut short -----------------------------------------------------------


@pytest.fixture
async def hostile(aiohttp_server: Any) -> Hostile:
    network = Hostile()
    server = await aiohttp_server(network.app(), access_log=None)
    network.url = str(server.make_url("")).rstrip("/")  # type: ignore[attr-defined]
    return network


def against(settings: SyncSettings, hostile: Hostile, network: str, **changes) -> SyncSettings:
    urls = {**settings.base_urls, network: f"{hostile.url}/{network}"}  # type: ignore[attr-defined]
    return dataclasses.replace(settings, base_urls=urls, **changes)


@pytest.mark.parametrize("mode", ["announced_huge", "endless_body"])
async def test_an_answer_over_the_cap_is_refused_without_reading_the_rest(
    mode, hostile, settings, store, run_sync
):
    hostile.mode = mode
    cap = 2**20
    cfg = against(settings, hostile, "awin", max_response_bytes={"awin": cap})
    report = await run_sync("awin", settings=cfg)
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "response_too_large"
    assert report.counts.requests == 1  # not retried: the next answer would be as large
    await asyncio.sleep(0.1)  # the server sees the connection go
    # Socket buffers take a few MB at most; the announced 2 GB and the endless body stay
    # unsent.
    assert hostile.sent and max(hostile.sent) < cap + 16 * 2**20
    assert store.rows_of("awin") == {}


def test_every_network_has_a_sane_answer_cap():
    from sync.connectors import CONNECTORS

    for connector in CONNECTORS.values():
        assert 2**20 <= connector.spec.response_cap <= 64 * 2**20


async def test_an_answer_cut_short_is_a_network_failure(hostile, settings, store, run_sync):
    hostile.mode = "truncated"
    report = await run_sync("awin", settings=against(settings, hostile, "awin"))
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "network_unavailable"
    assert "ClientPayloadError" in report.reason.message or "connection" in report.reason.message


# --- Pages that never end or loop, time limits ---------------------------------------------


async def test_a_looping_cursor_ends_the_window_as_malformed(hostile, settings, store, run_sync):
    hostile.mode = "looping_cursor"
    report = await run_sync("partnerize", settings=against(settings, hostile, "partnerize"))
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "malformed_response"
    assert "loop" in report.reason.message
    assert report.counts.requests == 3  # A, B, then A again: stopped
    assert store.rows_of("partnerize") == {}


async def test_endless_pages_stop_at_the_page_cap(hostile, settings, store, run_sync):
    hostile.mode = "endless_pages"
    cfg = against(settings, hostile, "affilae", max_pages=5)
    report = await run_sync("affilae", settings=cfg)
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "page_limit"
    assert report.counts.requests == 5  # the first window only: later ones wait for it
    assert store.rows_of("affilae") == {}


async def test_the_deadline_is_checked_between_pages(hostile, settings, store, run_sync, clock):
    hostile.mode = "endless_pages"
    hostile.on_request = lambda: clock.advance(10)
    report = await run_sync(
        "affilae", settings=against(settings, hostile, "affilae"), deadline=clock.monotonic() + 35
    )
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "deadline"
    assert report.counts.requests == 4  # pages at 0, 10, 20, 30 s; none at 40
    assert store.rows_of("affilae") == {}  # the unfinished window is not committed


async def test_a_retry_after_past_the_deadline_is_not_waited(networks, store, run_sync, clock):
    networks["awin"].inject.append(Canned(429, headers={"Retry-After": "500"}))
    started = clock.monotonic()
    report = await run_sync("awin", deadline=clock.monotonic() + 100)
    # The run stops where it is and says when the network lets it go on.
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "rate_limited"
    assert "time limit" in report.reason.message
    assert report.resume_at == report.finished_at + dt.timedelta(seconds=500)
    assert clock.monotonic() - started < 100


async def test_backoff_never_sleeps_past_the_deadline(networks, store, run_sync, clock):
    networks["awin"].inject.extend(Canned(503) for _ in range(10))
    started = clock.monotonic()
    report = await run_sync("awin", deadline=clock.monotonic() + 2)
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "network_unavailable"
    assert clock.monotonic() - started <= 2


# --- The closed list of reason codes --------------------------------------------------------


def test_every_reason_and_refusal_code_is_documented():
    text = (ROOT / "docs" / "sync.md").read_text("utf-8")
    section = text[text.index("## Outcomes") : text.index("## Operator commands")]
    documented = set(re.findall(r"`([a-z_]+)`", section))
    assert documented >= REASON_CODES, REASON_CODES - documented
    assert documented >= REFUSAL_CODES, REFUSAL_CODES - documented


# --- On the real stores ---------------------------------------------------------------------


async def stored(real_store) -> dict:
    rows = await real_store.read(
        commissions.page, CommissionQuery(ACCOUNT, limit=1000, network="awin")
    )
    return {r.external_id: r for r in rows}


@pytest.mark.parametrize(
    ("answer", "outcome", "code"),
    [
        ({"commissionAmount.amount": Decimal("1e309")}, "partial", "records_refused"),
        ({"commissionAmount.currency": "XYZ"}, "partial", "records_refused"),
        ({"transactionDate": "9999-12-31T23:00:00-05:00"}, "partial", "records_refused"),
        (b"[" * 200_000, "partial", "malformed_response"),
        ({"id": "x\n\x1b" * 5000}, "partial", "records_refused"),  # quoted, bounded
    ],
    ids=["exponent", "currency", "overflow", "nested", "long-id"],
)
async def test_the_real_stores_keep_their_rows_and_record_the_outcome(
    answer, outcome, code, networks, real_store, leased_run, clock
):
    sync_store = AccountSyncStore(real_store, "w1")

    async def leased():
        return await leased_run("awin", sync_store)

    assert (await leased()).outcome is Outcome.OK
    before = await stored(real_store)
    clock.advance(3600)
    if isinstance(answer, bytes):
        networks["awin"].inject.append(Canned(200, answer))
    else:
        networks["awin"].inject.append(awin_answer(networks, **answer))
    await leased()
    view = await real_store.read(connections.find, ACCOUNT, "awin")
    assert (view.status, view.reason_code) == (outcome, code)
    assert await stored(real_store) == before


async def test_the_store_refuses_what_the_definition_refuses(real_store):
    from store.base import NewCommission

    good = NewCommission("X1", "pending", None, "1.00", "EUR", "2026-01-01T00:00:00Z")
    await real_store.write(commissions.upsert, ACCOUNT, "awin", [good])
    for bad in (
        dataclasses.replace(good, commission_amount="1" + "0" * 309),
        dataclasses.replace(good, currency="XYZ"),
        dataclasses.replace(good, transacted_at="9999-01-01T00:00:00Z"),
        dataclasses.replace(good, transacted_at="1989-01-01T00:00:00Z"),
        dataclasses.replace(good, sub_id="s" * 201),
    ):
        with pytest.raises(ValueError):
            await real_store.write(commissions.upsert, ACCOUNT, "awin", [bad])
    assert [r.commission_amount for r in (await stored(real_store)).values()] == ["1.00"]


# --- Workers: one per connection, bounded memory ---------------------------------------------


@pytest.mark.slow
async def test_two_workers_never_request_one_connection_at_once(
    hostile, settings, database, keyring, map_status
):
    """A slow network whose pages never end, a short lease: the run renews its lease as it
    works, and the other worker never requests the connection meanwhile."""
    hostile.mode = "endless_pages"
    hostile.delay = 0.02
    store = await open_store(database, writable=True, readers=1, timeout=10.0)
    try:
        await seed_store(store, keyring, ("affilae",))
        cfg = against(settings, hostile, "affilae")
        workers = [
            Worker(
                AccountSyncStore(store, name),
                credential_opener(keyring),
                map_status,
                WorkerConfig(
                    worker_id=name,
                    interval=dt.timedelta(seconds=0.2),
                    lease_seconds=1.5,
                    poll_seconds=0.1,
                    grace_seconds=0.2,
                ),
                cfg,
                SystemClock(),
            )
            for name in ("w1", "w2")
        ]
        stop = asyncio.Event()
        running = [asyncio.create_task(w.run(stop)) for w in workers]
        await asyncio.sleep(6)
        stop.set()
        await asyncio.gather(*running)
    finally:
        await store.close()
    # Six seconds of one run, four times its lease: renewed, never taken over.
    assert hostile.most_at_once == 1
    assert hostile.requests > 10


@dataclasses.dataclass
class FaultyStore(MemoryStore):
    """A store whose position read fails with an error that is not an outage of it."""

    recorded: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    async def load_position(self, conn):
        raise RuntimeError("not an outage")

    async def record_outcome(self, conn, report) -> None:
        await super().record_outcome(conn, report)
        self.recorded.set()


async def test_a_failure_that_is_no_store_outage_is_recorded_not_blamed_on_the_store(
    clock, settings, map_status, caplog
):
    from sync_support import CREDENTIALS, decrypt

    store = FaultyStore(clock)
    store.add(connection("awin"), CREDENTIALS["awin"])
    config = WorkerConfig(worker_id="w1", poll_seconds=0.01)
    worker = Worker(store, decrypt, map_status, config, settings, clock)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    async with asyncio.timeout(10):
        await store.recorded.wait()
    stop.set()
    await running
    (_, report), *_ = store.reports
    assert (report.outcome, report.reason.code) == (Outcome.ERROR, "internal_error")
    assert "RuntimeError" in report.reason.message
    assert "in the store" not in caplog.text


async def test_a_worker_keeps_a_bounded_number_of_reports(store, settings, map_status, clock):
    from sync_support import decrypt

    worker = Worker(store, decrypt, map_status, WorkerConfig("w"), settings, clock)
    assert worker.reports.maxlen == REPORTS_KEPT


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status)[1]) / 1024


@pytest.mark.slow
@pytest.mark.process
async def test_a_worker_answered_hugely_again_and_again_keeps_its_memory(
    hostile, tmp_path, keyring, transcript
):
    """A real `python -m sync` against a network whose every answer is endless or announced
    as 2 GB: its resident memory stays near its start, far under the answers' size."""
    database = str(tmp_path / "rss.sqlite3")
    store = await open_store(database, writable=True, readers=1)
    try:
        await seed_store(store, keyring_from_env({"EDGE_SECRET_KEY": SECRET}), ("affilae",))
    finally:
        await store.close()
    env = {**os.environ, "EDGE_DATABASE": database, "EDGE_SECRET_KEY": SECRET}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sync",
        "--poll-seconds",
        "0.1",
        "--interval-minutes",
        "0.002",
        "--base-url",
        f"affilae={hostile.url}/affilae",  # type: ignore[attr-defined]
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    samples: list[float] = []
    try:
        started = time.monotonic()
        while time.monotonic() - started < 12:
            hostile.mode = (
                "endless_body" if int(time.monotonic() - started) % 2 else "announced_huge"
            )
            await asyncio.sleep(0.1)
            samples.append(rss_mb(proc.pid))
    finally:
        proc.terminate()
        async with asyncio.timeout(30):
            await proc.wait()
    transcript.append(f"RSS samples (MB): {samples}")
    read = sum(hostile.sent)
    assert hostile.requests >= 5, hostile.requests
    assert read > 50 * 2**20  # far more was offered than the bound below
    assert max(samples) < 200, max(samples)
    store = await open_store(database, writable=False, readers=1)
    try:
        view = await store.read(connections.find, ACCOUNT, "affilae")
    finally:
        await store.close()
    assert (view.status, view.reason_code) == ("error", "response_too_large")
