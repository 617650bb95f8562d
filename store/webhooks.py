"""Webhook endpoints and their deliveries: the operations on the tables of schema step 6
(store/schema/v006_webhooks.py).

An operator registers endpoints per account (`affdir-admin webhook`); the delivery worker
(`affdir-webhooks`, the `webhooks` package) enqueues each endpoint's events, claims the
due deliveries under a lease, sends them and records each attempt's outcome here.

- `webhook_endpoints`: one row per endpoint: its public id (`whk_...`), account, URL, when
  it was disabled and why, until when a rotated-out secret still signs, and
  `enqueued_through`, the id of the last event of its account it has enqueued: an
  endpoint gets the events recorded after it was added (`replay` re-enqueues older ones).
- `webhook_secrets`: the signing secret and, during a rotation's overlap, the previous one,
  as ciphertext only (sealed like network credentials, bound to the endpoint), apart from
  what anything may read: a read connection never selects this table.
- `webhook_deliveries`: one row per (endpoint, event): attempts so far, when the next one
  is due (NULL once delivered or given up), the last attempt's outcome, and the lease of
  the worker sending it. A worker killed mid-send leaves its lease to expire; the delivery
  is then due again, with the same event and so the same `webhook-id`.

Per-account event order is safe to follow by id: the event triggers serialise one
account's event writes (store.events), so a snapshot that shows an event of an
account shows every lower one of it.

Operations are plain `async def op(s: Session, ...)`, called through the store's doors
(`store.read(op, ...)`, `store.write(op, ...)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from store.accounts import account_id
from store.base import About, Conflict, NotFound
from store.core import Session
from store.publicids import PublicIds

# Endpoints an account may have: each is a stream of requests the worker keeps up.
MAX_ENDPOINTS_PER_ACCOUNT = 20
MAX_URL_LENGTH = 2048
MAX_REASON_LENGTH = 500


# --- What the operations return ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EndpointView:
    """An endpoint as the operator sees it: never its secret."""

    id: str
    account_uid: str
    url: str
    created_at: str
    disabled_at: str | None
    disabled_reason: str | None
    # Until then the previous secret signs too (a rotation's overlap); None: no overlap.
    previous_secret_expires_at: str | None
    pending: int
    delivered: int
    failed: int

    @property
    def state(self) -> str:
        return "enabled" if self.disabled_at is None else "disabled"


@dataclass(frozen=True, slots=True)
class DeliveryView:
    """One delivery of an event to an endpoint and where its attempts stand."""

    event_id: str
    event_type: str
    enqueued_at: str
    attempts: int
    next_attempt_at: str | None
    last_attempt_at: str | None
    last_status: int | None
    last_reason: str | None
    delivered_at: str | None
    failed_at: str | None

    @property
    def state(self) -> str:
        if self.delivered_at is not None:
            return "delivered"
        return "failed" if self.failed_at is not None else "pending"


@dataclass(frozen=True, slots=True)
class SealedSecrets:
    """An endpoint's secrets as stored: the current one and, during an overlap, the
    previous one with the moment it stops signing."""

    endpoint_uid: str
    account_uid: str
    ciphertext: bytes
    previous_ciphertext: bytes | None
    previous_expires_at: str | None


@dataclass(frozen=True, slots=True)
class Target:
    """Where a claimed batch goes: the endpoint, its URL and its sealed secrets."""

    endpoint_row: int
    url: str
    secrets: SealedSecrets


@dataclass(frozen=True, slots=True)
class Job:
    """One claimed delivery: the event it carries, as the feed lists it, and its attempts
    so far."""

    delivery_row: int
    event_id: str  # the event's public id (store.publicids)
    event_type: str
    occurred_at: str
    data: str  # the event's JSON text, as the feed sends it (PublicIds.event_data)
    attempts: int
    first_attempt_at: str | None


@dataclass(frozen=True, slots=True)
class Claim:
    target: Target
    jobs: tuple[Job, ...]


# --- Endpoints --------------------------------------------------------------------------

_ENDPOINT_COLUMNS = (
    "w.uid, a.uid, w.url, w.created_at, w.disabled_at, w.disabled_reason, "
    "w.previous_secret_expires_at, "
    "(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id "
    "AND d.delivered_at IS NULL AND d.failed_at IS NULL), "
    "(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id "
    "AND d.delivered_at IS NOT NULL), "
    "(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id "
    "AND d.failed_at IS NOT NULL)"
)
_ENDPOINT_FROM = "FROM webhook_endpoints w JOIN accounts a ON a.id = w.account_id"


def _endpoint(row: Any) -> EndpointView:
    values = tuple(row)
    return EndpointView(*values[:7], *(int(n) for n in values[7:]))


async def endpoint_row(s: Session, uid: str) -> int:
    """The row id of endpoint `uid`; NotFound when there is none."""
    found = await s.fetchval("SELECT id FROM webhook_endpoints WHERE uid = ?", uid)
    if found is None:
        raise NotFound(f"no webhook endpoint {uid}", About.WEBHOOK)
    return int(found)


async def find_endpoint(s: Session, uid: str) -> EndpointView | None:
    """Endpoint `uid`, or None."""
    row = await s.fetchrow(f"SELECT {_ENDPOINT_COLUMNS} {_ENDPOINT_FROM} WHERE w.uid = ?", uid)
    return None if row is None else _endpoint(row)


async def get_endpoint(s: Session, uid: str) -> EndpointView:
    """Endpoint `uid`; NotFound when there is none."""
    found = await find_endpoint(s, uid)
    if found is None:
        raise NotFound(f"no webhook endpoint {uid}", About.WEBHOOK)
    return found


async def list_endpoints(s: Session, account_uid: str | None = None) -> list[EndpointView]:
    """Every endpoint, or one account's (NotFound for an unknown account), oldest first."""
    if account_uid is None:
        rows = await s.fetch(f"SELECT {_ENDPOINT_COLUMNS} {_ENDPOINT_FROM} ORDER BY w.id")
    else:
        rows = await s.fetch(
            f"SELECT {_ENDPOINT_COLUMNS} {_ENDPOINT_FROM} WHERE w.account_id = ? ORDER BY w.id",
            await account_id(s, account_uid),
        )
    return [_endpoint(row) for row in rows]


