"""Commission imports: formats, normalisation, exact amounts, all-or-nothing, idempotence."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from zoneinfo import ZoneInfo

import orjson
import pytest
from support.accountkit import new_account
from support.importkit import parse_export

from accounts.importer import (
    ExportError,
    parse_amount,
    parse_currency,
    parse_record,
    parse_text,
    parse_timestamp,
)
from accounts.statusmap import load_status_map
from contract import commission
from store import AccountStore, commissions
from store.base import NewCommission

STATUSES = load_status_map()

CSV = """externalId,programName,programExternalId,status,saleAmount,commissionAmount,currency,clickedAt,transactedAt,subId
T-1,Matelas Nuage,p-1,Validée,120.00,12.30,eur,2026-03-01T09:00:00+01:00,2026-03-04 10:11:12Z,sub-a
T-2,,,En attente,,0.1,GBP,,2026-03-05T00:00:00Z,
T-3,Factureo,p-2,bizarre,1234567.89,1234567.89,USD,,1772600000,
"""

JSONL = """{"externalId": "J-1", "status": "locked", "commissionAmount": 12.30, "saleAmount": 100, "currency": "EUR", "transactedAt": "2026-03-04T10:11:12.987654Z"}

{"externalId": 42, "status": null, "commissionAmount": "0.10", "currency": "CHF", "transactedAt": "2026-03-04T10:11:12+0530", "clickedAt": null}
"""


def test_csv_rows_are_normalised():
    rows = parse_export(CSV, "csv", "effiliation", STATUSES)
    assert [r.external_id for r in rows] == ["T-1", "T-2", "T-3"]
    first, second, third = rows
    assert (first.status, first.raw_status) == ("approved", "Validée")
    assert (first.sale_amount, first.commission_amount) == ("120.00", "12.30")
    assert first.currency == "EUR"
    assert first.clicked_at == "2026-03-01T08:00:00Z"
    assert first.transacted_at == "2026-03-04T10:11:12Z"
    assert (second.status, second.program_name, second.sale_amount) == ("pending", None, None)
    assert (second.clicked_at, second.sub_id, second.commission_amount) == (None, None, "0.1")
    assert (third.status, third.raw_status) == ("unknown", "bizarre")
    assert third.transacted_at == "2026-03-04T04:53:20Z"  # Unix seconds
    assert third.commission_amount == "1234567.89"


def test_jsonl_keeps_number_literals_and_truncates_fractions():
    rows = parse_export(JSONL, "jsonl", "cj", STATUSES)
    first, second = rows
    assert (first.status, first.raw_status) == ("approved", "locked")
    assert (first.commission_amount, first.sale_amount) == ("12.30", "100")
    assert first.transacted_at == "2026-03-04T10:11:12Z"
    assert (second.external_id, second.status, second.raw_status) == ("42", "unknown", None)
    assert second.transacted_at == "2026-03-04T04:41:12Z"


def test_semicolon_csv_with_other_column_spellings():
    text = "external_id;Commission Amount;CURRENCY;transacted-at;status;\nA;1.5;eur;2026-01-02;A;\n"
    (row,) = parse_export(text, "csv", "tradedoubler", STATUSES)
    assert (row.external_id, row.commission_amount, row.currency) == ("A", "1.5", "EUR")
    assert (row.transacted_at, row.status) == ("2026-01-02T00:00:00Z", "approved")


def spreadsheet_csv(delimiter: str, rows: list[list[str]]) -> str:
    """A CSV as a spreadsheet writes it (csv module: quoting where needed, CRLF lines)."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter)
    writer.writerow(
        ["externalId", "status", "saleAmount", "commissionAmount", "currency", "transactedAt"]
    )
    writer.writerows(rows)
    return out.getvalue()


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_a_comma_decimal_spreadsheet_csv_is_read_exactly(delimiter):
    """Spreadsheets in comma-decimal locales (fr, de, es...) separate fields with `;` and
    write `12,30`: the amounts are read digit for digit."""
    text = spreadsheet_csv(
        delimiter,
        [
            ["S-1", "approved", "1234,50", "12,30", "EUR", "2026-03-04 10:11:12Z"],
            ["S-2", "pending", "", "-1,5", "EUR", "2026-03-05"],
            ["S-3", "pending", "99", "0,000001", "EUR", "2026-03-05"],
        ],
    )
    rows = parse_export(text, "csv", "effiliation", STATUSES)
    assert [(r.sale_amount, r.commission_amount) for r in rows] == [
        ("1234.50", "12.30"),
        (None, "-1.5"),
        ("99", "0.000001"),
    ]


