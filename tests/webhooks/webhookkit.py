"""Helpers of the webhook tests: accounts with events, endpoints, a worker, a wall clock."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from accounts.keyring import Keyring
from admin.webhooks import register
from store import AccountStore, NewCommission, accounts, commissions
from store.webhooks import DeliveryView, EndpointView, get_endpoint, recent_deliveries
from webhooks.schedule import RetryPolicy
from webhooks.targets import TargetPolicy
from webhooks.worker import Worker, WorkerSettings

LOOPBACK = TargetPolicy(allow_loopback=True)
SERVICE_SECRET = b"webhook-tests-secret-" + b"z" * 40


@dataclass
class Wall:
    """A UTC wall clock that moves only when told, from the real present (receivers check
    a request's timestamp against their own clock, within five minutes)."""

    moment: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))

    def now(self) -> dt.datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += dt.timedelta(seconds=seconds)


async def account_with_commissions(store: AccountStore, count: int, prefix: str = "E") -> str:
    """A new account and `count` new commissions of it: `count` commission.created events."""
    uid = await store.write(accounts.create, None, "pro")
    await add_commissions(store, uid, count, prefix)
    return uid


async def add_commissions(store: AccountStore, uid: str, count: int, prefix: str = "E") -> None:
    rows = [
        NewCommission(f"{prefix}{n}", "pending", None, f"{n}.25", "EUR", "2026-03-01T10:00:00Z")
        for n in range(count)
    ]
    await store.write(commissions.upsert, uid, "awin", rows)


async def endpoint(
    store: AccountStore, keyring: Keyring, account: str, url: str, wall: Wall | None = None
) -> tuple[EndpointView, str]:
    now = wall.now() if wall is not None else dt.datetime.now(dt.UTC)
    return await register(store, keyring, account, url, LOOPBACK, now)


def worker(
    store: AccountStore,
    keyring: Keyring,
    wall: Wall | None = None,
    *,
    policy: TargetPolicy = LOOPBACK,
    **options: object,
) -> Worker:
    settings = WorkerSettings(
        worker_id="tests",
        policy=policy,
        # Generous: on a loaded machine a loopback answer may take seconds, and a timeout
        # would be an attempt the test did not mean to make.
        request_timeout=float(options.pop("request_timeout", 30.0)),  # type: ignore[arg-type]
        lease_seconds=float(options.pop("lease_seconds", 60.0)),  # type: ignore[arg-type]
        poll_seconds=0.05,
        grace_seconds=0.5,
        retry=options.pop("retry", RetryPolicy(delays=(1.0,))),  # type: ignore[arg-type]
        **options,  # type: ignore[arg-type]
    )
    if wall is None:
        return Worker(store, keyring, settings)
    return Worker(store, keyring, settings, clock=wall.now)


async def deliveries(store: AccountStore, uid: str) -> list[DeliveryView]:
    return await store.read(recent_deliveries, uid, 10_000, store.ids)


async def state(store: AccountStore, uid: str) -> EndpointView:
    return await store.read(get_endpoint, uid)


async def until(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    """Wait until `condition()` is true, looking every 20 ms (what it reads changes in
    other tasks and other processes, with no event to wait for)."""
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.02)