async def add_endpoint(
    s: Session, account_uid: str, uid: str, url: str, ciphertext: bytes, now: str
) -> EndpointView:
    """A new endpoint of the account, which gets the events recorded from now on."""
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"the URL is longer than {MAX_URL_LENGTH} characters")
    owner = await account_id(s, account_uid)
    count = await s.fetchval("SELECT count(*) FROM webhook_endpoints WHERE account_id = ?", owner)
    if int(count) >= MAX_ENDPOINTS_PER_ACCOUNT:
        raise Conflict(
            f"{account_uid} has {MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints already, the most "
            "an account may have",
            About.WEBHOOK,
        )
    latest = await s.fetchval("SELECT coalesce(max(id), 0) FROM events WHERE account_id = ?", owner)
    row = await s.fetchval(
        "INSERT INTO webhook_endpoints (uid, account_id, url, created_at, enqueued_through) "
        "VALUES (?, ?, ?, ?, ?) RETURNING id",
        uid,
        owner,
        url,
        now,
        int(latest),
    )
    await s.execute(
        "INSERT INTO webhook_secrets (endpoint_id, ciphertext, updated_at) VALUES (?, ?, ?)",
        row,
        ciphertext,
        now,
    )
    return await get_endpoint(s, uid)


async def disable_endpoint(s: Session, uid: str, reason: str, now: str) -> EndpointView:
    """Stop delivering to the endpoint, recording why (one already disabled keeps its
    first reason). Its pending deliveries wait; enabling it sends them."""
    await endpoint_row(s, uid)
    await s.execute(
        "UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ? "
        "WHERE uid = ? AND disabled_at IS NULL",
        now,
        reason[:MAX_REASON_LENGTH],
        uid,
    )
    return await get_endpoint(s, uid)


async def enable_endpoint(s: Session, uid: str, now: str) -> EndpointView:
    """Deliver to the endpoint again: its pending deliveries are due now, each with a
    fresh retry period, and the events recorded while it was disabled follow."""
    row = await endpoint_row(s, uid)
    await s.execute(
        "UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL WHERE id = ?",
        row,
    )
    await s.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = ?, first_attempt_at = NULL "
        "WHERE endpoint_id = ? AND delivered_at IS NULL AND failed_at IS NULL",
        now,
        row,
    )
    return await get_endpoint(s, uid)


