"""One definition of a commission's fields (contract.commission.FIELDS): every list of
them elsewhere (the store's columns and upsert, the events' payload, the API's members
and OpenAPI properties, the import columns, the sync's fields) is that table's, in its
order. A field added to the table and missed by one of them fails here, by name."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from accounts import importer
from contract import commission
from contract.openapi import document
from contract.resources import COMMISSION, COMMISSION_DETAIL, COMMISSION_RECORD, COMMISSION_UPDATE
from edge.directory.programlinks import ProgramLinks
from edge.handlers.account import commission_json
from store.commissions import COMMISSION_COLUMNS, UPSERT_ARRAYS_SQL, upsert_values_sql
from store.engines.sqlite import migrate
from store.schema import HISTORY, commission_events
from sync.connectors.base import Fields
from sync.model import Transaction

FIELDS = commission.FIELDS
NAMES = tuple(f.name for f in FIELDS)
MEMBERS = tuple(f.member for f in FIELDS)
ROOT = Path(__file__).resolve().parents[2]
# What every Commission starts with, before the table's fields.
HEAD = ("id", "network")
# A commission as read: the record's members and the directory link resolved then, after
# the programme's members it is resolved from (an event records no link).
_AT = MEMBERS.index("programExternalId") + 1
READ = (*HEAD, *MEMBERS[:_AT], "programSlug", *MEMBERS[_AT:])


@pytest.fixture(scope="module")
def latest_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    path: Path = tmp_path_factory.mktemp("fields") / "store.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, lambda: dt.datetime.now(dt.UTC))
    yield conn
    conn.close()


def test_the_table_names_each_field_once():
    assert len(set(NAMES)) == len(NAMES)
    assert len(set(MEMBERS)) == len(MEMBERS)
    assert commission.NAMES == NAMES and commission.MEMBERS == MEMBERS
    assert tuple(f.name for f in FIELDS if f.value) == commission.VALUE_FIELDS
    assert {f.name: f.limit for f in FIELDS if f.kind == "text"} == commission.TEXT_LIMITS


def test_the_models_carry_the_tables_fields():
    new = [f.name for f in dataclasses.fields(commission.NewCommission)]
    assert sorted(new) == sorted((*NAMES, "stated"))
    row = [f.name for f in dataclasses.fields(commission.CommissionRow)]
    assert tuple(row) == ("seq", "network", *NAMES)
    # A field the API may show null is one a new row may lack.
    defaults = {f.name: f.default for f in dataclasses.fields(commission.NewCommission) if f.init}
    for f in FIELDS:
        if f.nullable and f.import_column is None:
            assert defaults[f.name] is None, f.name


def test_the_stores_columns_are_the_tables(latest_sqlite: sqlite3.Connection):
    assert ", ".join(("id", "network", *NAMES)) == COMMISSION_COLUMNS
    stored = {
        name: notnull
        for _, name, _, notnull, _, _ in latest_sqlite.execute("PRAGMA table_info(commissions)")
    }
    for f in FIELDS:
        assert f.name in stored, f"schema has no column {f.name}: add a schema step"
        assert bool(stored[f.name]) == (not f.nullable), f.name
    for sql in (upsert_values_sql(1), UPSERT_ARRAYS_SQL):
        for name in NAMES:
            assert re.search(rf"\b{name}\b", sql), name
        for name in commission.VALUE_FIELDS:
            assert f"{name} = excluded.{name}" in sql, name


@pytest.mark.parametrize("trigger", ["events_commission_created", "events_commission_updated"])
def test_the_events_members_are_the_tables(latest_sqlite: sqlite3.Connection, trigger: str):
    (sql,) = latest_sqlite.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (trigger,)
    ).fetchone()
    # The payload as the trigger spells it: ',"member":' || its column, up to `previous`.
    payload = sql.split(',"previous":')[0]
    members = tuple(re.findall(r'[{,]"(\w+)":', payload))
    assert members == (*HEAD, *MEMBERS), "the event triggers need the field: a schema step"
    columns = tuple(re.findall(r"NEW\.(\w+)", payload.split("'{\"id\":'")[1]))
    assert columns == ("id", "network", *NAMES)


def test_the_api_members_are_the_tables():
    assert COMMISSION_RECORD.names == (*HEAD, *MEMBERS)
    assert COMMISSION.names == READ
    assert COMMISSION_DETAIL.names[: len(READ)] == COMMISSION.names
    assert COMMISSION_UPDATE.names[: len(HEAD) + len(MEMBERS)] == COMMISSION_RECORD.names
    for f in FIELDS:
        member = COMMISSION.field(f.member)
        assert (member.nullable, member.description) == (f.nullable, f.description)
    properties = document()["components"]["schemas"]["Commission"]["properties"]
    assert tuple(properties) == READ
    row = commission.CommissionRow(
        1,
        "awin",
        **{f.name: "1.5" if f.kind == "amount" else f"{f.name}-value" for f in FIELDS},
    )

    class Ids:
        def commission(self, seq: int) -> str:
            return f"com_{seq:016x}"

    shown = commission_json(Ids(), row)  # type: ignore[arg-type]
    assert tuple(shown) == (*HEAD, *MEMBERS)
    linked = ProgramLinks(slugs={("awin", "program_external_id-value"): "a-programme"})
    read = commission_json(Ids(), row, links=linked)  # type: ignore[arg-type]
    assert tuple(read) == READ and read["programSlug"] == "a-programme"
    assert [shown[f.member] for f in FIELDS if f.kind != "amount"] == [
        f"{f.name}-value" for f in FIELDS if f.kind != "amount"
    ]


def test_the_import_columns_are_the_tables():
    assert tuple(dict.fromkeys(f.column for f in FIELDS)) == importer.COLUMNS
    assert [name for column in importer.COLUMNS for name in importer.FIELDS_OF[column]] == [
        name
        for column in importer.COLUMNS
        for name in NAMES
        if commission.FIELD_OF[name].column == column
    ]
    assert sorted(n for names in importer.FIELDS_OF.values() for n in names) == sorted(NAMES)
    for f in FIELDS:
        if f.kind == "text" and f.import_column is None:
            assert importer.TEXT_LIMITS[f.column] == f.limit


def test_the_sync_reads_every_field():
    wires = {f.name for f in dataclasses.fields(Fields)}
    for f in FIELDS:
        assert f.wire is None or f.wire in wires, f.name
    carried = {f.name for f in dataclasses.fields(Transaction)}
    assert set(NAMES) <= carried


# The fields step 5 wrote its event triggers with.
STEP_5_FIELDS = (
    "external_id",
    "program_name",
    "program_external_id",
    "status",
    "raw_status",
    "sale_amount",
    "commission_amount",
    "currency",
    "clicked_at",
    "transacted_at",
    "sub_id",
)


def test_the_event_triggers_are_written_as_step_5_wrote_them():
    step = HISTORY[4].statements
    written = commission_events.triggers(STEP_5_FIELDS)
    assert written["created"] == (step[6].sqlite, step[3].postgres)
    assert written["updated"] == (step[7].sqlite, step[4].postgres)


def test_a_step_replacing_the_event_triggers_keeps_their_bytes(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "store.sqlite3", isolation_level=None)
    try:
        migrate(conn, lambda: dt.datetime.now(dt.UTC), upto=5)
        before = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        shown = dict(before.fetchall())
        for statement in commission_events.replace_triggers(STEP_5_FIELDS):
            if statement.sqlite is not None:
                conn.execute(statement.sqlite)
        after = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        assert dict(after.fetchall()) == shown
    finally:
        conn.close()
    postgres = [s.postgres for s in commission_events.replace_triggers(STEP_5_FIELDS)]
    assert [p.split("\n")[0] for p in postgres if p] == [
        "CREATE OR REPLACE FUNCTION events_commission_created() RETURNS trigger",
        "CREATE OR REPLACE FUNCTION events_commission_updated() RETURNS trigger",
    ]


def _table_after(text: str, heading: str) -> list[list[str]]:
    """The cells of the first Markdown table after `heading`, header and rule left out."""
    lines = text[text.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _spec_commission() -> list[list[str]]:
    """The rows of the spec's Commission table: member, type, meaning."""
    spec = (ROOT / "docs/spec/api-spec.md").read_text(encoding="utf-8")
    return _table_after(spec, "\n### Commission\n")


