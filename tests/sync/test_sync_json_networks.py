"""The JSON networks' connectors against their fakes (tests/sync/fakes/<network>.py),
written from each network's published answer shapes and replaying
recordings/<network>/: a first sync, pages, 401, 429 with Retry-After, windows kept to
the network's largest, a status flip, corrections as new rows, poison values refused."""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import logging
from typing import Any

import pytest
from aiohttp import web
from support.clock import FakeClock
from sync_support import (
    Canned,
    FakeNetworks,
    MemoryStore,
    NetState,
    connection,
    expected,
    load_records,
    max_in_any_period,
)

from sync.connectors import CONNECTORS
from sync.model import Outcome
from sync.runner import SyncSettings

NETWORKS = ("rakuten",)
FAKES = {n: importlib.import_module(f"fakes.{n}") for n in NETWORKS}
PLANTED = tuple(v for f in FAKES.values() for v in f.CREDENTIALS.values() if "PLANTED" in v)
END = dt.datetime(2026, 3, 15, 12, tzinfo=dt.UTC)


class JsonNetworks(FakeNetworks):
    """One loopback server for these networks, each under /<network>, each answered by
    its fake's `handle`."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.states = {n: NetState(n, load_records(n)) for n in NETWORKS}
        self.app = web.Application()
        self.app.router.add_route("*", "/{network}/{tail:.*}", self.handle)
        for network, fake in FAKES.items():
            setattr(self, f"_{network}", fake.handle)


@pytest.fixture
async def networks(aiohttp_server: Any, clock: FakeClock) -> JsonNetworks:
    fake = JsonNetworks(clock)
    server = await aiohttp_server(fake.app, access_log=None)
    fake.url = str(server.make_url("")).rstrip("/")  # type: ignore[attr-defined]
    return fake


@pytest.fixture
def store(clock: FakeClock) -> MemoryStore:
    memory = MemoryStore(clock)
    for network, fake in FAKES.items():
        memory.add(connection(network), fake.CREDENTIALS)
    return memory


@pytest.fixture
def settings(networks: JsonNetworks, settings: SyncSettings) -> SyncSettings:
    return dataclasses.replace(
        settings,
        base_urls={n: f"{networks.url}/{n}" for n in CONNECTORS},  # type: ignore[attr-defined]
        page_sizes={n: f.PAGE_SIZE for n, f in FAKES.items()},
    )


@pytest.fixture(autouse=True)
def no_planted_credentials(caplog: pytest.LogCaptureFixture):
    """These networks' planted credentials reach no log line (conftest guards the others)."""
    caplog.set_level(logging.DEBUG)
    yield
    text = "\n".join(r.getMessage() for r in caplog.get_records("call"))
    assert not [v for v in PLANTED if v in text]


def assert_rate_kept(networks: JsonNetworks, network: str) -> None:
    rate = CONNECTORS[network].spec.rate
    seen = max_in_any_period(networks[network].times(), rate.seconds)
    assert seen <= rate.requests, f"{network} saw {seen} requests in {rate.seconds}s"


def view(row) -> dict[str, Any]:
    return {
        "status": row.status,
        "rawStatus": row.raw_status,
        "commissionAmount": row.commission_amount,
        "saleAmount": row.sale_amount,
        "currency": row.currency,
        "subId": row.sub_id,
        "transactedAt": row.transacted_at,
        "originalId": row.original_id,
        "statusReason": row.status_reason,
    }


def record(networks: JsonNetworks, network: str, external_id: str) -> dict[str, Any]:
    (found,) = [
        r for r in networks[network].records if str(FAKES[network].read_id(r)) == external_id
    ]
    return found


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_first_sync_collects_every_recorded_row(network, networks, store, run_sync):
    report = await run_sync(network)
    assert report.outcome is Outcome.OK, report.reason
    rows = store.rows_of(network)
    wanted = expected(network)
    assert set(rows) == set(wanted)
    for external_id, fields in wanted.items():
        shown = view(rows[external_id])
        assert {k: shown[k] for k in fields} == fields, external_id
    assert report.counts.inserted == len(wanted)
    assert report.position is not None and report.position.complete_through == END
    assert networks[network].too_long == 0
    assert_rate_kept(networks, network)


@pytest.mark.parametrize("network", NETWORKS)
async def test_no_request_asks_for_more_than_the_network_window(network, networks, run_sync):
    report = await run_sync(network)
    assert report.outcome is Outcome.OK
    spec = CONNECTORS[network].spec
    asked = networks[network].windows
    assert len(set(asked)) >= 2
    assert all(last - first < spec.max_window for first, last in asked)
    assert networks[network].too_long == 0


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_window_the_network_finds_too_large_fails_and_is_not_kept(
    network, networks, store, run_sync
):
    spec = CONNECTORS[network].spec
    wider = dataclasses.replace(spec, max_window=spec.max_window * 3)
    connector = type(CONNECTORS[network])()
    connector.spec = wider  # type: ignore[misc]
    report = await run_sync(network, connectors={**CONNECTORS, network: connector})
    assert report.outcome is not Outcome.OK
    assert networks[network].too_long > 0
    assert report.position is None or report.position.complete_through < END