async def sealed_secrets(s: Session, uid: str) -> SealedSecrets:
    """The endpoint's secrets as stored (a write transaction: read connections never
    select them)."""
    row = await s.fetchrow(
        "SELECT w.uid, a.uid, k.ciphertext, k.previous_ciphertext, w.previous_secret_expires_at "
        "FROM webhook_endpoints w JOIN accounts a ON a.id = w.account_id "
        "JOIN webhook_secrets k ON k.endpoint_id = w.id WHERE w.uid = ?",
        uid,
    )
    if row is None:
        raise NotFound(f"no webhook endpoint {uid}", About.WEBHOOK)
    return _sealed(row)


def _sealed(row: Any) -> SealedSecrets:
    uid, account, current, previous, expires = tuple(row)
    return SealedSecrets(
        uid, account, bytes(current), None if previous is None else bytes(previous), expires
    )


async def rotate_secret(
    s: Session, uid: str, ciphertext: bytes, previous_expires_at: str | None, now: str
) -> EndpointView:
    """Make `ciphertext` the signing secret; the one it replaces signs too until
    `previous_expires_at` (None: not at all). A rotation during an overlap ends that one."""
    row = await endpoint_row(s, uid)
    previous = "NULL" if previous_expires_at is None else "ciphertext"
    await s.execute(
        f"UPDATE webhook_secrets SET previous_ciphertext = {previous}, ciphertext = ?, "
        "updated_at = ? WHERE endpoint_id = ?",
        ciphertext,
        now,
        row,
    )
    await s.execute(
        "UPDATE webhook_endpoints SET previous_secret_expires_at = ? WHERE id = ?",
        previous_expires_at,
        row,
    )
    return await get_endpoint(s, uid)


async def replay_since(s: Session, uid: str, since: str, now: str) -> int:
    """Enqueue again every kept event of the endpoint's account recorded at or after
    `since`, up to what it has enqueued (the later ones come in order anyway); a delivered
    or given-up one starts over. Returns how many."""
    row = await endpoint_row(s, uid)
    events = await s.fetch(
        "SELECT e.id FROM events e JOIN webhook_endpoints w ON w.account_id = e.account_id "
        "WHERE w.id = ? AND e.occurred_at >= ? AND e.id <= w.enqueued_through ORDER BY e.id",
        row,
        since,
    )
    await s.executemany(
        "INSERT INTO webhook_deliveries (endpoint_id, event_id, enqueued_at, attempts, "
        "next_attempt_at) VALUES (?, ?, ?, 0, ?) ON CONFLICT (endpoint_id, event_id) DO UPDATE "
        "SET enqueued_at = excluded.enqueued_at, attempts = 0, next_attempt_at = "
        "excluded.next_attempt_at, first_attempt_at = NULL, delivered_at = NULL, "
        "failed_at = NULL",
        [(row, event[0], now, now) for event in events],
    )
    return len(events)


@dataclass(frozen=True, slots=True)
class SealedRow:
    """An endpoint's stored secrets, for re-encryption under the current service secret."""

    row: int
    secrets: SealedSecrets


async def sealed_after(s: Session, after: int, limit: int) -> list[SealedRow]:
    """Stored secrets in endpoint order, strictly after row `after` (a write transaction:
    read connections never select them)."""
    rows = await s.fetch(
        "SELECT w.id, w.uid, a.uid, k.ciphertext, k.previous_ciphertext, "
        "w.previous_secret_expires_at FROM webhook_endpoints w "
        "JOIN accounts a ON a.id = w.account_id JOIN webhook_secrets k ON k.endpoint_id = w.id "
        "WHERE w.id > ? ORDER BY w.id LIMIT ?",
        after,
        limit,
    )
    return [SealedRow(int(r[0]), _sealed(tuple(r)[1:])) for r in rows]


async def replace_sealed(
    s: Session, row: int, old: SealedSecrets, current: bytes, previous: bytes | None, now: str
) -> bool:
    """Compare and set: secrets rotated meanwhile keep their new ciphertexts."""
    same_previous = (
        "previous_ciphertext IS NULL"
        if old.previous_ciphertext is None
        else "previous_ciphertext = ?"
    )
    return bool(
        await s.execute(
            "UPDATE webhook_secrets SET ciphertext = ?, previous_ciphertext = ?, updated_at = ? "
            f"WHERE endpoint_id = ? AND ciphertext = ? AND {same_previous}",
            current,
            previous,
            now,
            row,
            old.ciphertext,
            *(() if old.previous_ciphertext is None else (old.previous_ciphertext,)),
        )
    )