@pytest.mark.parametrize(
    ("delimiter", "amount"),
    [(",", "12,30"), (";", "1.234,50"), (";", "1 234,50"), (";", "12,30,1"), (";", "1,2e3")],
)
def test_a_comma_is_a_decimal_point_only_where_it_cannot_be_anything_else(delimiter, amount):
    text = spreadsheet_csv(delimiter, [["S-1", "approved", "", amount, "EUR", "2026-03-04"]])
    with pytest.raises(ExportError) as refused:
        parse_export(text, "csv", "effiliation", STATUSES)
    assert [p.field for p in refused.value.problems] == ["commissionAmount"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("0.1", "0.1"),
        ("12.30", "12.30"),
        ("1234567.89", "1234567.89"),
        ("007.50", "7.50"),
        ("-3.20", "-3.20"),
        ("+4", "4"),
        ("0", "0"),
        (" 5.00 ", "5.00"),
    ],
)
def test_amounts_keep_their_digits(raw, expected):
    assert parse_amount(raw) == expected


@pytest.mark.parametrize(
    "raw", ["12,30", "1,234.56", "1e3", "NaN", "", "1.", ".5", "12 EUR", "--1"]
)
def test_amounts_in_other_forms_are_refused(raw):
    with pytest.raises(ValueError):
        parse_amount(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("EUR", "EUR"), (" gbp ", "GBP"), ("XCG", "XCG"), ("FRF", "FRF"), ("HRK", "HRK")],
)
def test_currencies_are_iso_4217_codes_current_or_withdrawn(raw, expected):
    # Withdrawn codes stay valid: an old commission was paid in that currency.
    assert parse_currency(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("EUT", "'EUT' is not an ISO 4217 currency code"),
        ("GPB", "'GPB' is not an ISO 4217 currency code"),
        ("EURO", "not an ISO 4217 code (three letters"),
        ("€", "not an ISO 4217 code (three letters"),
        ("ÉUR", "not an ISO 4217 code (three letters"),
    ],
)
def test_a_currency_typo_is_refused_not_made_a_currency(raw, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_currency(raw)


def test_the_currency_list_holds_codes_only():
    from contract import currencies

    assert not currencies.CURRENT & currencies.WITHDRAWN
    assert all(re.fullmatch("[A-Z]{3}", code) for code in currencies.CODES)
    assert {"EUR", "USD", "GBP", "JPY", "CHF", "XCG", "ZWG"} <= currencies.CURRENT


@pytest.mark.parametrize(
    ("raw", "zone", "expected"),
    [
        ("2026-03-04T10:11:12Z", None, "2026-03-04T10:11:12Z"),
        ("2026-03-04T10:11:12z", None, "2026-03-04T10:11:12Z"),
        ("2026-03-04 10:11:12+01:00", None, "2026-03-04T09:11:12Z"),
        ("2026-03-04T10:11+02", None, "2026-03-04T08:11:00Z"),
        ("2026-03-04T10:11:12,5-0300", None, "2026-03-04T13:11:12Z"),
        ("2026-03-04", None, "2026-03-04T00:00:00Z"),
        ("2026-07-04 10:00:00", ZoneInfo("Europe/Paris"), "2026-07-04T08:00:00Z"),
        ("2026-01-04 10:00:00", ZoneInfo("Europe/Paris"), "2026-01-04T09:00:00Z"),
        ("1772600000", None, "2026-03-04T04:53:20Z"),
    ],
)
def test_timestamp_forms_become_utc(raw, zone, expected):
    assert parse_timestamp(raw, zone) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("2026-03-04T10:11:12", "no UTC offset"),
        ("2026-02-30", "calendar date"),
        ("2026-02-30T10:00:00Z", "real date"),
        ("04/03/2026", "ISO 8601"),
        ("12345", "ISO 8601"),
        ("9999-12-31T23:00:00-05:00", "out of range"),  # year 10000 in UTC: no crash
        ("0001-01-01T00:30:00+01:00", "out of range"),
        ("0999-01-01T00:00:00Z", "out of range"),
        ("1989-12-31T23:59:59Z", "out of range"),  # contract.commission: not before 1990
        ("2099-01-01T00:00:00Z", "out of range"),  # nor more than a day ahead
        ("9999-12-31T23:59:59Z", "out of range"),
        ("4102444800", "out of range"),  # 2100 in Unix seconds
    ],
)
def test_bad_timestamps_say_why(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_timestamp(raw, None)


def test_the_latest_instant_is_a_day_after_now():
    now = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)
    latest = commission.latest_instant(now)
    assert latest == "2026-03-16T12:00:00Z"
    assert parse_timestamp("2026-03-16T12:00:00Z", None, latest) == latest
    with pytest.raises(ValueError, match="out of range"):
        parse_timestamp("2026-03-16T12:00:01Z", None, latest)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("commissionAmount", "1" * 19, "not a plain decimal number"),
        ("commissionAmount", "1." + "0" * 13, "not a plain decimal number"),
        ("commissionAmount", "1e309", "not a plain decimal number"),
        ("currency", "XYZ", "not an ISO 4217 currency code"),
        ("transactedAt", "2099-01-01T00:00:00Z", "out of range"),
    ],
)
def test_the_importer_refuses_what_the_sync_and_the_store_refuse(column, value, message):
    """contract.commission is the one definition: the importer's refusals are its own."""
    record = {
        "externalId": "X1",
        "commissionAmount": "1.00",
        "currency": "EUR",
        "transactedAt": "2026-01-01T00:00:00Z",
        column: value,
    }
    row, problems = parse_record(record, 2, "awin", STATUSES)
    assert row is None
    assert [p.field for p in problems] == [column]
    assert message in problems[0].message


