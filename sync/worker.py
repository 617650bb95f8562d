"""The long-lived worker: syncs every due connection, a bounded number at a time.

Each connection is claimed with a lease before it syncs and released after, so several
workers can share one store. A slot frees as soon as its sync ends: one slow or failing
network never holds up the others. Stopping (SIGTERM, SIGINT) lets running syncs finish
within a grace period, then cancels them; every window they committed stands.

The store being unreachable is this deployment's outage, not the network's: it never
becomes a connection's outcome. Listing due connections waits for the store (it is asked
again every `poll_seconds`), and a sync the store's outage cut short (StoreUnavailable) is
run again, lease and all, as soon as the store answers, instead of waiting a whole
`interval`: its claim already stamped the attempt.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from accounts.statusmap import MapStatus
from store.base import StoreError, StoreUnavailable
from sync.clock import Clock, SystemClock
from sync.connectors import CONNECTORS
from sync.connectors.base import Connector
from sync.errors import InternalFault
from sync.events import SyncEvents, Unobserved
from sync.lease import Lease, LeaseLost
from sync.logs import CURRENT_CONNECTION, about, logger
from sync.model import Counts, Outcome, Reason, SyncReport
from sync.ports import Connection, Decrypt, Seal, SyncStore
from sync.runner import Syncer, SyncSettings, sync_connection, syncing

log = logger("sync.worker")

# The latest reports a worker keeps (for tests and a caller's look): it runs for months.
REPORTS_KEPT = 100


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    worker_id: str
    # A connection is due again this long after its last sync started.
    interval: dt.timedelta = dt.timedelta(hours=6)
    concurrency: int = 4
    lease_seconds: float = 3600.0
    # How often the store is asked for due connections while slots are free.
    poll_seconds: float = 30.0
    # How long running syncs may finish after a stop is asked.
    grace_seconds: float = 30.0


@dataclass
class Worker:
    store: SyncStore
    decrypt: Decrypt
    map_status: MapStatus
    config: WorkerConfig
    settings: SyncSettings = field(default_factory=SyncSettings)
    clock: Clock = field(default_factory=SystemClock)
    reports: deque[SyncReport] = field(default_factory=lambda: deque(maxlen=REPORTS_KEPT))
    # Syncs cut short by a store outage, to run again once the store answers.
    interrupted: dict[tuple[str, str], Connection] = field(default_factory=dict)
    # Who hears of polls, syncs and requests: the metrics and /healthz when served.
    events: SyncEvents = field(default_factory=Unobserved)
    # Seals credentials a network rotated (sync.storage.credential_sealer).
    seal: Seal | None = None
    # The connectors by network (a test's, with a network's documented limits changed).
    connectors: Mapping[str, Connector] = field(default_factory=lambda: CONNECTORS)

    async def run(self, stop: asyncio.Event) -> None:
        """Sync due connections until `stop` is set."""
        async with syncing(
            self.store,
            self.decrypt,
            self.map_status,
            self.settings,
            clock=self.clock,
            events=self.events,
            connectors=self.connectors,
            seal=self.seal,
        ) as syncer:
            running: dict[tuple[str, str], asyncio.Task[None]] = {}
            stopping = asyncio.create_task(stop.wait())
            try:
                while not stop.is_set():
                    await self._start_due(running, syncer)
                    waiting = {stopping, *running.values()}
                    await asyncio.wait(
                        waiting,
                        timeout=self.config.poll_seconds,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    for key in [k for k, t in running.items() if t.done()]:
                        running.pop(key)
            finally:
                stopping.cancel()
                await self._finish(running)

    async def _start_due(
        self,
        running: dict[tuple[str, str], asyncio.Task[None]],
        syncer: Syncer,
    ) -> None:
        free = self.config.concurrency - len(running)
        if free <= 0:
            return
        since = self.clock.now() - self.config.interval
        try:
            due = await self.store.due_connections(since, free + len(running))
        except Exception as exc:
            log.error("the store could not list due connections (%s)", type(exc).__name__)
            return
        self.events.polled()
        # The store answers again: what its outage cut short goes first. A run a documented
        # limit stopped is due again when the limit opens: the store keeps that moment,
        # for every worker (and this one after a restart).
        again = [c for k, c in self.interrupted.items() if k not in running]
        seen = {(c.account_uid, c.network) for c in again}
        due = [*again, *(c for c in due if (c.account_uid, c.network) not in seen)]
        for connection in due:
            key = (connection.account_uid, connection.network)
            if free <= 0:
                break
            if key in running:
                continue
            try:
                claimed = await self.store.claim(
                    connection, self.config.worker_id, self.config.lease_seconds
                )
            except Exception as exc:
                log.error(
                    "claiming %s failed (%s)",
                    connection,
                    type(exc).__name__,
                    extra=about(connection),
                )
                continue
            self.interrupted.pop(key, None)  # claimed or taken by another worker: done
            if claimed:
                running[key] = asyncio.create_task(self._sync(connection, syncer))
                free -= 1

    async def _sync(self, connection: Connection, syncer: Syncer) -> None:
        # The lease is renewed as the run goes (sync.lease): a backfill of any length
        # finishes in one run, and a lease another worker took stops it at once.
        lease = Lease(
            self.store, connection, self.config.worker_id, self.config.lease_seconds, self.clock
        )
        # This task's log lines name the connection (sync.logs); its own context, so the
        # setting ends with the task.
        CURRENT_CONNECTION.set(connection)
        self.events.started(connection)
        try:
            report = await sync_connection(syncer, connection, lease=lease)
            self.reports.append(report)
            self.events.finished(connection, report)
        except asyncio.CancelledError:
            raise
        except LeaseLost:
            # Another worker holds the connection: its outcome is that worker's to record.
            log.warning("sync %s stopped: another worker holds its lease now", connection)
        except StoreUnavailable:
            # Nothing recorded: the connection's outcome stays what the network last earned.
            log.warning(
                "sync %s cut short by a store outage; run again once it answers", connection
            )
            self.interrupted[(connection.account_uid, connection.network)] = connection
        except StoreError as exc:
            log.error("sync %s failed in the store (%s)", connection, type(exc).__name__)
        except Exception as exc:
            # The runner turns every failure of the network, or of reading its answers,
            # into an outcome: this is a fault of ours. Recorded as one, never left as the
            # last run's outcome.
            failed = type(exc).__name__
            log.error("sync %s failed (%s)", connection, failed)
            await self._record_fault(connection, InternalFault(f"the sync failed ({failed})"))
        finally:
            try:
                await asyncio.shield(self.store.release(connection, self.config.worker_id))
            except Exception as exc:
                log.error("releasing %s failed (%s)", connection, type(exc).__name__)
            finally:
                self.events.ended(connection)

    async def _record_fault(self, connection: Connection, fault: InternalFault) -> None:
        now = self.clock.now()
        report = SyncReport(
            Outcome.ERROR, Reason(fault.code, fault.message), Counts(), now, now, None
        )
        try:
            await self.store.record_outcome(connection, report)
        except Exception as exc:
            log.error("recording %s's outcome failed (%s)", connection, type(exc).__name__)
        else:
            self.reports.append(report)
            self.events.finished(connection, report)

    async def _finish(self, running: dict[tuple[str, str], asyncio.Task[None]]) -> None:
        tasks = set(running.values())
        if not tasks:
            return
        log.info(
            "stopping: waiting up to %gs for %d sync(s)", self.config.grace_seconds, len(tasks)
        )
        _, pending = await asyncio.wait(tasks, timeout=self.config.grace_seconds)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
