"""The event feed: every kind of write records exactly its events in its own transaction,
on both stores, with the same bytes of `data` as the API's JSON of the row; a rolled-back
write records none; pages, type filter, retention horizon and pruning."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
from pathlib import Path

import orjson
import pytest
from support.accountkit import StepClock, check_resource, new_commission

from accounts.importer import ExportError, read_export, text_lines
from accounts.statusmap import load_status_map
from contract.commission import FIELDS as COMMISSION_FIELDS
from contract.resources import BY_NAME, EVENT_DATA
from edge.handlers.account import commission_json
from store import (
    AccountStore,
    CommissionQuery,
    accounts,
    commissions,
    connections,
    open_store,
)
from store.base import NewCommission, format_timestamp
from store.core import Session
from store.events import (
    EventQuery,
    EventRow,
    account_events,
    events_page,
    prune,
)

START = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
UID = "acc_events"
STATUSES = load_status_map()


def commission(external_id: str, **changes: str | None) -> NewCommission:
    return new_commission(external_id, **{"program_name": "Matelas Nuage", **changes})


@pytest.fixture
async def events_store(database: str):
    clock = StepClock(START)
    store = await open_store(database, writable=True, readers=1, clock=clock)
    await store.write(accounts.create, None, "free", uid=UID)
    await store.write(accounts.create, None, "free", uid="acc_other")
    try:
        yield store, clock
    finally:
        await store.close()


async def feed(
    store: AccountStore, uid: str = UID, *, raw: bool = False, **options
) -> list[EventRow]:
    query = EventQuery(uid, limit=100, since=options.pop("since", "0000"), **options)
    rows = await store.read(account_events, query)
    if raw:
        return rows
    # As the feed sends them: the commission's public id in `data` (PublicIds.event_data).
    return [dataclasses.replace(r, data=store.ids.event_data(r.data)) for r in rows]


async def rows_by_id(store: AccountStore, uid: str = UID) -> dict[str, dict]:
    rows = await store.read(commissions.page, CommissionQuery(uid, limit=100))
    return {r.external_id: orjson.loads(orjson.dumps(commission_json(store.ids, r))) for r in rows}


def data(event: EventRow) -> dict:
    return orjson.loads(event.data)


async def test_new_rows_are_created_events_whose_data_is_the_listed_commission(events_store):
    store, clock = events_store
    await store.write(
        commissions.upsert, UID, "awin", [commission("A"), commission("B", sale_amount=None)]
    )
    events = await feed(store)
    assert [e.type for e in events] == ["commission.created"] * 2
    assert [e.occurred_at for e in events] == [clock.now()] * 2
    listed = await rows_by_id(store)
    stored = {
        r.external_id: r for r in await store.read(commissions.page, CommissionQuery(UID, 100))
    }
    for event in events:
        shown = data(event)
        # Byte for byte what GET /v1/commissions sends for the row.
        assert event.data.encode() == orjson.dumps(
            commission_json(store.ids, stored[shown["externalId"]])
        )
        assert shown == listed[shown["externalId"]]
        check_resource(shown, BY_NAME[EVENT_DATA[event.type]])
    assert events[0].seq < events[1].seq
    # Another account's feed holds none of them.
    assert await feed(store, "acc_other") == []


async def test_changes_of_status_or_money_are_updated_events_with_what_they_replaced(
    events_store,
):
    store, clock = events_store
    await store.write(
        commissions.upsert, UID, "awin", [commission("A"), commission("B"), commission("C")]
    )
    created = len(await feed(store))
    clock.advance(60)
    await store.write(
        commissions.upsert,
        UID,
        "awin",
        [
            commission("A", status="approved", raw_status="validated"),  # status
            commission("B", commission_amount="5.00"),  # amount correction
            commission("C"),  # unchanged
        ],
    )
    events = (await feed(store))[created:]
    assert [e.type for e in events] == ["commission.updated"] * 2
    assert {e.occurred_at for e in events} == {clock.now()}
    a, b = (data(e) for e in events)
    listed = await rows_by_id(store)
    assert {k: v for k, v in a.items() if k != "previous"} == listed["A"]
    assert a["status"] == "approved"
    assert a["previous"] == {
        "status": "pending",
        "rawStatus": "pending",
        "commissionAmount": 4.26,
        "saleAmount": 85.2,
        "currency": "EUR",
    }
    assert b["commissionAmount"] == 5.0 and b["previous"]["commissionAmount"] == 4.26
    assert '"commissionAmount":5.00,' in events[1].data  # the stored text, never a float
    for event in events:
        check_resource(data(event), BY_NAME["CommissionUpdate"])


@pytest.mark.parametrize(
    "change",
    [
        {"raw_status": "en attente"},  # the network's word only: history, no event
        {"program_name": "Renamed"},
        {"sub_id": "b"},
    ],
)
async def test_other_changes_and_unchanged_rows_record_no_event(events_store, change):
    store, _ = events_store
    await store.write(commissions.upsert, UID, "awin", [commission("A")])
    await store.write(commissions.upsert, UID, "awin", [commission("A")])
    await store.write(commissions.upsert, UID, "awin", [commission("A", **change)])
    assert [e.type for e in await feed(store)] == ["commission.created"]


async def test_the_currency_and_the_sale_amount_are_money_too(events_store):
    store, _ = events_store
    await store.write(commissions.upsert, UID, "awin", [commission("A")])
    await store.write(commissions.upsert, UID, "awin", [commission("A", currency="USD")])
    await store.write(
        commissions.upsert, UID, "awin", [commission("A", currency="USD", sale_amount=None)]
    )
    events = await feed(store)
    assert [e.type for e in events] == ["commission.created", *["commission.updated"] * 2]
    assert data(events[1])["previous"]["currency"] == "EUR"
    assert data(events[2])["previous"]["saleAmount"] == 85.2
    assert data(events[2])["saleAmount"] is None


async def test_a_sync_window_records_its_events(events_store):
    store, _ = events_store
    await store.write(connections.connect, UID, "awin", b"sealed")
    assert await store.write(connections.claim, UID, "awin", "w1", 600)
    await store.write(
        connections.write_window, UID, "awin", [commission("A"), commission("B")], "p1", "w1"
    )
    await store.write(
        connections.write_window, UID, "awin", [commission("A", status="declined")], "p2", "w1"
    )
    assert [e.type for e in await feed(store)] == [
        "commission.created",
        "commission.created",
        "commission.updated",
    ]


async def test_an_import_records_one_event_per_new_or_changed_row(events_store):
    store, _ = events_store
    text = (
        "externalId,status,commissionAmount,currency,transactedAt\n"
        "T-1,Validée,12.30,EUR,2026-03-04T10:11:12Z\n"
        "T-2,En attente,0.1,GBP,2026-03-05T00:00:00Z\n"
    )

    def chunks(body: str):
        stream = io.BytesIO(body.encode())
        return read_export(text_lines(stream, "csv"), "csv", "effiliation", STATUSES, chunk=1)

    await store.write(commissions.upsert_stream, UID, "effiliation", chunks(text))
    await store.write(
        commissions.upsert_stream, UID, "effiliation", chunks(text.replace("0.1", "0.2"))
    )
    events = await feed(store)
    assert [(e.type, data(e)["externalId"]) for e in events] == [
        ("commission.created", "T-1"),
        ("commission.created", "T-2"),
        ("commission.updated", "T-2"),
    ]
    assert (
        data(events[0])["commissionAmount"] == 12.3 and '"commissionAmount":12.30' in events[0].data
    )
    # A file with a problem after its first chunk was written: nothing of it stays.
    bad = (
        text.replace("T-2,En attente,0.1", "T-3,En attente,0.3")
        + "T-4,En attente,x,EUR,2026-03-05\n"
    )
    with pytest.raises(ExportError):
        await store.write(commissions.upsert_stream, UID, "effiliation", chunks(bad))
    assert len(await feed(store)) == 3


async def fail_after_writing(s: Session, rows: list[NewCommission], now: str) -> None:
    await commissions.upsert(s, UID, "awin", rows)
    await s.execute(
        "UPDATE networks SET status = 'error', last_sync_at = ? WHERE network = 'awin'", now
    )
    raise RuntimeError("after the writes")


async def test_a_rolled_back_write_records_no_event(events_store):
    store, clock = events_store
    await store.write(connections.connect, UID, "awin", b"sealed")
    await store.write(commissions.upsert, UID, "awin", [commission("A")])
    with pytest.raises(RuntimeError, match="after the writes"):
        await store.write(
            fail_after_writing, [commission("A", status="approved"), commission("B")], clock.now()
        )
    assert [e.type for e in await feed(store)] == ["commission.created"]
    # The failed write's ids are gone with it; the next event still comes after.
    await store.write(commissions.upsert, UID, "awin", [commission("C")])
    events = await feed(store)
    assert [data(e)["externalId"] for e in events] == ["A", "C"]


async def test_sync_outcomes_record_failures_and_recoveries(events_store):
    store, clock = events_store
    await store.write(connections.connect, UID, "awin", b"sealed")
    outcomes = [
        ("ok", None, None),  # never -> ok: nothing to report
        ("auth_failed", ("auth_rejected", "the network refused the key"), "sync_failed"),
        ("error", ("network_down", "503 from the network"), None),  # still failing
        ("partial", ("deadline", "the lease ended"), "recovered"),
        ("error", ("network_down", "503"), "sync_failed"),
        ("ok", None, "recovered"),
        ("ok", None, None),
    ]
    expected = []
    for status, reason, event in outcomes:
        clock.advance(3600)
        before = await store.read(connections.find, UID, "awin")
        assert before is not None
        await store.write(connections.record_outcome, UID, "awin", status, reason)
        if event is not None:
            expected.append(
                (
                    f"connection.{event}",
                    clock.now(),
                    {
                        "network": "awin",
                        "status": status,
                        "previousStatus": before.status,
                        "reasonCode": None if reason is None else reason[0],
                        "lastSuccessAt": (
                            clock.now() if status == "ok" else (await last_success(store))
                        ),
                    },
                )
            )
    events = await feed(store)
    assert [(e.type, e.occurred_at, data(e)) for e in events] == expected
    for event in events:
        check_resource(data(event), BY_NAME["ConnectionChange"])
    assert "503 from the network" not in "".join(e.data for e in events)  # no message


async def last_success(store: AccountStore) -> str | None:
    view = await store.read(accounts.find, UID)
    assert view is not None
    return next(n.last_success_at for n in view.networks if n.network == "awin")


async def test_an_operators_recorded_outcome_is_an_event_too(events_store):
    store, _ = events_store
    await store.write(connections.connect, UID, "cj", b"sealed")
    await store.write(
        connections.record_sync, UID, "cj", "error", accounts=1, programs=0, transactions=0
    )
    await store.write(
        connections.record_sync, UID, "cj", "ok", accounts=1, programs=2, transactions=3
    )
    events = await feed(store)
    assert [e.type for e in events] == ["connection.sync_failed", "connection.recovered"]
    assert data(events[0])["previousStatus"] == "never"


async def test_pages_resume_after_the_last_event_and_filter_by_type(events_store):
    store, _ = events_store
    await store.write(connections.connect, UID, "awin", b"sealed")
    await store.write(commissions.upsert, UID, "awin", [commission(f"C{n}") for n in range(5)])
    await store.write(connections.record_outcome, UID, "awin", "error", ("network_down", "down"))
    await store.write(commissions.upsert, UID, "awin", [commission("C0", status="approved")])
    everything = await feed(store, raw=True)
    assert len(everything) == 7
    first = await store.read(account_events, EventQuery(UID, 3, "0000"))
    rest = await store.read(account_events, EventQuery(UID, 100, "0000", after=first[-1].seq))
    assert first + rest == everything
    chosen = ("connection.sync_failed", "commission.updated")
    only = await feed(store, types=chosen)
    assert [e.type for e in only] == ["connection.sync_failed", "commission.updated"]
    assert [e.seq for e in only] == [e.seq for e in everything if e.type in chosen]


async def test_a_type_filter_reads_a_bounded_stretch_of_the_feed(events_store):
    store, _ = events_store
    await store.write(connections.connect, UID, "awin", b"sealed")
    await store.write(commissions.upsert, UID, "awin", [commission(f"C{n}") for n in range(12)])
    await store.write(connections.record_outcome, UID, "awin", "error", ("network_down", "down"))
    everything = await feed(store, raw=True)
    wanted = ("connection.sync_failed",)
    # Scanning 5 events a page: two pages find nothing and say how far they read.
    pages, after = [], None
    while True:
        query = EventQuery(UID, 3, "0000", types=wanted, after=after)
        page = await store.read(events_page, query, 5)
        pages.append(page)
        if page.scanned_to is None:
            break
        assert page.rows == []
        after = page.scanned_to
    assert [p.scanned_to for p in pages[:-1]] == [everything[4].seq, everything[9].seq]
    assert [e.type for e in pages[-1].rows] == ["connection.sync_failed"]
    # A page that fills up within the scan needs no position of its own.
    full = await store.read(
        events_page, EventQuery(UID, 3, "0000", types=("commission.created",)), 5
    )
    assert len(full.rows) == 3 and full.scanned_to is None
    # Without a filter, every event matches: no scan bound.
    plain = await store.read(events_page, EventQuery(UID, 100, "0000"), 5)
    assert plain.rows == everything and plain.scanned_to is None


async def test_the_retention_horizon_hides_and_pruning_deletes_older_events(events_store):
    store, clock = events_store
    await store.write(commissions.upsert, UID, "awin", [commission("old")])
    clock.advance(31 * 86400)
    await store.write(commissions.upsert, UID, "awin", [commission("new")])
    horizon = format_timestamp(clock() - dt.timedelta(days=30))
    assert [data(e)["externalId"] for e in await feed(store, since=horizon)] == ["new"]
    assert len(await feed(store)) == 2
    assert await prune(store, horizon, batch=1) == 1
    remaining = await feed(store)
    assert [data(e)["externalId"] for e in remaining] == ["new"]
    # Pruned ids are never reused: a reader past them misses nothing written later.
    assert await prune(store, format_timestamp(clock() + dt.timedelta(seconds=1))) == 1
    await store.write(commissions.upsert, UID, "awin", [commission("later")])
    (later,) = await feed(store)
    assert later.seq > remaining[0].seq


async def test_deleting_an_account_deletes_its_events(events_store):
    store, _ = events_store
    await store.write(commissions.upsert, UID, "awin", [commission("A")])

    async def delete(s: Session) -> None:
        await s.execute("DELETE FROM accounts WHERE uid = ?", UID)

    await store.write(delete)
    count = await store.read(_count_events)
    assert count == 0


async def _count_events(s: Session) -> int:
    return int(await s.fetchval("SELECT count(*) FROM events"))


WEIRD_TEXT = [
    'quote " and backslash \\',
    "tab\tnewline\nreturn\r",
    "nul-free controls \x01\x1f\x7f",
    "accents éàü, 中文, emoji 😀, line sep \u2028 para \u2029",
    "</script><!-- -->",
]


@pytest.mark.parametrize("text", WEIRD_TEXT)
async def test_any_text_is_escaped_as_the_api_escapes_it(events_store, text):
    store, _ = events_store
    # Written below the importer's checks: the store's JSON must hold whatever a row holds.

    async def insert(s: Session) -> None:
        await s.execute(
            "INSERT INTO commissions (account_id, network, external_id, program_name, status, "
            "raw_status, commission_amount, currency, transacted_at, sub_id, imported_at, "
            "updated_at) VALUES ((SELECT id FROM accounts WHERE uid = ?), 'awin', ?, ?, "
            "'pending', ?, '-0.000000000001', 'EUR', '2026-01-01T00:00:00Z', ?, ?, ?)",
            UID,
            text,
            text,
            text,
            text,
            START.strftime("%Y-%m-%dT%H:%M:%SZ"),
            START.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )

    await store.write(insert)
    (event,) = await feed(store)
    (row,) = await store.read(commissions.page, CommissionQuery(UID, limit=1))
    assert event.data.encode() == orjson.dumps(commission_json(store.ids, row))
    assert data(event)["subId"] == text


async def test_both_stores_write_the_same_events(tmp_path: Path, pg_url: str):
    """The same writes on SQLite and PostgreSQL: the same types, instants and data bytes."""
    results = []
    for database in (str(tmp_path / "same.sqlite3"), pg_url):
        clock = StepClock(START)
        store = await open_store(database, writable=True, readers=1, clock=clock)
        try:
            await store.write(accounts.create, None, "free", uid=UID)
            await store.write(connections.connect, UID, "awin", b"sealed")
            await store.write(
                commissions.upsert,
                UID,
                "awin",
                [commission("A"), commission("B", sale_amount=None, sub_id=None)],
            )
            clock.advance(10)
            await store.write(
                connections.record_outcome, UID, "awin", "error", ("network_down", "down")
            )
            await store.write(
                commissions.upsert,
                UID,
                "awin",
                [commission("A", status="paid", commission_amount="4.260"), commission("B")],
            )
            clock.advance(10)
            await store.write(connections.record_outcome, UID, "awin", "ok", None)
            # The bytes the databases wrote (each store's own key then translates them).
            events = await feed(store, raw=True)
            results.append([(e.type, e.occurred_at, e.data) for e in events])
        finally:
            await store.close()
    sqlite_events, pg_events = results
    assert len(sqlite_events) == 6
    assert sqlite_events == pg_events


async def test_every_field_of_a_commission_reaches_its_page_and_its_events(events_store):
    # Every text field of contract.commission.FIELDS given a value of its own: a field the
    # store, the page, the answer or the events' triggers leave out is found missing here.
    store, _ = events_store
    texts = {f.name: f"{f.name}-1" for f in COMMISSION_FIELDS if f.kind == "text" and f.nullable}
    await store.write(commissions.upsert, UID, "awin", [commission("F", **texts)])
    await store.write(
        commissions.upsert, UID, "awin", [commission("F", **texts, status="approved")]
    )
    (row,) = await store.read(commissions.page, CommissionQuery(UID, 100))
    assert {name: getattr(row, name) for name in texts} == texts
    shown = (await rows_by_id(store))["F"]
    assert {f.member: shown[f.member] for f in COMMISSION_FIELDS if f.name in texts} == {
        f.member: texts[f.name] for f in COMMISSION_FIELDS if f.name in texts
    }
    created, updated = await feed(store)
    assert data(created) == {**shown, "status": "pending", "rawStatus": "raw_status-1"}
    assert {k: v for k, v in data(updated).items() if k != "previous"} == shown
