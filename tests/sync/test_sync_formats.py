"""The core readers of non-JSON answers and of amounts and moments in the forms networks
write them (sync/formats.py, sync/values.py): hostile XML refused, CSV bounded and read by
header name, amounts and timestamps as the spec declares them, by property."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.connectors.base import collect
from sync.errors import MalformedResponse, ResponseTooLarge
from sync.formats import (
    BadRow,
    TableLimits,
    find,
    find_all,
    parse_xml,
    read_table,
    record,
    soap_body,
    soap_fault,
    text,
)
from sync.spec import Amount, AmountFormat, TimeFormat
from sync.values import ValueProblem, parse_amount, parse_timestamp

PROPERTY = settings(max_examples=200, deadline=None)

# --- XML --------------------------------------------------------------------------------

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;">]>
<lolz>&lol2;</lolz>"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>"""
DTD_ONLY = b"""<?xml version="1.0"?><!DOCTYPE foo SYSTEM "http://example.com/x.dtd"><foo/>"""


@pytest.mark.parametrize("body", [LAUGHS, EXTERNAL, DTD_ONLY], ids=["laughs", "xxe", "dtd"])
def test_xml_with_a_dtd_or_entities_is_refused_never_expanded(body):
    with pytest.raises(MalformedResponse) as caught:
        parse_xml("belboon", body)
    assert "belboon" in caught.value.message
    assert "passwd" not in caught.value.message


@pytest.mark.parametrize("body", [b"", b"<a>", b"<a></b>", b"\xff\xfe<a/>", b"not xml"])
def test_xml_that_is_not_well_formed_is_malformed(body):
    with pytest.raises(MalformedResponse):
        parse_xml("timeone", body)


def test_xml_larger_than_its_bound_is_refused_before_parsing():
    with pytest.raises(ResponseTooLarge):
        parse_xml("timeone", b"<a>" + b"x" * 100 + b"</a>", max_bytes=50)


SOAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/"
  xmlns:ns1="urn:tt" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
 <SOAP-ENV:Body><ns1:getConversionTransactionsResponse>
  <conversionTransactions>
   <item><ID>7</ID><commission>1.50</commission><reference xsi:nil="true"/>
    <campaign><ID>12</ID><name>Shop</name></campaign></item>
   <item><ID>8</ID><commission>-2.00</commission><reference>r</reference>
    <campaign><ID>12</ID><name>Shop</name></campaign></item>
  </conversionTransactions>
 </ns1:getConversionTransactionsResponse></SOAP-ENV:Body></SOAP-ENV:Envelope>"""
FAULT = b"""<?xml version="1.0"?><env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/">
<env:Body><env:Fault><faultcode>env:Client</faultcode><faultstring>Invalid session</faultstring>
</env:Fault></env:Body></env:Envelope>"""


def test_a_soap_answer_reads_by_local_names_into_records():
    root = parse_xml("tradetracker", SOAP)
    assert soap_fault(root) is None
    payload = soap_body("tradetracker", root)
    items = find_all(payload, "item")
    assert [record(i) for i in items] == [
        {
            "ID": "7",
            "commission": "1.50",
            "reference": None,
            "campaign": {"ID": "12", "name": "Shop"},
        },
        {
            "ID": "8",
            "commission": "-2.00",
            "reference": "r",
            "campaign": {"ID": "12", "name": "Shop"},
        },
    ]
    assert text(find(items[0], "campaign", "name")) == "Shop"


def test_a_soap_fault_is_read_with_its_code_and_text():
    root = parse_xml("tradetracker", FAULT)
    fault = soap_fault(root)
    assert fault is not None and (fault.code, fault.message) == ("env:Client", "Invalid session")


def test_repeated_children_are_a_list():
    root = parse_xml("belboon", b"<r><sub>a</sub><sub>b</sub><id x='1'>9</id></r>")
    assert record(root) == {"sub": ["a", "b"], "id": "9"}


# --- CSV --------------------------------------------------------------------------------


def test_csv_is_read_by_header_name_with_its_bom_stripped():
    body = '\ufeffOrder ID,Amount,Note\n1,"$1,234.50","a, quoted ""note"""\n\n2,3.00,\n'.encode()
    rows = read_table("avantlink", body, required=["Order ID", "Amount"])
    assert rows == [
        {"Order ID": "1", "Amount": "$1,234.50", "Note": 'a, quoted "note"'},
        {"Order ID": "2", "Amount": "3.00", "Note": ""},
    ]


