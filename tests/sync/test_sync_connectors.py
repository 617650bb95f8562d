"""The conformance suite: every connector against its fake network (tests/sync/fakes/),
the same cases for each. A new network passes it by declaring its fake; the cases that
need the real account stores are in test_sync_stores.py (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import datetime as dt
from decimal import Decimal

import aiohttp
import pytest
from fakes import FAKES
from sync_support import (
    CREDENTIALS,
    FLIPPING,
    NETWORKS,
    Canned,
    connection,
    decrypt,
    expected,
    max_in_any_period,
    stamp_change,
)

from sync.connectors import CONNECTORS
from sync.http import NetworkClient
from sync.model import Outcome
from sync.ratelimit import Limiters
from sync.runner import Syncer, sync_connection

PAGED = tuple(n for n, f in FAKES.items() if f.paged)


def test_every_registered_connector_has_its_fake_and_recordings():
    assert set(CONNECTORS) == set(FAKES) == set(NETWORKS)
    for network in NETWORKS:
        assert expected(network), f"recordings/{network}/expected.json holds no row"


def assert_rate_kept(networks, network: str) -> None:
    """No period of any documented rate saw more requests than it allows, nor more at
    once than the documented concurrency."""
    spec = CONNECTORS[network].spec
    for rate in spec.rates:
        seen = max_in_any_period(networks[network].times(), rate.seconds)
        assert seen <= rate.requests, f"{network} saw {seen} requests in {rate.seconds}s"
    if spec.concurrency is not None:
        assert networks[network].most_in_flight <= spec.concurrency


def find(networks, network: str, external_id: str) -> dict:
    """The fake network's record of `external_id`."""
    id_field = FAKES[network].id_field
    (record,) = [r for r in networks[network].records if str(r[id_field]) == external_id]
    return record


def row_view(row) -> dict:
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


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_first_sync_collects_every_recorded_row(network, networks, store, run_sync):
    report = await run_sync(network)
    assert report.outcome is Outcome.OK, report.reason
    rows = store.rows_of(network)
    wanted = expected(network)
    assert set(rows) == set(wanted)
    for external_id, fields in wanted.items():
        view = row_view(rows[external_id])
        assert {k: view[k] for k in fields} == fields, external_id
    assert report.counts.inserted == len(wanted)
    assert report.position is not None and report.position.complete_through == dt.datetime(
        2026, 3, 15, 12, tzinfo=dt.UTC
    )
    assert networks[network].too_long == 0
    assert_rate_kept(networks, network)


@pytest.mark.parametrize("network", NETWORKS)
async def test_no_request_asks_for_more_than_the_network_window(network, networks, store, run_sync):
    # 90 days of backfill is longer than any network's window: it must be cut.
    report = await run_sync(network)
    assert report.outcome is Outcome.OK
    spec = CONNECTORS[network].spec
    asked = networks[network].windows
    assert len(set(asked)) >= 2
    assert all(last - first < spec.max_window for first, last in asked)
    assert networks[network].too_long == 0


@pytest.mark.parametrize("network", PAGED)
async def test_several_pages_are_all_fetched(network, networks, store, run_sync):
    await run_sync(network)
    paths = [s for s in networks[network].seen if s.method == "GET" or network == "cj"]
    windows = len(set(networks[network].windows))
    assert len(paths) > windows, "some window should have taken more than one page"
    assert len(store.rows_of(network)) == len(expected(network))


@pytest.mark.parametrize("network", NETWORKS)
async def test_rerunning_a_sync_changes_nothing(network, networks, store, run_sync):
    await run_sync(network)
    before = dict(store.rows)
    again = await run_sync(network)
    assert again.outcome is Outcome.OK
    assert store.rows == before
    assert (again.counts.inserted, again.counts.updated) == (0, 0)
    if CONNECTORS[network].spec.rescan:
        assert again.counts.unchanged > 0  # the lock period was re-scanned
    assert_rate_kept(networks, network)


