"""Step 1: accounts, their capabilities and API keys, connected networks, their sealed
credentials, and commissions."""

from __future__ import annotations

from store.schema.step import Step, both, each

STEP = Step(
    each(
        sqlite="""CREATE TABLE accounts (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            email TEXT,
            plan TEXT NOT NULL CHECK (plan IN ('free', 'pro')),
            suspended INTEGER NOT NULL DEFAULT 0 CHECK (suspended IN (0, 1)),
            created_at TEXT NOT NULL
        )""",
        postgres="""CREATE TABLE accounts (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            uid text COLLATE "C" NOT NULL UNIQUE,
            email text,
            plan text NOT NULL CHECK (plan IN ('free', 'pro')),
            suspended boolean NOT NULL DEFAULT false,
            created_at text COLLATE "C" NOT NULL
        )""",
    ),
    each(
        sqlite="""CREATE TABLE capabilities (
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            name TEXT NOT NULL CHECK (name IN ('acquisition', 'monetisation')),
            enabled INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
            configured INTEGER NOT NULL DEFAULT 0 CHECK (configured IN (0, 1)),
            enabled_at TEXT,
            PRIMARY KEY (account_id, name)
        )""",
        postgres="""CREATE TABLE capabilities (
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            name text COLLATE "C" NOT NULL CHECK (name IN ('acquisition', 'monetisation')),
            enabled boolean NOT NULL DEFAULT false,
            configured boolean NOT NULL DEFAULT false,
            enabled_at text COLLATE "C",
            PRIMARY KEY (account_id, name)
        )""",
    ),
    each(
        sqlite="""CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            key_hash TEXT NOT NULL UNIQUE,
            prefix TEXT NOT NULL,
            label TEXT NOT NULL,
            scopes TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        postgres="""CREATE TABLE api_keys (
            id text COLLATE "C" PRIMARY KEY,
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            key_hash text COLLATE "C" NOT NULL UNIQUE,
            prefix text COLLATE "C" NOT NULL,
            label text NOT NULL,
            scopes text NOT NULL,
            created_at text COLLATE "C" NOT NULL,
            revoked_at text COLLATE "C"
        )""",
    ),
    both("CREATE INDEX api_keys_account ON api_keys (account_id)"),
    both("CREATE INDEX api_keys_prefix ON api_keys (prefix)"),
    each(
        sqlite="""CREATE TABLE networks (
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            network TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'never'
                CHECK (status IN ('never', 'ok', 'partial', 'auth_failed', 'error')),
            connected_at TEXT,
            last_sync_at TEXT,
            accounts INTEGER NOT NULL DEFAULT 0 CHECK (accounts >= 0),
            programs INTEGER NOT NULL DEFAULT 0 CHECK (programs >= 0),
            transactions INTEGER NOT NULL DEFAULT 0 CHECK (transactions >= 0),
            PRIMARY KEY (account_id, network)
        )""",
        postgres="""CREATE TABLE networks (
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
    ),
    # Credentials live apart from everything the API reads, as ciphertext only. A
    # deployment can REVOKE SELECT on this one table from the edge's role
    # (docs/accounts.md): the edge's read paths never select it.
    each(
        sqlite="""CREATE TABLE network_credentials (
            account_id INTEGER NOT NULL,
            network TEXT NOT NULL,
            ciphertext BLOB NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (account_id, network),
            FOREIGN KEY (account_id, network)
                REFERENCES networks (account_id, network) ON DELETE CASCADE
        )""",
        postgres="""CREATE TABLE network_credentials (
            account_id bigint NOT NULL,
            network text COLLATE "C" NOT NULL,
            ciphertext bytea NOT NULL,
            updated_at text COLLATE "C" NOT NULL,
            PRIMARY KEY (account_id, network),
            FOREIGN KEY (account_id, network)
                REFERENCES networks (account_id, network) ON DELETE CASCADE
        )""",
    ),
    # `id` is the commission's `seq`: an identity never reused, and kept by the importer's
    # upsert (ON CONFLICT ... DO UPDATE does not touch it).
    each(
        sqlite="""CREATE TABLE commissions (
            id INTEGER PRIMARY KEY,
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            network TEXT NOT NULL,
            external_id TEXT NOT NULL,
            program_name TEXT,
            program_external_id TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('pending', 'approved', 'declined', 'paid', 'unknown')),
            raw_status TEXT,
            sale_amount TEXT,
            commission_amount TEXT NOT NULL,
            currency TEXT NOT NULL,
            clicked_at TEXT,
            transacted_at TEXT NOT NULL,
            sub_id TEXT,
            imported_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (account_id, network, external_id)
        )""",
        postgres="""CREATE TABLE commissions (
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
    ),
    # Keyset pagination: equality on the account (and filter), then the sort key.
    both("""CREATE INDEX commissions_page
            ON commissions (account_id, transacted_at DESC, id DESC)"""),
    both("""CREATE INDEX commissions_network_page
            ON commissions (account_id, network, transacted_at DESC, id DESC)"""),
    both("""CREATE INDEX commissions_status_page
            ON commissions (account_id, status, transacted_at DESC, id DESC)"""),
)