@pytest.mark.parametrize("network", NETWORKS)
async def test_several_pages_are_all_fetched(network, networks, store, run_sync):
    await run_sync(network)
    windows = len(set(networks[network].windows))
    assert len(networks[network].seen) > windows, "some window should take several pages"
    assert len(store.rows_of(network)) == len(expected(network))


@pytest.mark.parametrize("network", NETWORKS)
async def test_rerunning_a_sync_changes_nothing(network, networks, store, run_sync):
    await run_sync(network)
    before = dict(store.rows)
    again = await run_sync(network)
    assert again.outcome is Outcome.OK, again.reason
    assert store.rows == before
    assert (again.counts.inserted, again.counts.updated) == (0, 0)
    assert_rate_kept(networks, network)


@pytest.mark.parametrize("network", NETWORKS)
async def test_429_with_retry_after_is_waited_out(network, networks, store, clock, run_sync):
    networks[network].inject.append(Canned(429, b'{"message":"rate"}', {"Retry-After": "37"}))
    report = await run_sync(network)
    assert report.outcome is Outcome.OK, report.reason
    assert 37 in clock.slept
    assert len(store.rows_of(network)) == len(expected(network))
    assert_rate_kept(networks, network)


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("network", NETWORKS)
async def test_401_and_403_are_auth_failed(network, status, networks, store, run_sync):
    networks[network].inject.append(Canned(status, b'{"message":"denied"}'))
    report = await run_sync(network)
    assert report.outcome is Outcome.AUTH_FAILED
    assert report.reason.code == "auth_rejected"
    assert network in report.reason.message
    assert store.rows_of(network) == {}


@pytest.mark.parametrize("network", NETWORKS)
async def test_the_network_own_bad_credential_answer_is_auth_failed(
    network, networks, store, run_sync
):
    networks[network].reject_auth = True
    report = await run_sync(network)
    assert report.outcome is Outcome.AUTH_FAILED, report.reason
    assert report.reason.code == "auth_rejected"
    assert store.rows_of(network) == {}


@pytest.mark.parametrize("network", [n for n in NETWORKS if FAKES[n].FLIP])
async def test_a_status_that_flips_between_two_syncs_updates_the_same_row(
    network, networks, store, clock, run_sync
):
    await run_sync(network)
    external_id, flip, raw, status = FAKES[network].FLIP
    clock.advance(6 * 3600)
    flip(record(networks, network, external_id), clock.now())
    report = await run_sync(network)
    assert report.outcome is Outcome.OK, report.reason
    rows = store.rows_of(network)
    assert len(rows) == len(expected(network))
    assert (rows[external_id].status, rows[external_id].raw_status) == (status, raw)
    assert report.counts.updated == 1


@pytest.mark.parametrize(
    ("network", "external_id", "poison", "reason"),
    [(n, *case) for n in NETWORKS for case in FAKES[n].POISONS],
)
async def test_a_poison_value_refuses_its_record_with_the_reason(
    network, external_id, poison, reason, networks, store, run_sync
):
    poison(record(networks, network, external_id))
    report = await run_sync(network)
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "records_refused"
    assert external_id in report.reason.message and reason in report.reason.message
    assert report.counts.refused >= 1
    rows = store.rows_of(network)
    assert external_id not in rows
    assert len(rows) == len(expected(network)) - 1


async def test_rakuten_a_return_processed_late_comes_as_a_new_negative_row(
    networks, store, clock, run_sync
):
    """A return of an order older than any transaction-date window the run reads arrives
    through the process-date feed, as a row of its own with negative amounts."""
    from fakes.rakuten import js_date

    await run_sync("rakuten")
    clock.advance(6 * 3600)
    networks["rakuten"].records.append(
        {
            **record(networks, "rakuten", "t-1006"),
            "etransaction_id": "t-2001",
            "sale_amount": -99,
            "commissions": -5,
            "transaction_date": js_date(clock.now() - dt.timedelta(days=40)),
            "process_date": js_date(clock.now() - dt.timedelta(hours=1)),
        }
    )
    report = await run_sync("rakuten")
    assert report.outcome is Outcome.OK, report.reason
    row = store.rows_of("rakuten")["t-2001"]
    assert (row.commission_amount, row.sale_amount, row.status) == ("-5", "-99", "pending")
    assert store.rows_of("rakuten")["t-1006"].commission_amount == "5.00"


async def test_rakuten_a_sub_id_that_arrives_late_fills_the_stored_row(
    networks, store, clock, run_sync
):
    await run_sync("rakuten")
    assert store.rows_of("rakuten")["t-1003"].sub_id is None
    record(networks, "rakuten", "t-1003")["u1"] = "sub-late"
    clock.advance(6 * 3600)
    report = await run_sync("rakuten")
    assert report.outcome is Outcome.OK, report.reason
    assert store.rows_of("rakuten")["t-1003"].sub_id == "sub-late"
    assert report.counts.updated == 1


def test_rakuten_reads_javascript_dates_and_refuses_what_is_not_one():
    from sync.connectors.rakuten import js_date

    assert js_date("Wed Jan 07 2026 10:12:00 GMT+0100 (CET)") == "2026-01-07T10:12:00+01:00"
    assert js_date("2026-01-07T10:12:00Z") == "2026-01-07T10:12:00Z"
    assert js_date("Wed Foo 07 2026 10:12:00 GMT+0000") == "Wed Foo 07 2026 10:12:00 GMT+0000"
    assert js_date(17) == 17
