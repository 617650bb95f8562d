"""Step 6: webhook endpoints, their sealed secrets and their deliveries (store.webhooks)."""

from __future__ import annotations

from store.schema.step import Step, both, each

STEP = Step(
    each(
        sqlite="""CREATE TABLE webhook_endpoints (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            url TEXT NOT NULL,
            created_at TEXT NOT NULL,
            disabled_at TEXT,
            disabled_reason TEXT,
            previous_secret_expires_at TEXT,
            enqueued_through INTEGER NOT NULL
        )""",
        postgres="""CREATE TABLE webhook_endpoints (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            uid text COLLATE "C" NOT NULL UNIQUE,
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            url text COLLATE "C" NOT NULL,
            created_at text COLLATE "C" NOT NULL,
            disabled_at text COLLATE "C",
            disabled_reason text COLLATE "C",
            previous_secret_expires_at text COLLATE "C",
            enqueued_through bigint NOT NULL
        )""",
    ),
    both("CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, id)"),
    # Ciphertext only, apart from everything a read path selects.
    each(
        sqlite="""CREATE TABLE webhook_secrets (
            endpoint_id INTEGER PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
            ciphertext BLOB NOT NULL,
            previous_ciphertext BLOB,
            updated_at TEXT NOT NULL
        )""",
        postgres="""CREATE TABLE webhook_secrets (
            endpoint_id bigint PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
            ciphertext bytea NOT NULL,
            previous_ciphertext bytea,
            updated_at text COLLATE "C" NOT NULL
        )""",
    ),
    each(
        sqlite="""CREATE TABLE webhook_deliveries (
            id INTEGER PRIMARY KEY,
            endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
            event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            enqueued_at TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt_at TEXT,
            first_attempt_at TEXT,
            last_attempt_at TEXT,
            last_status INTEGER,
            last_reason TEXT,
            delivered_at TEXT,
            failed_at TEXT,
            lease_owner TEXT,
            lease_expires_at TEXT,
            UNIQUE (endpoint_id, event_id)
        )""",
        postgres="""CREATE TABLE webhook_deliveries (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
            event_id bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            enqueued_at text COLLATE "C" NOT NULL,
            attempts integer NOT NULL,
            next_attempt_at text COLLATE "C",
            first_attempt_at text COLLATE "C",
            last_attempt_at text COLLATE "C",
            last_status integer,
            last_reason text COLLATE "C",
            delivered_at text COLLATE "C",
            failed_at text COLLATE "C",
            lease_owner text COLLATE "C",
            lease_expires_at text COLLATE "C",
            UNIQUE (endpoint_id, event_id)
        )""",
    ),
    # What is due: next_attempt_at is NULL once delivered or given up, so a range scan
    # of it skips those.
    both("CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)"),
    both(
        "CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, "
        "next_attempt_at)"
    ),
    both("CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (endpoint_id, id)"),
)
