"""Step 3: a connection's last successful run (filled from its last `ok` outcome), and the
history of each commission's replaced states, written by a trigger on `commissions`."""

from __future__ import annotations

from store.schema.step import Step, both, each

STEP = Step(
    each(
        sqlite="ALTER TABLE networks ADD COLUMN last_success_at TEXT",
        postgres='ALTER TABLE networks ADD COLUMN last_success_at text COLLATE "C"',
    ),
    both("UPDATE networks SET last_success_at = last_sync_at WHERE status = 'ok'"),
    each(
        sqlite="""CREATE TABLE commission_history (
            id INTEGER PRIMARY KEY,
            commission_id INTEGER NOT NULL REFERENCES commissions (id) ON DELETE CASCADE,
            status TEXT NOT NULL,
            raw_status TEXT,
            commission_amount TEXT NOT NULL,
            sale_amount TEXT,
            currency TEXT NOT NULL,
            changed_at TEXT NOT NULL
        )""",
        postgres="""CREATE TABLE commission_history (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            commission_id bigint NOT NULL REFERENCES commissions (id) ON DELETE CASCADE,
            status text COLLATE "C" NOT NULL,
            raw_status text,
            commission_amount text NOT NULL,
            sale_amount text,
            currency text NOT NULL,
            changed_at text COLLATE "C" NOT NULL
        )""",
    ),
    each(
        postgres=(
            "CREATE FUNCTION commission_history_write() RETURNS trigger\n"
            "            LANGUAGE plpgsql AS $$\n"
            "            BEGIN\n"
            "                INSERT INTO commission_history (commission_id, status, "
            "raw_status, commission_amount, sale_amount, currency, changed_at)\n"
            "                SELECT o.id, o.status, o.raw_status, o.commission_amount, "
            "o.sale_amount, o.currency, n.updated_at\n"
            "                FROM old_rows o JOIN new_rows n ON n.id = o.id\n"
            "                WHERE (o.status, o.raw_status, o.commission_amount, "
            "o.sale_amount, o.currency)\n"
            "                    IS DISTINCT FROM (n.status, n.raw_status, "
            "n.commission_amount, n.sale_amount, n.currency)\n"
            "                ORDER BY o.id;\n"
            "                RETURN NULL;\n"
            "            END\n"
            "            $$"
        ),
    ),
    # SQLite: in the statement's own transaction, inside the database: an upsert stays one
    # statement per chunk, and only a row whose status or amounts changed writes one.
    # PostgreSQL: once per statement, from its transition tables: the upsert of a chunk
    # writes the history of every row it changed in one INSERT.
    each(
        sqlite=(
            "CREATE TRIGGER commission_history_write AFTER UPDATE ON commissions\n"
            "            FOR EACH ROW WHEN OLD.status IS NOT NEW.status OR OLD.raw_status IS "
            "NOT NEW.raw_status OR OLD.commission_amount IS NOT NEW.commission_amount OR "
            "OLD.sale_amount IS NOT NEW.sale_amount OR OLD.currency IS NOT NEW.currency\n"
            "            BEGIN\n"
            "                INSERT INTO commission_history (commission_id, status, "
            "raw_status, commission_amount, sale_amount, currency, changed_at)\n"
            "                VALUES (OLD.id, OLD.status, OLD.raw_status, "
            "OLD.commission_amount, OLD.sale_amount, OLD.currency, NEW.updated_at);\n"
            "            END"
        ),
        postgres="""CREATE TRIGGER commission_history_write AFTER UPDATE ON commissions
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION commission_history_write()""",
    ),
    both("CREATE INDEX commission_history_commission ON commission_history (commission_id, id)"),
)
