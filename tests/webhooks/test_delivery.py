"""The delivery worker against real loopback receivers, on SQLite and PostgreSQL: every
event arrives signed, at least once with one webhook-id, whatever the receiver does."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import time
from collections.abc import AsyncIterator

import pytest
from standardwebhooks import Webhook, WebhookVerificationError
from support.accountkit import read_all
from webhookkit import (
    LOOPBACK,
    Wall,
    account_with_commissions,
    add_commissions,
    deliveries,
    endpoint,
    state,
    until,
    worker,
)

from admin.webhooks import rotate
from store import accounts
from store.base import format_timestamp
from store.webhooks import add_endpoint, enable_endpoint, replay_since
from webhooks import signing
from webhooks.schedule import RetryPolicy
from webhooks.targets import TargetPolicy
from webhooks.worker import Worker


@contextlib.asynccontextmanager
async def running(w: Worker) -> AsyncIterator[None]:
    stop = asyncio.Event()
    task = asyncio.create_task(w.run(stop))
    try:
        yield
    finally:
        stop.set()
        await task


async def feed_ids(store, account: str) -> list[str]:
    rows = await read_all(
        store,
        "SELECT e.id FROM events e JOIN accounts a ON a.id = e.account_id WHERE a.uid = ? "
        "ORDER BY e.id",
        account,
    )
    return [store.ids.event(int(r[0])) for r in rows]


@pytest.mark.parametrize("failures", [0, 4])
async def test_a_receiver_failing_then_recovering_gets_every_event_once_by_id(
    store, keyring, receivers, failures
):
    receiver = await receivers("", answer=lambda n: (500 if n <= failures else 204, 0.0))
    account = await store.write(accounts.create, None, "pro")
    view, receiver.secret = await endpoint(store, keyring, account, receiver.url)
    # Only what is recorded after the endpoint was added is sent to it.
    await add_commissions(store, account, 12)
    expected = await feed_ids(store, account)
    assert len(expected) == 12

    async with running(worker(store, keyring, per_endpoint=3)):
        await until(lambda: set(receiver.delivered_ids()) == set(expected))

    assert all(r.verified for r in receiver.received), "a signature did not verify"
    assert len(receiver.received) >= 12 + failures
    # At least once; exactly once after the receiver's own de-duplication by webhook-id.
    assert sorted(set(receiver.delivered_ids())) == sorted(expected)
    ids = [r.msg_id for r in receiver.received]
    assert set(ids) == set(expected)  # retries reuse the event's id, never a new one
    bodies = {r.msg_id: r.body for r in receiver.received if r.status == 204}
    first = bodies[expected[0]]
    assert list(first) == ["id", "type", "occurredAt", "data"]
    assert first["id"] == expected[0] and first["type"] == "commission.created"
    assert first["data"]["externalId"] == "E0" and first["data"]["commissionAmount"] == 0.25
    views = await deliveries(store, view.id)
    assert {d.state for d in views} == {"delivered"}
    assert sum(d.attempts for d in views) == len(receiver.received)


async def test_events_before_the_endpoint_are_not_sent_and_replay_sends_them(
    store, keyring, receivers
):
    account = await account_with_commissions(store, 3)
    receiver = await receivers("")
    view, receiver.secret = await endpoint(store, keyring, account, receiver.url)
    await add_commissions(store, account, 2, prefix="L")
    w = worker(store, keyring)
    async with w.session() as session:
        await w.run_once(session)
    assert len(receiver.received) == 2
    count = await store.write(
        replay_since, view.id, "2000-01-01T00:00:00Z", format_timestamp(dt.datetime.now(dt.UTC))
    )
    assert count == 5
    async with w.session() as session:
        await w.run_once(session)
    assert sorted(set(receiver.delivered_ids())) == sorted(await feed_ids(store, account))
    assert all(r.verified for r in receiver.received)


async def test_a_slow_endpoint_does_not_delay_a_fast_one(store, keyring, receivers):
    slow = await receivers("", answer=lambda _n: (204, 4.0))
    fast = await receivers("")
    account = await store.write(accounts.create, None, "pro")
    slow_view, slow.secret = await endpoint(store, keyring, account, slow.url)
    _, fast.secret = await endpoint(store, keyring, account, fast.url)
    await add_commissions(store, account, 8)

    started = time.monotonic()
    async with running(
        worker(store, keyring, per_endpoint=2, request_timeout=6.0, lease_seconds=10.0)
    ):
        await until(lambda: len(set(fast.delivered_ids())) == 8)
        fast_done = time.monotonic() - started
        # Meanwhile the slow one holds its 2 slots, waiting for its first answers.
        assert len(slow.received) == 2
    # All of the fast one's 8 went out before the slow one answered anything.
    assert fast_done < 4.0, fast_done
    assert all(r.verified for r in fast.received + slow.received)
    # Stopped before its answers: the slow endpoint's deliveries stay pending.
    assert {d.state for d in await deliveries(store, slow_view.id)} == {"pending"}


@pytest.mark.parametrize(
    ("policy", "url_of", "reason"),
    [
        pytest.param(
            LOOPBACK, lambda r: "http://10.1.2.3/hook", "10.1.2.3 is a private", id="private"
        ),
        pytest.param(
            LOOPBACK, lambda r: "https://[fe80::1]/hook", "fe80::1 is a link-local", id="link-local"
        ),
        pytest.param(TargetPolicy(), lambda r: r.url, "only https://", id="plain-http"),
        pytest.param(
            TargetPolicy(),
            lambda r: f"https://localhost:{r.port}/hook",
            "resolves to 127.0.0.1 is a loopback",
            id="name-of-loopback",
        ),
    ],
)
async def test_a_refused_target_is_never_contacted(
    store, keyring, receivers, policy, url_of, reason
):
    receiver = await receivers("")
    account = await store.write(accounts.create, None, "pro")
    # Stored as it came (the admin CLI refuses these URLs; the worker checks again).
    uid = "whk_" + "r" * 16
    sealed = signing.seal_secret(keyring, account, uid, signing.new_secret())
    url = url_of(receiver)
    await store.write(add_endpoint, account, uid, url, sealed, "2026-01-01T00:00:00Z")
    await add_commissions(store, account, 1)
    w = worker(store, keyring, Wall(), policy=policy)
    async with w.session() as session:
        await w.run_once(session)
    assert receiver.received == []
    (delivery,) = await deliveries(store, uid)
    assert delivery.state == "pending" and delivery.attempts == 1
    assert delivery.last_status is None
    assert delivery.last_reason is not None and delivery.last_reason.startswith("refused: ")
    assert reason in delivery.last_reason


async def test_a_redirect_is_a_failure_and_never_followed(store, keyring, receivers):
    receiver = await receivers("", answer=lambda _n: (302, 0.0))
    account = await store.write(accounts.create, None, "pro")
    view, receiver.secret = await endpoint(store, keyring, account, receiver.url)
    await add_commissions(store, account, 1)
    w = worker(store, keyring, Wall())
    async with w.session() as session:
        await w.run_once(session)
    assert len(receiver.received) == 1  # the redirect's target was not asked
    (delivery,) = await deliveries(store, view.id)
    assert (delivery.state, delivery.last_status) == ("pending", 302)
    assert delivery.last_reason == "redirect, not followed"


async def test_rotation_signs_with_both_during_the_overlap_then_only_the_new(
    store, keyring, receivers
):
    wall = Wall()
    receiver = await receivers("")
    account = await store.write(accounts.create, None, "pro")
    view, old = await endpoint(store, keyring, account, receiver.url, wall)
    _, new = await rotate(store, keyring, view.id, dt.timedelta(seconds=60), wall.now())
    receiver.secret = new
    w = worker(store, keyring, wall)

    await add_commissions(store, account, 1, prefix="A")
    async with w.session() as session:
        await w.run_once(session)
    during = receiver.received[-1]
    # During the overlap a receiver on either secret verifies it: two signatures.
    assert during.verified and len(during.signature.split(" ")) == 2
    Webhook(old).verify(during.raw, during.headers)

    wall.advance(61)
    await add_commissions(store, account, 1, prefix="B")
    async with w.session() as session:
        await w.run_once(session)
    after = receiver.received[-1]
    assert after.msg_id != during.msg_id
    assert after.verified and len(after.signature.split(" ")) == 1
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(after.raw, after.headers)
    assert (await state(store, view.id)).previous_secret_expires_at is not None


async def test_give_up_after_about_three_days_disables_the_endpoint_with_the_reason(
    store, keyring, receivers
):
    wall = Wall()
    receiver = await receivers("", answer=lambda _n: (503, 0.0))
    account = await store.write(accounts.create, None, "pro")
    view, receiver.secret = await endpoint(store, keyring, account, receiver.url, wall)
    await add_commissions(store, account, 1)
    w = worker(store, keyring, wall, retry=RetryPolicy())
    start = wall.now()
    async with w.session() as session:
        for _ in range(500):
            await w.run_once(session)
            current = await state(store, view.id)
            if current.disabled_at is not None:
                break
            (delivery,) = await deliveries(store, view.id)
            assert delivery.next_attempt_at is not None
            due = dt.datetime.fromisoformat(delivery.next_attempt_at.replace("Z", "+00:00"))
            wall.moment = max(wall.moment, due)
    elapsed = wall.now() - start
    assert dt.timedelta(hours=72) <= elapsed < dt.timedelta(hours=82), elapsed
    assert current.disabled_reason is not None
    assert "after" in current.disabled_reason and "72 hours" in current.disabled_reason
    assert "HTTP 503" in current.disabled_reason
    (delivery,) = await deliveries(store, view.id)
    assert delivery.state == "failed" and delivery.attempts == len(receiver.received)
    # Disabled: nothing more is sent, even once due.
    await add_commissions(store, account, 1, prefix="X")
    sent = len(receiver.received)
    wall.advance(3600)
    async with w.session() as session:
        await w.run_once(session)
    assert len(receiver.received) == sent


async def test_410_gone_disables_the_endpoint(store, keyring, receivers):
    receiver = await receivers("", answer=lambda _n: (410, 0.0))
    account = await store.write(accounts.create, None, "pro")
    view, receiver.secret = await endpoint(store, keyring, account, receiver.url)
    await add_commissions(store, account, 3)
    wall = Wall()
    w = worker(store, keyring, wall, per_endpoint=1)
    async with w.session() as session:
        await w.run_once(session)
    current = await state(store, view.id)
    assert current.disabled_reason == "the endpoint answered 410 Gone"
    assert len(receiver.received) == 1
    assert current.pending == 3
    # Enabled again (by the operator): the pending deliveries go out at once.
    receiver.answer = lambda _n: (204, 0.0)
    await store.write(enable_endpoint, view.id, format_timestamp(wall.now()))
    async with w.session() as session:
        await w.run_once(session)
    assert {d.state for d in await deliveries(store, view.id)} == {"delivered"}
    assert all(r.verified for r in receiver.received)


async def test_two_workers_on_one_store_send_each_event_once(store, keyring, receivers):
    receiver = await receivers("", answer=lambda _n: (204, 0.05))
    account = await store.write(accounts.create, None, "pro")
    view, receiver.secret = await endpoint(store, keyring, account, receiver.url)
    await add_commissions(store, account, 30)
    first = worker(store, keyring, per_endpoint=3)
    second = worker(store, keyring, per_endpoint=3)
    second.settings = dataclasses.replace(second.settings, worker_id="tests-2")
    async with running(first), running(second):
        await until(lambda: len(set(receiver.delivered_ids())) == 30)
        await until(lambda: all(r.status == 204 for r in receiver.received))
    # Leased, so never sent by both: no answer was lost, so no duplicate either.
    assert len(receiver.received) == 30
    assert {d.state for d in await deliveries(store, view.id)} == {"delivered"}
