"""Commission totals: the `commission_daily` and `commission_monthly` tables (made, filled
and kept by the triggers of schema step 4, store/schema/v004_commission_totals.py), and the
summary read over them.

One row per (account, UTC day of transacted_at, network, status, currency), and one per
(account, UTC month, network, status, currency), holds the number of commissions, the sum
of their commission amounts and the sum of their sale amounts (with the number of rows
that have one). Triggers on `commissions` keep both in the statement's own transaction,
whatever writes (the sync's upsert, an import, a correction, a deletion, an account's
cascade): the totals are exact at every instant, and no caller has to remember them. A
summary by month reads whole months from the monthly table and the part-months at either
end of its period from the daily one (from the monthly one when nothing of their month lies
outside them: a month to date); a summary by day reads the daily table.

Exact sums without a decimal type on SQLite: an amount has at most 18 digits before the
point and 12 after (contract.commission), so it is an integer N of 1e-12 units with
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

import calendar
import dataclasses
import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from contract.vocabulary import EXCLUDED_FROM_TOTALS
from store import ranks
from store.base import Outcomes
from store.core import Session, account_filters, one_statement, pairs_filter
from store.limbs import (
    LIMB_DIGITS,
    SCALE,
    TOTALS,
    carry,
    low,
    split,
)

_SCALE_ZEROS = "0" * SCALE
_UNIT: int = 10**SCALE
_MID: int = 10**LIMB_DIGITS
_HI: int = 10 ** (2 * LIMB_DIGITS)


# --- Exact amounts as integers ---------------------------------------------------------


def amount_units(text: str) -> int:
    """A stored amount ("-12.30") as an integer of 1e-12 units (-12300000000000)."""
    negative = text.startswith("-")
    whole, _, fraction = text.lstrip("-").partition(".")
    units = int(whole) * _UNIT + int((fraction + _SCALE_ZEROS)[:SCALE])
    return -units if negative else units


def units_amount(units: int) -> str:
    """An integer of 1e-12 units as amount text, in the fewest digits that are exact:
    no exponent, no trailing zero after the point ("12.3", "100", "-0.000000000001")."""
    whole, fraction = divmod(-units if units < 0 else units, _UNIT)
    sign = "-" if units < 0 else ""
    if not fraction:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{fraction:0{SCALE}d}".rstrip("0")


def joined(hi: Any, mid: Any, lo: Any) -> int:
    """The limb sums (ints, or Decimals from PostgreSQL) as one integer of units."""
    return int(hi) * _HI + int(mid) * _MID + int(lo)


# --- The tables ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Grain:
    """One table of totals: per UTC day, or per UTC month, of transacted_at."""

    name: str  # its key column: day (YYYY-MM-DD) or month (YYYY-MM)
    table: str
    width: int  # the leading characters of transacted_at that make the key

    @property
    def key(self) -> tuple[str, ...]:
        """The primary key, in the order SQLite keeps the rows (WITHOUT ROWID): a summary
        grouped by a permutation of a prefix after the account (month, currency, network:
        month by network) adds up the rows in that order, with no sort of them."""
        return ("account_id", self.name, "currency", "network", "status")

    def of(self, column: str) -> str:
        """The grain's key of a transacted_at column, in SQL."""
        return f"substr({column}, 1, {self.width})"


DAY = Grain("day", "commission_daily", 10)
# A summary by month reads whole months here: an 18-month account is some 1,500 rows of
# totals instead of 45,000 days.
MONTH = Grain("month", "commission_monthly", 7)
GRAINS = (DAY, MONTH)
# The same totals split by programme and sub-id as well (schema step 7): what a summary
# that filters or groups by either reads. Their keys hold '' for none and '=' + the value
# otherwise (`dimension_key`), so an absent sub-id and an empty one stay apart.
DIMS_DAY = Grain("day", "commission_dims_daily", 10)
DIMS_MONTH = Grain("month", "commission_dims_monthly", 7)

