"""Prometheus metrics of the sync worker, in a registry of its own, fed by its events.

`SyncMetrics` is the worker's `SyncEvents` listener (sync.events) when `--metrics-port` is
set: it counts runs by network and outcome, rows written, requests and retries per
network, rate-limit waits, and marks the worker's progress for /healthz (sync.health).
What is read rather than counted is collected at scrape time: the age of each
connection's last successful sync, the seconds since the last progress, the version.
Every name starts with `affdir_sync_`, except `affdir_build_info`, which the edge exports
too, and the standard `process_*` and `python_*` metrics. docs/sync.md lists them.

No label carries a credential: networks, outcomes, HTTP statuses, error codes, and the
account uid of a connection (an identifier, never a secret).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from contract.version import BUILD_INFO_METRIC, VERSION
from store import AccountStore, connections
from store.base import StoreError
from sync.health import Progress
from sync.logs import logger
from sync.model import Outcome, SyncReport
from sync.ports import Connection

log = logger("sync.metrics")

Key = tuple[str, str]  # (account uid, network)
# What a run counts as when it ended without recording an outcome (the store failed or
# went away mid-run, or the worker stopped): not the network's doing.
NOT_RECORDED = "not_recorded"
STORE_READ_TIMEOUT = 2.0  # seconds a scrape waits for the store's connection list
RUN_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200)
WAIT_BUCKETS = (0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)


def parse_instant(text: str | None) -> float | None:
    """A stored UTC timestamp (`2026-01-31T12:00:00Z`) as epoch seconds; None if unreadable."""
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass
class Successes:
    """When each connection last synced ok, as this process knows it."""

    started_at: float  # the worker's start (wall clock): a lower bound for the unknown
    seen: dict[Key, float] = field(default_factory=dict)  # ok runs of this process
    # Per the store's last list: lastSyncAt when the last run was ok, else None. None
    # before the store was first read.
    stored: dict[Key, float | None] | None = None

    def ages(self, now: float) -> dict[Key, float]:
        """Seconds since each connection's last ok sync: the later of this process's own
        and the store's; for a connection with neither, the seconds since the worker
        started (it has not succeeded since). The connections are the store's (one
        disconnected since drops out), or those seen before the store was read."""
        stored = self.stored or {}
        out = {}
        for key in self.seen if self.stored is None else stored:
            known = [t for t in (self.seen.get(key), stored.get(key)) if t is not None]
            out[key] = max(0.0, now - (max(known) if known else self.started_at))
        return out


class ReadCollector(Collector):
    """The gauges read at scrape time."""

    def __init__(self, metrics: SyncMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            BUILD_INFO_METRIC, "The affdir version this process runs (1).", labels=["version"]
        )
        info.add_metric([VERSION], 1)
        yield info
        yield GaugeMetricFamily(
            "affdir_sync_progress_age_seconds",
            "Seconds since the worker last made progress (GET /healthz fails past --stall-seconds).",
            value=self.metrics.progress.seconds_since(),
        )
        ages = GaugeMetricFamily(
            "affdir_sync_last_success_age_seconds",
            "Seconds since each connection last synced ok (since the worker started if unknown).",
            labels=["account", "network"],
        )
        for (account, network), age in sorted(
            self.metrics.successes.ages(self.metrics.wall()).items()
        ):
            ages.add_metric([account, network], age)
        yield ages


@dataclass
class SyncMetrics:
    """The worker's registry, its instruments, and its progress (a `SyncEvents`)."""

    progress: Progress
    wall: Callable[[], float] = time.time
    registry: CollectorRegistry = field(init=False)
    successes: Successes = field(init=False)
    running: dict[Key, bool] = field(default_factory=dict)  # key -> outcome recorded yet
    port: int | None = None  # the metrics port once bound (a port 0 setting picks one)

    def __post_init__(self) -> None:
        self.successes = Successes(self.wall())
        registry = self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        registry.register(ReadCollector(self))
        self.runs = Counter(
            "affdir_sync_runs",
            f"Syncs ended, by network and recorded outcome ({NOT_RECORDED}: none recorded).",
            ["network", "outcome"],
            registry=registry,
        )
        self.duration = Histogram(
            "affdir_sync_run_duration_seconds",
            "Time from a sync's start to its recorded outcome, by network.",
            ["network"],
            buckets=RUN_BUCKETS,
            registry=registry,
        )
        self.rows = Counter(
            "affdir_sync_rows_written",
            "Commission rows the syncs wrote, by network and change (inserted, updated).",
            ["network", "change"],
            registry=registry,
        )
        self.refused = Counter(
            "affdir_sync_records_refused",
            "Records a network sent that the sync refused to store, by network.",
            ["network"],
            registry=registry,
        )
        self.requests = Counter(
            "affdir_sync_requests",
            "Requests sent to the networks, by network and HTTP status (or timeout, unreachable).",
            ["network", "status"],
            registry=registry,
        )
        self.retries = Counter(
            "affdir_sync_retries",
            "Requests sent again, by network and the failure's code.",
            ["network", "cause"],
            registry=registry,
        )
        self.waits = Histogram(
            "affdir_sync_rate_limit_wait_seconds",
            "Waits before a request: for the network's rate limit (limit) or as it asked (retry_after).",
            ["network", "cause"],
            buckets=WAIT_BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge("affdir_sync_running", "Syncs running now.", registry=registry)

    # --- SyncEvents -----------------------------------------------------------------

    def polled(self) -> None:
        self.progress.mark()

    def started(self, connection: Connection) -> None:
        self.running[(connection.account_uid, connection.network)] = False
        self.in_flight.set(len(self.running))

    def finished(self, connection: Connection, report: SyncReport) -> None:
        key = (connection.account_uid, connection.network)
        self.running[key] = True
        network = connection.network
        self.progress.mark()
        self.runs.labels(network, report.outcome.value).inc()
        self.duration.labels(network).observe(
            max(0.0, (report.finished_at - report.started_at).total_seconds())
        )
        self.rows.labels(network, "inserted").inc(report.counts.inserted)
        self.rows.labels(network, "updated").inc(report.counts.updated)
        self.refused.labels(network).inc(report.counts.refused)
        if report.outcome is Outcome.OK:
            self.successes.seen[key] = self.wall()

    def ended(self, connection: Connection) -> None:
        recorded = self.running.pop((connection.account_uid, connection.network), True)
        if not recorded:
            self.runs.labels(connection.network, NOT_RECORDED).inc()
        self.in_flight.set(len(self.running))

    def answered(self, network: str, status: str) -> None:
        self.requests.labels(network, status).inc()
        if status not in {"timeout", "unreachable"}:
            self.progress.mark()

    def retrying(self, network: str, cause: str) -> None:
        self.retries.labels(network, cause).inc()

    def waited(self, network: str, cause: str, seconds: float) -> None:
        self.waits.labels(network, cause).observe(seconds)

    # --- read at scrape time --------------------------------------------------------

    async def read_store(self, store: AccountStore) -> None:
        """Refresh the stored last successes from the store (kept as they were on failure)."""
        try:
            async with asyncio.timeout(STORE_READ_TIMEOUT):
                views = await store.read(connections.find_all)
        except (StoreError, OSError, TimeoutError) as exc:
            log.warning("metrics: cannot read the connections: %s", type(exc).__name__)
            return
        self.successes.stored = {
            (c.account_uid, c.network): parse_instant(c.last_sync_at) if c.status == "ok" else None
            for c in views
        }
