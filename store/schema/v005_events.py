"""Step 5: the event feed (store.events), written by triggers on `commissions` and on a
connection's status, its `data` built by concatenation so that both databases write the
same bytes. On PostgreSQL each trigger takes the account's event lock (advisory lock
space -419135353, store.events) before taking ids."""

from __future__ import annotations

from store.schema.step import Step, both, each

STEP = Step(
    # AUTOINCREMENT (SQLite): an id is never reused, even once retention pruned the highest.
    each(
        sqlite="""CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            occurred_at TEXT NOT NULL,
            data TEXT NOT NULL
        )""",
        postgres="""CREATE TABLE events (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            type text COLLATE "C" NOT NULL,
            occurred_at text COLLATE "C" NOT NULL,
            data text NOT NULL
        )""",
    ),
    # The feed of one account in order, and its keyset pages.
    both("CREATE INDEX events_account ON events (account_id, id)"),
    # Retention: the events older than a moment.
    both("CREATE INDEX events_occurred ON events (occurred_at)"),
    each(
        postgres=(
            "CREATE FUNCTION events_commission_created() RETURNS trigger\n"
            "            LANGUAGE plpgsql AS $$\n"
            "            BEGIN\n"
            "                PERFORM pg_advisory_xact_lock(-419135353, (a.account_id % "
            "2147483647)::integer) FROM (SELECT DISTINCT account_id FROM (SELECT account_id "
            "FROM new_rows) AS s ORDER BY account_id) AS a;\n"
            "                INSERT INTO events (account_id, type, occurred_at, data) SELECT "
            "n.account_id, 'commission.created', n.updated_at, '{\"id\":' || '\"com_' || "
            "lpad(to_hex(n.id), 16, '0') || '\"' || ',\"network\":' || "
            "coalesce(to_json(n.network)::text, 'null') || ',\"externalId\":' || "
            "coalesce(to_json(n.external_id)::text, 'null') || ',\"programName\":' || "
            "coalesce(to_json(n.program_name)::text, 'null') || ',\"programExternalId\":' || "
            "coalesce(to_json(n.program_external_id)::text, 'null') || ',\"status\":' || "
            "coalesce(to_json(n.status)::text, 'null') || ',\"rawStatus\":' || "
            "coalesce(to_json(n.raw_status)::text, 'null') || ',\"saleAmount\":' || "
            "coalesce(n.sale_amount, 'null') || ',\"commissionAmount\":' || "
            "coalesce(n.commission_amount, 'null') || ',\"currency\":' || "
            "coalesce(to_json(n.currency)::text, 'null') || ',\"clickedAt\":' || "
            "coalesce(to_json(n.clicked_at)::text, 'null') || ',\"transactedAt\":' || "
            "coalesce(to_json(n.transacted_at)::text, 'null') || ',\"subId\":' || "
            "coalesce(to_json(n.sub_id)::text, 'null') || '}' FROM new_rows n ORDER BY n.id;\n"
            "                RETURN NULL;\n"
            "            END\n"
            "            $$"
        ),
    ),
    each(
        postgres=(
            "CREATE FUNCTION events_commission_updated() RETURNS trigger\n"
            "            LANGUAGE plpgsql AS $$\n"
            "            BEGIN\n"
            "                PERFORM pg_advisory_xact_lock(-419135353, (a.account_id % "
            "2147483647)::integer) FROM (SELECT DISTINCT account_id FROM (SELECT "
            "o.account_id FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status IS "
            "DISTINCT FROM n.status OR o.commission_amount IS DISTINCT FROM "
            "n.commission_amount OR o.sale_amount IS DISTINCT FROM n.sale_amount OR "
            "o.currency IS DISTINCT FROM n.currency) AS s ORDER BY account_id) AS a;\n"
            "                INSERT INTO events (account_id, type, occurred_at, data) SELECT "
            "n.account_id, 'commission.updated', n.updated_at, '{\"id\":' || '\"com_' || "
            "lpad(to_hex(n.id), 16, '0') || '\"' || ',\"network\":' || "
            "coalesce(to_json(n.network)::text, 'null') || ',\"externalId\":' || "
            "coalesce(to_json(n.external_id)::text, 'null') || ',\"programName\":' || "
            "coalesce(to_json(n.program_name)::text, 'null') || ',\"programExternalId\":' || "
            "coalesce(to_json(n.program_external_id)::text, 'null') || ',\"status\":' || "
            "coalesce(to_json(n.status)::text, 'null') || ',\"rawStatus\":' || "
            "coalesce(to_json(n.raw_status)::text, 'null') || ',\"saleAmount\":' || "
            "coalesce(n.sale_amount, 'null') || ',\"commissionAmount\":' || "
            "coalesce(n.commission_amount, 'null') || ',\"currency\":' || "
            "coalesce(to_json(n.currency)::text, 'null') || ',\"clickedAt\":' || "
            "coalesce(to_json(n.clicked_at)::text, 'null') || ',\"transactedAt\":' || "
            "coalesce(to_json(n.transacted_at)::text, 'null') || ',\"subId\":' || "
            "coalesce(to_json(n.sub_id)::text, 'null') || ',\"previous\":' || '{\"status\":' || "
            "coalesce(to_json(o.status)::text, 'null') || ',\"rawStatus\":' || "
            "coalesce(to_json(o.raw_status)::text, 'null') || ',\"commissionAmount\":' || "
            "coalesce(o.commission_amount, 'null') || ',\"saleAmount\":' || "
            "coalesce(o.sale_amount, 'null') || ',\"currency\":' || "
            "coalesce(to_json(o.currency)::text, 'null') || '}' || '}' FROM old_rows o JOIN "
            "new_rows n ON n.id = o.id WHERE o.status IS DISTINCT FROM n.status OR "
            "o.commission_amount IS DISTINCT FROM n.commission_amount OR o.sale_amount IS "
            "DISTINCT FROM n.sale_amount OR o.currency IS DISTINCT FROM n.currency ORDER BY "
            "n.id;\n"
            "                RETURN NULL;\n"
            "            END\n"
            "            $$"
        ),
    ),
    each(
        postgres=(
            "CREATE FUNCTION events_connection() RETURNS trigger\n"
            "            LANGUAGE plpgsql AS $$\n"
            "            BEGIN\n"
            "                PERFORM pg_advisory_xact_lock(-419135353, (NEW.account_id % "
            "2147483647)::integer);\n"
            "                INSERT INTO events (account_id, type, occurred_at, data) VALUES "
            "(NEW.account_id, CASE WHEN NEW.status IN ('auth_failed', 'error') AND "
            "OLD.status NOT IN ('auth_failed', 'error') THEN 'connection.sync_failed' ELSE "
            "'connection.recovered' END, coalesce(NEW.last_sync_at, to_char(now() AT TIME "
            "ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')), '{\"network\":' || "
            "coalesce(to_json(NEW.network)::text, 'null') || ',\"status\":' || "
            "coalesce(to_json(NEW.status)::text, 'null') || ',\"previousStatus\":' || "
            "coalesce(to_json(OLD.status)::text, 'null') || ',\"reasonCode\":' || "
            "coalesce(to_json(NEW.reason_code)::text, 'null') || ',\"lastSuccessAt\":' || "
            "coalesce(to_json(NEW.last_success_at)::text, 'null') || '}');\n"
            "                RETURN NULL;\n"
            "            END\n"
            "            $$"
        ),
    ),
    each(
        sqlite=(
            "CREATE TRIGGER events_commission_created AFTER INSERT ON commissions\n"
            "            BEGIN\n"
            "                INSERT INTO events (account_id, type, occurred_at, data) VALUES "
            "(NEW.account_id, 'commission.created', NEW.updated_at,\n"
            "                    '{\"id\":' || printf('\"com_%016x\"', NEW.id) || ',\"network\":' "
            "|| json_quote(NEW.network) || ',\"externalId\":' || json_quote(NEW.external_id) "
            "|| ',\"programName\":' || json_quote(NEW.program_name) || ',\"programExternalId\":' "
            "|| json_quote(NEW.program_external_id) || ',\"status\":' || "
            "json_quote(NEW.status) || ',\"rawStatus\":' || json_quote(NEW.raw_status) || "
            "',\"saleAmount\":' || coalesce(NEW.sale_amount, 'null') || ',\"commissionAmount\":' "
            "|| coalesce(NEW.commission_amount, 'null') || ',\"currency\":' || "
            "json_quote(NEW.currency) || ',\"clickedAt\":' || json_quote(NEW.clicked_at) || "
            "',\"transactedAt\":' || json_quote(NEW.transacted_at) || ',\"subId\":' || "
            "json_quote(NEW.sub_id) || '}');\n"
            "            END"
        ),
        postgres="""CREATE TRIGGER events_commission_created AFTER INSERT ON commissions
            REFERENCING NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION events_commission_created()""",
    ),
    each(
        sqlite=(
            "CREATE TRIGGER events_commission_updated AFTER UPDATE ON commissions\n"
            "            FOR EACH ROW WHEN OLD.status IS NOT NEW.status OR "
            "OLD.commission_amount IS NOT NEW.commission_amount OR OLD.sale_amount IS NOT "
            "NEW.sale_amount OR OLD.currency IS NOT NEW.currency\n"
            "            BEGIN\n"
            "                INSERT INTO events (account_id, type, occurred_at, data) VALUES "
            "(NEW.account_id, 'commission.updated', NEW.updated_at,\n"
            "                    '{\"id\":' || printf('\"com_%016x\"', NEW.id) || ',\"network\":' "
            "|| json_quote(NEW.network) || ',\"externalId\":' || json_quote(NEW.external_id) "
            "|| ',\"programName\":' || json_quote(NEW.program_name) || ',\"programExternalId\":' "
            "|| json_quote(NEW.program_external_id) || ',\"status\":' || "
            "json_quote(NEW.status) || ',\"rawStatus\":' || json_quote(NEW.raw_status) || "
            "',\"saleAmount\":' || coalesce(NEW.sale_amount, 'null') || ',\"commissionAmount\":' "
            "|| coalesce(NEW.commission_amount, 'null') || ',\"currency\":' || "
            "json_quote(NEW.currency) || ',\"clickedAt\":' || json_quote(NEW.clicked_at) || "
            "',\"transactedAt\":' || json_quote(NEW.transacted_at) || ',\"subId\":' || "
            "json_quote(NEW.sub_id) || ',\"previous\":' || '{\"status\":' || "
            "json_quote(OLD.status) || ',\"rawStatus\":' || json_quote(OLD.raw_status) || "
            "',\"commissionAmount\":' || coalesce(OLD.commission_amount, 'null') || "
            "',\"saleAmount\":' || coalesce(OLD.sale_amount, 'null') || ',\"currency\":' || "
            "json_quote(OLD.currency) || '}' || '}');\n"
            "            END"
        ),
        postgres="""CREATE TRIGGER events_commission_updated AFTER UPDATE ON commissions
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION events_commission_updated()""",
    ),
    each(
        sqlite=(
            "CREATE TRIGGER events_connection_failed AFTER UPDATE OF status ON networks\n"
            "            FOR EACH ROW WHEN NEW.status IN ('auth_failed', 'error') AND "
            "OLD.status NOT IN ('auth_failed', 'error')\n"
            "            BEGIN\n"
            "                INSERT INTO events (account_id, type, occurred_at, data) VALUES "
            "(NEW.account_id, 'connection.sync_failed',\n"
            "                    coalesce(NEW.last_sync_at, strftime('%Y-%m-%dT%H:%M:%SZ', "
            "'now')), '{\"network\":' || json_quote(NEW.network) || ',\"status\":' || "
            "json_quote(NEW.status) || ',\"previousStatus\":' || json_quote(OLD.status) || "
            "',\"reasonCode\":' || json_quote(NEW.reason_code) || ',\"lastSuccessAt\":' || "
            "json_quote(NEW.last_success_at) || '}');\n"
            "            END"
        ),
    ),
    each(
        sqlite=(
            "CREATE TRIGGER events_connection_recovered AFTER UPDATE OF status ON networks\n"
            "            FOR EACH ROW WHEN OLD.status IN ('auth_failed', 'error') AND "
            "NEW.status IN ('ok', 'partial')\n"
            "            BEGIN\n"
            "                INSERT INTO events (account_id, type, occurred_at, data) VALUES "
            "(NEW.account_id, 'connection.recovered',\n"
            "                    coalesce(NEW.last_sync_at, strftime('%Y-%m-%dT%H:%M:%SZ', "
            "'now')), '{\"network\":' || json_quote(NEW.network) || ',\"status\":' || "
            "json_quote(NEW.status) || ',\"previousStatus\":' || json_quote(OLD.status) || "
            "',\"reasonCode\":' || json_quote(NEW.reason_code) || ',\"lastSuccessAt\":' || "
            "json_quote(NEW.last_success_at) || '}');\n"
            "            END"
        ),
    ),
    each(
        postgres=(
            "CREATE TRIGGER events_connection AFTER UPDATE OF status ON networks\n"
            "            FOR EACH ROW WHEN ((NEW.status IN ('auth_failed', 'error') AND "
            "OLD.status NOT IN ('auth_failed', 'error')) OR (OLD.status IN ('auth_failed', "
            "'error') AND NEW.status IN ('ok', 'partial')))\n"
            "            EXECUTE FUNCTION events_connection()"
        ),
    ),
)