# What each grouping name reads: program is the network and the programme's id.
GROUP_COLUMNS: dict[str, tuple[str, ...]] = {
    "network": ("network",),
    "status": ("status",),
    "day": ("day",),
    "month": ("month",),
    "program": ("network", "program_key"),
    "subId": ("sub_key",),
    # Read as the programme's network and id; each is then mapped to the directory's slug
    # (`link`), at read time: a rebuild of the directory relinks every total at once.
    "programSlug": ("network", "program_key"),
}
# What the rows of each grouping are keyed by: its columns, but a programme slug for
# programSlug (the pairs it is read as are folded into it).
GROUP_KEYS: dict[str, tuple[str, ...]] = {**GROUP_COLUMNS, "programSlug": ("program_slug",)}
# Groupings whose rows come largest commission first, in cursor pages.
RANKED = ("program", "subId", "programSlug")


def dimension_key(value: str | None) -> str:
    """A programme id or sub-id as the key of the dimension tables."""
    return "" if value is None else "=" + value


def dimension_value(key: str) -> str | None:
    """The programme id or sub-id a dimension key stands for."""
    return key[1:] if key else None


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
    # Statuses left out of the totals (the edge leaves declined out of a summary that neither
    # filters nor groups by status: one total must not mix refused money with earnings).
    excluded: tuple[str, ...] = ()
    program_external_id: str | None = None  # with network only (the edge checks it)
    sub_id: str | None = None
    # A programSlug filter: the (network, programme id) pairs linked to the programme;
    # empty matches nothing, None filters nothing.
    program_pairs: tuple[tuple[str, str], ...] | None = None
    # (network, programme id) -> slug: what a grouping by programSlug maps the pairs with.
    program_links: Mapping[tuple[str, str], str] | None = None
    # Ranked groupings (by program, subId or programSlug): the page's size and the key of
    # the last row already seen (`SummaryRow.rank`).
    limit: int | None = None
    after: tuple[Any, ...] | None = None

    @property
    def dimensional(self) -> bool:
        """Whether the programme and sub-id totals are read (else the narrower ones)."""
        return (
            self.program_external_id is not None
            or self.sub_id is not None
            or self.program_pairs is not None
            or any(name in RANKED for name in self.group_by)
        )

    @property
    def ranked(self) -> bool:
        """Whether the rows come largest commission first, in pages."""
        return any(name in RANKED for name in self.group_by)

    @property
    def columns(self) -> tuple[str, ...]:
        """The key columns of the grouping, each once, in the order of `group_by`."""
        return tuple(dict.fromkeys(c for name in self.group_by for c in GROUP_COLUMNS[name]))

    @property
    def keys(self) -> tuple[str, ...]:
        """What a row is keyed by (`GROUP_KEYS`), each once, in the order of `group_by`:
        the columns, unless grouped by programSlug."""
        return tuple(dict.fromkeys(c for name in self.group_by for c in GROUP_KEYS[name]))


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
    program_external_id: str | None = None
    program_name: str | None = None  # the programme's newest commission's name
    sub_id: str | None = None
    program_slug: str | None = None  # grouped by programSlug: the directory's programme
    # What became of the group's commissions (store.outcomes), when asked for.
    outcomes: Outcomes | None = None

    def key(self, group_by: Sequence[str]) -> tuple[str | None, ...]:
        """What the rows are ordered by: the keys of `group_by` in order, the currency."""
        return (*(getattr(self, name) for name in group_by), self.currency)

    def rank(self, columns: Sequence[str]) -> tuple[Any, ...]:
        """The order of a ranked grouping's rows: currency, then largest commission first,
        then the key columns (none before any value)."""
        keys = []
        for column in columns:
            value = getattr(self, _ATTRIBUTES[column])
            keys += [value is not None, value or ""]
        return (self.currency, -amount_units(self.commission), *keys)


