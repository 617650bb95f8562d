"""Fixtures of the MCP server's tests: one real edge process on loopback for the session,
serving the real build of content/ and the seeded demo account, and its demo key."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from mcp_support import LiveApi
from support.edgeprocess import SECRET, start_edge, wait_healthy
from support.sample import build_sample

from accounts.demo import seed_demo
from edge.config import Config

# High enough that the tests never meet the demo key's rate limit.
RATE = "1000000/60"


@pytest.fixture(scope="session")
def live_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    workdir = tmp_path_factory.mktemp("mcp-edge")
    dist = build_sample(workdir / "dist")
    database = workdir / "edge.sqlite3"
    secret = Config(secret_key=SECRET, secret_file=workdir / "secret.key").resolved_secret()
    key = seed_demo(database, secret, n=300)
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
        yield LiveApi(edge, key)
    finally:
        edge.stop()
