"""`affdir-webhooks` as its own process: killed mid-batch (SIGKILL, no chance to clean up)
and started again, it loses nothing: every event reaches the receiver, signed, with the
same webhook-id on every attempt."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from webhookkit import SERVICE_SECRET, add_commissions, deliveries, endpoint, until

from store import accounts

ROOT = Path(__file__).resolve().parents[2]
# Real worker processes, killed and started again.
pytestmark = pytest.mark.process


async def start_worker(database: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "webhooks",
        "--allow-loopback",
        "--per-endpoint",
        "4",
        "--timeout-seconds",
        "2",
        "--lease-seconds",
        "3",
        "--poll-seconds",
        "0.1",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "EDGE_DATABASE": database, "EDGE_SECRET_KEY": SERVICE_SECRET.decode()},
    )


async def test_a_killed_worker_loses_nothing(store, keyring, receivers, database):
    receiver = await receivers("", answer=lambda _n: (204, 0.3))
    account = await store.write(accounts.create, None, "pro")
    view, receiver.secret = await endpoint(store, keyring, account, receiver.url)
    await add_commissions(store, account, 24)

    first = await start_worker(database)
    try:
        await until(lambda: len(receiver.received) >= 6)
    finally:
        first.kill()
        await first.communicate()
    assert first.returncode == -9
    sent_before = len(receiver.received)
    assert sent_before < 24
    states = {d.state for d in await deliveries(store, view.id)}
    assert "pending" in states  # killed mid-batch: leases held, requests unanswered

    second = await start_worker(database)
    try:
        await until(lambda: len(set(receiver.delivered_ids())) == 24, seconds=40)
        async with asyncio.timeout(20):
            # The last answers are being recorded.
            while {d.state for d in await deliveries(store, view.id)} != {"delivered"}:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
    finally:
        second.terminate()
        _, err = await second.communicate()
    assert second.returncode == 0, err.decode()
    assert all(r.verified for r in receiver.received)
    views = await deliveries(store, view.id)
    assert len(views) == 24
    # Requests cut off by the kill are sent again under the same id: duplicates, not losses.
    assert {r.msg_id for r in receiver.received} == {d.event_id for d in views}