_ATTRIBUTES = {
    "network": "network",
    "status": "status",
    "day": "day",
    "month": "month",
    "program_key": "program_external_id",
    "sub_key": "sub_id",
    "program_slug": "program_slug",
}


def _filters(
    query: SummaryQuery,
    column: str,
    bounds: tuple[str | None, str | None],
    rows: bool = False,
) -> tuple[list[str], list[Any]]:
    """Conditions and parameters of the filters; `column` the one `bounds` (inclusive,
    None for none) range over; `rows`: on the commissions themselves, not the totals."""
    where, params = account_filters(query.account_uid, query.network, query.status)
    for status in query.excluded:
        where.append("status <> ?")
        params.append(status)
    if query.program_external_id is not None:
        where.append("program_external_id = ?" if rows else "program_key = ?")
        params.append(query.program_external_id if rows else "=" + query.program_external_id)
    if query.sub_id is not None:
        where.append("sub_id = ?" if rows else "sub_key = ?")
        params.append(query.sub_id if rows else "=" + query.sub_id)
    if query.program_pairs is not None:
        condition, more = (
            pairs_filter(query.program_pairs, "program_external_id")
            if rows
            else pairs_filter(query.program_pairs, "program_key", key=True)
        )
        where.append(condition)
        params += more
    lower, upper = bounds
    if lower is not None:
        where.append(f"{column} >= ?")
        params.append(lower)
    if upper is not None:
        where.append(f"{column} <= ?")
        params.append(upper)
    return where, params


def row_filters(
    query: SummaryQuery, column: str, bounds: tuple[str | None, str | None]
) -> tuple[list[str], list[Any]]:
    """The conditions and parameters of the query's filters on the commission rows
    themselves; `column` the timestamp `bounds` (inclusive, None for none) range over."""
    return _filters(query, column, bounds, rows=True)


def _text(day: dt.date | None, width: int = 10, suffix: str = "") -> str | None:
    """A date bound as the text it is compared with (YYYY-MM-DD, YYYY-MM, a timestamp)."""
    return None if day is None else day.isoformat()[:width] + suffix


def _last_day(day: dt.date) -> dt.date:
    # No date arithmetic: December 9999 has no following month to step back from.
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def spans(
    since: dt.date | None, until: dt.date | None
) -> list[tuple[Grain, str | None, str | None]]:
    """The period as ranges of the totals tables, (grain, first key, last key): the whole
    months from commission_monthly, the part-months at either end from commission_daily."""
    out: list[tuple[Grain, str | None, str | None]] = []
    if since is not None and since.day != 1:
        head_end = _last_day(since)
        if until is not None and until <= head_end:
            return [(DAY, since.isoformat(), until.isoformat())]
        out.append((DAY, since.isoformat(), head_end.isoformat()))
        if head_end == dt.date.max:  # the calendar's last month: nothing follows
            return out
        since = head_end + dt.timedelta(days=1)
    if until is not None and until != _last_day(until):
        tail_start = until.replace(day=1)
        out.append((DAY, tail_start.isoformat(), until.isoformat()))
        if tail_start == dt.date.min:  # the calendar's first month: nothing precedes
            return out
        until = tail_start - dt.timedelta(days=1)
    if since is None or until is None or since <= until:
        out.append((MONTH, _text(since, MONTH.width), _text(until, MONTH.width)))
    return out


def _grains(query: SummaryQuery) -> tuple[Grain, Grain]:
    """The (daily, monthly) tables the query reads."""
    return (DIMS_DAY, DIMS_MONTH) if query.dimensional else (DAY, MONTH)


def _key_columns(query: SummaryQuery) -> str:
    """The key columns (after the period's) a totals SELECT of the query returns."""
    dims = ", program_key, sub_key" if query.dimensional else ""
    return f"network, status, currency{dims}"


