"""What some networks' answers do that the conformance suite does not ask of every network:
errors as HTTP 200 (Digistore24, TimeOne), pages by status 206 and a single record as an
object (ClickBank), accounting negatives and a report without its header (AvantLink), one
day per call and one call a minute (Sovrn), Commission Factory's limits, and Belboon's
empty report told from an answer that is none."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from sync_support import Canned, expected, max_in_any_period

from sync.connectors import CONNECTORS
from sync.model import Outcome


async def test_digistore24_errors_in_http_200_are_told_apart(networks, store, run_sync):
    networks["digistore24"].inject.append(
        Canned(200, b'{"result": "error", "code": 42, "message": "Daily quota exceeded"}')
    )
    report = await run_sync("digistore24")
    assert report.outcome in (Outcome.PARTIAL, Outcome.ERROR)
    assert report.reason.code == "network_error"
    assert "code 42" in report.reason.message
    assert "quota" not in report.reason.message  # the network's words are not repeated


async def test_digistore24_a_refused_key_in_http_200_is_auth_failed(networks, store, run_sync):
    networks["digistore24"].reject_auth = True
    report = await run_sync("digistore24")
    assert report.outcome is Outcome.AUTH_FAILED
    assert networks["digistore24"].seen and store.rows_of("digistore24") == {}


async def test_clickbank_reads_206_as_more_pages_and_one_record_as_an_object(
    networks, store, run_sync
):
    report = await run_sync("clickbank")
    assert report.outcome is Outcome.OK, report.reason
    # A window of three transactions: a page of two (206), then one as an object (200).
    assert len(networks["clickbank"].seen) == len(set(networks["clickbank"].windows)) + 1
    assert set(store.rows_of("clickbank")) == set(expected("clickbank"))


@pytest.mark.parametrize(
    ("body", "outcome"),
    [(b"{}", Outcome.OK), (b'{"orderData": null}', Outcome.OK), (b'{"error": "x"}', None)],
    ids=["empty object", "null orderData", "other members"],
)
async def test_clickbank_no_orders_is_told_from_an_answer_that_is_none(
    body, outcome, networks, store, run_sync
):
    networks["clickbank"].inject.append(Canned(200, body))
    report = await run_sync("clickbank")
    if outcome is Outcome.OK:
        assert report.outcome is Outcome.OK, report.reason
    else:
        assert report.reason is not None and report.reason.code == "malformed_response"


async def test_clickbank_a_refund_is_its_own_negative_row_naming_its_sale(store, run_sync):
    await run_sync("clickbank")
    rows = store.rows_of("clickbank")
    refund = rows["CBR0001A:RFND:2026-02-03T12:00:00-08:00"]
    assert (refund.commission_amount, refund.original_id) == ("-23.50", "CBR0001A")
    assert rows["CBR0001A"].commission_amount == "23.50"


async def test_avantlink_accounting_negatives_stay_negative(store, run_sync):
    await run_sync("avantlink")
    returned = store.rows_of("avantlink")["10060:ORD-1:RETURN:2026-01-20 08:00:00"]
    assert (returned.commission_amount, returned.sale_amount) == ("-4.26", "-85.20")
    assert store.rows_of("avantlink")["10060:ORD-2"].sale_amount == "1250.00"


@pytest.mark.parametrize(
    "body",
    [b"", b"Error: the report could not be generated", b"Merchant,Order_Id\nShop,1\n"],
    ids=["empty", "text", "other columns"],
)
async def test_avantlink_an_answer_without_the_report_header_is_never_an_empty_report(
    body, networks, store, run_sync
):
    networks["avantlink"].inject.append(Canned(200, body, content_type="text/csv"))
    report = await run_sync("avantlink")
    assert report.outcome in (Outcome.PARTIAL, Outcome.ERROR)
    assert report.reason.code == "malformed_response"
    assert report.position is None


async def test_timeone_plain_text_limit_answer_stops_the_run_until_it_passes(
    networks, store, run_sync
):
    networks["timeone"].inject.append(
        Canned(200, b"You reached the limit of 3 call(s) in the last 900 seconds (15 min)")
    )
    report = await run_sync("timeone")
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "rate_limited"
    assert report.resume_at == report.finished_at + dt.timedelta(seconds=900)
    assert len(networks["timeone"].seen) == 1  # nothing more was asked of it


async def test_timeone_keeps_three_calls_per_quarter_hour(networks, store, settings, run_sync):
    longer = dataclasses.replace(settings, backfill=dt.timedelta(days=300))
    report = await run_sync("timeone", settings=longer)
    assert report.outcome is Outcome.OK, report.reason
    assert len(networks["timeone"].seen) >= 10
    assert max_in_any_period(networks["timeone"].times(), 900) <= 3


async def test_sovrn_asks_one_day_per_call_and_one_call_a_minute(networks, store, run_sync):
    report = await run_sync("sovrn")
    assert report.outcome is Outcome.OK, report.reason
    asked = networks["sovrn"].seen
    # 90 days of backfill from a day boundary to today noon: 91 days, one call each.
    assert len(asked) == 91
    assert len({s.query["updateDate"] for s in asked}) == 91
    assert all(set(s.query) == {"updateDate"} for s in asked)
    assert max_in_any_period(networks["sovrn"].times(), 60) == 1


async def test_commissionfactory_keeps_its_published_limits(networks, store, settings, run_sync):
    longer = dataclasses.replace(settings, backfill=dt.timedelta(days=700))
    report = await run_sync("commissionfactory", settings=longer)
    assert report.outcome is Outcome.OK, report.reason
    times = networks["commissionfactory"].times()
    assert max_in_any_period(times, 60) <= 30
    assert max_in_any_period(times, 86400) <= 1000
    assert networks["commissionfactory"].most_in_flight == 1


async def test_commissionfactory_a_void_is_declined_with_its_reason(store, run_sync):
    await run_sync("commissionfactory")
    void = store.rows_of("commissionfactory")["50004"]
    assert (void.status, void.raw_status, void.status_reason) == (
        "declined",
        "Void",
        "commissionfactory:void",
    )


@pytest.mark.parametrize(
    ("body", "outcome"),
    [
        (b"<transactions/>", Outcome.OK),
        (b"<result><message>maintenance</message></result>", Outcome.ERROR),
    ],
    ids=["empty report", "other content"],
)
async def test_belboon_an_empty_report_is_told_from_an_answer_that_is_none(
    body, outcome, networks, store, run_sync
):
    networks["belboon"].inject.append(Canned(200, body, content_type="text/xml"))
    report = await run_sync("belboon")
    if outcome is Outcome.OK:
        assert report.outcome is Outcome.OK, report.reason
    else:
        assert report.outcome in (Outcome.PARTIAL, Outcome.ERROR)
        assert report.reason.code == "malformed_response"


async def test_belboon_and_timeone_refuse_xml_with_entities(networks, store, run_sync):
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><transactions>&b;</transactions>'
    )
    for network in ("belboon", "timeone"):
        networks[network].inject.append(Canned(200, bomb, content_type="text/xml"))
        report = await run_sync(network)
        assert report.reason is not None and report.reason.code == "malformed_response"


def test_every_unconfirmed_fact_is_named_in_the_spec_notes():
    for network in ("sovrn", "digistore24", "clickbank", "timeone", "belboon", "avantlink"):
        assert any("[U]" in note for note in CONNECTORS[network].spec.notes), network
