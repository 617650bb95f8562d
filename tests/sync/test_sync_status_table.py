"""The published status table (accounts/data/status_map.json) and the connectors agree."""

from __future__ import annotations

import pytest

from accounts.statusmap import UNKNOWN, load_status_map
from sync.connectors import CONNECTORS

TABLE = load_status_map()


@pytest.mark.parametrize("network", sorted(CONNECTORS))
def test_every_word_a_connector_declares_maps_the_same_in_the_published_table(network):
    spec = CONNECTORS[network].spec
    assert network in TABLE.networks, f"{network} has no table in status_map.json"
    differ = {
        word: (status, TABLE.normalise(network, word)[0])
        for word, status in spec.status_words.items()
        if TABLE.normalise(network, word)[0] != status
    }
    assert not differ, f"{network}: declared vs published: {differ}"


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