def _part_month(query: SummaryQuery, lower: str, upper: str) -> tuple[list[str], list[Any]]:
    """The SELECTs of a part-month [lower, upper] (days of one month) and their parameters:
    its monthly totals when the account has no commission (of the filters) in that month
    outside the part, else its daily totals. A month to date is the usual case (nothing is
    dated after today), which then reads one month's totals instead of a row per day; two
    index probes decide, in the statement, so the answer stays one consistent read."""
    daily_grain, monthly_grain = _grains(query)
    day, final = dt.date.fromisoformat(lower), dt.date.fromisoformat(upper)
    first, last = day.replace(day=1), _last_day(day)
    probes, probe_params = [], []
    # The days of its month outside the part, stepped to only where there are some (the
    # calendar has no day before 0001-01-01 nor after 9999-12-31).
    outside = []
    if first < day:
        outside.append((first, day - dt.timedelta(days=1)))
    if final < last:
        outside.append((final + dt.timedelta(days=1), last))
    for start, end in outside:
        if start <= end:
            where, more = _filters(query, DAY.name, (start.isoformat(), end.isoformat()))
            probes.append(f"EXISTS (SELECT 1 FROM {daily_grain.table} WHERE {' AND '.join(where)})")
            probe_params += more
    elsewhere = " OR ".join(probes)
    month = lower[: MONTH.width]
    monthly, monthly_params = _filters(query, MONTH.name, (month, month))
    daily, daily_params = _filters(query, DAY.name, (lower, upper))
    columns = f"{_key_columns(query)}, {', '.join(TOTALS)}"
    return [
        f"SELECT month, {columns} FROM {monthly_grain.table} "
        f"WHERE {' AND '.join(monthly)} AND NOT ({elsewhere})",
        f"SELECT {MONTH.of('day')} AS month, {columns} FROM {daily_grain.table} "
        f"WHERE {' AND '.join(daily)} AND ({elsewhere})",
    ], [*monthly_params, *probe_params, *daily_params, *probe_params]


def _latest_name(account: str, network: str, program_key: str) -> str:
    """SQL of a programme's latest name: the name on its newest commission (by
    transactedAt, then id), read by one probe of the commissions_program_page index."""
    newest = "ORDER BY c.transacted_at DESC, c.id DESC LIMIT 1"
    base = f"SELECT c.program_name FROM commissions AS c WHERE c.account_id = {account} AND c.network = {network}"
    return (
        f"CASE WHEN {program_key} = '' THEN ({base} AND c.program_external_id IS NULL {newest}) "
        f"ELSE ({base} AND c.program_external_id = substr({program_key}, 2) {newest}) END"
    )


