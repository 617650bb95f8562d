"""Step 10: payments the networks report, and their lines (store.payments).

- `payments`: one row per payment a network made to the account, keyed by the network's
  own id (a re-sync finds it stored and writes nothing). `amount` and `currency` are the
  payment as the network states it; `paid_at` its processing time. Ordered for the API by
  (paid_at DESC, id DESC), as commissions are by their transaction time.
- `payment_lines`: what makes a payment up, in the network's order (`position`): per
  advertiser (`program_external_id`, `program_name`) or per commission
  (`commission_external_id`), as the network gives them. The lines of a payment sum exactly
  to its amount: where the network's lines do not, the difference is one more line of kind
  `unallocated`, written with the others (store.payments.reconcile).
- `payment_lines_commission` finds the payments that name a commission: a commission so
  named is `paid` (evidence), and stays so when a later answer of its network says less.
"""

from __future__ import annotations

from store.schema.step import Step, both, each

STEP = Step(
    each(
        sqlite="""CREATE TABLE payments (
            id INTEGER PRIMARY KEY,
            account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            network TEXT NOT NULL,
            external_id TEXT NOT NULL,
            amount TEXT NOT NULL,
            currency TEXT NOT NULL,
            paid_at TEXT NOT NULL,
            method TEXT,
            imported_at TEXT NOT NULL,
            UNIQUE (account_id, network, external_id)
        )""",
        postgres="""CREATE TABLE payments (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            network text COLLATE "C" NOT NULL,
            external_id text COLLATE "C" NOT NULL,
            amount text NOT NULL,
            currency text NOT NULL,
            paid_at text COLLATE "C" NOT NULL,
            method text,
            imported_at text COLLATE "C" NOT NULL,
            UNIQUE (account_id, network, external_id)
        )""",
    ),
    both("""CREATE INDEX payments_page ON payments (account_id, paid_at DESC, id DESC)"""),
    both("""CREATE INDEX payments_network_page
            ON payments (account_id, network, paid_at DESC, id DESC)"""),
    each(
        sqlite="""CREATE TABLE payment_lines (
            payment_id INTEGER NOT NULL REFERENCES payments (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            kind TEXT NOT NULL CHECK (kind IN ('advertiser', 'commission', 'unallocated')),
            program_external_id TEXT,
            program_name TEXT,
            commission_external_id TEXT,
            amount TEXT NOT NULL,
            currency TEXT NOT NULL,
            PRIMARY KEY (payment_id, position)
        )""",
        postgres="""CREATE TABLE payment_lines (
            payment_id bigint NOT NULL REFERENCES payments (id) ON DELETE CASCADE,
            position integer NOT NULL CHECK (position >= 0),
            kind text COLLATE "C" NOT NULL
                CHECK (kind IN ('advertiser', 'commission', 'unallocated')),
            program_external_id text,
            program_name text,
            commission_external_id text COLLATE "C",
            amount text NOT NULL,
            currency text NOT NULL,
            PRIMARY KEY (payment_id, position)
        )""",
    ),
    both("""CREATE INDEX payment_lines_commission
            ON payment_lines (commission_external_id, payment_id)"""),
)
