"""Per-day commission totals: the `commission_daily` table, the triggers that keep it, and
the summary read over it.

One row per (account, UTC day of transacted_at, network, status, currency) holds the
number of commissions, the sum of their commission amounts and the sum of their sale
amounts (with the number of rows that have one). Triggers on `commissions` keep it in the
statement's own transaction, whatever writes (the sync's upsert, an import, a correction,
a deletion, an account's cascade): the totals are exact at every instant, and no caller
has to remember them.

Exact sums without a decimal type on SQLite: an amount has at most 18 digits before the
point and 12 after (accounts.commission), so it is an integer N of 1e-12 units with
|N| < 10**30: more than 64 bits, and a sum of many rows more still. N is kept as three
"limbs" of ten digits, hi * 10**20 + mid * 10**10 + lo, each with the amount's sign; each
limb of a row is below 10**10, so a limb column holds the sum of 900 million rows before
64 bits overflow. Both databases keep the same columns (bigint limbs): SQLite computes
them from the text with string functions, PostgreSQL with `numeric`; a SQLite CHECK
refuses a limb that overflowed into a float, so a sum is exact or the write fails. Reads
add the limbs of the matching rows (sum() of SQLite raises on overflow, PostgreSQL's
returns numeric) and Python joins them into one integer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

SCALE = 12  # digits after the point: accounts.commission.AMOUNT_SCALE
LIMB_DIGITS = 10
LIMBS = ("hi", "mid", "lo")
KEY = ("account_id", "day", "network", "status", "currency")
COMMISSION_LIMBS = tuple(f"commission_{limb}" for limb in LIMBS)
SALE_LIMBS = tuple(f"sale_{limb}" for limb in LIMBS)
# Every column after the key, in the order the triggers write them.
TOTALS = ("row_count", *COMMISSION_LIMBS, "sale_rows", *SALE_LIMBS)
_KEY_LIST = ", ".join(KEY)
_ZEROS = "0" * (LIMB_DIGITS * len(LIMBS))
_SCALE_ZEROS = "0" * SCALE


# --- Exact amounts as integers ---------------------------------------------------------


def amount_units(text: str) -> int:
    """A stored amount ("-12.30") as an integer of 1e-12 units (-12300000000000)."""
    negative = text.startswith("-")
    whole, _, fraction = text.lstrip("-").partition(".")
    units = int(whole) * 10**SCALE + int((fraction + _SCALE_ZEROS)[:SCALE])
    return -units if negative else units


def units_amount(units: int) -> str:
    """An integer of 1e-12 units as amount text, in the fewest digits that are exact:
    no exponent, no trailing zero after the point ("12.3", "100", "-0.000000000001")."""
    sign = "-" if units < 0 else ""
    whole, fraction = divmod(abs(units), 10**SCALE)
    digits = f"{fraction:0{SCALE}d}".rstrip("0")
    return f"{sign}{whole}.{digits}" if digits else f"{sign}{whole}"


def joined(limbs: Sequence[Any]) -> int:
    """hi, mid, lo limb sums (int, or Decimal from PostgreSQL) as one integer of units."""
    total = 0
    for limb in limbs:
        total = total * 10**LIMB_DIGITS + int(limb)
    return total


# --- The table and its triggers --------------------------------------------------------


def daily_table(integer: str, text: str, checks: Sequence[str] = ()) -> str:
    """CREATE TABLE commission_daily in a layer's spelling of integers and text."""
    limbs = ",\n            ".join(
        f"{name} {integer} NOT NULL DEFAULT 0" for name in (*COMMISSION_LIMBS, *SALE_LIMBS)
    )
    extra = "".join(f",\n            {check}" for check in checks)
    return f"""CREATE TABLE commission_daily (
            account_id {integer} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            day {text} NOT NULL,
            network {text} NOT NULL,
            status {text} NOT NULL,
            currency {text} NOT NULL,
            row_count {integer} NOT NULL CHECK (row_count >= 0),
            sale_rows {integer} NOT NULL CHECK (sale_rows >= 0),
            {limbs},
            PRIMARY KEY ({_KEY_LIST}){extra}
        )"""


# A float in a limb column would be a sum no longer exact: SQLite turns an integer
# overflow of `+` into a REAL; the write fails instead.
SQLITE_CHECKS = tuple(
    f"CHECK (typeof({name}) = 'integer')" for name in (*COMMISSION_LIMBS, *SALE_LIMBS)
)