def summary_sql(query: SummaryQuery, postgres: bool = False) -> tuple[str, list[Any]]:
    """The groups' totals: rows of (key columns..., currency, count, the commission limbs,
    sale_rows, the sale limbs[, the programme's latest name when grouped by program]),
    ordered by the key columns. By day from the daily totals; otherwise whole months from
    the monthly totals and part-months from the daily ones (or from the monthly ones when
    nothing of their month lies outside them). With a programme or sub-id to filter or
    group by, from the totals split by both (schema step 7). A ranked grouping's rows come
    ranked, after `query.after` and cut to `query.limit` (`_ranked_sql`), with the rank
    limbs after the totals; `postgres`: PostgreSQL's spelling of integer division."""
    daily_grain, monthly_grain = _grains(query)
    by_day = "day" in query.group_by
    ranges = (
        [(DAY, _text(query.since), _text(query.until))]
        if by_day
        else spans(query.since, query.until)
    )
    parts, params = [], []
    for grain, lower, upper in ranges:
        if grain is DAY and not by_day:
            assert lower is not None and upper is not None  # spans() bounds a part-month
            more_parts, more = _part_month(query, lower, upper)
            parts += more_parts
            params += more
            continue
        where, more = _filters(query, grain.name, (lower, upper))
        # The month column itself where there is one: a grouping by it then follows the
        # primary key's order (no sort), which an expression would not.
        if grain is MONTH:
            time = "month"
        else:
            time = f"day, {MONTH.of('day')} AS month" if by_day else f"{MONTH.of('day')} AS month"
        table = monthly_grain.table if grain is MONTH else daily_grain.table
        parts.append(
            f"SELECT {time}, {_key_columns(query)}, {', '.join(TOTALS)} "
            f"FROM {table} WHERE {' AND '.join(where)}"
        )
        params += more
    keys = [*query.columns, "currency"]
    sums = ", ".join(f"sum({name}) AS {name}" for name in TOTALS)
    positions = ", ".join(str(n) for n in range(1, len(keys) + 1))
    grouped = (
        f"SELECT {', '.join(keys)}, {sums} FROM ({' UNION ALL '.join(parts)}) AS t "
        f"GROUP BY {positions}"
    )
    if query.ranked and "programSlug" not in query.group_by:
        # Ranked and cut to the page in the database: only the page's rows are formatted,
        # and only their programmes' names looked up, however many groups there are. By
        # programSlug, the programmes' groups are folded into their slugs first (`link`).
        sql, more = _ranked_sql(query, grouped, postgres)
        params += more
        order = ", ".join(["currency", *(f"{r} DESC" for r in _RANK_LIMBS), *query.columns])
    else:
        order = positions
        sql = f"{grouped} ORDER BY {positions}"
    if "program" in query.group_by:
        account = "(SELECT id FROM accounts WHERE uid = ?)"
        name = _latest_name(account, "g.network", "g.program_key")
        sql = f"SELECT g.*, {name} AS program_name FROM ({sql}) AS g ORDER BY {order}"
        params = [query.account_uid, query.account_uid, *params]
    return sql, params


# The exact commission sum of a group as three limbs of ten digits each below 10**10 but
# the first (which carries the sign): compared in this order, they order the sums exactly,
# which the summed limbs (each with its own sign and carries) do not.
_RANK_LIMBS = ("rank_hi", "rank_mid", "rank_lo")


def _ranked_sql(query: SummaryQuery, grouped: str, postgres: bool) -> tuple[str, list[Any]]:
    """`grouped` (the groups' summed totals) in rank order (`SummaryRow.rank`): by
    currency, largest commission first, then the key columns (a dimension key's '' before
    any '=value', as none before any value); only those after `query.after`, at most
    `query.limit`. The key columns, currency and totals, then the rank limbs."""
    columns = ", ".join([*query.columns, "currency", *TOTALS])
    carried = (
        f"SELECT g.*, {low('g.commission_lo', postgres)} AS rank_lo, "
        f"g.commission_mid + {carry('g.commission_lo', postgres)} AS rank_carried "
        f"FROM ({grouped}) AS g"
    )
    ranked = (
        f"SELECT c.*, {low('c.rank_carried', postgres)} AS rank_mid, "
        f"c.commission_hi + {carry('c.rank_carried', postgres)} AS rank_hi FROM ({carried}) AS c"
    )
    where, params = "", []
    if query.after is not None:
        currency, negated, *flags = query.after
        hi, mid, lo = split(-negated)
        keys = []
        for column, (present, value) in zip(
            query.columns, zip(flags[::2], flags[1::2], strict=True), strict=True
        ):
            keys.append((("=" + value) if present else "") if column in _DIMENSION_KEYS else value)
        limbs = ", ".join(_RANK_LIMBS)
        holes = ", ".join("?" for _ in query.columns)
        where = (
            f"WHERE currency > ? OR (currency = ? AND (({limbs}) < (?, ?, ?) OR "
            f"(({limbs}) = (?, ?, ?) AND ({', '.join(query.columns)}) > ({holes}))))"
        )
        params = [currency, currency, hi, mid, lo, hi, mid, lo, *keys]
    order = ", ".join(["currency", *(f"{r} DESC" for r in _RANK_LIMBS), *query.columns])
    limit = ""
    if query.limit is not None:
        limit = " LIMIT ?"
        params.append(query.limit)
    sql = (
        f"SELECT {columns}, {', '.join(_RANK_LIMBS)} FROM ({ranked}) AS r {where} "
        f"ORDER BY {order}{limit}"
    )
    return sql, params


