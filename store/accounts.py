"""Operations on accounts, their capabilities and their API keys.

Run them through the store's doors: `await store.read(accounts.lookup_key, key_hash)`,
`await store.write(accounts.create, email, "pro")`.
"""

from __future__ import annotations

from collections.abc import Sequence

from contract import vocabulary as v
from store.base import (
    About,
    AccountView,
    CapabilityView,
    Conflict,
    KeyRecord,
    KeyView,
    NotFound,
    account_view,
    check_email,
    check_label,
    check_plan,
    key_view,
)
from store.core import Session, new_id

# The key's columns in KeyView order, its account's uid second.
_KEY_COLUMNS = "k.id, a.uid, k.prefix, k.label, k.scopes, k.created_at, k.revoked_at"


async def account_id(s: Session, uid: str) -> int:
    """The row id of account `uid`; NotFound when there is none."""
    found = await s.fetchval("SELECT id FROM accounts WHERE uid = ?", uid)
    if found is None:
        raise NotFound(f"no account {uid}", About.ACCOUNT)
    return int(found)


async def account_by_id(s: Session, row_id: int) -> AccountView | None:
    """The account with row id `row_id`, capabilities and networks included."""
    row = await s.fetchrow(
        "SELECT uid, email, plan, suspended, created_at FROM accounts WHERE id = ?", row_id
    )
    if row is None:
        return None
    capabilities = await s.fetch(
        "SELECT name, enabled, configured, enabled_at FROM capabilities WHERE account_id = ?",
        row_id,
    )
    # An import-only connection's covered period: the first and last transaction date
    # stored (two ends of the commissions_network_page index), never read for the others.
    networks = await s.fetch(
        "SELECT network, status, connected_at, last_sync_at, accounts, programs, "
        "transactions, last_attempt_at, last_success_at, reason_code, sync_position, "
        "next_attempt_at, import_only, last_import_at, "
        "CASE WHEN import_only THEN (SELECT min(c.transacted_at) FROM commissions c "
        "WHERE c.account_id = n.account_id AND c.network = n.network) END, "
        "CASE WHEN import_only THEN (SELECT max(c.transacted_at) FROM commissions c "
        "WHERE c.account_id = n.account_id AND c.network = n.network) END "
        "FROM networks n WHERE account_id = ? ORDER BY network",
        row_id,
    )
    return account_view(row, capabilities, networks)


async def lookup_key(s: Session, key_hash: str) -> KeyRecord | None:
    """The active (not revoked) key with this hash and its account, or None."""
    row = await s.fetchrow(
        f"SELECT {_KEY_COLUMNS}, a.id FROM api_keys k JOIN accounts a ON a.id = k.account_id "
        "WHERE k.key_hash = ? AND k.revoked_at IS NULL",
        key_hash,
    )
    if row is None:
        return None
    account = await account_by_id(s, row[7])
    assert account is not None  # the foreign key guarantees it
    return KeyRecord(key=key_view(tuple(row)[:7]), account=account)


async def find(s: Session, uid: str) -> AccountView | None:
    """Account `uid` with its capabilities and networks, or None."""
    row_id = await s.fetchval("SELECT id FROM accounts WHERE uid = ?", uid)
    return None if row_id is None else await account_by_id(s, row_id)


async def list_uids(s: Session) -> list[tuple[str, str, bool, str | None]]:
    """Every account's (uid, plan, suspended, email), oldest first."""
    rows = await s.fetch("SELECT uid, plan, suspended, email FROM accounts ORDER BY id")
    return [(str(r[0]), str(r[1]), bool(r[2]), r[3]) for r in rows]


async def list_keys(s: Session, account_uid: str) -> list[KeyView]:
    """Every key of an account, oldest first; NotFound for an unknown account."""
    rows = await s.fetch(
        "SELECT id, prefix, label, scopes, created_at, revoked_at FROM api_keys "
        "WHERE account_id = ? ORDER BY created_at, id",
        await account_id(s, account_uid),
    )
    return [key_view((row[0], account_uid, *tuple(row)[1:])) for row in rows]