def _sqlite_digits(x: str) -> str:
    """The 30 digits of |amount `x`| * 10**12, zero-padded (SQLite string functions)."""
    a = f"ltrim(coalesce({x}, '0'), '-')"
    point = f"instr({a}, '.')"
    units = (
        f"CASE {point} WHEN 0 THEN {a} || '{_SCALE_ZEROS}' "
        f"ELSE substr({a}, 1, {point} - 1) "
        f"|| substr(substr({a}, {point} + 1) || '{_SCALE_ZEROS}', 1, {SCALE}) END"
    )
    return f"substr('{_ZEROS}' || {units}, -{len(_ZEROS)})"


def _sqlite_limbs(digits: str, sign: str) -> list[str]:
    return [
        f"{sign} * CAST(substr({digits}, {1 + n * LIMB_DIGITS}, {LIMB_DIGITS}) AS INTEGER)"
        for n in range(len(LIMBS))
    ]


def sqlite_parts(prefix: str, source: str = "") -> str:
    """SELECT of each row's key and its totals (1, limbs...) on SQLite: `prefix` `NEW.` or
    `OLD.` in a trigger, `` with `source` `FROM commissions` for the backfill."""
    p = prefix
    rows = (
        f"SELECT {p}account_id AS account_id, substr({p}transacted_at, 1, 10) AS day, "
        f"{p}network AS network, {p}status AS status, {p}currency AS currency, "
        f"{p}commission_amount AS c, {p}sale_amount AS s {source}"
    )
    signed = (
        "SELECT account_id, day, network, status, currency, "
        "CASE WHEN substr(c, 1, 1) = '-' THEN -1 ELSE 1 END AS cs, "
        f"{_sqlite_digits('c')} AS cd, "
        "CASE WHEN s IS NULL THEN 0 ELSE 1 END AS sn, "
        "CASE WHEN substr(s, 1, 1) = '-' THEN -1 ELSE 1 END AS ss, "
        f"{_sqlite_digits('s')} AS sd "
        f"FROM ({rows})"
    )
    totals = ["1", *_sqlite_limbs("cd", "cs"), "sn", *_sqlite_limbs("sd", "ss")]
    return (
        f"SELECT {_KEY_LIST}, "
        + ", ".join(f"{expr} AS {name}" for expr, name in zip(totals, TOTALS, strict=True))
        + f" FROM ({signed})"
    )


def _grouped(parts: str) -> str:
    """The per-row totals of `parts` summed by key."""
    sums = ", ".join(f"sum({name}) AS {name}" for name in TOTALS)
    return f"SELECT {_KEY_LIST}, {sums} FROM ({parts}) AS r GROUP BY {_KEY_LIST}"


def _add(parts: str) -> str:
    """Upsert the totals of `parts` into commission_daily (`WHERE true`: SQLite's
    INSERT ... SELECT ... ON CONFLICT needs it to parse)."""
    columns = ", ".join((*KEY, *TOTALS))
    sets = ", ".join(f"{name} = commission_daily.{name} + excluded.{name}" for name in TOTALS)
    return (
        f"INSERT INTO commission_daily ({columns}) SELECT {columns} FROM ({parts}) AS p "
        f"WHERE true ORDER BY {_KEY_LIST} "
        f"ON CONFLICT ({_KEY_LIST}) DO UPDATE SET {sets}"
    )


def _subtract(parts: str) -> str:
    """Take the totals of `parts` (summed by key) from their rows of commission_daily.
    An UPDATE, never an insert: a row being removed was counted, and during an account's
    cascade its totals may already be gone (no row to recreate for a deleted account)."""
    sets = ", ".join(f"{name} = commission_daily.{name} - o.{name}" for name in TOTALS)
    match = " AND ".join(f"commission_daily.{name} = o.{name}" for name in KEY)
    return f"UPDATE commission_daily SET {sets} FROM ({_grouped(parts)}) AS o WHERE {match}"


def _drop_empty(keys: str) -> str:
    """Delete the rows of the keys `keys` selects that no commission counts any more."""
    match = " AND ".join(f"commission_daily.{name} = k.{name}" for name in KEY)
    return (
        f"DELETE FROM commission_daily WHERE row_count = 0 AND EXISTS "
        f"(SELECT 1 FROM ({keys}) AS k WHERE {match})"
    )


# What moves a commission between aggregate rows or changes their totals.
_COUNTED = (
    "account_id",
    "transacted_at",
    "network",
    "status",
    "currency",
    "commission_amount",
    "sale_amount",
)


