"""The published status table (accounts/data/status_map.json) covers every connector."""

from __future__ import annotations

import pytest

from accounts.statusmap import UNKNOWN, load_status_map
from sync.connectors import CONNECTORS

TABLE = load_status_map()


@pytest.mark.parametrize("network", sorted(CONNECTORS))
def test_every_connector_has_a_table_of_its_own(network):
    assert network in TABLE.networks, f"{network} has no table in status_map.json"
    assert set(TABLE.tables[network].values()) == {"pending", "approved", "declined", "paid"}


@pytest.mark.parametrize(
    ("network", "raw", "status"),
    [
        ("kwanko", "pending_approval", "pending"),
        ("kwanko", "rejected", "declined"),
        ("tradedoubler", "A", "approved"),
        ("tradedoubler", "P", "pending"),
        ("tradedoubler", "D", "declined"),
        ("admitad", "approved_but_stalled", "approved"),
        ("awin", "deleted", "declined"),
        ("affilae", "Accepted & Locked", "approved"),
        ("affilae", "accepted-locked", "approved"),
        ("cj", "corrected", "declined"),
        ("tradedoubler", "X", UNKNOWN),
    ],
)
def test_the_research_words_map_as_documented(network, raw, status):
    assert TABLE.normalise(network, raw) == (status, raw)