def problems_of(text: str, fmt: str) -> list[str]:
    with pytest.raises(ExportError) as failed:
        parse_export(text, fmt, "awin", STATUSES)
    return failed.value.render("f")


def test_a_bad_row_names_its_line_and_field():
    text = CSV.replace("0.1,GBP", "0.1O,GBP")
    assert problems_of(text, "csv") == [
        "f:3: commissionAmount: '0.1O' is not a plain decimal number (digits, one '.' as "
        "decimal separator, or ',' in a file separated by ';' or tabs; no thousands "
        "separators, no exponent)"
    ]


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        (
            "externalId,commissionAmount,currency\nA,1,EUR\n",
            "csv",
            "f:1: header: missing column(s): transactedAt",
        ),
        (
            "externalId,comission,commissionAmount,currency,transactedAt\n",
            "csv",
            "f:1: comission: unknown column",
        ),
        ("", "csv", "f:1: header: the file is empty"),
        (
            "externalId,commissionAmount,currency,transactedAt\nA,1,EUR\n",
            "csv",
            "f:2: row: has 3 fields",
        ),
        (
            "externalId,commissionAmount,currency,transactedAt\nA,1,EUR,2026-01-01\nA,2,EUR,2026-01-01\n",
            "csv",
            "f:3: externalId: duplicate of line 2",
        ),
        (
            'externalId,commissionAmount,currency,transactedAt\n"A\nB",1,EURO,2026-01-01\n',
            "csv",
            "f:2: currency: 'EURO' is not an ISO 4217 code",
        ),
        ('{"externalId": "A"}\n', "jsonl", "f:1: commissionAmount: is required"),
        (
            '\n\n{"externalId": "A", "commissionAmount": 1, "currency": "EUR", "transactedAt": true}\n',
            "jsonl",
            "f:3: transactedAt: expected a timestamp string",
        ),
        ("[1]\n", "jsonl", "f:1: line: expected a JSON object"),
        ("{nope\n", "jsonl", "f:1: line: not valid JSON"),
        (
            '{"externalId": "A", "commissionAmount": 1.5e2, "currency": "EUR", "transactedAt": "2026-01-01"}\n',
            "jsonl",
            "f:1: commissionAmount: '1.5e2' is not a plain decimal",
        ),
        (
            '{"externalId": "A", "commissionAmount": 1, "currency": "EUR", "transactedAt": "2026-01-01", "extra": 1}\n',
            "jsonl",
            "f:1: extra: unknown column",
        ),
        # Data that would otherwise be dropped or changed without a word.
        (
            "externalId,commissionAmount,currency,transactedAt,,saleAmount\n"
            "E1,1,EUR,2026-03-04T10:11:12Z,999.99,\n",
            "csv",
            "f:2: row: a value in unnamed column 5",
        ),
        (
            '{"externalId": "J1", "commissionAmount": 12.30, "currency": "EUR", '
            '"transactedAt": "2026-03-04T10:11:12Z", "commissionAmount": "99.99"}\n',
            "jsonl",
            "f:1: commissionAmount: given twice",
        ),
        (
            '{"externalId": ' + "9" * 250 + ', "commissionAmount": 1, "currency": "EUR", '
            '"transactedAt": "2026-01-01"}\n',
            "jsonl",
            "f:1: externalId: longer than 200 characters",
        ),
        (
            "externalId,commissionAmount,currency,transactedAt\nA,1,EUR,0001-01-01T00:30:00+01:00\n",
            "csv",
            "f:2: transactedAt: '0001-01-01T00:30:00+01:00' is out of range",
        ),
        (
            # A raw U+2028 inside a string is valid JSON: the bad amount is on line 2.
            '{"externalId": "A", "commissionAmount": 1, "currency": "EUR", '
            '"transactedAt": "2026-01-01", "programName": "A\u2028B"}\n'
            '{"externalId": "B", "commissionAmount": "x", "currency": "EUR", '
            '"transactedAt": "2026-01-01"}\n',
            "jsonl",
            "f:2: commissionAmount:",
        ),
    ],
)
def test_file_problems_are_reported_as_file_line_field(text, fmt, expected):
    assert any(line.startswith(expected) for line in problems_of(text, fmt)), problems_of(text, fmt)


