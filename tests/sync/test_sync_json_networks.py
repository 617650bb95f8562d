"""What the conformance suite (test_sync_connectors.py) does not ask of the JSON networks
added one module each: their own ways of dating, paging, reversing and refusing."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from fakes import FAKES

from sync.model import Outcome


def find(networks, network: str, external_id: str) -> dict[str, Any]:
    id_field = FAKES[network].id_field
    (record,) = [r for r in networks[network].records if str(r[id_field]) == external_id]
    return record


def poisoned(member: str, value: object):
    """Sets a record's member to `value`, the fake still filing it where it was (`__`)."""

    def change(record: dict[str, Any]) -> None:
        record[f"__{member}"] = record[member]
        record[member] = value

    return change


# (network, record, poison, what the refusal names): values no commission holds.
POISONS = [
    ("rakuten", "t-1006", poisoned("currency", "XYZ"), "currency"),
    ("rakuten", "t-1006", poisoned("transaction_date", "yesterday"), "transaction date"),
    (
        "rakuten",
        "t-1006",
        poisoned("transaction_date", "Thu Jan 01 2099 00:00:00 GMT+0000 (UTC)"),
        "future",
    ),
    ("partnerstack", "rwrd_7", poisoned("amount", "12.5"), "minor units must be whole"),
    ("partnerstack", "rwrd_5", poisoned("currency", "USDT"), "currency"),
    ("skimlinks", "9006", poisoned("commission_id", None), "id"),
    ("flexoffers", "700006", poisoned("currency", "EURO"), "currency"),
    ("adtraction", "adt-6", poisoned("currency", "XYZ"), "currency"),
]


@pytest.mark.parametrize(("network", "external_id", "poison", "reason"), POISONS)
async def test_a_poison_value_refuses_its_record_with_the_reason(
    network, external_id, poison, reason, networks, store, run_sync
):
    poison(find(networks, network, external_id))
    report = await run_sync(network)
    assert report.outcome is Outcome.PARTIAL, report.reason
    assert report.reason.code == "records_refused"
    assert reason in report.reason.message
    assert external_id in report.reason.message or reason == "id"
    assert external_id not in store.rows_of(network)


