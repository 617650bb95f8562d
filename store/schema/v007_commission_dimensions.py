"""Step 7: per-day and per-month commission totals by programme and sub-id
(`commission_dims_daily`, `commission_dims_monthly`), filled from the stored commissions and
kept by triggers on `commissions` in the writing statement's transaction, as the totals of
step 4 are (store.summary reads them and explains the limbs); and the indexes that read one
programme's or one sub-id's commissions in keyset order (the list filters, the latest
programme name of a summary row).

A programme or a sub-id a commission lacks (NULL) cannot be a key of PostgreSQL's primary
key, and an empty text is a value a network may send: the keys are `program_key` and
`sub_key`, '' for none and '=' followed by the value otherwise, so the two never meet.

The statements are composed by the functions below once, at import: their text is what
the schema history pins (tests/store/test_schema_history.py), so this file, once shipped,
is never edited."""

from __future__ import annotations

from store.schema.step import Statement, Step, both, each

_KEY = ("account_id", "{grain}", "currency", "network", "status", "program_key", "sub_key")
_TOTALS = (
    "row_count",
    "commission_hi",
    "commission_mid",
    "commission_lo",
    "sale_rows",
    "sale_hi",
    "sale_mid",
    "sale_lo",
)
_LIMBS = tuple(c for c in _TOTALS if c not in ("row_count", "sale_rows"))
_TABLES = (("commission_dims_daily", "day", 10), ("commission_dims_monthly", "month", 7))
_ZEROS30 = "0" * 30
_ZEROS12 = "0" * 12


def _keys(grain: str) -> list[str]:
    return [k.format(grain=grain) for k in _KEY]


def _table(engine: str, table: str, grain: str) -> str:
    if engine == "sqlite":
        limbs = ",\n".join(f"            {c} INTEGER NOT NULL DEFAULT 0" for c in _LIMBS)
        checks = ",\n".join(f"            CHECK (typeof({c}) = 'integer')" for c in _LIMBS)
        return (
            f"CREATE TABLE {table} (\n"
            "            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,\n"
            f"            {grain} TEXT NOT NULL,\n"
            "            currency TEXT NOT NULL,\n"
            "            network TEXT NOT NULL,\n"
            "            status TEXT NOT NULL,\n"
            "            program_key TEXT NOT NULL,\n"
            "            sub_key TEXT NOT NULL,\n"
            "            row_count INTEGER NOT NULL CHECK (row_count >= 0),\n"
            "            sale_rows INTEGER NOT NULL CHECK (sale_rows >= 0),\n"
            f"{limbs},\n"
            f"            PRIMARY KEY ({', '.join(_keys(grain))}),\n"
            f"{checks}\n"
            "        ) WITHOUT ROWID"
        )
    limbs = ",\n".join(f"            {c} bigint NOT NULL DEFAULT 0" for c in _LIMBS)
    return (
        f"CREATE TABLE {table} (\n"
        "            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,\n"
        f'            {grain} text COLLATE "C" NOT NULL,\n'
        '            currency text COLLATE "C" NOT NULL,\n'
        '            network text COLLATE "C" NOT NULL,\n'
        '            status text COLLATE "C" NOT NULL,\n'
        '            program_key text COLLATE "C" NOT NULL,\n'
        '            sub_key text COLLATE "C" NOT NULL,\n'
        "            row_count bigint NOT NULL CHECK (row_count >= 0),\n"
        "            sale_rows bigint NOT NULL CHECK (sale_rows >= 0),\n"
        f"{limbs},\n"
        f"            PRIMARY KEY ({', '.join(_keys(grain))})\n"
        "        )"
    )


def _digits_sqlite(value: str) -> str:
    """An amount's absolute value as 30 digits of 1e-12 units (SQLite string functions)."""
    bare = f"ltrim(coalesce({value}, '0'), '-')"
    point = f"instr({bare}, '.')"
    return (
        f"substr('{_ZEROS30}' || CASE {point} WHEN 0 THEN {bare} || '{_ZEROS12}' "
        f"ELSE substr({bare}, 1, {point} - 1) || substr(substr({bare}, {point} + 1) || "
        f"'{_ZEROS12}', 1, 12) END, -30)"
    )


