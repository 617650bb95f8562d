"""A run's hold on its connection: the lease is renewed while the run works, and a lease
another worker has taken stops the run at once.

A run renews before each request and each write once a third of the lease has passed, and
waits no longer than a third of it at a time (sync.http `max_wait`): the lease never ends
while its run still works, however long a backfill takes. When the store says another
worker holds the connection now, `LeaseLost` ends the run where it is: it writes nothing
more and records no outcome (the connection is the other worker's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sync.clock import Clock
from sync.ports import Connection, SyncStore


class LeaseLost(Exception):  # noqa: N818 - named for what happened
    """Another worker holds the connection now: the run stops and records nothing."""


@dataclass
class Lease:
    """`worker_id`'s lease of `connection` for `seconds`, taken (claimed) just now."""

    store: SyncStore
    connection: Connection
    worker_id: str
    seconds: float
    clock: Clock
    renewed: float = field(init=False)

    def __post_init__(self) -> None:
        self.renewed = self.clock.monotonic()

    @property
    def longest_wait(self) -> float:
        """The longest one wait of the run may last: the lease outlasts it."""
        return self.seconds / 3

    async def keep(self) -> None:
        """Renew the lease once a third of it has passed; LeaseLost when the store gives it
        to no one but another worker."""
        now = self.clock.monotonic()
        if now - self.renewed < self.seconds / 3:
            return
        if not await self.store.renew(self.connection, self.worker_id, self.seconds):
            raise LeaseLost(f"{self.connection}: another worker holds the lease now")
        self.renewed = now