# Key columns that hold '' for none and '=' + the value otherwise (`dimension_key`).
_DIMENSION_KEYS = ("program_key", "sub_key")


def _result_columns(query: SummaryQuery) -> tuple[str, ...]:
    names = "program_name" if "program" in query.group_by else None
    return (*query.columns, "currency", *TOTALS, *((names,) if names else ()))


def summary_json_sql(query: SummaryQuery) -> tuple[str, list[Any]]:
    """`summary_sql` folded into one JSON array (Dialect.json_pages): one row crosses from
    SQLite to Python instead of one per group. The sums are integers: exact in JSON."""
    sql, params = summary_sql(query)
    columns = ", ".join(_result_columns(query))
    return f"SELECT json_group_array(json_array({columns})) FROM ({sql}) AS s", params


def changed_rows_sql(query: SummaryQuery) -> tuple[str, list[Any]]:
    """With `updatedSince`: the matching commissions' keys and amounts, read through the
    (account_id, updated_at) index; only the rows changed since are read."""
    assert query.updated_since is not None
    day = "substr(transacted_at, 1, 10)"
    # transacted_at compares as text: a day's bounds are its first and last second.
    bounds = (
        _text(query.since, suffix="T00:00:00Z"),
        _text(query.until, suffix="T23:59:59Z"),
    )
    where, params = _filters(query, "transacted_at", bounds, rows=True)
    where.append("updated_at >= ?")
    params.append(query.updated_since)
    name = "NULL"
    if "program" in query.group_by:
        key = (
            "CASE WHEN commissions.program_external_id IS NULL THEN '' "
            "ELSE '=' || commissions.program_external_id END"
        )
        name = _latest_name("commissions.account_id", "commissions.network", key)
    sql = (
        f"SELECT network, status, {day}, currency, commission_amount, sale_amount, "
        f"program_external_id, sub_id, {name} FROM commissions WHERE {' AND '.join(where)}"
    )
    return sql, params


def _row(
    values: dict[str, Any],
    currency: str,
    count: int,
    commission: int,
    sale: int | None,
    program_name: str | None,
) -> SummaryRow:
    return SummaryRow(
        network=values.get("network"),
        status=values.get("status"),
        day=values.get("day"),
        month=values.get("month"),
        currency=currency,
        count=count,
        commission=units_amount(commission),
        sale=None if sale is None else units_amount(sale),
        program_external_id=dimension_value(values["program_key"])
        if "program_key" in values
        else None,
        program_name=program_name,
        sub_id=dimension_value(values["sub_key"]) if "sub_key" in values else None,
    )


def summary_rows(query: SummaryQuery, rows: Iterable[Sequence[Any]]) -> list[SummaryRow]:
    """SummaryRows of `summary_sql`'s result rows (or `summary_json_sql`'s)."""
    out = []
    columns = query.columns
    width = len(columns)
    named = "program" in query.group_by
    for row in rows:
        values = dict(zip(columns, row, strict=False))
        count, c_hi, c_mid, c_lo, sale_rows, s_hi, s_mid, s_lo = row[width + 1 : width + 9]
        out.append(
            _row(
                values,
                row[width],
                int(count),
                joined(c_hi, c_mid, c_lo),
                joined(s_hi, s_mid, s_lo) if sale_rows else None,
                row[-1] if named else None,  # the last column, after any rank limbs
            )
        )
    return out