@pytest.mark.parametrize("network", NETWORKS)
async def test_429_with_retry_after_is_waited_out(network, networks, store, clock, run_sync):
    networks[network].inject.append(Canned(429, b'{"error":"rate"}', {"Retry-After": "37"}))
    report = await run_sync(network)
    assert report.outcome is Outcome.OK
    assert 37 in clock.slept
    assert len(store.rows_of(network)) == len(expected(network))
    assert_rate_kept(networks, network)


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_5xx_then_success_is_retried(network, networks, store, clock, run_sync):
    networks[network].inject.extend(
        [
            Canned(503, b"upstream"),
            Canned(502, b"<html>bad gateway</html>", content_type="text/html"),
        ]
    )
    report = await run_sync(network)
    assert report.outcome is Outcome.OK
    assert len(store.rows_of(network)) == len(expected(network))
    # Exponential backoff: the second wait is longer than the first.
    assert clock.slept[:2] == sorted(clock.slept[:2]) and clock.slept[0] > 0


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("network", NETWORKS)
async def test_401_and_403_are_auth_failed(network, status, networks, store, run_sync):
    networks[network].inject.append(Canned(status, b'{"error":"denied"}'))
    report = await run_sync(network)
    assert report.outcome is Outcome.AUTH_FAILED
    assert report.reason.code == "auth_rejected"
    assert store.rows_of(network) == {}
    assert network in report.reason.message


@pytest.mark.parametrize("network", NETWORKS)
async def test_the_network_own_bad_credential_answer_is_auth_failed(
    network, networks, store, run_sync
):
    networks[network].reject_auth = True
    report = await run_sync(network)
    assert report.outcome is Outcome.AUTH_FAILED, report.reason
    assert report.reason.code == "auth_rejected"
    assert store.rows_of(network) == {}
    assert store.reports[-1][1] is report


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_truncated_body_fails_its_window_and_the_next_run_recovers(
    network, networks, store, run_sync
):
    fake = FAKES[network]
    networks[network].inject.append(Canned(200, fake.truncated, content_type=fake.truncated_type))
    first = await run_sync(network)
    assert first.outcome in (Outcome.PARTIAL, Outcome.ERROR)
    assert first.reason.code == "malformed_response"
    # The failed window was the first forward one: the position did not move past it.
    assert first.position is None
    second = await run_sync(network)
    assert second.outcome is Outcome.OK
    assert len(store.rows_of(network)) == len(expected(network))


@pytest.mark.parametrize("network", FLIPPING)
async def test_a_status_that_flips_between_two_syncs_updates_the_same_row(
    network, networks, store, clock, run_sync
):
    await run_sync(network)
    flip = FAKES[network].flip
    assert flip is not None
    external_id, raw, status = flip.external_id, flip.raw, flip.status
    record = find(networks, network, external_id)
    record[flip.member] = raw
    stamp_change(network, record, "status", clock.now())
    clock.advance(6 * 3600)
    report = await run_sync(network)
    assert report.outcome is Outcome.OK
    rows = store.rows_of(network)
    assert len(rows) == len(expected(network))
    assert rows[external_id].status == status
    assert rows[external_id].raw_status == raw
    assert report.counts.updated == 1


async def test_a_window_over_the_network_cap_is_split_until_it_fits(networks, store, run_sync):
    networks["impact"].cap = 1
    report = await run_sync("impact")
    assert report.outcome is Outcome.OK
    assert report.counts.windows_split > 0
    assert len(store.rows_of("impact")) == len(expected("impact"))


async def test_a_window_that_cannot_be_split_small_enough_is_partial(networks, store, run_sync):
    networks["impact"].cap = 0
    report = await run_sync("impact")
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "window_capped"
    # Everything after the window that could not be fetched waits for the next run.
    assert report.position is None or report.position.complete_through < dt.datetime(
        2026, 3, 15, tzinfo=dt.UTC
    )


async def test_cj_corrections_stay_signed_and_name_their_original(networks, store, run_sync):
    await run_sync("cj")
    rows = store.rows_of("cj")
    original, correction = rows["2292067664"], rows["2292067700"]
    assert original.commission_amount == "7.78"
    assert correction.commission_amount == "-7.78"
    assert correction.original_id == "2292067664"
    assert correction.status_reason == "cj:correction:RETURNED_MERCHANDISE"


