"""What the sync needs from the account store: the `SyncStore` protocol.

The account store implements it; the sync never touches storage otherwise. Its contract:

- `write_window` is one transaction: the rows (upserted by (account, network, external_id):
  inserting new ids, updating changed ones, leaving equal ones alone) and, when given, the
  connection's new position commit together or not at all. Writing the same rows again
  changes nothing. This is what makes a killed sync resumable without loss or duplicates.
- `claim` takes a lease on a connection for one worker (False when another worker holds an
  unexpired lease); `release` gives it back. A lease that expires frees the connection for
  another worker, so a crashed worker holds nothing for long.
- Credentials leave the store only encrypted (`load_credentials`); the caller's `Decrypt`
  opens them in memory for the one sync that needs them. Credentials a network rotated
  come back sealed (`Seal`) and replace the stored ones atomically (`replace_credentials`)
  before they are used.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from contract.payment import NewPayment
from sync.model import Position, SyncReport, Transaction, Window, WriteResult
from sync.spec import Rate


@dataclass(frozen=True, slots=True)
class Connection:
    """One account's connection to one network, as the store hands it to the sync."""

    account_uid: str
    network: str
    # The account's currency at the network, for networks whose records carry none (CJ).
    currency: str | None = None
    # How far back the first sync starts (None: the worker's default backfill).
    backfill: dt.timedelta | None = None

    def __str__(self) -> str:
        return f"{self.account_uid}/{self.network}"


# Opens a connection's stored credentials: (connection, ciphertext) -> the credential JSON.
# The connection is passed because a ciphertext is bound to its (account, network) row.
Decrypt = Callable[[Connection, bytes], Mapping[str, object]]
# Seals a connection's credential JSON for its row: the inverse of Decrypt.
Seal = Callable[[Connection, Mapping[str, str]], bytes]


class SyncStore(Protocol):
    """The account store, as the sync worker and `sync_connection` use it."""

    async def due_connections(
        self, not_synced_since: dt.datetime, limit: int
    ) -> Sequence[Connection]:
        """Up to `limit` connections that no unexpired lease holds and that are due: the
        next attempt a run recorded (`SyncReport.resume_at`) has come, or, with none
        planned, the last sync started before `not_synced_since` (or none did); oldest
        first."""
        ...

    async def claim(self, connection: Connection, worker_id: str, lease_seconds: float) -> bool:
        """Lease `connection` to `worker_id` for `lease_seconds`; False if another worker
        holds an unexpired lease. Claiming also marks the attempt (for due_connections)."""
        ...

    async def renew(self, connection: Connection, worker_id: str, lease_seconds: float) -> bool:
        """Extend `worker_id`'s lease on `connection` to `lease_seconds` from now; False when
        it holds the lease no more. Not an attempt: the connection's attempt time stays."""
        ...

    async def release(self, connection: Connection, worker_id: str) -> None:
        """End `worker_id`'s lease on `connection` (no effect if it holds none)."""
        ...

    async def load_credentials(self, connection: Connection) -> bytes:
        """The connection's encrypted credentials (never decrypted by the store)."""
        ...

    async def replace_credentials(self, connection: Connection, old: bytes, new: bytes) -> bool:
        """Swap the stored ciphertext `old` for `new` in one atomic step; False (nothing
        changed) when `old` is no longer what is stored (reconnected meanwhile)."""
        ...

    async def load_position(self, connection: Connection) -> Position | None:
        """The last committed position, None before the first committed window."""
        ...

    async def write_window(
        self,
        connection: Connection,
        window: Window,
        rows: Sequence[Transaction],
        position: Position | None,
    ) -> WriteResult:
        """Upsert `rows` and, when not None, set the position: one atomic, idempotent commit."""
        ...

    async def stored_payments(
        self, connection: Connection, external_ids: Sequence[str]
    ) -> set[str]:
        """Which of `external_ids` are stored already as the connection's payments."""
        ...

    async def write_payment(self, connection: Connection, payment: NewPayment) -> bool:
        """Store a payment with its lines (reconciled) and its event, once: False when it
        was stored already."""
        ...

    async def record_outcome(self, connection: Connection, report: SyncReport) -> None:
        """Record the run: outcome, reason (code and message), counts, lastSyncAt, and in
        the same commit its `resume_at` as the connection's next attempt (None: none
        planned), which every worker's `due_connections` then follows."""
        ...

    async def reserve_call(self, connection: Connection, rates: Sequence[Rate]) -> float:
        """Count one request to the connection's network now if it fits every one of
        `rates` over the requests every worker counted for it (0.0), else count nothing
        and return the seconds until it would fit. One atomic decision per request."""
        ...
