"""Realised terms: what became of a summary group's commissions, from their status history.

A commission's states, oldest first, are its history rows (store/schema/v003: each holds a
state some later write replaced, `changed_at` the instant of that write) and then its
present row; a state began when the commission was first stored (`imported_at`) or when the
state before it was replaced. From them, per commission:

- decided: its present status is approved, paid or declined;
- ever approved: one of its states is approved or paid;
- reversed: its present status is declined and an earlier state was approved or paid;
- days to its first decision: whole days (rounded down, none below 0) from transactedAt to
  the start of its first approved, paid or declined state, known only when a state before
  it was stored (a commission stored already decided was decided at an unknown instant).

A group's outcomes count and add those over its commissions of every status (declined
included, even where the summary's totals leave declined out), exact per status; the rates
and the median are in `Outcomes`. Run it through the read door:
`store.read(outcomes.summary_with_outcomes, query)`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contract.vocabulary import COMMISSION_STATUSES
from store import summary
from store.base import Outcomes, StatusTotal, median
from store.core import Session, pairs_filter
from store.summary import (
    SummaryQuery,
    SummaryRow,
    amount_units,
    dimension_key,
    units_amount,
)

DECIDED = frozenset(("approved", "paid", "declined"))
APPROVED = frozenset(("approved", "paid"))
_DAY_SECONDS = 86_400


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass(frozen=True, slots=True)
class Fate:
    """What the history says of one commission."""

    ever_approved: bool
    reversed: bool
    days: int | None  # to its first decision; None when undecided or its instant unknown


def fate(
    status: str, transacted_at: str, imported_at: str, history: Sequence[tuple[str, str]]
) -> Fate:
    """One commission's Fate from its present status and its history rows (status,
    changed_at), oldest first."""
    states = [change[0] for change in history] + [status]
    began = [imported_at] + [change[1] for change in history]
    first = next((n for n, state in enumerate(states) if state in DECIDED), None)
    days = None
    if first is not None and first > 0:
        elapsed = _instant(began[first]) - _instant(transacted_at)
        days = max(0, int(elapsed.total_seconds()) // _DAY_SECONDS)
    return Fate(
        ever_approved=any(state in APPROVED for state in states),
        reversed=status == "declined" and any(state in APPROVED for state in states[:-1]),
        days=days,
    )


class _Tally:
    """A group's running counts while its commissions are read."""

    __slots__ = ("by_status", "days", "ever_approved", "reversed")

    def __init__(self) -> None:
        # status -> [count, commission units, rows with a sale, sale units]
        self.by_status: dict[str, list[int]] = {}
        self.ever_approved = 0
        self.reversed = 0
        self.days: list[int] = []

    def add(self, status: str, commission: str, sale: str | None, what: Fate) -> None:
        totals = self.by_status.setdefault(status, [0, 0, 0, 0])
        totals[0] += 1
        totals[1] += amount_units(commission)
        if sale is not None:
            totals[2] += 1
            totals[3] += amount_units(sale)
        self.ever_approved += what.ever_approved
        self.reversed += what.reversed
        if what.days is not None:
            self.days.append(what.days)

    def outcomes(self) -> Outcomes:
        by_status = []
        for status in COMMISSION_STATUSES:
            count, commission, sale_rows, sale = self.by_status.get(status, (0, 0, 0, 0))
            total = StatusTotal(
                count, units_amount(commission), units_amount(sale) if sale_rows else None
            )
            by_status.append((status, total))
        counts = {status: total.count for status, total in by_status}
        return Outcomes(
            by_status=tuple(by_status),
            decided=sum(counts[status] for status in DECIDED),
            approved=sum(counts[status] for status in APPROVED),
            ever_approved=self.ever_approved,
            reversed=self.reversed,
            timed=len(self.days),
            median_days=median(self.days),
        )