def _limbs_sqlite(value: str, prefix: str) -> list[str]:
    sign = f"(CASE WHEN substr({value}, 1, 1) = '-' THEN -1 ELSE 1 END)"
    digits = _digits_sqlite(value)
    return [
        f"{sign} * CAST(substr({digits}, {start}, 10) AS INTEGER) AS {prefix}_{limb}"
        for start, limb in ((1, "hi"), (11, "mid"), (21, "lo"))
    ]


def _limbs_postgres(value: str, prefix: str) -> list[str]:
    units = f"(coalesce({value}, '0')::numeric * 1000000000000)"
    return [
        f"div({units}, 100000000000000000000)::bigint AS {prefix}_hi",
        f"div(mod({units}, 100000000000000000000), 10000000000)::bigint AS {prefix}_mid",
        f"mod({units}, 10000000000)::bigint AS {prefix}_lo",
    ]


def _rows(engine: str, grain: str, width: int, source: str) -> str:
    """The grouped totals of `source` (rows with the commissions' columns) per key."""
    limbs = _limbs_sqlite if engine == "sqlite" else _limbs_postgres
    per_row = ", ".join(
        [
            "account_id",
            f"substr(transacted_at, 1, {width}) AS {grain}",
            "currency",
            "network",
            "status",
            "CASE WHEN program_external_id IS NULL THEN '' "
            "ELSE '=' || program_external_id END AS program_key",
            "CASE WHEN sub_id IS NULL THEN '' ELSE '=' || sub_id END AS sub_key",
            "1 AS row_count",
            *limbs("commission_amount", "commission"),
            "CASE WHEN sale_amount IS NULL THEN 0 ELSE 1 END AS sale_rows",
            *limbs("sale_amount", "sale"),
        ]
    )
    keys = ", ".join(_keys(grain))
    sums = ", ".join(f"sum({c}) AS {c}" for c in _TOTALS)
    return f"SELECT {keys}, {sums} FROM (SELECT {per_row} FROM {source}) AS r GROUP BY {keys}"


def _add(engine: str, table: str, grain: str, width: int, source: str) -> str:
    """Add `source`'s totals to `table`, a row per key made when missing; in key order, so
    that concurrent writers lock the rows in one order (PostgreSQL)."""
    keys = ", ".join(_keys(grain))
    columns = f"{keys}, {', '.join(_TOTALS)}"
    updates = ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in _TOTALS)
    # `WHERE true`: SQLite reads ON after a SELECT's FROM as a join without it.
    return (
        f"INSERT INTO {table} ({columns}) SELECT {columns} FROM "
        f"({_rows(engine, grain, width, source)}) AS p WHERE true ORDER BY {keys} "
        f"ON CONFLICT ({keys}) DO UPDATE SET {updates}"
    )


def _subtract(engine: str, table: str, grain: str, width: int, source: str) -> str:
    """Take `source`'s totals from `table`'s rows (which hold them), then drop the rows
    left with no commission."""
    sets = ", ".join(f"{c} = {table}.{c} - o.{c}" for c in _TOTALS)
    match = " AND ".join(f"{table}.{k} = o.{k}" for k in _keys(grain))
    return (
        f"UPDATE {table} SET {sets} FROM ({_rows(engine, grain, width, source)}) AS o WHERE {match}"
    )


def _emptied(table: str, grain: str, width: int, source: str) -> str:
    """Drop the rows of `table` that `source`'s keys emptied (an index probe each)."""
    keys = (
        f"SELECT account_id, substr(transacted_at, 1, {width}) AS {grain}, currency, "
        "network, status, CASE WHEN program_external_id IS NULL THEN '' "
        "ELSE '=' || program_external_id END AS program_key, "
        f"CASE WHEN sub_id IS NULL THEN '' ELSE '=' || sub_id END AS sub_key FROM {source}"
    )
    match = " AND ".join(f"{table}.{k} = k.{k}" for k in _keys(grain))
    return (
        f"DELETE FROM {table} WHERE row_count = 0 AND EXISTS "
        f"(SELECT 1 FROM ({keys}) AS k WHERE {match})"
    )


_ROW_COLUMNS = (
    "account_id",
    "transacted_at",
    "currency",
    "network",
    "status",
    "program_external_id",
    "sub_id",
    "commission_amount",
    "sale_amount",
)


