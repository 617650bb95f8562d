"""Fixtures of the MCP server's tests: one real edge process on loopback for the session,
serving the real build of content/ and the seeded demo account, and its demo key."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from mcp_support import LiveApi
from support.edgeprocess import SECRET, start_edge, wait_healthy
from support.sample import build_sample

from accounts.demo import DEMO_UID, seed_demo
from contract.payment import NewPayment, NewPaymentLine
from edge.config import Config
from store import open_store, payments
from store.payments import PaymentQuery

# High enough that the tests never meet the demo key's rate limit.
RATE = "1000000/60"


async def seed_payment(database: str) -> str:
    """An Awin payment of the demo account, its public id."""
    store = await open_store(database, writable=True, readers=1)
    try:
        line = NewPaymentLine("advertiser", "40.00", "EUR", "11111", "Matelas Nuage")
        made = NewPayment("9876543", "42.50", "EUR", "2025-06-15T00:00:00Z", (line,))
        await store.write(payments.write, DEMO_UID, "awin", made)
        [row] = await store.read(payments.page, PaymentQuery(DEMO_UID, 1))
        return store.ids.payment(row.seq)
    finally:
        await store.close()


@pytest.fixture(scope="session")
def live_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    workdir = tmp_path_factory.mktemp("mcp-edge")
    dist = build_sample(workdir / "dist")
    database = workdir / "edge.sqlite3"
    secret = Config(secret_key=SECRET, secret_file=workdir / "secret.key").resolved_secret()
    key = seed_demo(database, secret, n=300)
    payment_id = asyncio.run(seed_payment(str(database)))
    edge = start_edge(
        workdir,
        [
            "--dist",
            str(dist),
            "--database",
            str(database),
            "--rate-limit-free",
            RATE,
            "--rate-limit-pro",
            RATE,
        ],
    )
    try:
        asyncio.run(wait_healthy(edge))
        yield LiveApi(edge, key, payment_id)
    finally:
        edge.stop()
