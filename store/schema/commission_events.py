"""The commission event triggers (store.events), written from a list of commission fields:
what a step that adds a commission field calls to put its member into the events' `data`.

Each `data` is the Commission as the API lists it (contract.commission.FIELDS' members, in
the order given), built by concatenation so that SQLite and PostgreSQL write the same
bytes: text by json_quote / to_json, amounts verbatim (stored decimal text is a JSON
number). A step names its fields itself, as a tuple in its own file: a step that has
shipped never changes, whatever fields come later (step 5 wrote the first list by hand;
tests/store/test_commission_fields.py checks that this module writes it the same).
"""

from __future__ import annotations

from collections.abc import Sequence

from contract.commission import FIELD_OF
from store.schema.step import Statement, each

# What makes an update an event: its status, amounts or currency changed.
_CHANGED_SQLITE = (
    "OLD.status IS NOT NEW.status OR OLD.commission_amount IS NOT NEW.commission_amount OR "
    "OLD.sale_amount IS NOT NEW.sale_amount OR OLD.currency IS NOT NEW.currency"
)
_CHANGED_POSTGRES = (
    "o.status IS DISTINCT FROM n.status OR o.commission_amount IS DISTINCT FROM "
    "n.commission_amount OR o.sale_amount IS DISTINCT FROM n.sale_amount OR o.currency IS "
    "DISTINCT FROM n.currency"
)
# An update's `previous`: the replaced status, its word, amounts and currency.
_PREVIOUS = (
    ("status", "status", False),
    ("rawStatus", "raw_status", False),
    ("commissionAmount", "commission_amount", True),
    ("saleAmount", "sale_amount", True),
    ("currency", "currency", False),
)
_LOCK = "PERFORM pg_advisory_xact_lock(-419135353, (a.account_id % 2147483647)::integer) FROM "
_INSERT = "INSERT INTO events (account_id, type, occurred_at, data)"


def _sqlite_value(row: str, column: str, verbatim: bool) -> str:
    return f"coalesce({row}.{column}, 'null')" if verbatim else f"json_quote({row}.{column})"


def _postgres_value(row: str, column: str, verbatim: bool) -> str:
    if verbatim:
        return f"coalesce({row}.{column}, 'null')"
    return f"coalesce(to_json({row}.{column})::text, 'null')"


def _members(names: Sequence[str]) -> list[tuple[str, str, bool]]:
    """(member, column, verbatim) of `network` and of the named commission fields."""
    fields = [FIELD_OF[name] for name in names]
    return [("network", "network", False)] + [
        (f.member, f.name, f.kind == "amount") for f in fields
    ]


def _object(parts: list[str]) -> str:
    return " || ".join(parts)


def _sqlite_data(names: Sequence[str], updated: bool) -> str:
    parts = ["'{\"id\":'", "printf('\"com_%016x\"', NEW.id)"]
    for member, column, verbatim in _members(names):
        parts += [f"',\"{member}\":'", _sqlite_value("NEW", column, verbatim)]
    if updated:
        parts.append("',\"previous\":'")
        first = True
        for member, column, verbatim in _PREVIOUS:
            parts += [
                f"'{'{' if first else ','}\"{member}\":'",
                _sqlite_value("OLD", column, verbatim),
            ]
            first = False
        parts.append("'}'")
    parts.append("'}'")
    return _object(parts)


def _postgres_data(names: Sequence[str], updated: bool) -> str:
    parts = ["'{\"id\":'", "'\"com_'", "lpad(to_hex(n.id), 16, '0')", "'\"'"]
    for member, column, verbatim in _members(names):
        parts += [f"',\"{member}\":'", _postgres_value("n", column, verbatim)]
    if updated:
        parts.append("',\"previous\":'")
        first = True
        for member, column, verbatim in _PREVIOUS:
            parts += [
                f"'{'{' if first else ','}\"{member}\":'",
                _postgres_value("o", column, verbatim),
            ]
            first = False
        parts.append("'}'")
    parts.append("'}'")
    return _object(parts)


def _function(name: str, body: str, replace: bool) -> str:
    create = "CREATE OR REPLACE FUNCTION" if replace else "CREATE FUNCTION"
    return (
        f"{create} {name}() RETURNS trigger\n"
        "            LANGUAGE plpgsql AS $$\n"
        "            BEGIN\n"
        f"{body}"
        "                RETURN NULL;\n"
        "            END\n"
        "            $$"
    )


def _created(names: Sequence[str], replace: bool) -> tuple[str, str]:
    sqlite = (
        "CREATE TRIGGER events_commission_created AFTER INSERT ON commissions\n"
        "            BEGIN\n"
        f"                {_INSERT} VALUES (NEW.account_id, 'commission.created', "
        "NEW.updated_at,\n"
        f"                    {_sqlite_data(names, updated=False)});\n"
        "            END"
    )
    body = (
        f"                {_LOCK}(SELECT DISTINCT account_id FROM (SELECT account_id FROM "
        "new_rows) AS s ORDER BY account_id) AS a;\n"
        f"                {_INSERT} SELECT n.account_id, 'commission.created', n.updated_at, "
        f"{_postgres_data(names, updated=False)} FROM new_rows n ORDER BY n.id;\n"
    )
    return sqlite, _function("events_commission_created", body, replace)


def _updated(names: Sequence[str], replace: bool) -> tuple[str, str]:
    sqlite = (
        "CREATE TRIGGER events_commission_updated AFTER UPDATE ON commissions\n"
        f"            FOR EACH ROW WHEN {_CHANGED_SQLITE}\n"
        "            BEGIN\n"
        f"                {_INSERT} VALUES (NEW.account_id, 'commission.updated', "
        "NEW.updated_at,\n"
        f"                    {_sqlite_data(names, updated=True)});\n"
        "            END"
    )
    joined = "old_rows o JOIN new_rows n ON n.id = o.id"
    body = (
        f"                {_LOCK}(SELECT DISTINCT account_id FROM (SELECT o.account_id FROM "
        f"{joined} WHERE {_CHANGED_POSTGRES}) AS s ORDER BY account_id) AS a;\n"
        f"                {_INSERT} SELECT n.account_id, 'commission.updated', n.updated_at, "
        f"{_postgres_data(names, updated=True)} FROM {joined} WHERE {_CHANGED_POSTGRES} "
        "ORDER BY n.id;\n"
    )
    return sqlite, _function("events_commission_updated", body, replace)


def triggers(names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """The commission event triggers whose `data` has the `names` fields (NewCommission
    names, in member order): per event, its SQLite trigger and its PostgreSQL function,
    as step 5 creates them."""
    return {
        "created": _created(names, replace=False),
        "updated": _updated(names, replace=False),
    }


def replace_triggers(names: Sequence[str]) -> tuple[Statement, ...]:
    """The statements of a step that makes the commission events' `data` show the `names`
    fields (NewCommission names, in member order): SQLite's triggers dropped and created
    again, PostgreSQL's functions replaced (its triggers call them by name)."""
    out: list[Statement] = []
    for event, build in (("created", _created), ("updated", _updated)):
        sqlite, function = build(names, replace=True)
        out.append(each(sqlite=f"DROP TRIGGER events_commission_{event}", postgres=function))
        out.append(each(sqlite=sqlite))
    return tuple(out)