async def test_import_is_all_or_nothing_and_idempotent(admin_store: AccountStore):
    account = await new_account(admin_store)
    rows = parse_export(CSV, "csv", "effiliation", STATUSES)
    first = await admin_store.write(commissions.upsert, account.uid, "effiliation", rows)
    assert (first.inserted, first.updated, first.unchanged) == (3, 0, 0)
    again = await admin_store.write(commissions.upsert, account.uid, "effiliation", rows)
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 3)

    changed = parse_export(CSV.replace("En attente", "Validée"), "csv", "effiliation", STATUSES)
    result = await admin_store.write(commissions.upsert, account.uid, "effiliation", changed)
    assert (result.inserted, result.updated, result.unchanged) == (0, 1, 2)

    # A bad row anywhere: the store refuses the whole batch before writing anything.
    bad = [
        *changed[:2],
        NewCommission("T-9", "pending", None, "1,5", "EUR", "2026-01-01T00:00:00Z"),
    ]
    with pytest.raises(ValueError, match="commission_amount"):
        await admin_store.write(commissions.upsert, account.uid, "effiliation", bad)
    same = await admin_store.write(commissions.upsert, account.uid, "effiliation", changed)
    assert (same.inserted, same.updated, same.unchanged) == (0, 0, 3)


def test_naive_timestamps_use_the_given_zone():
    text = "externalId,commissionAmount,currency,transactedAt\nA,1,EUR,2026-07-01 02:30:00\n"
    (row,) = parse_export(text, "csv", "awin", STATUSES, ZoneInfo("Europe/Paris"))
    assert row.transacted_at == "2026-07-01T00:30:00Z"
    assert dt.datetime.fromisoformat(row.transacted_at).tzinfo is not None


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("Remise 10\u00a0%", True),
        ("Prix\u202f: 10", True),
        ("Famille \U0001f468\u200d\U0001f469\u200d\U0001f467", True),
        ("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", True),
        ("Versicherungs\u00advergleich", True),
        ("Pubs \U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f", True),
        ("a\x01b", False),
        ("a\u2028b", False),
        ("a\u200bb", False),
        ("a\U000e0041b", False),
        ("a\ufeffb", False),
    ],
)
def test_text_keeps_spaces_and_joiners_and_refuses_controls(raw, kept):
    # A no-break space before '%' is how French exports write it, a joiner how an emoji
    # family or a Persian word is written: refusing either would fail whole files.
    if kept:
        assert parse_text(raw, 500) == raw
    else:
        with pytest.raises(ValueError, match=f"U\\+{ord(raw[1]):04X}"):
            parse_text(raw, 500)