async def test_cj_without_a_declared_currency_fetches_nothing_and_says_why(
    networks, store, run_sync
):
    from sync_support import connection

    report = await run_sync("cj", connection=connection("cj", currency=None))
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "currency_missing"
    assert networks["cj"].seen == []


async def test_a_record_without_currency_is_refused_with_its_reason(networks, store, run_sync):
    record = networks["awin"].records[1]
    record["commissionAmount"] = {"amount": 12.0}
    report = await run_sync("awin")
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "records_refused"
    assert "currency" in report.reason.message
    assert str(record["id"]) not in store.rows_of("awin")
    assert report.counts.refused == 1


async def test_kwanko_records_without_currency_take_the_connection_currency(
    networks, store, run_sync
):
    await run_sync("kwanko")
    assert store.rows_of("kwanko")["5550004"].currency == "EUR"


async def test_an_expired_token_is_renewed_once(networks, store, run_sync):
    networks["tradedoubler"].revoke_token_after = 2
    report = await run_sync("tradedoubler")
    assert report.outcome is Outcome.OK
    assert len(networks["tradedoubler"].tokens) == 3  # first, "expired", renewed
    assert len(store.rows_of("tradedoubler")) == len(expected("tradedoubler"))


async def test_published_rates_hold_over_a_long_backfill(networks, store, settings, run_sync):
    # A year of Awin in 31-day windows, plus retries: never more than 20 requests a minute.
    conn_settings = dataclasses.replace(settings, backfill=dt.timedelta(days=700))
    for _ in range(3):
        networks["awin"].inject.append(Canned(500, b"oops"))
    report = await run_sync("awin", settings=conn_settings)
    assert report.outcome is Outcome.OK
    assert len(networks["awin"].seen) > 20
    assert_rate_kept(networks, "awin")


async def test_retry_after_longer_than_allowed_fails_the_window_as_rate_limited(
    networks, store, run_sync
):
    networks["awin"].inject.append(Canned(429, b"", {"Retry-After": "86400"}))
    report = await run_sync("awin")
    assert report.outcome in (Outcome.PARTIAL, Outcome.ERROR)
    assert report.reason.code == "rate_limited"


async def test_5xx_that_never_ends_is_an_error(networks, store, run_sync):
    for _ in range(200):
        networks["kwanko"].inject.append(Canned(500, b"down"))
    report = await run_sync("kwanko")
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "network_unavailable"
    assert store.rows_of("kwanko") == {}


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_corrected_amount_updates_the_same_row(network, networks, store, clock, run_sync):
    await run_sync(network)
    fake = FAKES[network]
    external_id = fake.sample  # a record the change feeds or re-scan reach
    record = find(networks, network, external_id)
    before = store.rows_of(network)[external_id]
    wire, stored = fake.amended
    fake.set_commission(record, wire)
    stamp_change(network, record, "amount", clock.now())
    clock.advance(6 * 3600)
    report = await run_sync(network)
    assert report.outcome is Outcome.OK, report.reason
    assert report.counts.updated == 1
    rows = store.rows_of(network)
    assert len(rows) == len(expected(network))
    assert rows[external_id].commission_amount == stored != before.commission_amount
    assert rows[external_id].currency == before.currency


NO_CURRENCY = sorted(n for n, f in FAKES.items() if f.drop_currency is not None)


@pytest.mark.parametrize("network", NO_CURRENCY)
async def test_a_record_without_its_currency_is_refused_never_guessed(
    network, networks, store, run_sync
):
    record = networks[network].records[0]
    FAKES[network].drop_currency(record)
    report = await run_sync(network)
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "records_refused"
    assert "currency" in report.reason.message
    assert report.counts.refused == 1
    rows = store.rows_of(network)
    assert str(record[FAKES[network].id_field]) not in rows
    assert len(rows) == len(expected(network)) - 1


@pytest.mark.parametrize("network", ["tradedoubler", "effiliation"])
async def test_a_record_without_currency_takes_the_connection_one_where_the_network_allows(
    network, networks, store, run_sync
):
    record = networks[network].records[0]
    FAKES[network].drop_currency(record)
    conn = connection(network, currency="NOK")
    store.add(conn, CREDENTIALS[network])
    report = await run_sync(network, connection=conn)
    assert report.outcome is Outcome.OK, report.reason
    assert store.rows_of(network)[str(record[FAKES[network].id_field])].currency == "NOK"