def summed_rows(query: SummaryQuery, rows: Iterable[Sequence[Any]]) -> list[SummaryRow]:
    """SummaryRows of `changed_rows_sql`'s commission rows, grouped and summed here."""
    groups: dict[tuple[str, ...], list[Any]] = {}
    columns = query.columns
    for network, status, day, currency, commission, sale, program, sub_id, name in rows:
        values = {
            "network": network,
            "status": status,
            "day": day,
            "month": day[:7],
            "program_key": dimension_key(program),
            "sub_key": dimension_key(sub_id),
        }
        key = (*(values[column] for column in columns), currency)
        totals = groups.setdefault(key, [0, 0, 0, 0, name])
        totals[0] += 1
        totals[1] += amount_units(commission)
        if sale is not None:
            totals[2] += 1
            totals[3] += amount_units(sale)
    out = []
    for key in sorted(groups):
        count, commission, sale_rows, sale, name = groups[key]
        values = dict(zip(columns, key, strict=False))
        out.append(_row(values, key[-1], count, commission, sale if sale_rows else None, name))
    return out


def link(query: SummaryQuery, rows: list[SummaryRow]) -> list[SummaryRow]:
    """A grouping by programSlug: each row's (network, programme id) mapped to its slug
    (`query.program_links`; none when unlinked), the network and programme id kept only
    where the query groups by them, and the rows that then share every key summed, exactly,
    in the order of `query.keys` and the currency."""
    links = query.program_links or {}
    keep_network = "network" in query.group_by or "program" in query.group_by
    keep_program = "program" in query.group_by
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for row in rows:
        network = row.network
        program = row.program_external_id
        slug = (
            links.get((network, program)) if network is not None and program is not None else None
        )
        linked = dataclasses.replace(
            row,
            network=network if keep_network else None,
            program_external_id=program if keep_program else None,
            program_slug=slug,
        )
        key = sort_key(linked, query.keys)
        totals = groups.get(key)
        sale = None if row.sale is None else amount_units(row.sale)
        if totals is None:
            groups[key] = [linked, row.count, amount_units(row.commission), sale]
            continue
        totals[1] += row.count
        totals[2] += amount_units(row.commission)
        if sale is not None:
            totals[3] = sale if totals[3] is None else totals[3] + sale
    return [
        dataclasses.replace(
            linked,
            count=count,
            commission=units_amount(commission),
            sale=None if sale is None else units_amount(sale),
        )
        for _, (linked, count, commission, sale) in sorted(groups.items())
    ]


AMOUNT_TEXT = re.compile(r"-?[0-9]{1,40}(\.[0-9]{1,12})?")


def position(row: SummaryRow, columns: Sequence[str]) -> list[Any]:
    """What a cursor after `row` of a ranked grouping carries: its currency, its exact
    commission (text: the sum may exceed 64 bits) and its key values."""
    return [row.currency, row.commission, *(getattr(row, _ATTRIBUTES[c]) for c in columns)]


def rank_of(position: Sequence[Any], columns: Sequence[str]) -> tuple[Any, ...] | None:
    """The `SummaryRow.rank` a cursor's position stands for; None when it is not one
    `position` could have made for these columns."""
    if len(position) != len(columns) + 2:
        return None
    currency, commission, *values = position
    if not isinstance(currency, str) or not isinstance(commission, str):
        return None
    if not AMOUNT_TEXT.fullmatch(commission):
        return None
    keys: list[Any] = []
    for value in values:
        if value is not None and not isinstance(value, str):
            return None
        keys += [value is not None, value or ""]
    return (currency, -amount_units(commission), *keys)


def ranked_page(query: SummaryQuery, rows: list[SummaryRow]) -> list[SummaryRow]:
    """A ranked grouping's rows in rank order, those after `query.after`, at most
    `query.limit`."""
    columns = query.keys
    rows.sort(key=lambda row: row.rank(columns))
    if query.after is not None:
        after = query.after
        rows = [row for row in rows if row.rank(columns) > after]
    return rows if query.limit is None else rows[: query.limit]