def _one(alias: str) -> str:
    """A trigger's NEW or OLD row as a one-row source (SQLite)."""
    columns = ", ".join(f"{alias}.{c} AS {c}" for c in _ROW_COLUMNS)
    return f"(SELECT {columns}) AS {alias.lower()}_row"


def _sqlite_trigger(name: str, event: str, body: list[str]) -> str:
    lines = "".join(f"                {statement};\n" for statement in body)
    return f"CREATE TRIGGER {name} AFTER {event} ON commissions\n            BEGIN\n{lines}            END"


def _postgres_function(name: str, body: list[str]) -> str:
    lines = "".join(f"                {statement};\n" for statement in body)
    return (
        f"CREATE FUNCTION {name}() RETURNS trigger\n"
        "            LANGUAGE plpgsql AS $$\n"
        "            BEGIN\n"
        f"{lines}"
        "                RETURN NULL;\n"
        "            END\n"
        "            $$"
    )


def _postgres_trigger(name: str, event: str, tables: str) -> str:
    return (
        f"CREATE TRIGGER {name} AFTER {event} ON commissions\n"
        f"            REFERENCING {tables}\n"
        f"            FOR EACH STATEMENT EXECUTE FUNCTION {name}()"
    )


def _statements() -> tuple[Statement, ...]:
    out: list[Statement] = []
    for table, grain, _width in _TABLES:
        out.append(
            each(sqlite=_table("sqlite", table, grain), postgres=_table("postgres", table, grain))
        )
    for table, grain, width in _TABLES:
        out.append(
            each(
                sqlite=_add("sqlite", table, grain, width, "commissions"),
                postgres=_add("postgres", table, grain, width, "commissions"),
            )
        )
    # SQLite: a trigger per row; the update's only when a column of the totals changed.
    columns = ", ".join(_ROW_COLUMNS)
    inserts, updates, deletes = [], [], []
    for table, grain, width in _TABLES:
        inserts.append(_add("sqlite", table, grain, width, _one("NEW")))
        updates += [
            _subtract("sqlite", table, grain, width, _one("OLD")),
            _add("sqlite", table, grain, width, _one("NEW")),
            _emptied(table, grain, width, _one("OLD")),
        ]
        deletes += [
            _subtract("sqlite", table, grain, width, _one("OLD")),
            _emptied(table, grain, width, _one("OLD")),
        ]
    out += [
        each(sqlite=_sqlite_trigger("commission_dims_insert", "INSERT", inserts)),
        each(sqlite=_sqlite_trigger("commission_dims_update", f"UPDATE OF {columns}", updates)),
        each(sqlite=_sqlite_trigger("commission_dims_delete", "DELETE", deletes)),
    ]
    # PostgreSQL: a trigger per statement, over its transition tables.
    p_inserts, p_updates, p_deletes = [], [], []
    for table, grain, width in _TABLES:
        p_inserts.append(_add("postgres", table, grain, width, "new_rows"))
        p_updates += [
            _subtract("postgres", table, grain, width, "old_rows"),
            _add("postgres", table, grain, width, "new_rows"),
            _emptied(table, grain, width, "old_rows"),
        ]
        p_deletes += [
            _subtract("postgres", table, grain, width, "old_rows"),
            _emptied(table, grain, width, "old_rows"),
        ]
    for name, event, body, tables in (
        ("commission_dims_insert", "INSERT", p_inserts, "NEW TABLE AS new_rows"),
        (
            "commission_dims_update",
            "UPDATE",
            p_updates,
            "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        ),
        ("commission_dims_delete", "DELETE", p_deletes, "OLD TABLE AS old_rows"),
    ):
        out.append(each(postgres=_postgres_function(name, body)))
        out.append(each(postgres=_postgres_trigger(name, event, tables)))
    # Keyset pages of one programme's or one sub-id's commissions, and a programme's latest
    # name (its newest commission), each read by one index range.
    out.append(
        both(
            "CREATE INDEX commissions_program_page ON commissions "
            "(account_id, network, program_external_id, transacted_at DESC, id DESC)"
        )
    )
    out.append(
        both(
            "CREATE INDEX commissions_sub_id_page ON commissions "
            "(account_id, sub_id, transacted_at DESC, id DESC)"
        )
    )
    return tuple(out)


STEP = Step(*_statements())
