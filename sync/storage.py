"""The account store as the sync sees it: `AccountSyncStore` implements `sync.ports.SyncStore`
over any `store.AccountStore`, and `credential_opener` decrypts with the keyring.

The store knows nothing of windows or reports; this module turns them into its rows,
positions and outcomes, and back.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

import orjson

from accounts.crypto import decrypt_credentials, encrypt_credentials
from accounts.keyring import Keyring
from contract.payment import NewPayment
from store import AccountStore, ConnectionView, connections, payments
from sync.model import (
    Position,
    SyncReport,
    Transaction,
    Window,
    WriteResult,
    format_timestamp,
)
from sync.ports import Connection, Decrypt, Seal
from sync.spec import Rate


def connection_of(view: ConnectionView) -> Connection:
    """The sync's view of a stored connection."""
    return Connection(view.account_uid, view.network, currency=view.currency)


def resume_after(moment: dt.datetime) -> dt.datetime:
    """`moment` rounded up to the whole second the store keeps: rounded down, a worker
    would resume a moment before the limit opens, and wait there."""
    whole = moment.replace(microsecond=0)
    return whole if whole == moment else whole + dt.timedelta(seconds=1)


def parse_position(text: str | None) -> Position | None:
    """A stored position (a UTC timestamp), or None before the first committed window."""
    if text is None:
        return None
    return Position(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))


class AccountSyncStore:
    """`SyncStore` over an account store, for one worker (its leases carry `worker_id`)."""

    def __init__(self, store: AccountStore, worker_id: str) -> None:
        self.store = store
        self.worker_id = worker_id
        # The instant each listed connection was due for: its claim fails if another
        # worker attempted it since (listed before that worker's whole sync, claimed after).
        self._due_since: dict[tuple[str, str], str] = {}

    async def due_connections(
        self, not_synced_since: dt.datetime, limit: int
    ) -> Sequence[Connection]:
        since = format_timestamp(not_synced_since)
        views = await self.store.write(connections.due, since, limit)
        self._due_since = {(v.account_uid, v.network): since for v in views}
        return [connection_of(view) for view in views]

    async def claim(self, connection: Connection, worker_id: str, lease_seconds: float) -> bool:
        since = self._due_since.pop((connection.account_uid, connection.network), None)
        return await self.store.write(
            connections.claim,
            connection.account_uid,
            connection.network,
            worker_id,
            lease_seconds,
            attempted_before=since,
        )

    async def renew(self, connection: Connection, worker_id: str, lease_seconds: float) -> bool:
        return await self.store.write(
            connections.renew,
            connection.account_uid,
            connection.network,
            worker_id,
            lease_seconds,
        )

    async def release(self, connection: Connection, worker_id: str) -> None:
        await self.store.write(
            connections.release, connection.account_uid, connection.network, worker_id
        )

    async def load_credentials(self, connection: Connection) -> bytes:
        sealed = await self.store.write(
            connections.sealed_credentials, connection.account_uid, connection.network
        )
        return sealed.ciphertext

    async def replace_credentials(self, connection: Connection, old: bytes, new: bytes) -> bool:
        return await self.store.write(
            connections.replace_credentials,
            connection.account_uid,
            connection.network,
            old,
            new,
        )

    async def load_position(self, connection: Connection) -> Position | None:
        view = await self.store.read(connections.find, connection.account_uid, connection.network)
        return None if view is None else parse_position(view.position)

    async def write_window(
        self,
        connection: Connection,
        window: Window,
        rows: Sequence[Transaction],
        position: Position | None,
    ) -> WriteResult:
        result = await self.store.write(
            connections.write_window,
            connection.account_uid,
            connection.network,
            rows,
            None if position is None else format_timestamp(position.complete_through),
            self.worker_id,
        )
        return WriteResult(result.inserted, result.updated, result.unchanged)

    async def stored_payments(
        self, connection: Connection, external_ids: Sequence[str]
    ) -> set[str]:
        return await self.store.read(
            payments.stored_ids, connection.account_uid, connection.network, external_ids
        )

    async def write_payment(self, connection: Connection, payment: NewPayment) -> bool:
        return await self.store.write(
            payments.write, connection.account_uid, connection.network, payment
        )

    async def record_outcome(self, connection: Connection, report: SyncReport) -> None:
        reason = None if report.reason is None else (report.reason.code, report.reason.message)
        await self.store.write(
            connections.record_outcome,
            connection.account_uid,
            connection.network,
            report.outcome.value,
            reason,
            None if report.resume_at is None else format_timestamp(resume_after(report.resume_at)),
        )

    async def reserve_call(self, connection: Connection, rates: Sequence[Rate]) -> float:
        return await self.store.write(
            connections.reserve_call,
            connection.account_uid,
            connection.network,
            [(rate.requests, rate.seconds) for rate in rates],
        )

    async def close(self) -> None:
        await self.store.close()


def credential_opener(keyring: Keyring) -> Decrypt:
    """Opens a connection's ciphertext in memory into its credential JSON object."""

    def decrypt(connection: Connection, blob: bytes) -> Mapping[str, object]:
        plain = decrypt_credentials(keyring, connection.account_uid, connection.network, blob)
        value = orjson.loads(plain)
        if not isinstance(value, dict):
            raise ValueError("the stored credentials are not a JSON object")
        return value

    return decrypt


def credential_sealer(keyring: Keyring) -> Seal:
    """Seals a connection's credential JSON under the keyring's current secret."""

    def seal(connection: Connection, values: Mapping[str, str]) -> bytes:
        plain = orjson.dumps(dict(values))
        return encrypt_credentials(keyring, connection.account_uid, connection.network, plain)

    return seal