async def test_runs_side_by_side_each_count_only_their_own_requests(
    networks, store, settings, clock, map_status
):
    """A worker's runs share one client: each report counts the requests it sent."""
    networks["awin"].delay = 0.01  # the two runs' requests interleave
    networks["partnerize"].delay = 0.01
    async with aiohttp.ClientSession() as session:
        client = NetworkClient(session, clock, settings.retry, rand=lambda: 0.5)
        syncer = Syncer(store, decrypt, map_status, client, Limiters(clock), settings)
        reports = await asyncio.gather(
            *(sync_connection(syncer, connection(n)) for n in ("awin", "partnerize"))
        )
    for network, report in zip(("awin", "partnerize"), reports, strict=True):
        assert report.outcome is Outcome.OK, report.reason
        assert report.counts.requests == len(networks[network].seen) > 0, network


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_reversal_reaches_the_store_as_the_network_reports_it(
    network, networks, store, clock, run_sync
):
    """A status word on the same row, or a new negative row naming its original."""
    await run_sync(network)
    reversal = FAKES[network].reversal
    records = networks[network].records
    reversal.apply(records, find(networks, network, reversal.target), clock.now())
    clock.advance(6 * 3600)
    report = await run_sync(network)
    assert report.outcome is Outcome.OK, report.reason
    row = store.rows_of(network)[reversal.external_id]
    assert (row.status, row.commission_amount) == (reversal.status, reversal.amount)
    if reversal.external_id != reversal.target:
        # The original's id, where the network's reversal names it.
        assert row.original_id == (reversal.target if reversal.names_original else None)
        assert store.rows_of(network)[reversal.target].commission_amount == reversal.amount[1:]


# Commission amounts no network means: each is refused with the row's id and the reason.
POISON = ("12abc", "NaN", Decimal("1E+309"), "", None, True, {"amount": 1})


@pytest.mark.parametrize("poison", POISON, ids=repr)
@pytest.mark.parametrize("network", NETWORKS)
async def test_a_poison_amount_is_refused_with_the_row_and_its_reason(
    network, poison, networks, store, run_sync
):
    fake = FAKES[network]
    record = find(networks, network, fake.sample)
    fake.set_commission(record, poison)
    report = await run_sync(network)
    assert report.outcome is Outcome.PARTIAL, report.reason
    assert report.reason.code == "records_refused"
    assert fake.sample in report.reason.message
    assert "commission" in report.reason.message or "record" in report.reason.message
    assert report.counts.refused == 1
    rows = store.rows_of(network)
    assert fake.sample not in rows
    assert len(rows) == len(expected(network)) - 1


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_window_too_large_for_the_network_is_never_taken_for_an_empty_one(
    network, networks, store, run_sync
):
    """A spec that asks for more than the network answers meets the network's own error:
    the run is not ok and its position does not pass the window refused."""
    connector = copy.copy(CONNECTORS[network])
    spec = connector.spec
    connector.spec = dataclasses.replace(  # type: ignore[misc]
        spec, max_window=spec.max_window * 3, granularity=dt.timedelta(days=1)
    )
    report = await run_sync(network, connectors={**CONNECTORS, network: connector})
    if FAKES[network].one_day_per_call:
        # Asked for one date, the network cannot see a longer window: its connector knows
        # the answer holds one day only and splits the window, never taking it as whole.
        assert report.counts.windows_split > 0
        assert all(last - first < dt.timedelta(days=1) for first, last in networks[network].windows)
        assert len(store.rows_of(network)) == len(expected(network))
        return
    assert networks[network].too_long > 0
    assert report.outcome in (Outcome.PARTIAL, Outcome.ERROR), report.reason
    assert report.position is None


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_backfill_of_two_years_ends_complete_within_every_limit(
    network, networks, store, settings, run_sync
):
    years = dataclasses.replace(settings, backfill=dt.timedelta(days=730))
    report = await run_sync(network, settings=years)
    assert report.outcome is Outcome.OK, report.reason
    assert len(store.rows_of(network)) == len(expected(network))
    assert networks[network].too_long == 0
    assert_rate_kept(networks, network)
