"""The PostgreSQL account store's schema: the SQLite store's migrations, version for version.

Same version numbers, tables, columns, constraints and index names as
`store.engines.sqlite.MIGRATIONS` (tests/store/pg/test_schema.py compares the two), in PostgreSQL's
types: booleans for the 0/1 flags, bigint identities for the integer keys, bytea for the
ciphertext. Timestamps and amounts stay text, exactly as in SQLite, so the conventions of
store.base hold unchanged.

Text that is sorted or range-compared (timestamps, ids, network names) is declared
`COLLATE "C"`: byte order, as SQLite compares, whatever collation the database was created
with (an `en_US` collation would order `a-b` after `ab`, and costs more per comparison).

store.engines.postgres applies them in one transaction under a transaction-scoped advisory
lock (`MIGRATION_LOCK`), so edge workers starting together apply each migration once and
the others wait, then find it done.
"""

from __future__ import annotations

import asyncpg

from store.core import (
    API_KEY_INDEXES,
    COMMISSION_INDEXES,
    HISTORY_FIELDS,
    SCHEMA_VERSION_SQL,
    history_migration,
    lock_key,
    sync_migration,
)
from store.events import pg_migration as events_migration
from store.summary import pg_migration as daily_migration
from store.webhooks import pg_migration as webhooks_migration

# Append new migrations (and their SQLite twins); never edit one that has shipped.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE accounts (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            uid text COLLATE "C" NOT NULL UNIQUE,
            email text,
            plan text NOT NULL CHECK (plan IN ('free', 'pro')),
            suspended boolean NOT NULL DEFAULT false,
            created_at text COLLATE "C" NOT NULL
        )""",
        """CREATE TABLE capabilities (
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            name text COLLATE "C" NOT NULL CHECK (name IN ('acquisition', 'monetisation')),
            enabled boolean NOT NULL DEFAULT false,
            configured boolean NOT NULL DEFAULT false,
            enabled_at text COLLATE "C",
            PRIMARY KEY (account_id, name)
        )""",
        """CREATE TABLE api_keys (
            id text COLLATE "C" PRIMARY KEY,
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            key_hash text COLLATE "C" NOT NULL UNIQUE,
            prefix text COLLATE "C" NOT NULL,
            label text NOT NULL,
            scopes text NOT NULL,
            created_at text COLLATE "C" NOT NULL,
            revoked_at text COLLATE "C"
        )""",
        *API_KEY_INDEXES,
        """CREATE TABLE networks (
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            network text COLLATE "C" NOT NULL,
            status text NOT NULL DEFAULT 'never'
                CHECK (status IN ('never', 'ok', 'partial', 'auth_failed', 'error')),
            connected_at text COLLATE "C",
            last_sync_at text COLLATE "C",
            accounts integer NOT NULL DEFAULT 0 CHECK (accounts >= 0),
            programs integer NOT NULL DEFAULT 0 CHECK (programs >= 0),
            transactions integer NOT NULL DEFAULT 0 CHECK (transactions >= 0),
            PRIMARY KEY (account_id, network)
        )""",
        # Credentials live apart from everything the API reads, as ciphertext only. A
        # deployment can REVOKE SELECT on this one table from the edge's role
        # (docs/accounts.md): the edge's read paths never select it.
        """CREATE TABLE network_credentials (
            account_id bigint NOT NULL,
            network text COLLATE "C" NOT NULL,
            ciphertext bytea NOT NULL,
            updated_at text COLLATE "C" NOT NULL,
            PRIMARY KEY (account_id, network),
            FOREIGN KEY (account_id, network)
                REFERENCES networks (account_id, network) ON DELETE CASCADE
        )""",
        # `id` is the commission's `seq`: an identity never reused, and kept by the
        # importer's upsert (ON CONFLICT ... DO UPDATE does not touch it).
        """CREATE TABLE commissions (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            network text COLLATE "C" NOT NULL,
            external_id text COLLATE "C" NOT NULL,
            program_name text,
            program_external_id text,
            status text COLLATE "C" NOT NULL
                CHECK (status IN ('pending', 'approved', 'declined', 'paid', 'unknown')),
            raw_status text,
            sale_amount text,
            commission_amount text NOT NULL,
            currency text NOT NULL,
            clicked_at text COLLATE "C",
            transacted_at text COLLATE "C" NOT NULL,
            sub_id text,
            imported_at text COLLATE "C" NOT NULL,
            updated_at text COLLATE "C" NOT NULL,
            UNIQUE (account_id, network, external_id)
        )""",
        *COMMISSION_INDEXES,
    ),
    sync_migration('text COLLATE "C"'),
    history_migration(
        'text COLLATE "C"',
        (
            """CREATE TABLE commission_history (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            commission_id bigint NOT NULL REFERENCES commissions (id) ON DELETE CASCADE,
            status text COLLATE "C" NOT NULL,
            raw_status text,
            commission_amount text NOT NULL,
            sale_amount text,
            currency text NOT NULL,
            changed_at text COLLATE "C" NOT NULL
        )""",
            # Once per statement, from its transition tables: the upsert of a chunk writes
            # the history of every row it changed in one INSERT, in its own transaction.
            f"""CREATE FUNCTION commission_history_write() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO commission_history ({", ".join(("commission_id", *HISTORY_FIELDS, "changed_at"))})
                SELECT o.id, {", ".join(f"o.{name}" for name in HISTORY_FIELDS)}, n.updated_at
                FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE ({", ".join(f"o.{name}" for name in HISTORY_FIELDS)})
                    IS DISTINCT FROM ({", ".join(f"n.{name}" for name in HISTORY_FIELDS)})
                ORDER BY o.id;
                RETURN NULL;
            END
            $$""",
            """CREATE TRIGGER commission_history_write AFTER UPDATE ON commissions
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION commission_history_write()""",
        ),
    ),
    # Per-day and per-month totals kept by statement triggers (store.summary).
    daily_migration(),
    # The event feed, written by triggers (store.events).
    events_migration(),
    # Webhook endpoints, their secrets and deliveries (store.webhooks).
    webhooks_migration(),
)

LATEST = len(MIGRATIONS)


MIGRATION_LOCK = lock_key("schema_migrations")


async def schema_version(conn: asyncpg.Connection) -> int:
    """The applied version; 0 for an empty database. A plain read: no lock, no DDL."""
    if not await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL"):
        return 0
    return int(await conn.fetchval(SCHEMA_VERSION_SQL))