def history_sql(
    query: SummaryQuery, scope: tuple[str, list[Any]] | None = None
) -> tuple[str, list[Any]]:
    """The query's commissions, every status (the summary's exclusions do not apply), each
    with its history rows (none: one row of NULLs), by commission then history order;
    `scope` (a condition and its parameters, `page_scope`) narrows them further."""
    bounds = (
        None if query.since is None else f"{query.since.isoformat()}T00:00:00Z",
        None if query.until is None else f"{query.until.isoformat()}T23:59:59Z",
    )
    unexcluded = dataclasses.replace(query, excluded=())
    where, params = summary.row_filters(unexcluded, "transacted_at", bounds)
    if query.updated_since is not None:
        where.append("updated_at >= ?")
        params.append(query.updated_since)
    if scope is not None:
        where.append(scope[0])
        params += scope[1]
    columns = (
        "id, network, status, transacted_at, imported_at, currency, commission_amount, "
        "sale_amount, program_external_id, sub_id"
    )
    sql = (
        f"SELECT c.id, c.network, c.status, c.transacted_at, c.imported_at, c.currency, "
        "c.commission_amount, c.sale_amount, c.program_external_id, c.sub_id, "
        "h.status, h.changed_at "
        f"FROM (SELECT {columns} FROM commissions WHERE {' AND '.join(where)}) AS c "
        "LEFT JOIN commission_history AS h ON h.commission_id = c.id ORDER BY c.id, h.id"
    )
    return sql, params


def _commissions(
    rows: Iterable[Sequence[Any]],
) -> Iterable[tuple[Sequence[Any], list[tuple[str, str]]]]:
    """`history_sql`'s rows as (commission columns, its history), one commission each."""
    current: Sequence[Any] | None = None
    history: list[tuple[str, str]] = []
    for row in rows:
        if current is None or row[0] != current[0]:
            if current is not None:
                yield current, history
            current, history = row[:10], []
        if row[10] is not None:
            history.append((row[10], row[11]))
    if current is not None:
        yield current, history


def group_key(
    columns: Sequence[str],
    row: Sequence[Any],
    links: Mapping[tuple[str, str], str] | None = None,
) -> tuple[Any, ...]:
    """The summary group (its key columns, the currency) of a commission of `history_sql`;
    `links` map its network and programme id to the directory's slug (programSlug)."""
    _, network, status, transacted_at, _, currency, _, _, program, sub_id = row
    values = {
        "program_slug": None if program is None else (links or {}).get((network, program)),
        "network": network,
        "status": status,
        "day": transacted_at[:10],
        "month": transacted_at[:7],
        "program_key": dimension_key(program),
        "sub_key": dimension_key(sub_id),
    }
    return (*(values[column] for column in columns), currency)


def tally(query: SummaryQuery, rows: Iterable[Sequence[Any]]) -> dict[tuple[Any, ...], _Tally]:
    """Each group's tally of `history_sql`'s rows."""
    groups: dict[tuple[Any, ...], _Tally] = {}
    keys = query.keys
    for row, history in _commissions(rows):
        _, _, status, transacted_at, imported_at, _, commission, sale, _, _ = row
        group = groups.setdefault(group_key(keys, row, query.program_links), _Tally())
        group.add(status, commission, sale, fate(status, transacted_at, imported_at, history))
    return groups


def _row_key(columns: Sequence[str], row: SummaryRow) -> tuple[Any, ...]:
    values = {
        "network": row.network,
        "status": row.status,
        "day": row.day,
        "month": row.month,
        "program_key": dimension_key(row.program_external_id),
        "sub_key": dimension_key(row.sub_id),
        "program_slug": row.program_slug,
    }
    return (*(values[column] for column in columns), row.currency)


def _empty_row(columns: Sequence[str], key: tuple[Any, ...], name: str | None) -> SummaryRow:
    """The row of a group all of whose commissions the totals leave out (declined)."""
    values = dict(zip(columns, key, strict=False))
    program = values.get("program_key")
    sub = values.get("sub_key")
    return SummaryRow(
        network=values.get("network"),
        status=values.get("status"),
        day=values.get("day"),
        month=values.get("month"),
        currency=key[-1],
        count=0,
        commission="0",
        sale=None,
        program_external_id=None if program is None else summary.dimension_value(program),
        program_name=name if program is not None else None,
        sub_id=None if sub is None else summary.dimension_value(sub),
        program_slug=values.get("program_slug"),
    )