async def create(s: Session, email: str | None, plan: str, *, uid: str | None = None) -> str:
    """Create an account (every capability disabled, never enabled); return its uid."""
    check_plan(plan)
    check_email(email)
    uid = uid or new_id("acc")
    row_id = await s.fetchval(
        "INSERT INTO accounts (uid, email, plan, suspended, created_at) "
        "VALUES (?, ?, ?, false, ?) RETURNING id",
        uid,
        email,
        plan,
        s.now(),
    )
    await s.executemany(
        "INSERT INTO capabilities (account_id, name, enabled, configured, enabled_at) "
        "VALUES (?, ?, false, false, NULL)",
        [(row_id, name) for name in v.CAPABILITIES],
    )
    return uid


async def set_plan(s: Session, uid: str, plan: str) -> None:
    """Move account `uid` to `plan`."""
    check_plan(plan)
    if not await s.execute("UPDATE accounts SET plan = ? WHERE uid = ?", plan, uid):
        raise NotFound(f"no account {uid}", About.ACCOUNT)


async def set_suspended(s: Session, uid: str, suspended: bool) -> None:
    """Suspend account `uid`, or lift its suspension."""
    if not await s.execute("UPDATE accounts SET suspended = ? WHERE uid = ?", bool(suspended), uid):
        raise NotFound(f"no account {uid}", About.ACCOUNT)


async def set_capability(s: Session, uid: str, name: str, enabled: bool) -> CapabilityView:
    """Enable a capability (enabled_at now, configured from then on) or disable it (both kept)."""
    if name not in v.CAPABILITIES:
        raise ValueError(f"capability must be one of: {', '.join(v.CAPABILITIES)}")
    row_id = await account_id(s, uid)
    returning = "RETURNING enabled, configured, enabled_at"
    if enabled:
        row = await s.fetchrow(
            "UPDATE capabilities SET enabled = true, configured = true, enabled_at = ? "
            f"WHERE account_id = ? AND name = ? {returning}",
            s.now(),
            row_id,
            name,
        )
    else:
        row = await s.fetchrow(
            f"UPDATE capabilities SET enabled = false WHERE account_id = ? AND name = ? {returning}",
            row_id,
            name,
        )
    return CapabilityView(bool(row[0]), bool(row[1]), row[2])


async def create_key(
    s: Session, account_uid: str, key_hash: str, prefix: str, label: str, scopes: Sequence[str]
) -> KeyView:
    """Store a new key (its hash only) of an existing account."""
    if not scopes or any(scope not in v.KEY_SCOPES for scope in scopes):
        raise ValueError(f"scopes must be among: {', '.join(v.KEY_SCOPES)}")
    check_label(label)
    key = KeyView(new_id("key"), account_uid, prefix, label, tuple(scopes), s.now(), None)
    await s.execute(
        "INSERT INTO api_keys (id, account_id, key_hash, prefix, label, scopes, "
        "created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
        key.id,
        await account_id(s, key.account_uid),
        key_hash,
        key.prefix,
        key.label,
        " ".join(key.scopes),
        key.created_at,
    )
    return key


async def revoke_key(s: Session, prefix_or_id: str) -> KeyView:
    """Revoke the one key with this id or prefix (a revoked one stays as it was; Conflict
    when a prefix matches several keys)."""
    lock = " FOR UPDATE OF k" if s.dialect.concurrent_writes else ""
    rows = await s.fetch(
        f"SELECT {_KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id "
        f"WHERE k.id = ? OR k.prefix = ? ORDER BY k.id{lock}",
        prefix_or_id,
        prefix_or_id,
    )
    if not rows:
        raise NotFound(f"no key with id or prefix {prefix_or_id}", About.KEY)
    if len(rows) > 1:
        ids = ", ".join(r[0] for r in rows)
        raise Conflict(f"prefix {prefix_or_id} matches several keys ({ids}); use the id", About.KEY)
    key = key_view(tuple(rows[0]))
    if key.revoked_at is not None:
        return key
    now = s.now()
    await s.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ?", now, key.id)
    return key_view((*tuple(rows[0])[:6], now))
