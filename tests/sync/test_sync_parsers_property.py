"""Every connector's response parser, given anything a network or a broken proxy could send
(random bytes, cut answers, wrong types, huge numbers): transactions within the contract, or
a SyncError that names the network. Never another exception, never a value out of shape."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakes import FAKES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict
from sync_support import CREDENTIALS, load_records

from accounts.statusmap import load_status_map
from contract.vocabulary import COMMISSION_STATUSES
from store.base import AMOUNT_RE, TIMESTAMP_RE
from sync.connectors import CONNECTORS
from sync.connectors.base import CallContext, Credentials, Page
from sync.errors import SyncError
from sync.http import HttpResponse
from sync.model import Window

RECORDINGS = Path(__file__).resolve().parent / "recordings"
TABLE = load_status_map()
WINDOW = Window(dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2026, 1, 31, tzinfo=dt.UTC))
# A network asked for one date per call (Sovrn) is parsed a one-day window.
DAY = Window(WINDOW.start, WINDOW.start + dt.timedelta(days=1))
NETWORKS = sorted(CONNECTORS)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Each example draws once per leaf of a whole recorded answer: fewer, larger examples.
PER_LEAF = settings(
    PROPERTY,
    max_examples=20,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def context(network: str) -> CallContext:
    spec = CONNECTORS[network].spec
    return CallContext(
        spec=spec,
        base_url="http://127.0.0.1:1",
        credentials=Credentials(CREDENTIALS[network]),
        currency="EUR",
        page_size=spec.page_size or 100,
        map_status=TABLE.status,
    )


def recorded(network: str) -> bytes:
    """The network's recorded records as its first (and only) page of the window, in the
    envelope its API wraps them in (as the fake networks of the conformance tests do)."""
    records = load_records(network)
    return FAKES[network].answer(records, context(network).page_size)


def parse(network: str, body: bytes) -> Page:
    """`body` as the network answers it: with the headers it sends, for a window it takes."""
    fake = FAKES[network]
    window = DAY if fake.one_day_per_call else WINDOW
    headers = CIMultiDict(fake.answer_headers)
    return CONNECTORS[network].parse(
        context(network), window, None, HttpResponse(200, headers, body)
    )


def check(network: str, body: bytes) -> None:
    """The property itself."""
    try:
        page = parse(network, body)
    except SyncError as exc:
        # The place: the network (messages are fixed text, never the body).
        assert network in exc.message or exc.code, exc.message
        # (A prefix shorter than 16 bytes may be a word of the fixed text, e.g. a column name.)
        assert body[:40].decode("utf-8", "replace") not in exc.message or len(body) < 16
        return
    for row in page.transactions:
        assert row.network == network
        assert row.external_id and isinstance(row.external_id, str)
        assert row.status in COMMISSION_STATUSES
        assert AMOUNT_RE.fullmatch(row.commission_amount), row.commission_amount
        assert row.sale_amount is None or AMOUNT_RE.fullmatch(row.sale_amount)
        assert re.fullmatch(r"[A-Z]{3}", row.currency), row.currency
        assert TIMESTAMP_RE.fullmatch(row.transacted_at), row.transacted_at
        assert row.clicked_at is None or TIMESTAMP_RE.fullmatch(row.clicked_at)
    for refused in page.refused:
        assert refused.code and refused.message


def mutate(value: Any, draw: Any) -> Any:
    """`value` with some leaves replaced by values of another type or size."""
    if isinstance(value, dict):
        return {k: mutate(v, draw) for k, v in value.items()}
    if isinstance(value, list):
        return [mutate(v, draw) for v in value]
    if draw(st.integers(0, 3)) == 0:
        return draw(
            st.one_of(
                st.none(),
                st.booleans(),
                st.integers(min_value=-(10**30), max_value=10**30),
                st.floats(allow_nan=False),
                st.text(max_size=12),
                st.lists(st.integers(), max_size=2),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                st.sampled_from(["1e400", "-0.000", "NaN", "12,50", "１２", "9" * 40]),
            )
        )
    return value


@pytest.mark.parametrize("network", NETWORKS)
def test_the_recorded_answer_parses_within_the_contract(network):
    page = parse(network, recorded(network))
    assert page.transactions, network
    check(network, recorded(network))


@pytest.mark.parametrize("network", NETWORKS)
@PROPERTY
@given(body=st.binary(max_size=400))
def test_random_bytes_never_crash_a_parser(network, body):
    check(network, body)


@pytest.mark.parametrize("network", NETWORKS)
@PROPERTY
@given(data=st.data())
def test_a_cut_answer_never_crashes_a_parser(network, data):
    full = recorded(network)
    cut = data.draw(st.integers(min_value=0, max_value=len(full)))
    check(network, full[:cut])


def is_json(network: str) -> bool:
    return FAKES[network].truncated_type == "application/json"


@pytest.mark.slow  # seconds: every leaf of every JSON network's answer
@pytest.mark.parametrize("network", [n for n in NETWORKS if is_json(n)])
@PER_LEAF
@given(data=st.data())
def test_wrong_types_and_huge_numbers_never_crash_a_parser(network, data):
    document = json.loads(recorded(network))
    check(network, json.dumps(mutate(document, data.draw)).encode())


def as_text(original: Any, value: Any) -> Any:
    """A mutated record as an XML or CSV answer writes it: where the recorded value was
    one cell, the new value is that cell's text (empty for None)."""
    if isinstance(original, dict):
        return {k: as_text(v, value[k]) for k, v in original.items()}
    if isinstance(original, list):
        return [as_text(o, v) for o, v in zip(original, value, strict=True)]
    return "" if value is None else str(value)


# The XML and CSV networks (Effiliation's pipe-separated cells have a test of their own).
TEXT_NETWORKS = [n for n in NETWORKS if not is_json(n) and n != "effiliation"]


@pytest.mark.parametrize("network", TEXT_NETWORKS)
@PER_LEAF
@given(data=st.data())
def test_cells_of_any_kind_never_crash_an_xml_or_csv_parser(network, data):
    """The recorded records with some values replaced, written in the network's own
    format (XML elements, CSV cells): refused or read, never a crash."""
    fake = FAKES[network]
    original = load_records(network)
    records = as_text(original, mutate(original, data.draw))
    check(network, fake.answer(records, context(network).page_size))


@PROPERTY
@given(data=st.data())
def test_effiliation_csv_cells_of_any_kind_never_crash_its_parser(data):
    lines = recorded("effiliation").decode("utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    cells = [row.split("|") for row in rows]
    text = st.one_of(
        st.text(max_size=15),
        st.sampled_from(["", "-", "1e400", "9" * 40, "12,50", "2026-13-45", "\x00", '"']),
    )
    for row in cells:
        index = data.draw(st.integers(0, len(row) - 1))
        row[index] = data.draw(text).replace("\n", " ")
    check("effiliation", "\n".join([header, *("|".join(r) for r in cells)]).encode())