def test_a_row_states_the_fields_of_the_columns_it_has():
    from accounts.importer import COLUMNS, FIELDS_OF
    from store.base import VALUE_FIELDS

    # Every stored value is stated by exactly one column; the id by its own.
    stated = [field for column in COLUMNS for field in FIELDS_OF[column]]
    assert sorted(stated) == sorted(("external_id", *VALUE_FIELDS))
    # A row of every column (those the sample leaves out, empty) states every field.
    header, row = CSV.splitlines()[:2]
    more = [c for c in COLUMNS if c not in header.split(",")]
    whole = ",".join([header, *more]) + "\n" + row + "," * len(more)
    (full,) = parse_export(whole, "csv", "awin", STATUSES)
    assert full.stated is None
    text = "externalId,commissionAmount,currency,transactedAt,subId\nA,1,EUR,2026-03-04,\n"
    (some,) = parse_export(text, "csv", "awin", STATUSES)
    assert some.stated == {
        "external_id",
        "commission_amount",
        "currency",
        "transacted_at",
        "sub_id",
    }
    line = '{"externalId": "J", "commissionAmount": "1", "currency": "EUR", "transactedAt": "2026-03-04", "status": null}'
    (member,) = parse_export(line, "jsonl", "awin", STATUSES)
    assert {"status", "raw_status"} <= member.stated and "sale_amount" not in member.stated


