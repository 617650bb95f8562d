"""The published status table (accounts/data/status_map.json) covers every connector."""

from __future__ import annotations

import pytest
from fakes import FAKES
from sync_support import FLIPPING

from accounts.statusmap import UNKNOWN, load_status_map
from contract.vocabulary import COMMISSION_STATUSES
from sync.connectors import CONNECTORS

TABLE = load_status_map()


@pytest.mark.parametrize("network", sorted(CONNECTORS))
def test_every_connector_has_a_table_of_its_own(network):
    """A table per network, mapping only to statuses; empty where the network sends no
    status word (Sovrn, ClickBank: a refund is a row of its own)."""
    assert network in TABLE.networks, f"{network} has no table in status_map.json"
    assert set(TABLE.tables[network].values()) <= set(COMMISSION_STATUSES) - {UNKNOWN}


@pytest.mark.parametrize("network", FLIPPING)
def test_the_words_a_fake_flips_to_map_as_the_fake_expects(network):
    """The status table and the fakes agree: the word a network changes a record to maps
    to the status the conformance suite expects of it (unknown only for a word the
    research leaves unconfirmed, which the table then leaves out)."""
    flip = FAKES[network].flip
    assert flip is not None
    assert TABLE.normalise(network, flip.raw) == (flip.status, flip.raw)


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
