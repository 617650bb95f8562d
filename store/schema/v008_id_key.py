"""Step 8: the id key (store.publicids), one row: the random key the public commission
and event ids are permuted with. The store writes it once, on its first open after this
step (INSERT ... ON CONFLICT DO NOTHING, then read), and keeps it for good: a new key would
change every public id. Read connections may not select it (store.core.SECRET_TABLES)."""

from __future__ import annotations

from store.schema.step import Step, each

STEP = Step(
    each(
        sqlite="""CREATE TABLE id_key (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            key BLOB NOT NULL CHECK (length(key) = 32),
            created_at TEXT NOT NULL
        )""",
        postgres="""CREATE TABLE id_key (
            id integer PRIMARY KEY CHECK (id = 1),
            key bytea NOT NULL CHECK (octet_length(key) = 32),
            created_at text COLLATE "C" NOT NULL
        )""",
    ),
)