async def test_a_reimport_without_a_column_keeps_what_is_stored(admin_store: AccountStore):
    account = await new_account(admin_store)
    await admin_store.write(
        commissions.upsert,
        account.uid,
        "effiliation",
        parse_export(CSV, "csv", "effiliation", STATUSES),
    )
    before = {r.external_id: r for r in await _listed(admin_store, account.uid)}
    # A later export with only the required columns, one amount changed: the status, names,
    # sale amount, click time and sub id it does not mention stay as they were.
    slim = (
        "externalId,commissionAmount,currency,transactedAt\n"
        "T-1,12.30,EUR,2026-03-04T10:11:12Z\n"
        "T-2,0.20,GBP,2026-03-05T00:00:00Z\n"
    )
    result = await admin_store.write(
        commissions.upsert,
        account.uid,
        "effiliation",
        parse_export(slim, "csv", "effiliation", STATUSES),
    )
    assert (result.inserted, result.updated, result.unchanged) == (0, 1, 1)
    after = {r.external_id: r for r in await _listed(admin_store, account.uid)}
    assert after["T-1"] == before["T-1"]
    assert after["T-2"].commission_amount == "0.20"
    assert after["T-2"].status == before["T-2"].status == "pending"
    assert after["T-2"].raw_status == "En attente"
    # A column that is there but empty (a JSON null) does clear the value.
    cleared = (
        '{"externalId": "T-1", "commissionAmount": "12.30", "currency": "EUR", '
        '"transactedAt": "2026-03-04T10:11:12Z", "status": null, "subId": null}\n'
    )
    result = await admin_store.write(
        commissions.upsert,
        account.uid,
        "effiliation",
        parse_export(cleared, "jsonl", "effiliation", STATUSES),
    )
    assert (result.inserted, result.updated, result.unchanged) == (0, 1, 0)
    t1 = next(r for r in await _listed(admin_store, account.uid) if r.external_id == "T-1")
    assert (t1.status, t1.raw_status, t1.sub_id) == ("unknown", None, None)
    assert t1.program_name == "Matelas Nuage" and t1.sale_amount == "120.00"
    # A new row with columns missing gets them empty, as before.
    new = "externalId,commissionAmount,currency,transactedAt\nT-7,1,EUR,2026-03-06\n"
    result = await admin_store.write(
        commissions.upsert,
        account.uid,
        "effiliation",
        parse_export(new, "csv", "effiliation", STATUSES),
    )
    assert result.inserted == 1
    t7 = next(r for r in await _listed(admin_store, account.uid) if r.external_id == "T-7")
    assert (t7.status, t7.raw_status, t7.program_name) == ("unknown", None, None)


async def _listed(store: AccountStore, uid: str) -> list:
    from store.base import CommissionQuery

    return await store.read(commissions.page, CommissionQuery(uid, 100))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Clocks go back at 03:00 on 2026-10-25 in Paris: 02:30 happens twice, the first is taken.
        ("2026-10-25 02:30:00", "2026-10-25T00:30:00Z"),
        ("2026-10-25 03:30:00", "2026-10-25T02:30:00Z"),
        ("2026-03-29 01:59:59", "2026-03-29T00:59:59Z"),
        ("2026-03-29 03:00:00", "2026-03-29T01:00:00Z"),
    ],
)
def test_local_times_around_a_clock_change(raw, expected):
    assert parse_timestamp(raw, ZoneInfo("Europe/Paris")) == expected


def test_a_local_time_the_clocks_skipped_is_refused():
    # Clocks go forward at 02:00 on 2026-03-29 in Paris: 02:30 never happened there.
    with pytest.raises(ValueError, match="does not exist in Europe/Paris"):
        parse_timestamp("2026-03-29 02:30:00", ZoneInfo("Europe/Paris"))
    # With an offset the time is exact, whatever the zone.
    assert parse_timestamp("2026-03-29 02:30:00+01:00", ZoneInfo("Europe/Paris")) == (
        "2026-03-29T01:30:00Z"
    )


@pytest.mark.parametrize(
    ("parse", "raw"),
    [
        (lambda x: parse_text(x, 200), "CT1\x1f"),
        (lambda x: parse_text(x, 200), "\u2028s\x85"),
        (lambda x: parse_text(x, 200), "\x1c"),
        (parse_currency, "EUR\x1f"),
        (parse_amount, "12.30\x1e"),
        (lambda x: parse_timestamp(x, None), "2026-03-04\x85"),
    ],
)
def test_control_characters_at_the_ends_are_refused_not_trimmed(parse, raw):
    # str.strip() would take them off unseen: "CT1\x1f" stored as "CT1" makes two ids
    # collide.
    with pytest.raises(ValueError):
        parse(raw)


def test_tabs_and_unicode_spaces_at_the_ends_are_trimmed():
    assert parse_text("\t\u00a0Matelas Nuage \u3000", 200) == "Matelas Nuage"
    assert parse_currency("\teur\u00a0") == "EUR"