def test_tsv_reads_the_same():
    rows = read_table("amazon", b"a\tb\n1\t2\n", delimiter="\t")
    assert rows == [{"a": "1", "b": "2"}]


def test_a_row_with_the_wrong_cells_is_refused_with_its_reason_and_the_others_stand():
    rows = read_table("avantlink", b"a,b\n1,2\n3\n4,5,6\n7,8\n")
    assert [r for r in rows if isinstance(r, dict)] == [{"a": "1", "b": "2"}, {"a": "7", "b": "8"}]
    bad = [r for r in rows if isinstance(r, BadRow)]
    assert [b.line for b in bad] == [3, 4]
    _, refused = collect(None, bad, lambda r: None)  # type: ignore[arg-type]
    assert [(r.code, r.message) for r in refused] == [
        ("record_malformed", "line 3: 1 cells for 2 columns"),
        ("record_malformed", "line 4: 3 cells for 2 columns"),
    ]


@pytest.mark.parametrize(
    ("body", "limits", "why"),
    [
        (b"a,a\n1,2\n", TableLimits(), "repeats"),
        (b"a,b\n" + b"1,2\n" * 4, TableLimits(max_rows=3), "more than 3 rows"),
        (
            b",".join([b"c%d" % i for i in range(12)]) + b"\n",
            TableLimits(max_columns=10),
            "columns",
        ),
        (b'a,b\n"1,2\n', TableLimits(), "quoting"),
        (b"a,b\n\xff,1\n", TableLimits(), "not utf-8"),
    ],
)
def test_a_report_out_of_bounds_or_broken_is_malformed(body, limits, why):
    with pytest.raises(MalformedResponse) as caught:
        read_table("avantlink", body, limits=limits)
    assert why in caught.value.message


def test_a_report_without_a_required_column_names_it():
    with pytest.raises(MalformedResponse) as caught:
        read_table("avantlink", b"a,b\n1,2\n", required=["a", "Commission"])
    assert "Commission" in caught.value.message


def test_a_field_past_the_bound_refuses_its_row_only():
    rows = read_table(
        "avantlink", b"a,b\n1," + b"x" * 50 + b"\n2,3\n", limits=TableLimits(max_field=20)
    )
    assert isinstance(rows[0], BadRow) and rows[1] == {"a": "2", "b": "3"}


def test_an_empty_report_is_no_rows_unless_a_header_is_required():
    assert read_table("avantlink", b"") == []
    with pytest.raises(MalformedResponse):
        read_table("avantlink", b"", allow_empty=False)


# --- Amounts ----------------------------------------------------------------------------

FORMATTED = Amount(AmountFormat.FORMATTED)


@pytest.mark.parametrize(
    ("wire", "amount", "stored"),
    [
        ("($4.26)", FORMATTED, "-4.26"),
        ("$(4.26)", FORMATTED, "-4.26"),
        ("-$4.26", FORMATTED, "-4.26"),
        ("$-4.26", FORMATTED, "-4.26"),
        ("4.26-", FORMATTED, "-4.26"),
        ("$1,234,567.89", FORMATTED, "1234567.89"),
        ("USD 12.00", FORMATTED, "12.00"),
        ("12.00 EUR", FORMATTED, "12.00"),
        ("1\u00a0234,56 €", Amount(AmountFormat.FORMATTED, decimal_comma=True), "1234.56"),
        ("1.234,56", Amount(AmountFormat.FORMATTED, decimal_comma=True), "1234.56"),
        (12345, Amount(AmountFormat.NUMBER, scale=4), "1.2345"),
        (-426, Amount(AmountFormat.NUMBER, scale=2), "-4.26"),
        ("-426", Amount(AmountFormat.STRING, scale=2), "-4.26"),
        (1250, AmountFormat.CENTS, "12.50"),
    ],
)
def test_amounts_in_the_declared_form_and_scale(wire, amount, stored):
    assert parse_amount(wire, amount, "commission") == stored


