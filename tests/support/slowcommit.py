"""A PostgreSQL COMMIT that takes its time, to cut writes off in the middle of one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

# A deferred trigger runs in the COMMIT, sleeps through the client's cancel request (as a
# COMMIT already writing its WAL record would), then lets the transaction commit, or fails
# it. One sleep per inserted commission.
SLOW_COMMIT = """
CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        PERFORM pg_sleep({seconds});
    EXCEPTION WHEN query_canceled THEN
        PERFORM pg_sleep({seconds});
    END;
    IF {fail} THEN
        RAISE EXCEPTION 'this COMMIT fails';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON commissions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();
"""
_COMMITS = (
    "FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query = 'COMMIT;' AND state = 'active'"
)
COMMITTING = f"SELECT count(*) {_COMMITS}"  # COMMITs under way (of other sessions)


@asynccontextmanager
async def slow_commits(
    conn: asyncpg.Connection, *, seconds: float, fail: bool = False
) -> AsyncIterator[None]:
    """While the block runs, each commission a COMMIT inserts costs it `seconds` (and with
    `fail` the COMMIT then fails). The database gets its schema back afterwards: the shared
    test database is only emptied between tests."""
    await conn.execute(SLOW_COMMIT.format(seconds=seconds, fail=str(fail).lower()))
    try:
        yield
    finally:
        # A COMMIT still sleeping, its client gone, would hold up the DROP.
        await conn.execute(f"SELECT pg_terminate_backend(pid) {_COMMITS}")
        await conn.execute("DROP TRIGGER slow_commit ON commissions; DROP FUNCTION slow_commit()")