def test_the_spec_lists_the_tables_fields():
    rows = _spec_commission()
    assert [row[0] for row in rows] == [*HEAD, *MEMBERS]
    for row, f in zip(rows[len(HEAD) :], FIELDS, strict=True):
        assert row[2].startswith(f.description), f.member
        assert row[1].endswith("or null") == f.nullable, f.member


# What docs/accounts.md says of the import columns without naming them: the Commission's
# members but these (the status column gives rawStatus), required when never null.
NOT_IMPORTED = ("id", "network", "rawStatus")
GUIDE_COLUMNS = (
    "The columns are the members of a [Commission](spec/api-spec.md#commission), under the "
    "same names, but `id` and `network` (the store gives the one, `--network` the other) and "
    "`rawStatus`"
)
GUIDE_REQUIRED = (
    'A column is required when the spec\'s table types its member without "or null", `status` aside'
)


def _guide_says(text: str) -> bool:
    """Whether docs/accounts.md says `text`, however its lines are wrapped."""
    guide = (ROOT / "docs/accounts.md").read_text(encoding="utf-8")
    return " ".join(text.split()) in " ".join(guide.split())


def test_the_import_guide_states_the_columns_by_the_spec():
    """The guide names the columns by the spec's table and says what each holds by its
    type there, naming only what is particular to a column: every field of the table is
    a column the guide describes as the importer reads it, without an edit of the guide."""
    spec = {row[0]: row for row in _spec_commission()}
    assert _guide_says(GUIDE_COLUMNS) and _guide_says(GUIDE_REQUIRED)
    assert set(importer.COLUMNS) == set(spec) - set(NOT_IMPORTED)
    never_null = {member for member, row in spec.items() if not row[1].endswith("or null")}
    assert never_null - {"id", "network", "status"} == importer.REQUIRED
    guide = (ROOT / "docs/accounts.md").read_text(encoding="utf-8")
    rows = {row[0]: row[1] for row in _table_after(guide, "| column | value |")}
    named = {cell.strip("`") for cell in rows if cell.startswith("`")}
    assert named <= set(importer.COLUMNS)
    other_text = rows["any other `string`"]
    default = int(re.search(r"up to (\d+) characters", other_text)[1])  # type: ignore[index]
    exceptions = {m: int(n) for m, n in re.findall(r"`(\w+)` up to (\d+)", other_text)}
    for column, kind, limit in importer.PARSED:
        member_type, meaning = spec[column][1], spec[column][2]
        if column in named:
            said = rows[f"`{column}`"]
            if limit:
                assert f"{limit} characters" in said, column
            continue
        if member_type.startswith("number"):
            assert kind == "amount" and "decimal number" in rows["a `number`"], column
        elif "ISO 8601 timestamp" in meaning:
            assert kind == "instant", column
        else:
            assert kind == "text" and member_type.startswith("string"), column
            assert limit == exceptions.get(column, default), column