@pytest.mark.parametrize(
    "wire",
    [
        "-($4.26)",
        "(-4.26)",
        "1,23",
        "12abc",
        "12XYZ",
        "$",
        "()",
        "4.2.6",
        "1,234.5.6",
        "--4",
        "x" * 80,
        "5.",
    ],
)
def test_formatted_amounts_that_say_nothing_certain_are_refused(wire):
    with pytest.raises(ValueProblem):
        parse_amount(wire, FORMATTED, "commission")


def test_minor_units_must_be_whole():
    with pytest.raises(ValueProblem):
        parse_amount("12.5", Amount(AmountFormat.STRING, scale=4), "commission")


def _grouped(whole: int) -> str:
    return f"{whole:,}"


amounts = st.decimals(
    min_value=Decimal("-999999999999"), max_value=Decimal("999999999999"), places=2, allow_nan=False
)


@PROPERTY
@given(
    number=amounts,
    sign=st.sampled_from(["", "$", "€", "USD ", "£"]),
    style=st.sampled_from(["minus", "parentheses", "trailing"]),
)
def test_a_formatted_amount_reads_back_as_written_with_its_sign(number, sign, style):
    magnitude = abs(number)
    whole, _, fraction = f"{magnitude:.2f}".partition(".")
    body = f"{sign}{_grouped(int(whole))}.{fraction}"
    if number < 0:
        body = {"minus": f"-{body}", "parentheses": f"({body})", "trailing": f"{body}-"}[style]
    assert Decimal(parse_amount(body, FORMATTED, "commission")) == number


@PROPERTY
@given(number=amounts)
def test_a_decimal_comma_amount_reads_back_as_written(number):
    whole, _, fraction = f"{abs(number):.2f}".partition(".")
    body = _grouped(int(whole)).replace(",", ".") + "," + fraction
    body = f"-{body}" if number < 0 else body
    wanted = Amount(AmountFormat.FORMATTED, decimal_comma=True)
    assert Decimal(parse_amount(body, wanted, "commission")) == number


@PROPERTY
@given(units=st.integers(min_value=-(10**17), max_value=10**17), scale=st.integers(0, 8))
def test_a_scaled_amount_is_exact_and_keeps_its_sign(units, scale):
    stored = parse_amount(units, Amount(AmountFormat.NUMBER, scale=scale), "commission")
    assert Decimal(stored) == Decimal(units).scaleb(-scale)
    assert stored.startswith("-") == (units < 0)
    assert parse_amount(str(units), Amount(AmountFormat.STRING, scale=scale), "c") == stored


# --- Timestamps -------------------------------------------------------------------------

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
moments = st.datetimes(
    min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2100, 1, 1), timezones=st.just(dt.UTC)
)


@PROPERTY
@given(moment=moments, as_text=st.booleans())
def test_epoch_milliseconds_give_the_second_they_fall_in(moment, as_text):
    millis = (moment - EPOCH) // dt.timedelta(milliseconds=1)
    wire = str(millis) if as_text else millis
    stored = parse_timestamp(wire, "transaction date", TimeFormat.UNIX_MILLIS)
    assert stored == moment.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


@PROPERTY
@given(moment=moments, as_text=st.booleans())
def test_unix_seconds_read_back_exactly(moment, as_text):
    seconds = (moment - EPOCH) // dt.timedelta(seconds=1)
    wire = str(seconds) if as_text else seconds
    stored = parse_timestamp(wire, "transaction date", TimeFormat.UNIX_SECONDS)
    assert stored == moment.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("wire", [1.5, "1.5", "2026-01-01", True, None, "", "9" * 20, 10**20])
def test_an_epoch_field_refuses_anything_but_a_count(wire):
    with pytest.raises(ValueProblem):
        parse_timestamp(wire, "transaction date", TimeFormat.UNIX_MILLIS)


def test_milliseconds_are_never_read_as_seconds_once_declared():
    # 1767225600000 ms is 2026-01-01; read as seconds it would be year 57970.
    assert parse_timestamp(1767225600000, "d", TimeFormat.UNIX_MILLIS) == "2026-01-01T00:00:00Z"
    with pytest.raises(ValueProblem):
        parse_timestamp(1767225600000, "d", TimeFormat.UNIX_SECONDS)
