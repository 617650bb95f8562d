"""Each month's ranking by programme and by sub-id (schema step 11): rebuilt from the
month's totals by programme and sub-id (step 7) once its commissions changed, and read as
one range of its key by a summary of one month grouped by programme or by sub-id alone.

A write marks the month stale in its own transaction (the step's triggers); a rebuild,
later and in its own transaction, replaces the month's rows and removes the mark unless a
write marked it again meanwhile. A reader takes the ranking only when its month is not
marked, in the same statement: never older than the commissions it reads beside. The sync
worker rebuilds every few seconds (`refresh`), an import and `affdir-admin migrate` when
they end; until then the summary adds the month's totals up itself, to the same answer.

The ranking holds what a summary that neither filters nor groups by status adds up: every
status but EXCLUDED_FROM_TOTALS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contract.vocabulary import EXCLUDED_FROM_TOTALS
from store.core import AccountStore, Session
from store.limbs import TOTALS, normalised, split

# The groupings a ranking is kept for: the columns of step 7's totals its groups are keyed
# by, as (network, key) of the ranking ('' where the dimension has no network).
DIMENSIONS: dict[str, tuple[str, str]] = {
    "program": ("network", "program_key"),
    "subId": ("''", "sub_key"),
}
ORDER = ("currency", "order_hi", "order_mid", "order_lo", "network", "dim_key")


def _rebuild_sql(dimension: str, postgres: bool) -> str:
    """INSERT of one month's ranking for `dimension` from step 7's monthly totals;
    parameters: account id, month, the status left out."""
    network, key = DIMENSIONS[dimension]
    sums = ", ".join(f"sum({c}) AS {c}" for c in TOTALS)
    by_network = ", network" if network == "network" else ""
    grouped = (
        f"SELECT account_id, month, currency, {network} AS network, {key} AS dim_key, {sums} "
        "FROM commission_dims_monthly WHERE account_id = ? AND month = ? AND status <> ? "
        f"GROUP BY account_id, month, currency, {key}{by_network}"
    )
    # Largest first in an ascending key: the negated sum's limbs.
    order = normalised("-g.commission_hi", "-g.commission_mid", "-g.commission_lo", postgres)
    columns = ", ".join(TOTALS)
    return (
        "INSERT INTO commission_ranks (account_id, month, dimension, currency, order_hi, "
        f"order_mid, order_lo, network, dim_key, {columns}) "
        f"SELECT g.account_id, g.month, '{dimension}', g.currency, {', '.join(order)}, "
        f"g.network, g.dim_key, {', '.join(f'g.{c}' for c in TOTALS)} FROM ({grouped}) AS g"
    )


async def rebuild_next(s: Session, account_uid: str | None = None) -> bool:
    """Rebuild the ranking of one stale month (of `account_uid` when given), the first by
    account and month; False when none is stale (or, on PostgreSQL, every stale one is
    being written now: it is left for a later rebuild, not waited for)."""
    skip = " FOR UPDATE SKIP LOCKED" if s.dialect.concurrent_writes else ""
    where, params = "", []
    if account_uid is not None:
        where = "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) "
        params = [account_uid]
    row = await s.fetchrow(
        f"SELECT account_id, month, version FROM commission_ranks_stale {where}"
        f"ORDER BY account_id, month LIMIT 1{skip}",
        *params,
    )
    if row is None:
        return False
    account_id, month, version = row
    await s.execute(
        "DELETE FROM commission_ranks WHERE account_id = ? AND month = ?", account_id, month
    )
    for dimension in DIMENSIONS:
        await s.execute(
            _rebuild_sql(dimension, s.dialect.arrays),
            account_id,
            month,
            EXCLUDED_FROM_TOTALS,
        )
    await s.execute(
        "DELETE FROM commission_ranks_stale WHERE account_id = ? AND month = ? AND version = ?",
        account_id,
        month,
        version,
    )
    return True


async def refresh(
    store: AccountStore, limit: int | None = None, account_uid: str | None = None
) -> int:
    """Rebuild stale months (of `account_uid` when given), one a transaction (a large
    backlog never holds the write lock long), at most `limit`; how many were rebuilt."""
    done = 0
    while (limit is None or done < limit) and await store.write(rebuild_next, account_uid):
        done += 1
    return done


async def stale_months(s: Session) -> int:
    """How many months wait for a rebuild."""
    return int(await s.fetchval("SELECT count(*) FROM commission_ranks_stale"))


@dataclass(frozen=True, slots=True)
class RankedMonth:
    """A ranked summary a month's ranking answers: one grouping, one month, no filter."""

    account_uid: str
    dimension: str  # a key of DIMENSIONS
    month: str  # YYYY-MM
    # The days (first, last) between the period's end and the month's, when they differ:
    # the ranking answers only when none of them has a commission it counts.
    outside: tuple[str, str] | None
    # The rank of the last row already seen: (currency, negated commission units, network,
    # key), None for the first page.
    after: tuple[str, int, str, str] | None
    limit: int | None


def page_sql(month: RankedMonth, postgres: bool) -> tuple[str, list[Any]]:
    """The page of `month`'s ranking: rows of (the grouping's key columns, currency,
    TOTALS, the order limbs), in rank order; or, when the ranking may not answer (its month
    is stale, or commissions lie between the period's end and the month's), one row of NULLs
    instead."""
    network, key = DIMENSIONS[month.dimension]
    account = "(SELECT id FROM accounts WHERE uid = ?)"
    unusable = [
        f"EXISTS (SELECT 1 FROM commission_ranks_stale WHERE account_id = {account} AND month = ?)"
    ]
    unusable_params: list[Any] = [month.account_uid, month.month]
    if month.outside is not None:
        unusable.append(
            f"EXISTS (SELECT 1 FROM commission_daily WHERE account_id = {account} "
            "AND day >= ? AND day <= ? AND status <> ?)"
        )
        unusable_params += [month.account_uid, *month.outside, EXCLUDED_FROM_TOTALS]
    either = " OR ".join(unusable)
    keys = ["network", f"dim_key AS {key}"] if network == "network" else [f"dim_key AS {key}"]
    where = [f"account_id = {account}", "month = ?", "dimension = ?", f"NOT ({either})"]
    params: list[Any] = [month.account_uid, month.month, month.dimension, *unusable_params]
    if month.after is not None:
        currency, negated, after_network, after_key = month.after
        where.append(f"({', '.join(ORDER)}) > (?, ?, ?, ?, ?, ?)")
        params += [currency, *split(negated), after_network, after_key]
    limit = ""
    if month.limit is not None:
        limit = " LIMIT ?"
        params.append(month.limit)
    columns = [*keys, "currency", *TOTALS, "order_hi", "order_mid", "order_lo"]
    page = (
        f"SELECT {', '.join(columns)} FROM commission_ranks WHERE {' AND '.join(where)} "
        f"ORDER BY {', '.join(ORDER)}{limit}"
    )
    nulls = ", ".join("NULL" for _ in columns)
    sql = f"SELECT * FROM ({page}) AS p UNION ALL SELECT {nulls} WHERE {either}"
    return sql, [*params, *unusable_params]


def unusable(rows: Sequence[Sequence[Any]], currency_at: int) -> bool:
    """Whether `page_sql`'s answer is its row of NULLs (a currency is never NULL)."""
    return len(rows) == 1 and rows[0][currency_at] is None
