"""Per-network status normalisation, kept as data in accounts/data/status_map.json."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from accounts.statusmap import fold, load_status_map, parse_status_map
from contract.vocabulary import COMMISSION_STATUSES

REQUIRED_NETWORKS = (
    "awin",
    "cj",
    "effiliation",
    "kwanko",
    "tradedoubler",
    "partnerize",
    "impact",
    "rakuten",
    "affilae",
)


def test_the_packaged_map_covers_the_networks_and_every_status():
    statuses = load_status_map()
    for network in REQUIRED_NETWORKS:
        table = statuses.tables[network]
        assert set(table.values()) == {"pending", "approved", "declined", "paid"}, network


def test_the_data_file_is_written_folded():
    raw = json.loads(resources.files("accounts").joinpath("data/status_map.json").read_text())
    for network, table in raw.items():
        if not network.startswith("_"):
            assert all(fold(word) == word for word in table), network


@pytest.mark.parametrize(
    ("network", "raw", "status"),
    [
        ("awin", "Pending", "pending"),
        ("awin", "DELETED", "declined"),
        ("cj", "new", "pending"),
        ("cj", "locked", "approved"),
        ("cj", "closed", "paid"),
        ("effiliation", "Validée", "approved"),
        ("effiliation", "  EN   ATTENTE ", "pending"),
        ("effiliation", "Refusée", "declined"),
        ("effiliation", "Payée", "paid"),
        ("kwanko", "refused", "declined"),
        ("tradedoubler", "A", "approved"),
        ("tradedoubler", "p", "pending"),
        ("tradedoubler", "D", "declined"),
        ("partnerize", "rejected", "declined"),
        ("impact", "REVERSED", "declined"),
        ("impact", "Locked", "approved"),
        ("rakuten", "Non-Commissionable", "declined"),
        ("rakuten", "payment_pending", "approved"),
        ("affilae", "accepted", "approved"),
        ("some-new-network", "Approved", "approved"),  # the default table
    ],
)
def test_raw_words_map_per_network_ignoring_case_accents_and_spacing(network, raw, status):
    assert load_status_map().normalise(network, raw) == (status, raw)


@pytest.mark.parametrize(
    ("network", "raw"),
    [("awin", "On hold"), ("cj", "approved-ish"), ("tradedoubler", "X"), ("cj", "pending")],
)
def test_unmapped_words_become_unknown_and_keep_the_raw_wording(network, raw):
    assert load_status_map().normalise(network, raw) == ("unknown", raw)


def test_no_status_at_all_is_unknown_without_raw_status():
    assert load_status_map().normalise("awin", None) == ("unknown", None)
    assert load_status_map().normalise("awin", "  ") == ("unknown", None)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"x": {"ok": "fine"}}, "not one of"),
        ({"x": {"ok": "unknown"}}, "not one of"),
        ({"x": {"OK": "approved"}}, "folded"),
        ({"x": ["approved"]}, "expected an object"),
    ],
)
def test_a_bad_map_is_refused(data, message):
    with pytest.raises(ValueError, match=message):
        parse_status_map(data)


def test_statuses_in_the_map_are_the_contract_ones():
    values = {s for t in load_status_map().tables.values() for s in t.values()}
    assert values <= set(COMMISSION_STATUSES)
