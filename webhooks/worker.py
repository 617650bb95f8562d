"""The delivery loop: enqueue each endpoint's new events, send what is due, record it.

Every `poll_seconds` the worker enqueues the events recorded since each enabled endpoint's
cursor, then starts one drain per endpoint with a delivery due (at most `max_endpoints`
at once). A drain keeps up to `per_endpoint` requests of its endpoint in flight, each
bounded by the request timeout, and claims more as each one ends: a slow endpoint fills
only its own slots and never holds up another's.

At least once: a delivery is leased to this worker for `lease_seconds` when claimed, and
its outcome recorded after the answer. A worker killed in between leaves the lease to run
out; the delivery is then due again and sent with the same event, hence the same
`webhook-id`. A stopping worker lets its requests finish within `grace_seconds`, then
gives its leases back so the next run takes them at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from accounts.crypto import CredentialsError
from accounts.keyring import Keyring
from contract.webhooks import REQUEST_TIMEOUT
from store import AccountStore, StoreError
from store.base import format_timestamp, utc_now
from store.connections import lease_end
from store.webhooks import (
    Attempt,
    Job,
    Target,
    claim_deliveries,
    due_endpoints,
    enqueue_events,
    record_attempt,
    release_leases,
)
from webhooks import signing
from webhooks.schedule import RetryPolicy, next_attempt
from webhooks.sender import GONE, SendSettings, describe, send
from webhooks.targets import Gate, TargetPolicy

log = logging.getLogger("webhooks.worker")


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    worker_id: str
    policy: TargetPolicy = field(default_factory=TargetPolicy)
    per_endpoint: int = 4  # requests in flight to one endpoint
    max_endpoints: int = 64  # endpoints drained at once
    request_timeout: float = REQUEST_TIMEOUT
    lease_seconds: float = 60.0
    poll_seconds: float = 1.0
    grace_seconds: float = 10.0
    enqueue_batch: int = 1000  # events enqueued per endpoint per poll
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __post_init__(self) -> None:
        if self.lease_seconds <= self.request_timeout:
            # The lease must outlast the request and the write of its outcome, or another
            # worker would send the same delivery meanwhile.
            raise ValueError("the lease must be longer than the request timeout")


def parse_timestamp(text: str) -> dt.datetime:
    """A stored timestamp (`YYYY-MM-DDTHH:MM:SSZ`) as an aware datetime."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass
class Worker:
    store: AccountStore
    keyring: Keyring
    settings: WorkerSettings
    clock: Callable[[], dt.datetime] = utc_now
    rng: random.Random = field(default_factory=random.Random)
    draining: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    gate: Gate | None = None  # None: one keeping to `settings.policy`

    def __post_init__(self) -> None:
        if self.gate is None:
            self.gate = Gate(self.settings.policy)

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until `stop` is set."""
        async with self.session() as session:
            try:
                while not stop.is_set():
                    try:
                        await self.poll(session)
                    except StoreError as exc:
                        log.warning("the store is unavailable: %s", exc)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.settings.poll_seconds)
            finally:
                await self.stop_draining()

    @property
    def _gate(self) -> Gate:
        assert self.gate is not None  # set by __post_init__
        return self.gate

    def session(self) -> aiohttp.ClientSession:
        """The HTTP session of the deliveries: its connector keeps to the target policy."""
        return aiohttp.ClientSession(
            connector=self._gate.connector(limit=0, limit_per_host=self.settings.per_endpoint),
            # Never the process's proxy settings: a proxy would connect where it likes.
            trust_env=False,
            headers={"User-Agent": "affdir-webhooks"},
        )

    async def poll(self, session: aiohttp.ClientSession) -> None:
        """Enqueue the new events, and start a drain for each endpoint with work due."""
        now = format_timestamp(self.clock())
        await self.store.write(enqueue_events, now, self.settings.enqueue_batch)
        free = self.settings.max_endpoints - len(self.draining)
        if free <= 0:
            return
        due = await self.store.write(due_endpoints, now, self.settings.max_endpoints)
        for endpoint in due:
            if endpoint in self.draining or free <= 0:
                continue
            task = asyncio.create_task(self.drain(session, endpoint))
            self.draining[endpoint] = task
            task.add_done_callback(functools.partial(self._drained, endpoint))
            free -= 1

    def _drained(self, endpoint: int, _task: asyncio.Task[None]) -> None:
        self.draining.pop(endpoint, None)

    async def run_once(self, session: aiohttp.ClientSession) -> None:
        """One poll, then every drain it started to its end (tests, a one-off run)."""
        await self.poll(session)
        while self.draining:
            await asyncio.gather(*self.draining.values(), return_exceptions=True)

    async def stop_draining(self) -> None:
        """Let the requests in flight end within the grace period, cancel the rest, and
        give every lease of this worker back."""
        if self.draining:
            _, pending = await asyncio.wait(
                self.draining.values(), timeout=self.settings.grace_seconds
            )
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        with contextlib.suppress(StoreError):
            await self.store.write(release_leases, self.settings.worker_id)

    async def drain(self, session: aiohttp.ClientSession, endpoint: int) -> None:
        """Send the endpoint's due deliveries, `per_endpoint` at a time, until none is due."""
        in_flight: set[asyncio.Task[None]] = set()
        claiming = True
        try:
            while True:
                free = self.settings.per_endpoint - len(in_flight)
                if claiming and free > 0:
                    claimed = await self.claim(session, endpoint, free)
                    if claimed is None:
                        claiming = False
                    else:
                        in_flight |= claimed
                        claiming = bool(claimed)
                if not in_flight:
                    return
                done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if not task.cancelled() and task.exception() is not None:
                        log.error("a delivery failed unexpectedly", exc_info=task.exception())
                claiming = True
        except StoreError as exc:
            # Its claims and records wait for the store; leases held run out meanwhile.
            log.warning("the store is unavailable: %s", exc)
            await self.cancel(in_flight)
        except BaseException:
            await self.cancel(in_flight)
            raise

    @staticmethod
    async def cancel(tasks: set[asyncio.Task[None]]) -> None:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def claim(
        self, session: aiohttp.ClientSession, endpoint: int, limit: int
    ) -> set[asyncio.Task[None]] | None:
        """Lease up to `limit` due deliveries and start sending them; None when the
        endpoint is disabled or its secret cannot be opened."""
        moment = self.clock()
        claim = await self.store.write(
            claim_deliveries,
            endpoint,
            self.settings.worker_id,
            format_timestamp(moment),
            format_timestamp(lease_end(moment, self.settings.lease_seconds)),
            limit,
            self.store.ids,
        )
        if claim is None:
            return None
        try:
            secrets = signing.signing_secrets(self.keyring, claim.target.secrets, moment)
        except CredentialsError as exc:
            # The deployment's secrets changed, not the endpoint: nothing is attempted.
            log.error("webhook %s: %s", claim.target.secrets.endpoint_uid, exc)
            await self.store.write(release_leases, self.settings.worker_id, endpoint)
            return None
        return {
            asyncio.create_task(self.deliver(session, claim.target, secrets, job))
            for job in claim.jobs
        }

    async def deliver(
        self, session: aiohttp.ClientSession, target: Target, secrets: tuple[str, ...], job: Job
    ) -> None:
        """One attempt of one delivery, and its outcome recorded."""
        body = signing.job_body(job)
        started = self.clock()
        headers = signing.headers(job.event_id, body, secrets, started)
        settings = SendSettings(self._gate, self.settings.request_timeout)
        attempt = await send(session, target.url, headers, body, settings)
        try:
            await self.record(target, job, attempt, started)
        except StoreError as exc:
            # Unrecorded: once its lease runs out the delivery is sent again (at least once).
            log.warning(
                "webhook %s: %s not recorded: %s", target.secrets.endpoint_uid, job.event_id, exc
            )

    async def record(
        self, target: Target, job: Job, attempt: Attempt, started: dt.datetime
    ) -> None:
        """Record the attempt: delivered, or due again after the schedule's wait, or given
        up with its endpoint disabled; a 410 disables the endpoint as well."""
        now = self.clock()
        give_up = disable = None
        next_at = None
        if not attempt.delivered:
            first = (
                started if job.first_attempt_at is None else parse_timestamp(job.first_attempt_at)
            )
            failures = job.attempts + 1
            retry = next_attempt(self.settings.retry, failures, first, now, self.rng)
            if retry is None:
                hours = self.settings.retry.give_up_after.total_seconds() / 3600
                give_up = (
                    f"gave up on {job.event_id} after {failures} attempts over {hours:g} hours; "
                    f"last: {describe(attempt)}"
                )
            else:
                next_at = format_timestamp(retry)
            if attempt.status == GONE:
                disable = "the endpoint answered 410 Gone"
            log.info(
                "webhook %s: %s attempt %d: %s",
                target.secrets.endpoint_uid,
                job.event_id,
                failures,
                describe(attempt),
            )
        await self.store.write(
            record_attempt,
            job.delivery_row,
            attempt,
            format_timestamp(started),
            format_timestamp(now),
            next_attempt_at=next_at,
            give_up=give_up,
            disable=disable,
        )
