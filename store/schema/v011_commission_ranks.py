"""Step 11: each month's totals by programme and by sub-id, kept in rank order
(`commission_ranks`), and the months whose ranking no longer matches the commissions
(`commission_ranks_stale`); store.ranks rebuilds and reads them.

- `commission_ranks`: one row per (account, month, dimension, currency, group), the group's
  totals over every status but declined (what a summary that neither filters nor groups by
  status adds up), its primary key in the order a ranked page reads: currency, then the
  negated commission sum as three limbs (`order_hi` carries the sign, `order_mid` and
  `order_lo` lie in [0, 10**10)), then the group. A month's top 25 is one range of the key,
  whatever the number of groups. `dimension` is 'program' (network and programme key) or
  'subId' (network '', the sub-id key); the keys are step 7's ('' for none, '=' + value).
- `commission_ranks_stale`: a month of an account whose commissions changed since its
  ranking was last built. Triggers on `commissions` mark it in the writing statement's
  transaction (on SQLite a row trigger: one keyed probe, and an insert when the month is
  not marked yet; on PostgreSQL a statement trigger over its transition tables), so a
  reader never takes a ranking that misses a committed change: a stale month is read from
  the totals of step 7 instead. `version`
  grows with every marking (PostgreSQL): a rebuild removes the mark only if no write marked
  it again meanwhile. No foreign key: an account's deletion marks its months on its way
  out; the rebuild drops such marks.

Every month that has commissions starts stale: the first rebuild fills its ranking.
"""

from __future__ import annotations

from store.schema.step import Statement, Step, each

_CHANGED = (
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
_DIFFERS = " OR ".join(f"old.{c} IS NOT new.{c}" for c in _CHANGED)
# Not INSERT OR IGNORE: a trigger's conflict clause yields to the writing statement's.
_MARK_SQLITE = (
    "INSERT INTO commission_ranks_stale (account_id, month) "
    "SELECT {row}.account_id, substr({row}.transacted_at, 1, 7) WHERE NOT EXISTS "
    "(SELECT 1 FROM commission_ranks_stale WHERE account_id = {row}.account_id "
    "AND month = substr({row}.transacted_at, 1, 7))"
)
_MARK_POSTGRES = (
    "INSERT INTO commission_ranks_stale AS s (account_id, month) "
    "SELECT DISTINCT account_id, substr(transacted_at, 1, 7) FROM ({rows}) AS r "
    "ORDER BY 1, 2 ON CONFLICT (account_id, month) DO UPDATE SET version = s.version + 1"
)
_CHANGED_ROWS = (
    "SELECT o.account_id, o.transacted_at FROM old_rows AS o JOIN new_rows AS n USING (id) "
    f"WHERE ({', '.join(f'o.{c}' for c in _CHANGED)}) IS DISTINCT FROM "
    f"({', '.join(f'n.{c}' for c in _CHANGED)}) "
    "UNION ALL SELECT n.account_id, n.transacted_at FROM old_rows AS o "
    "JOIN new_rows AS n USING (id) "
    f"WHERE ({', '.join(f'o.{c}' for c in _CHANGED)}) IS DISTINCT FROM "
    f"({', '.join(f'n.{c}' for c in _CHANGED)})"
)


def _postgres_function(name: str, rows: str) -> str:
    return (
        f"CREATE FUNCTION {name}() RETURNS trigger\n"
        "            LANGUAGE plpgsql AS $$\n"
        "            BEGIN\n"
        f"                {_MARK_POSTGRES.format(rows=rows)};\n"
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


def _ranks_table(engine: str) -> str:
    if engine == "sqlite":
        integer, text, tail = "INTEGER", "TEXT", " WITHOUT ROWID"
        checks = "".join(
            f",\n            CHECK (typeof({c}) = 'integer')"
            for c in ("order_hi", "order_mid", "order_lo", *_TOTALS)
        )
    else:
        integer, text, tail, checks = "bigint", 'text COLLATE "C"', "", ""
    totals = ",\n".join(f"            {c} {integer} NOT NULL" for c in _TOTALS)
    return (
        "CREATE TABLE commission_ranks (\n"
        f"            account_id {integer} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,\n"
        f"            month {text} NOT NULL,\n"
        f"            dimension {text} NOT NULL CHECK (dimension IN ('program', 'subId')),\n"
        f"            currency {text} NOT NULL,\n"
        f"            order_hi {integer} NOT NULL,\n"
        f"            order_mid {integer} NOT NULL,\n"
        f"            order_lo {integer} NOT NULL,\n"
        f"            network {text} NOT NULL,\n"
        f"            dim_key {text} NOT NULL,\n"
        f"{totals},\n"
        "            PRIMARY KEY (account_id, month, dimension, currency, order_hi, order_mid,\n"
        f"                order_lo, network, dim_key){checks}\n"
        f"        ){tail}"
    )


def _stale_table(engine: str) -> str:
    if engine == "sqlite":
        integer, text, tail = "INTEGER", "TEXT", " WITHOUT ROWID"
    else:
        integer, text, tail = "bigint", 'text COLLATE "C"', ""
    return (
        "CREATE TABLE commission_ranks_stale (\n"
        f"            account_id {integer} NOT NULL,\n"
        f"            month {text} NOT NULL,\n"
        f"            version {integer} NOT NULL DEFAULT 1,\n"
        "            PRIMARY KEY (account_id, month)\n"
        f"        ){tail}"
    )


def _statements() -> tuple[Statement, ...]:
    out = [
        each(sqlite=_ranks_table("sqlite"), postgres=_ranks_table("postgres")),
        each(sqlite=_stale_table("sqlite"), postgres=_stale_table("postgres")),
        each(
            sqlite="INSERT INTO commission_ranks_stale (account_id, month) "
            "SELECT DISTINCT account_id, month FROM commission_monthly",
            postgres="INSERT INTO commission_ranks_stale (account_id, month) "
            "SELECT DISTINCT account_id, month FROM commission_monthly",
        ),
        each(
            sqlite="CREATE TRIGGER commission_ranks_insert AFTER INSERT ON commissions\n"
            f"            BEGIN {_MARK_SQLITE.format(row='new')}; END"
        ),
        each(
            sqlite="CREATE TRIGGER commission_ranks_update AFTER UPDATE ON commissions\n"
            f"            WHEN {_DIFFERS}\n"
            f"            BEGIN {_MARK_SQLITE.format(row='old')}; "
            f"{_MARK_SQLITE.format(row='new')}; END"
        ),
        each(
            sqlite="CREATE TRIGGER commission_ranks_delete AFTER DELETE ON commissions\n"
            f"            BEGIN {_MARK_SQLITE.format(row='old')}; END"
        ),
    ]
    for name, event, rows, tables in (
        (
            "commission_ranks_insert",
            "INSERT",
            "SELECT account_id, transacted_at FROM new_rows",
            "NEW TABLE AS new_rows",
        ),
        (
            "commission_ranks_update",
            "UPDATE",
            _CHANGED_ROWS,
            "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        ),
        (
            "commission_ranks_delete",
            "DELETE",
            "SELECT account_id, transacted_at FROM old_rows",
            "OLD TABLE AS old_rows",
        ),
    ):
        out.append(each(postgres=_postgres_function(name, rows)))
        out.append(each(postgres=_postgres_trigger(name, event, tables)))
    return tuple(out)


STEP = Step(*_statements())
