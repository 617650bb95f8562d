"""Fuzzing the two parsers that read client text: the query string and the cursor.

Whatever they are given, they either return values within the contract or raise ApiError
with a documented 400 code; any other exception would be a 500.
"""

from __future__ import annotations

import base64
import datetime as dt
import json

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from contract.endpoints import ENDPOINTS, Endpoint
from contract.vocabulary import ERROR_CODES
from edge.http.errors import ApiError
from edge.request import cursor
from edge.request.query import parse_query

SECRET = b"fuzz-secret-" + b"x" * 40
QUERY_CODES = {"invalid_parameter", "unknown_parameter", "invalid_date_range", "invalid_cursor"}

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text of every kind: control characters, surrogates, astral planes, and now and then huge.
any_text = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=40),
    st.text(st.sampled_from("0123456789-+. eE\x00\t\n\u00a0\u200b٣"), max_size=12),
    st.builds(lambda c, n: c * n, st.characters(), st.integers(1000, 100_000)),
)


def names_for(endpoint: Endpoint) -> st.SearchStrategy[str]:
    known = [p.name for p in endpoint.params]
    return st.one_of(st.sampled_from(known), any_text) if known else any_text


def values_for(endpoint: Endpoint) -> st.SearchStrategy[str]:
    plausible: list[str] = ["", "true", "false", "0", "1", "25", "100", "101", "-1", "fr"]
    plausible += ["2024-02-29", "2023-02-29", "2024-13-01", "9999-12-31", "0000-01-01"]
    for p in endpoint.params:
        plausible += list(p.enum or ())
    return st.one_of(st.sampled_from(plausible), any_text)


def check_parsed(endpoint: Endpoint, values: dict) -> None:
    """Accepted values are within the contract."""
    by_name = {p.name: p for p in endpoint.params}
    assert set(values) <= set(by_name)
    for name, value in values.items():
        p = by_name[name]
        if p.kind == "integer":
            assert type(value) is int and p.minimum <= value <= p.maximum
        elif p.kind == "enum":
            assert value in p.enum
        elif p.kind == "boolean":
            assert type(value) is bool
        elif p.kind == "market":
            assert len(value) == 2 and value.isascii() and value.isupper()
        elif p.kind == "date":
            assert type(value) is dt.date
        elif p.kind in ("string", "cursor"):
            assert isinstance(value, str) and value
    if "from" in values and "to" in values:
        assert values["from"] <= values["to"]


@pytest.mark.slow  # seconds: many generated queries per endpoint
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
def test_parse_query_never_fails_otherwise(endpoint):
    @FUZZ
    @given(st.lists(st.tuples(names_for(endpoint), values_for(endpoint)), max_size=8))
    @example([("\ud800" * 50, "x")])  # a lone surrogate in an unknown name: no crash
    @example([("limit", "9" * 100_000)])
    @example([("cursor", "\x00" * 2000)])
    def run(pairs: list[tuple[str, str]]) -> None:
        try:
            values = parse_query(endpoint, pairs)
        except ApiError as error:
            assert error.code in QUERY_CODES
            assert error.status == ERROR_CODES[error.code] == 400
            # param names the parameter; None only for what JSON cannot carry.
            assert error.param is None or isinstance(error.param.encode("utf-8"), bytes)
            assert (
                error.param is not None
                or error.code != "unknown_parameter"
                or any("\ud800" <= c <= "\udfff" for name, _ in pairs for c in name)
            )
            assert len(error.message) < 2000  # a huge value is never echoed whole
            return
        check_parsed(endpoint, values)

    run()


@pytest.mark.slow  # seconds: many generated queries per endpoint
@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.params], ids=lambda e: e.name)
def test_one_fault_is_reported_first_in_table_order(endpoint):
    """Two bad parameters: the error names the one earlier in the endpoint's table."""
    names = [p.name for p in endpoint.params if p.kind != "cursor"]

    @FUZZ
    @given(st.permutations(names), st.data())
    def run(order: list[str], data: st.DataObject) -> None:
        first, second = sorted(
            data.draw(st.sets(st.sampled_from(names), min_size=2, max_size=2)), key=names.index
        )
        pairs = [(name, "\x00bad") for name in order if name in (first, second)]
        with pytest.raises(ApiError) as caught:
            parse_query(endpoint, pairs)
        assert (caught.value.code, caught.value.param) == ("invalid_parameter", first)

    run()


# --- Cursors -------------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


cursor_text = st.one_of(
    any_text,
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
    st.tuples(st.binary(max_size=200), st.binary(max_size=20)).map(
        lambda pair: b64(pair[0]) + "." + b64(pair[1])
    ),
    st.from_regex(r"[A-Za-z0-9_\-=.]{0,120}", fullmatch=True),
)


def assert_invalid_cursor(token: str, endpoint: str = "programs", filters: dict | None = None):
    with pytest.raises(ApiError) as caught:
        cursor.decode(SECRET, token, endpoint, filters or {})
    assert (caught.value.code, caught.value.status, caught.value.param) == (
        "invalid_cursor",
        400,
        "cursor",
    )


@FUZZ
@given(cursor_text)
def test_decode_refuses_whatever_it_did_not_issue(token: str):
    assert_invalid_cursor(token)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=10,
)


@FUZZ
@given(json_values)
def test_decode_survives_any_payload_even_signed(payload):
    """Defence in depth: a payload signed with our secret but not of our shape is refused."""
    raw = json.dumps(payload).encode()  # unlike orjson, any integer, NaN-free floats
    token = b64(raw) + "." + b64(cursor._mac(SECRET, raw))
    try:
        position = cursor.decode(SECRET, token, "programs", {})
    except ApiError as error:
        assert error.code == "invalid_cursor"
        return
    assert isinstance(position, list)


filters_strategy = st.dictionaries(
    st.sampled_from(["vertical", "model", "market", "recurring", "minScore"]),
    st.one_of(st.none(), st.text(max_size=8), st.integers(0, 100), st.booleans()),
)


@FUZZ
@given(
    filters_strategy,
    st.lists(st.one_of(st.integers(0, 100), st.text(max_size=20)), max_size=3),
    st.integers(0, 200),
    st.characters(),
)
def test_round_trip_and_every_tampering_is_refused(filters, position, index, char):
    token = cursor.encode(SECRET, "programs", filters, position)
    assert token.isascii() and " " not in token
    assert cursor.decode(SECRET, token, "programs", filters) == position
    assert_invalid_cursor(token, "commissions", filters)
    other = {**filters, "vertical": "not-" + str(filters.get("vertical"))}
    assert_invalid_cursor(token, "programs", other)
    with pytest.raises(ApiError):
        cursor.decode(b"another-secret-" + b"y" * 40, token, "programs", filters)
    i = index % len(token)
    tampered = token[:i] + char + token[i + 1 :]
    assume(tampered != token)
    try:
        decoded = cursor.decode(SECRET, tampered, "programs", filters)
    except ApiError as error:
        assert error.code == "invalid_cursor"
    else:
        # Only base64 slack bits can change without changing the decoded bytes.
        assert decoded == position