def test_a_row_of_control_characters_is_not_a_blank_row():
    text = "externalId,commissionAmount,currency,transactedAt\n\x1c,\x1d,\x1e,\x1f\n"
    with pytest.raises(ExportError) as caught:
        parse_export(text, "csv", "awin", STATUSES)
    assert any(p.line == 2 for p in caught.value.problems)
    line = '{"externalId": "\\u001f", "commissionAmount": "1", "currency": "EUR", "transactedAt": "2026-03-04"}'
    with pytest.raises(ExportError) as caught:
        parse_export(line, "jsonl", "awin", STATUSES)
    (problem,) = caught.value.problems
    assert (problem.field, problem.message) == (
        "externalId",
        "contains the control or invisible character U+001F",
    )


def test_a_hidden_message_dressed_as_a_flag_is_refused():
    # Tag capitals and spaces between a black flag and a cancel tag would spell a message
    # a reader does not see: no tag character gets through there.
    def flag(code: str) -> str:
        return "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in code) + "\U000e007f"

    with pytest.raises(ValueError, match="U\\+E0049"):
        parse_text("Nice shop " + flag("IGNORE ALL"), 500)
    # Lowercase "flags" of made-up regions spell it too.
    with pytest.raises(ValueError, match="U\\+E0069"):
        parse_text("Nice shop " + flag("ignore") + flag("allpre"), 500)
    for code in ("gbeng", "gbsct", "gbwls"):
        assert parse_text("Pubs " + flag(code), 500) == "Pubs " + flag(code)


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_csv_with_a_leading_blank_line_finds_its_header_and_delimiter(eol):
    # A CRLF file's blank line is "\r": taken as the header, it would leave every delimiter
    # scoring 0 and the file refused whole.
    text = eol.join(
        [
            "",
            "externalId;commissionAmount;currency;transactedAt",
            "A1;12.30;EUR;2024-01-02T00:00:00Z",
            "",
        ]
    )
    (row,) = parse_export(text, "csv", "awin", STATUSES)
    assert (row.external_id, row.commission_amount) == ("A1", "12.30")


@pytest.mark.parametrize(
    "header",
    [
        ";;;\r\nexternalId;commissionAmount;currency;transactedAt",  # Excel's empty first row
        '"externalId";"commissionAmount";"currency";"transactedAt"',  # quoted names
        '"externalId"\t"commissionAmount"\t"currency"\t"transactedAt"',
        '"externalId","commissionAmount","currency","transactedAt"',
    ],
)
def test_the_delimiter_is_read_from_the_header_row_as_the_csv_reader_sees_it(header):
    # Split as raw text, a row of empty cells or quoted names would score every delimiter 0
    # and the file be read with "," and refused whole.
    delimiter = "\t" if "\t" in header else (";" if ";" in header else ",")
    text = header + "\r\n" + delimiter.join(["A1", "12.30", "EUR", "2024-01-02T00:00:00Z"]) + "\r\n"
    (row,) = parse_export(text, "csv", "awin", STATUSES)
    assert (row.external_id, row.commission_amount, row.currency) == ("A1", "12.30", "EUR")


@pytest.mark.parametrize(
    "field",
    [f for f in commission.FIELDS if f.kind == "text" and f.import_column is None],
    ids=lambda f: f.member,
)
def test_every_text_column_imports_within_its_limit_and_no_further(field):
    # Each text field of contract.commission.FIELDS is a column of its own member name.
    base = {"externalId": "T-9", "commissionAmount": "1", "currency": "EUR"}
    base["transactedAt"] = "2026-03-04T00:00:00Z"
    at_limit = {**base, field.member: "x" * field.limit}
    (row,) = parse_export(orjson.dumps(at_limit).decode(), "jsonl", "awin", STATUSES)
    assert getattr(row, field.name) == "x" * field.limit
    past = {**base, field.member: "x" * (field.limit + 1)}
    with pytest.raises(ExportError) as caught:
        parse_export(orjson.dumps(past).decode(), "jsonl", "awin", STATUSES)
    assert caught.value.problems[0].field == field.member
    assert f"longer than {field.limit} characters" in caught.value.problems[0].message