def sqlite_migration() -> tuple[str, ...]:
    """Migration 4 on SQLite: the table, its backfill, one row trigger per kind of write."""
    new, old = sqlite_parts("NEW."), sqlite_parts("OLD.")
    old_key = "SELECT " + ", ".join(
        f"{'substr(OLD.transacted_at, 1, 10)' if k == 'day' else 'OLD.' + k} AS {k}" for k in KEY
    )
    changed = " OR ".join(f"OLD.{name} IS NOT NEW.{name}" for name in _COUNTED)
    return (
        daily_table("INTEGER", "TEXT", SQLITE_CHECKS),
        f"INSERT INTO commission_daily ({', '.join((*KEY, *TOTALS))}) "
        + _grouped(sqlite_parts("", "FROM commissions")),
        f"""CREATE TRIGGER commission_daily_insert AFTER INSERT ON commissions
            BEGIN
                {_add(new)};
            END""",
        f"""CREATE TRIGGER commission_daily_update AFTER UPDATE ON commissions
            FOR EACH ROW WHEN {changed}
            BEGIN
                {_subtract(old)};
                {_add(new)};
                {_drop_empty(old_key)};
            END""",
        f"""CREATE TRIGGER commission_daily_delete AFTER DELETE ON commissions
            BEGIN
                {_subtract(old)};
                {_drop_empty(old_key)};
            END""",
    )


def pg_parts(source: str) -> str:
    """SELECT of each row's key and its totals from `source` (a table or transition
    table) on PostgreSQL: the limbs from exact `numeric`."""
    unit = f"1{_SCALE_ZEROS}"
    lo, mid = f"1{'0' * LIMB_DIGITS}", f"1{'0' * 2 * LIMB_DIGITS}"

    def limbs(x: str) -> list[str]:
        n = f"(coalesce({x}, '0')::numeric * {unit})"
        return [
            # div(), not `/`: a numeric quotient is rounded to a scale, div() truncates.
            f"div({n}, {mid})::bigint",
            f"div(mod({n}, {mid}), {lo})::bigint",
            f"mod({n}, {lo})::bigint",
        ]

    totals = [
        "1",
        *limbs("commission_amount"),
        "CASE WHEN sale_amount IS NULL THEN 0 ELSE 1 END",
        *limbs("sale_amount"),
    ]
    return (
        "SELECT account_id, substr(transacted_at, 1, 10) AS day, network, status, currency, "
        + ", ".join(f"{expr} AS {name}" for expr, name in zip(totals, TOTALS, strict=True))
        + f" FROM {source}"
    )


def _pg_function(name: str, body: Iterable[str]) -> str:
    statements = "\n                ".join(f"{statement};" for statement in body)
    return f"""CREATE FUNCTION {name}() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                {statements}
                RETURN NULL;
            END
            $$"""


def pg_migration() -> tuple[str, ...]:
    """Migration 4 on PostgreSQL: the table, its backfill, and one statement-level trigger
    per kind of write, set-based over its transition tables."""
    old_keys = (
        "SELECT DISTINCT account_id, substr(transacted_at, 1, 10) AS day, network, status, "
        "currency FROM old_rows"
    )
    return (
        daily_table("bigint", 'text COLLATE "C"'),
        f"INSERT INTO commission_daily ({', '.join((*KEY, *TOTALS))}) "
        + _grouped(pg_parts("commissions")),
        _pg_function("commission_daily_insert", [_add(_grouped(pg_parts("new_rows")))]),
        _pg_function(
            "commission_daily_update",
            [
                _subtract(pg_parts("old_rows")),
                _add(_grouped(pg_parts("new_rows"))),
                _drop_empty(old_keys),
            ],
        ),
        _pg_function(
            "commission_daily_delete", [_subtract(pg_parts("old_rows")), _drop_empty(old_keys)]
        ),
        """CREATE TRIGGER commission_daily_insert AFTER INSERT ON commissions
            REFERENCING NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION commission_daily_insert()""",
        """CREATE TRIGGER commission_daily_update AFTER UPDATE ON commissions
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION commission_daily_update()""",
        """CREATE TRIGGER commission_daily_delete AFTER DELETE ON commissions
            REFERENCING OLD TABLE AS old_rows
            FOR EACH STATEMENT EXECUTE FUNCTION commission_daily_delete()""",
    )