@one_statement
async def totals(s: Session, query: SummaryQuery) -> list[SummaryRow]:
    """The account's commission totals per group of `query.group_by` and currency, ordered
    by the keys as given (a grouping by program, subId or programSlug: by currency, largest
    commission first, then the keys; only those after `query.after`, at most
    `query.limit`): exact, never summed across currencies. Read from the per-day totals,
    never the commission rows; with `updated_since`, from the rows changed since (the only
    ones read); by programSlug, the programmes' pairs then folded into their slugs (`link`).
    A month by programme or by sub-id alone comes from the month's ranking (store.ranks),
    one range of its key, when the ranking is up to date; otherwise (and for every other
    query) from the totals. Each answer is one statement's: the ranking's, or the totals'.
    Run it through the read door: `store.read(summary.totals, query)`."""
    month = ranked_month(query)
    if month is not None:
        sql, params = ranks.page_sql(month, postgres=s.dialect.arrays)
        if month.dimension == "program":
            name = _latest_name(
                "(SELECT id FROM accounts WHERE uid = ?)", "p.network", "p.program_key"
            )
            sql = f"SELECT p.*, {name} AS program_name FROM ({sql}) AS p"
            params = [query.account_uid, query.account_uid, *params]
        found = await s.fetch(sql, *params)
        if not ranks.unusable(found, len(query.columns)):
            return ranked_page(query, summary_rows(query, found))
    if query.updated_since is None:
        if not s.dialect.json_pages:
            sql, params = summary_sql(query, postgres=s.dialect.arrays)
            rows = summary_rows(query, await s.fetch(sql, *params))
        else:
            sql, params = summary_json_sql(query)
            rows = summary_rows(query, orjson.loads(await s.fetchval(sql, *params)))
            # The aggregate keeps the subquery's order; sorting makes sure of it.
            rows.sort(key=lambda row: sort_key(row, query.columns))
    else:
        sql, params = changed_rows_sql(query)
        rows = summed_rows(query, await s.fetch(sql, *params))
    if "programSlug" in query.group_by:
        rows = link(query, rows)
    return ranked_page(query, rows) if query.ranked else rows


def ranked_month(query: SummaryQuery) -> ranks.RankedMonth | None:
    """The month's ranking `query` may be answered from: a grouping by program or by subId
    alone, from the first day of a month, with no filter and the declined left out, as a
    summary is by default; None otherwise. A period that ends before or after the month
    (or never) is answered from it only when no counted commission lies between the two
    ends (`RankedMonth.outside`): "this month", from its first day on, is the usual case."""
    if (
        len(query.group_by) != 1
        or query.group_by[0] not in ranks.DIMENSIONS
        or query.excluded != (EXCLUDED_FROM_TOTALS,)
        or query.updated_since is not None
        or query.network is not None
        or query.status is not None
        or query.program_external_id is not None
        or query.sub_id is not None
        or query.program_pairs is not None
        or query.since is None
        or query.since.day != 1
        or (query.until is not None and query.until < query.since)
    ):
        return None
    last = _last_day(query.since)
    end = dt.date.max if query.until is None else query.until
    outside = None
    if end < last:
        outside = ((end + dt.timedelta(days=1)).isoformat(), last.isoformat())
    elif end > last:
        outside = ((last + dt.timedelta(days=1)).isoformat(), end.isoformat())
    after = None
    if query.after is not None:
        currency, negated, *flags = query.after
        values = [
            ("=" + value) if present else ""
            for present, value in zip(flags[::2], flags[1::2], strict=True)
        ]
        # program: (network, programme key); subId: (sub-id key) with no network.
        network, key = (values[0][1:], values[1]) if len(values) == 2 else ("", values[0])
        after = (currency, negated, network, key)
    return ranks.RankedMonth(
        account_uid=query.account_uid,
        dimension=query.group_by[0],
        month=query.since.isoformat()[:7],
        outside=outside,
        after=after,
        limit=query.limit,
    )


def sort_key(row: SummaryRow, columns: Sequence[str]) -> tuple[Any, ...]:
    """The SQL's order: the key columns (none before any value), then the currency."""
    keys: list[Any] = []
    for column in columns:
        value = getattr(row, _ATTRIBUTES[column])
        keys += [value is not None, value or ""]
    return (*keys, row.currency)
