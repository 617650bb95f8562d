"""Step 2: the sync worker's state per connection (its committed position, its lease, its
last attempt and the reason of its outcome), and the index that answers `updatedSince`."""

from __future__ import annotations

from store.schema.step import Step, both, each

STEP = Step(
    each(
        sqlite="ALTER TABLE networks ADD COLUMN currency TEXT",
        postgres='ALTER TABLE networks ADD COLUMN currency text COLLATE "C"',
    ),
    each(
        sqlite="ALTER TABLE networks ADD COLUMN sync_position TEXT",
        postgres='ALTER TABLE networks ADD COLUMN sync_position text COLLATE "C"',
    ),
    each(
        sqlite="ALTER TABLE networks ADD COLUMN lease_owner TEXT",
        postgres='ALTER TABLE networks ADD COLUMN lease_owner text COLLATE "C"',
    ),
    each(
        sqlite="ALTER TABLE networks ADD COLUMN lease_expires_at TEXT",
        postgres='ALTER TABLE networks ADD COLUMN lease_expires_at text COLLATE "C"',
    ),
    each(
        sqlite="ALTER TABLE networks ADD COLUMN last_attempt_at TEXT",
        postgres='ALTER TABLE networks ADD COLUMN last_attempt_at text COLLATE "C"',
    ),
    each(
        sqlite="ALTER TABLE networks ADD COLUMN reason_code TEXT",
        postgres='ALTER TABLE networks ADD COLUMN reason_code text COLLATE "C"',
    ),
    each(
        sqlite="ALTER TABLE networks ADD COLUMN reason_message TEXT",
        postgres='ALTER TABLE networks ADD COLUMN reason_message text COLLATE "C"',
    ),
    both("CREATE INDEX commissions_updated ON commissions (account_id, updated_at)"),
)