# --- The summary read ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SummaryQuery:
    """Totals of one account's commissions, filters already validated."""

    account_uid: str
    group_by: tuple[str, ...]  # distinct names of SUMMARY_GROUPS; currency is always a key
    network: str | None = None
    status: str | None = None
    since: dt.date | None = None  # inclusive, on the UTC date of transacted_at
    until: dt.date | None = None  # inclusive
    updated_since: str | None = None  # TIMESTAMP_FORMAT; then the changed rows are summed


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One group: its keys (None for one not grouped by), count and exact totals."""

    network: str | None
    status: str | None
    day: str | None  # YYYY-MM-DD
    month: str | None  # YYYY-MM
    currency: str
    count: int
    commission: str  # amount text, exact (`units_amount`)
    sale: str | None  # None when no commission of the group reports a sale amount


# The SQL of each grouping key over commission_daily (and over commissions' `day`).
GROUP_SQL = {"network": "network", "status": "status", "day": "day", "month": "substr(day, 1, 7)"}


def _filters(
    query: SummaryQuery, day: str, first: str = "", last: str = ""
) -> tuple[list[str], list[Any]]:
    """Conditions and parameters of the filters; `day` the column the period bounds,
    `first` and `last` what makes a date its first and last value (the day's first and
    last second for transacted_at, whose fixed form compares as text)."""
    where = ["account_id = (SELECT id FROM accounts WHERE uid = ?)"]
    params: list[Any] = [query.account_uid]
    if query.network is not None:
        where.append("network = ?")
        params.append(query.network)
    if query.status is not None:
        where.append("status = ?")
        params.append(query.status)
    if query.since is not None:
        where.append(f"{day} >= ?")
        params.append(query.since.isoformat() + first)
    if query.until is not None:
        where.append(f"{day} <= ?")
        params.append(query.until.isoformat() + last)
    return where, params


def summary_sql(query: SummaryQuery) -> tuple[str, list[Any]]:
    """The groups' totals from commission_daily: rows of (keys..., currency, count, the
    commission limbs, sale_rows, the sale limbs), ordered by the keys as given."""
    where, params = _filters(query, "day")
    keys = [GROUP_SQL[name] for name in query.group_by] + ["currency"]
    sums = ", ".join(f"sum({name})" for name in TOTALS)
    positions = ", ".join(str(n) for n in range(1, len(keys) + 1))
    sql = (
        f"SELECT {', '.join(keys)}, {sums} FROM commission_daily WHERE {' AND '.join(where)} "
        f"GROUP BY {positions} ORDER BY {positions}"
    )
    return sql, params


def changed_rows_sql(query: SummaryQuery) -> tuple[str, list[Any]]:
    """With `updatedSince`: the matching commissions' keys and amounts, read through the
    (account_id, updated_at) index; only the rows changed since are read."""
    assert query.updated_since is not None
    day = "substr(transacted_at, 1, 10)"
    where, params = _filters(query, "transacted_at", "T00:00:00Z", "T23:59:59Z")
    where.append("updated_at >= ?")
    params.append(query.updated_since)
    sql = (
        f"SELECT network, status, {day}, currency, commission_amount, sale_amount "
        f"FROM commissions WHERE {' AND '.join(where)}"
    )
    return sql, params


def summary_rows(group_by: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[SummaryRow]:
    """SummaryRows of `summary_sql`'s result rows."""
    out = []
    width = len(group_by)
    for row in rows:
        values = dict(zip(group_by, row[:width], strict=True))
        count, *commission, sale_rows, s_hi, s_mid, s_lo = row[width + 1 :]
        out.append(
            SummaryRow(
                network=values.get("network"),
                status=values.get("status"),
                day=values.get("day"),
                month=values.get("month"),
                currency=row[width],
                count=int(count),
                commission=units_amount(joined(commission)),
                sale=units_amount(joined((s_hi, s_mid, s_lo))) if int(sale_rows) else None,
            )
        )
    return out


def summed_rows(group_by: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[SummaryRow]:
    """SummaryRows of `changed_rows_sql`'s commission rows, grouped and summed here."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for network, status, day, currency, commission, sale in rows:
        values = {"network": network, "status": status, "day": day, "month": day[:7]}
        key = (*(values[name] for name in group_by), currency)
        totals = groups.setdefault(key, [0, 0, 0, 0])
        totals[0] += 1
        totals[1] += amount_units(commission)
        if sale is not None:
            totals[2] += 1
            totals[3] += amount_units(sale)
    out = []
    for key in sorted(groups):
        values = dict(zip(group_by, key, strict=False))
        count, commission, sale_rows, sale = groups[key]
        out.append(
            SummaryRow(
                network=values.get("network"),
                status=values.get("status"),
                day=values.get("day"),
                month=values.get("month"),
                currency=key[-1],
                count=count,
                commission=units_amount(commission),
                sale=units_amount(sale) if sale_rows else None,
            )
        )
    return out
