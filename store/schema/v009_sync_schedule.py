"""Step 9: what the sync shares between workers and restarts, and what an import-only
connection shows.

- `networks.next_attempt_at`: when a run a documented limit cut short may go on (the
  moment the limit opens again); written with the run's outcome, read by the query that
  lists due connections, so any worker resumes it then, not a sync interval later.
- `network_calls`: one row per request sent to a network for a connection, kept for the
  longest period the network counts over: the documented limits (1,000 calls a day, 3 per
  15 minutes, one per 60 s) hold across workers and restarts, which each process's own
  count cannot see. The time is integer epoch milliseconds: a rolling period is compared
  to the request's instant, and whole-second text would let two calls 59 s apart pass a
  one-a-minute limit.
- `networks.import_only` (set for the connections stored without credentials, which only
  `network connect --import-only` made) and `networks.last_import_at`, the latest file
  import's time.
"""

from __future__ import annotations

from store.schema.step import Step, both, each

STEP = Step(
    each(
        sqlite="ALTER TABLE networks ADD COLUMN next_attempt_at TEXT",
        postgres='ALTER TABLE networks ADD COLUMN next_attempt_at text COLLATE "C"',
    ),
    each(
        sqlite="ALTER TABLE networks ADD COLUMN import_only INTEGER NOT NULL DEFAULT 0 "
        "CHECK (import_only IN (0, 1))",
        postgres="ALTER TABLE networks ADD COLUMN import_only boolean NOT NULL DEFAULT false",
    ),
    each(
        sqlite="ALTER TABLE networks ADD COLUMN last_import_at TEXT",
        postgres='ALTER TABLE networks ADD COLUMN last_import_at text COLLATE "C"',
    ),
    each(
        sqlite="UPDATE networks SET import_only = 1 WHERE NOT EXISTS (SELECT 1 FROM "
        "network_credentials c WHERE c.account_id = networks.account_id "
        "AND c.network = networks.network)",
        postgres="UPDATE networks SET import_only = true WHERE NOT EXISTS (SELECT 1 FROM "
        "network_credentials c WHERE c.account_id = networks.account_id "
        "AND c.network = networks.network)",
    ),
    each(
        sqlite="""CREATE TABLE network_calls (
            id INTEGER PRIMARY KEY,
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            network TEXT NOT NULL,
            sent_ms INTEGER NOT NULL CHECK (sent_ms >= 0)
        )""",
        postgres="""CREATE TABLE network_calls (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            network text COLLATE "C" NOT NULL,
            sent_ms bigint NOT NULL CHECK (sent_ms >= 0)
        )""",
    ),
    both("CREATE INDEX network_calls_sent ON network_calls (account_id, network, sent_ms)"),
)