# --- Deliveries -------------------------------------------------------------------------


async def enqueue_events(s: Session, now: str, limit: int) -> int:
    """For each enabled endpoint, a delivery of each event of its account after its
    cursor, `limit` events per endpoint at most; the cursors move past them. Returns how
    many deliveries were made."""
    made = 0
    # Only the endpoints with something new: one seek of events_account each.
    endpoints = await s.fetch(
        "SELECT w.id, w.account_id, w.enqueued_through FROM webhook_endpoints w "
        "WHERE w.disabled_at IS NULL AND EXISTS (SELECT 1 FROM events e "
        "WHERE e.account_id = w.account_id AND e.id > w.enqueued_through) ORDER BY w.id"
    )
    for row, owner, through in endpoints:
        events = await s.fetch(
            "SELECT id FROM events WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?",
            owner,
            through,
            limit,
        )
        if not events:
            continue
        await s.executemany(
            "INSERT INTO webhook_deliveries (endpoint_id, event_id, enqueued_at, attempts, "
            "next_attempt_at) VALUES (?, ?, ?, 0, ?) "
            "ON CONFLICT (endpoint_id, event_id) DO NOTHING",
            [(row, event[0], now, now) for event in events],
        )
        await s.execute(
            "UPDATE webhook_endpoints SET enqueued_through = ? WHERE id = ?", events[-1][0], row
        )
        made += len(events)
    return made


# A delivery a worker may take: due, not leased (or its lease ran out), of an enabled
# endpoint.
_CLAIMABLE = "d.next_attempt_at <= ? AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ?)"


async def due_endpoints(s: Session, now: str, limit: int) -> list[int]:
    """Row ids of enabled endpoints with a delivery a worker may take now, the one whose
    delivery has waited longest first (no endpoint waits behind others' steady work)."""
    rows = await s.fetch(
        "SELECT d.endpoint_id FROM webhook_deliveries d "
        "JOIN webhook_endpoints w ON w.id = d.endpoint_id "
        f"WHERE {_CLAIMABLE} AND w.disabled_at IS NULL "
        "GROUP BY d.endpoint_id ORDER BY min(d.next_attempt_at), d.endpoint_id LIMIT ?",
        now,
        now,
        limit,
    )
    return [int(row[0]) for row in rows]