def page_scope(query: SummaryQuery, rows: Sequence[SummaryRow]) -> tuple[str, list[Any]] | None:
    """The condition (and its parameters) on the commission rows that holds every
    commission of a ranked page's groups: their (network, programme id) pairs, their
    sub-ids, or the pairs linked to their slugs. None (no narrowing) for the unlinked group
    of a grouping by programSlug, whose commissions are those of every pair not linked."""
    keys = query.keys
    conditions: list[str] = []
    params: list[Any] = []
    if "program_key" in keys:
        for pair in dict.fromkeys((row.network, row.program_external_id) for row in rows):
            network, program = pair
            if program is None:
                conditions.append("(network = ? AND program_external_id IS NULL)")
                params.append(network)
            else:
                conditions.append("(network = ? AND program_external_id = ?)")
                params += [network, program]
    elif "sub_key" in keys:
        subs = set(row.sub_id for row in rows)
        if None in subs:
            conditions.append("sub_id IS NULL")
        named = sorted(sub for sub in subs if sub is not None)
        if named:
            conditions.append(f"sub_id IN ({', '.join('?' for _ in named)})")
            params += named
    else:
        slugs = set(row.program_slug for row in rows)
        if None in slugs:
            return None
        links = query.program_links or {}
        return pairs_filter(
            sorted(p for p, slug in links.items() if slug in slugs), "program_external_id"
        )
    if not conditions:
        return "1 = 0", []
    return "(" + " OR ".join(conditions) + ")", params


def _may_reach_empty(
    query: SummaryQuery, page: Sequence[SummaryRow], currencies: Iterable[str]
) -> bool:
    """Whether a group all of whose commissions the totals leave out, in one of
    `currencies`, could rank within the page: such a group ranks at commission 0 in its
    currency (`SummaryRow.rank`), so it can only fall after `query.after` and before the
    page's last row (anywhere after, when the page is not full)."""
    full = query.limit is not None and len(page) >= query.limit
    upper = page[-1].rank(query.keys)[:2] if full else None
    lower = None if query.after is None else tuple(query.after[:2])
    for currency in currencies:
        point = (currency, 0)
        if (lower is None or point >= lower) and (upper is None or point <= upper):
            return True
    return False


async def _ranked_rows(s: Session, query: SummaryQuery) -> list[SummaryRow]:
    """A ranked grouping's page as `summary_with_outcomes` answers it, before its outcomes:
    the totals' groups and those all of whose commissions the totals leave out (rows of
    count 0, commission 0), ranked together and cut to `query.limit` after `query.after`.
    The totals' own page unless such a group could rank within it; else every group of
    the filters is read and ranked."""
    page = await summary.totals(s, query)
    if not query.excluded:
        return page
    whole = dataclasses.replace(query, limit=None, after=None)
    # The currencies of the commissions left out: only there can such a group be.
    by_status = dataclasses.replace(whole, group_by=("status",), excluded=(), program_links=None)
    currencies = {
        row.currency
        for row in await summary.totals(s, by_status)
        if row.status in query.excluded and row.count
    }
    if not _may_reach_empty(query, page, currencies):
        return page
    rows = await summary.totals(s, whole)
    columns = query.keys
    seen = {_row_key(columns, row) for row in rows}
    # Every group of the filters, excluded statuses included: those the totals lack.
    for row in await summary.totals(s, dataclasses.replace(whole, excluded=())):
        key = _row_key(columns, row)
        if key not in seen:
            name = row.program_name if "program_key" in columns else None
            rows.append(_empty_row(columns, key, name))
    return summary.ranked_page(query, rows)


async def summary_with_outcomes(s: Session, query: SummaryQuery) -> list[SummaryRow]:
    """`summary.totals` of `query`, each row with its `outcomes`, read in one snapshot; a
    group whose commissions are all left out of the totals (declined) comes as a row of
    count 0 with its outcomes. Ranked groupings are paged as `summary.totals` pages them,
    and only the commissions of the page's groups are read for their outcomes."""
    columns = query.keys  # a grouping by programSlug is keyed by the slug (summary.link)
    if query.ranked:
        page = await _ranked_rows(s, query)
        scope = None if query.limit is None else page_scope(query, page)
        groups: dict[tuple[Any, ...], _Tally] = {}
        if page:
            sql, params = history_sql(query, scope)
            groups = tally(query, await s.fetch(sql, *params))
        return [
            dataclasses.replace(
                row, outcomes=groups.get(_row_key(columns, row), _Tally()).outcomes()
            )
            for row in page
        ]
    rows = await summary.totals(s, query)
    sql, params = history_sql(query)
    groups = tally(query, await s.fetch(sql, *params))
    out = []
    for row in rows:
        group = groups.pop(_row_key(columns, row), None)
        out.append(dataclasses.replace(row, outcomes=(group or _Tally()).outcomes()))
    # Not ranked: no grouping keys a programme, whose empty row would need its name.
    for key, group in groups.items():
        out.append(dataclasses.replace(_empty_row(columns, key, None), outcomes=group.outcomes()))
    out.sort(key=lambda row: summary.sort_key(row, columns))
    return out