async def test_rakuten_a_return_of_an_old_order_comes_through_the_process_date_feed(
    networks, store, clock, run_sync
):
    """Events' transaction-date windows reach back two weeks; a return of an older order is
    found by its process date, as a row of its own with negative amounts."""
    from fakes.rakuten import js_date

    await run_sync("rakuten")
    clock.advance(6 * 3600)
    networks["rakuten"].records.append(
        {
            **find(networks, "rakuten", "t-1006"),
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
    find(networks, "rakuten", "t-1003")["u1"] = "sub-late"
    clock.advance(6 * 3600)
    report = await run_sync("rakuten")
    assert report.outcome is Outcome.OK, report.reason
    assert store.rows_of("rakuten")["t-1003"].sub_id == "sub-late"
    assert report.counts.updated == 1


async def test_rakuten_media_optimisation_events_are_no_commission(networks, store, run_sync):
    await run_sync("rakuten")
    assert find(networks, "rakuten", "t-1005")["is_event"] is True
    assert "t-1005" not in store.rows_of("rakuten")


def test_rakuten_reads_javascript_dates_and_leaves_others_to_the_date_parser():
    from sync.connectors.rakuten import js_date

    assert js_date("Wed Jan 07 2026 10:12:00 GMT+0100 (CET)") == "2026-01-07T10:12:00+01:00"
    assert js_date("2026-01-07T10:12:00Z") == "2026-01-07T10:12:00Z"
    assert js_date("Wed Foo 07 2026 10:12:00 GMT+0000") == "Wed Foo 07 2026 10:12:00 GMT+0000"
    assert js_date(17) == 17


async def test_skimlinks_keeps_its_token_until_it_ends_and_renews_a_refused_one(
    networks, store, clock, run_sync
):
    from sync_support import decrypt, seal

    await run_sync("skimlinks", seal=seal)
    (conn,) = [c for c in store.connections if c.network == "skimlinks"]
    kept = decrypt(conn, store.credentials[(conn.account_uid, "skimlinks")])
    assert kept["accessToken"] == "skim-token-1" and kept["clientSecret"]
    clock.advance(6 * 3600)
    again = await run_sync("skimlinks", seal=seal)
    assert again.outcome is Outcome.OK and networks["skimlinks"].tokens == ["skim-token-1"]
    clock.advance(7 * 86400)  # past its seven days: a new one
    await run_sync("skimlinks", seal=seal)
    assert networks["skimlinks"].tokens == ["skim-token-1", "skim-token-2"]
    networks["skimlinks"].tokens.append("skim-token-revoked")  # the stored one is refused
    clock.advance(3600)
    report = await run_sync("skimlinks", seal=seal)
    assert report.outcome is Outcome.OK, report.reason
    assert networks["skimlinks"].tokens[-1] == "skim-token-4"


async def test_skimlinks_without_a_store_for_its_token_still_syncs(networks, store, run_sync):
    report = await run_sync("skimlinks")
    assert report.outcome is Outcome.OK, report.reason
    assert len(networks["skimlinks"].tokens) == 1


async def test_flexoffers_204_is_a_window_without_sales(networks, store, run_sync):
    from sync_support import Canned

    networks["flexoffers"].inject.append(Canned(204, b""))
    report = await run_sync("flexoffers")
    assert report.outcome is Outcome.OK, report.reason
    # The first window (December and early January) answered nothing.
    assert set(store.rows_of("flexoffers")) == {"700004", "700005", "700006"}


async def test_flexoffers_statuses_under_maintenance_fail_the_window_for_the_next_run(
    networks, store, run_sync
):
    from sync_support import Canned

    body = b'{"message": "All status is currently under maintenance"}'
    networks["flexoffers"].inject.append(Canned(400, body))
    report = await run_sync("flexoffers")
    assert report.outcome in (Outcome.PARTIAL, Outcome.ERROR)
    assert report.reason.code == "network_error"
    assert report.position is None
    again = await run_sync("flexoffers")
    assert again.outcome is Outcome.OK, again.reason
    assert len(store.rows_of("flexoffers")) == 6


def test_offsetless_times_are_read_in_the_network_zone():
    from zoneinfo import ZoneInfo

    from sync.connectors.base import in_zone

    eastern = ZoneInfo("America/New_York")
    assert in_zone("2026-01-05T10:00:00", eastern) == "2026-01-05T10:00:00-05:00"
    assert in_zone("2026-07-05T10:00:00", eastern) == "2026-07-05T10:00:00-04:00"
    assert in_zone("2026-07-05T10:00:00Z", eastern) == "2026-07-05T10:00:00Z"
    assert in_zone("soon", eastern) == "soon"


async def test_partnerstack_more_pages_without_a_cursor_is_malformed_not_the_end(
    networks, store, run_sync
):
    for record in networks["partnerstack"].records:
        record.pop("key")
    report = await run_sync("partnerstack")
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "malformed_response"


# Networks whose change filter reaches a transaction older than any re-scan: a record of
# that age, and how the network shows it changed (its status word and its change date).
OLD_CHANGES = {
    "skimlinks": ("9006", "commission_id", ("cancelled", "declined")),
    "ebay": ("5000000006", "EpnTransactionId", ("Reversed", "declined")),
}


def _age(network: str, record: dict[str, Any], moment: dt.datetime) -> None:
    """Date the record's transaction at `moment`, as the network writes it."""
    if network == "skimlinks":
        record["transaction_details"]["transaction_date"] = moment.strftime("%Y-%m-%d %H:%M:%S")
    else:
        record["EventDate"] = moment.strftime("%Y-%m-%dT%H:%M:%S+0000")


def _change(network: str, record: dict[str, Any], word: str, moment: dt.datetime) -> None:
    from sync_support import stamp_change

    if network == "skimlinks":
        record["status"] = word
    else:
        record["Status"] = word
    stamp_change(network, record, "status", moment)


@pytest.mark.parametrize("network", sorted(OLD_CHANGES))
async def test_a_change_to_a_transaction_older_than_any_rescan_reaches_the_store(
    network, networks, store, clock, run_sync
):
    import copy

    from sync.connectors import CONNECTORS

    source, id_field, (word, status) = OLD_CHANGES[network]
    spec = CONNECTORS[network].spec
    await run_sync(network)
    old = copy.deepcopy(find(networks, network, source))
    old[id_field] = f"{source}9" if isinstance(old[id_field], str) else old[id_field] * 10 + 9
    _age(network, old, clock.now() - spec.rescan - dt.timedelta(days=100))
    clock.advance(3600)
    _change(network, old, word, clock.now())  # changed now: the change filter reports it
    networks[network].records.append(old)
    clock.advance(6 * 3600)
    report = await run_sync(network)
    assert report.outcome is Outcome.OK, report.reason
    row = store.rows_of(network)[str(old[id_field])]
    assert (row.status, row.raw_status) == (status, word)
    assert row.transacted_at < (clock.now() - spec.rescan).strftime("%Y-%m-%dT%H:%M:%SZ")