async def claim_deliveries(
    s: Session,
    endpoint: int,
    worker: str,
    now: str,
    lease_until: str,
    limit: int,
    ids: PublicIds,
) -> Claim | None:
    """Lease up to `limit` of the endpoint's claimable deliveries to `worker`, the oldest
    due first, their events in public form (`ids`, the store's); None when the endpoint is
    disabled or gone."""
    target = await s.fetchrow(
        "SELECT w.id, w.url, w.uid, a.uid, k.ciphertext, k.previous_ciphertext, "
        "w.previous_secret_expires_at FROM webhook_endpoints w "
        "JOIN accounts a ON a.id = w.account_id JOIN webhook_secrets k ON k.endpoint_id = w.id "
        "WHERE w.id = ? AND w.disabled_at IS NULL",
        endpoint,
    )
    if target is None:
        return None
    # Workers side by side skip each other's rows rather than wait for them.
    lock = " FOR UPDATE SKIP LOCKED" if s.dialect.concurrent_writes else ""
    claimed = await s.fetch(
        "UPDATE webhook_deliveries SET lease_owner = ?, lease_expires_at = ? WHERE id IN ("
        f"SELECT d.id FROM webhook_deliveries d WHERE d.endpoint_id = ? AND {_CLAIMABLE} "
        f"ORDER BY d.next_attempt_at, d.id LIMIT ?{lock}) "
        "RETURNING id, event_id, attempts, first_attempt_at",
        worker,
        lease_until,
        endpoint,
        now,
        now,
        limit,
    )
    jobs = []
    for delivery, event, attempts, first in sorted(claimed, key=lambda r: int(r[0])):
        found = await s.fetchrow("SELECT type, occurred_at, data FROM events WHERE id = ?", event)
        if found is None:  # pruned meanwhile: its delivery went with it (cascade)
            continue
        event_type, occurred_at, data = tuple(found)
        jobs.append(
            Job(
                int(delivery),
                ids.event(int(event)),
                event_type,
                occurred_at,
                ids.event_data(data),
                int(attempts),
                first,
            )
        )
    row, url, *secrets = tuple(target)
    return Claim(Target(int(row), url, _sealed(secrets)), tuple(jobs))


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one attempt came to: the HTTP status if there was an answer, or the reason
    there was none; `delivered` for a 2xx."""

    status: int | None
    reason: str | None
    delivered: bool


async def record_attempt(
    s: Session,
    delivery: int,
    attempt: Attempt,
    attempted_at: str,
    now: str,
    *,
    next_attempt_at: str | None,
    give_up: str | None = None,
    disable: str | None = None,
) -> None:
    """Record an attempt of a delivery, made at `attempted_at` and ended `now`, and release
    its lease. Delivered: done. Otherwise
    due again at `next_attempt_at`, or with `give_up` failed for good and its endpoint
    disabled with that reason; `disable` disables the endpoint (a 410) and keeps the
    delivery pending."""
    reason = None if attempt.reason is None else attempt.reason[:MAX_REASON_LENGTH]
    if attempt.delivered:
        state = "delivered_at = ?, next_attempt_at = NULL"
        params: list[Any] = [now]
    elif give_up is not None:
        state = "failed_at = ?, next_attempt_at = NULL"
        params = [now]
    else:
        state = "next_attempt_at = ?"
        params = [next_attempt_at]
    endpoint = await s.fetchval(
        f"UPDATE webhook_deliveries SET {state}, attempts = attempts + 1, "
        "first_attempt_at = coalesce(first_attempt_at, ?), last_attempt_at = ?, "
        "last_status = ?, last_reason = ?, lease_owner = NULL, lease_expires_at = NULL "
        "WHERE id = ? AND delivered_at IS NULL AND failed_at IS NULL RETURNING endpoint_id",
        *params,
        attempted_at,
        attempted_at,
        attempt.status,
        reason,
        delivery,
    )
    why = give_up or disable
    if endpoint is not None and why is not None:
        await s.execute(
            "UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ? "
            "WHERE id = ? AND disabled_at IS NULL",
            now,
            why[:MAX_REASON_LENGTH],
            endpoint,
        )


async def release_leases(s: Session, worker: str, endpoint: int | None = None) -> int:
    """Give up `worker`'s leases (a worker stopping), or those on one endpoint's
    deliveries: they are due again at once."""
    only = "" if endpoint is None else " AND endpoint_id = ?"
    return await s.execute(
        "UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL "
        f"WHERE lease_owner = ? AND delivered_at IS NULL AND failed_at IS NULL{only}",
        worker,
        *(() if endpoint is None else (endpoint,)),
    )


async def recent_deliveries(s: Session, uid: str, limit: int, ids: PublicIds) -> list[DeliveryView]:
    """The endpoint's latest `limit` deliveries, newest first, with their events' public
    ids (`ids`, the store's) (NotFound: no endpoint)."""
    row = await endpoint_row(s, uid)
    rows = await s.fetch(
        "SELECT d.event_id, e.type, d.enqueued_at, d.attempts, d.next_attempt_at, "
        "d.last_attempt_at, d.last_status, d.last_reason, d.delivered_at, d.failed_at "
        "FROM webhook_deliveries d JOIN events e ON e.id = d.event_id "
        "WHERE d.endpoint_id = ? ORDER BY d.id DESC LIMIT ?",
        row,
        limit,
    )
    views = []
    for row_values in rows:
        event, kind, enqueued, attempts, *rest = tuple(row_values)
        views.append(DeliveryView(ids.event(int(event)), kind, enqueued, int(attempts), *rest))
    return views


async def delivery_states(s: Session, uid: str) -> Sequence[tuple[int, str]]:
    """(event seq, state) of every delivery of the endpoint, in event order (tests)."""
    row = await endpoint_row(s, uid)
    rows = await s.fetch(
        "SELECT event_id, CASE WHEN delivered_at IS NOT NULL THEN 'delivered' "
        "WHEN failed_at IS NOT NULL THEN 'failed' ELSE 'pending' END "
        "FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY event_id",
        row,
    )
    return [(int(r[0]), str(r[1])) for r in rows]
