"""The importer, given anything an operator's file could hold (random bytes, cut files, wrong
types, huge numbers): commissions within the contract, or an ExportError whose every problem
names a line of the file and a field. Never another exception, never part of a file."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.importkit import parse_export

from accounts.importer import FORMATS, ExportError, decode
from accounts.statusmap import load_status_map
from contract.vocabulary import COMMISSION_STATUSES
from store.base import AMOUNT_RE, TIMESTAMP_RE, NewCommission

STATUSES = load_status_map()
PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GOOD_CSV = (
    "externalId,programName,status,saleAmount,commissionAmount,currency,transactedAt,subId\n"
    "T-1,Matelas Nuage,Validée,120.00,12.30,EUR,2026-03-04T10:11:12Z,sub-a\n"
    "T-2,Factureo,En attente,,0.10,GBP,2026-03-05T00:00:00Z,\n"
    "T-3,,refusée,99,-4.50,USD,1772600000,x\n"
)
GOOD_JSONL = "".join(
    json.dumps(record) + "\n"
    for record in (
        {"externalId": "J-1", "status": "locked", "commissionAmount": "12.30", "currency": "EUR",
         "transactedAt": "2026-03-04T10:11:12Z"},
        {"externalId": "J-2", "status": "new", "commissionAmount": 0.1, "currency": "CHF",
         "transactedAt": "2026-03-04T10:11:12+05:30", "saleAmount": 10},
        {"externalId": "J-3", "status": "extended", "commissionAmount": "-1", "currency": "USD",
         "transactedAt": 1772600000},
    )
)  # fmt: skip
GOOD = {"csv": GOOD_CSV, "jsonl": GOOD_JSONL}
LINES = {fmt: text.count("\n") for fmt, text in GOOD.items()}

# Values a broken exporter or a hand-edited file could put in any field.
WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.sampled_from(
        ["1e400", "9" * 5000, "NaN", "-0", "1,5", "EUR ", "\x00", "9999-12-31T23:59:59Z"]
    ),
)
FIELDS = ["externalId", "status", "commissionAmount", "saleAmount", "currency", "transactedAt",
          "clickedAt", "programName", "subId"]  # fmt: skip


def outcome(text: str, fmt: str) -> list[NewCommission] | ExportError:
    """Rows or the ExportError; any other exception fails the test that calls it."""
    try:
        return parse_export(text, fmt, "awin", STATUSES)
    except ExportError as error:
        return error


def assert_well_formed(result: list[NewCommission] | ExportError, lines: int) -> None:
    """Rows hold only contract values; problems each name a line of the file and a field."""
    if isinstance(result, ExportError):
        assert result.problems
        for problem in result.problems:
            assert 1 <= problem.line <= max(lines, 1), problem
            assert problem.field and problem.message, problem
            assert "Traceback" not in problem.message
        return
    seen = set()
    for row in result:
        assert row.external_id and row.external_id not in seen
        seen.add(row.external_id)
        assert AMOUNT_RE.fullmatch(row.commission_amount), row
        assert row.sale_amount is None or AMOUNT_RE.fullmatch(row.sale_amount), row
        assert row.status in COMMISSION_STATUSES, row
        assert TIMESTAMP_RE.fullmatch(row.transacted_at), row
        assert len(row.currency) == 3 and row.currency.isupper(), row


def line_count(text: str, fmt: str) -> int:
    """The lines of `text` as its reader counts them: JSONL ends a line at LF only, CSV also
    at a lone CR (the csv module's line ends: CRLF, LF and CR)."""
    breaks = text.count("\n") if fmt == "jsonl" else len(re.findall(r"\r\n|\r|\n", text))
    return breaks + 1


@pytest.mark.parametrize("fmt", FORMATS)
@PROPERTY
@given(data=st.binary(max_size=400))
def test_random_bytes_are_rows_or_problems_with_a_place(fmt, data):
    try:
        text = decode(data)
    except ExportError as error:
        assert_well_formed(error, line_count(data.decode("latin-1"), fmt))
        return
    assert_well_formed(outcome(text, fmt), line_count(text, fmt))


@pytest.mark.parametrize("fmt", sorted(GOOD))  # the formats with a sample file here
@PROPERTY
@given(cut=st.integers(min_value=0))
def test_a_cut_file_is_refused_at_its_last_line_or_read_whole_lines(fmt, cut):
    text = GOOD[fmt][: cut % (len(GOOD[fmt]) + 1)]
    result = outcome(text, fmt)
    assert_well_formed(result, line_count(text, fmt))
    if isinstance(result, list):
        # Whatever was read came from whole records of the file. A file whose last line has
        # no newline may end inside that line's last field: CSV cannot tell that cut from a
        # file written without a final newline, so only the other rows are compared.
        whole = parse_export(GOOD[fmt], fmt, "awin", STATUSES)
        complete = result if text.endswith("\n") or fmt == "jsonl" else result[:-1]
        assert all(row in whole for row in complete)


@PROPERTY
@given(
    position=st.integers(min_value=0, max_value=2),
    field=st.sampled_from(FIELDS),
    value=WRONG_VALUES,
)
def test_a_wrong_value_in_a_jsonl_record_is_named_by_line_and_field_or_read_exactly(
    position, field, value
):
    records = [json.loads(line) for line in GOOD_JSONL.splitlines()]
    records[position][field] = value
    try:
        text = "".join(json.dumps(record) + "\n" for record in records)
    except ValueError:  # JSON itself has no NaN or infinity: nothing a file could hold
        return
    result = outcome(text, "jsonl")
    assert_well_formed(result, LINES["jsonl"])
    if isinstance(result, ExportError):
        # All or nothing: the other records are fine, yet none of them is returned, and the
        # problem is where the bad value is.
        assert any(p.line == position + 1 for p in result.problems), result.problems
    else:
        row = result[position]
        if field == "commissionAmount":
            # A number is kept digit for digit, never through a float.
            assert row.commission_amount.lstrip("-").replace(".", "").isdigit()


@PROPERTY
@given(
    position=st.integers(min_value=0, max_value=2),
    column=st.integers(min_value=0, max_value=7),
    value=st.text(max_size=30) | st.sampled_from(["9" * 400, "1e400", "-", "NaN", '"', "a\nb"]),
)
def test_a_wrong_cell_in_a_csv_is_named_by_line_and_field_or_read(position, column, value):
    lines = GOOD_CSV.splitlines()
    cells = lines[position + 1].split(",")
    cells[column] = value
    lines[position + 1] = ",".join(cells)
    text = "\n".join(lines) + "\n"
    result = outcome(text, "csv")
    assert_well_formed(result, line_count(text, "csv"))


@PROPERTY
@given(amount=st.integers(min_value=-(10**60), max_value=10**60), exponent=st.integers(-30, 30))
def test_huge_and_tiny_amounts_are_kept_exactly_or_refused_by_name(amount, exponent):
    literal = f"{amount}e{exponent}"
    text = f"externalId,commissionAmount,currency,transactedAt\nA,{literal},EUR,2026-01-01\n"
    result = outcome(text, "csv")
    assert_well_formed(result, 2)
    if isinstance(result, ExportError):
        assert {(p.line, p.field) for p in result.problems} <= {(2, "commissionAmount")}
