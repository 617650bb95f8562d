"""Fixtures shared by every test package: a real edge server on real files."""

from __future__ import annotations

import dataclasses
import signal
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from edge.app import create_app
from edge.config import Config

# PostgreSQL fixtures (pg_server, pg_url, pg_fresh_url) and the account fixtures (a real
# account database on either backend) for any test folder that asks for them.
pytest_plugins = ("support.pgfixtures", "support.accountfixtures")

ROOT = Path(__file__).resolve().parent.parent
TEST_SECRET = "test-secret-" + "x" * 40


@pytest.fixture
def edge_config(tmp_path: Path) -> Config:
    """A config whose every file lives in this test's tmp_path."""
    return Config(
        dist=tmp_path / "dist",
        database=str(tmp_path / "edge.sqlite3"),
        secret_key=TEST_SECRET,
        secret_file=tmp_path / "secret.key",
        access_log=False,
    )


EdgeClientFactory = Callable[..., Awaitable[TestClient]]


@pytest.fixture
def edge_client(aiohttp_client: Any, edge_config: Config) -> EdgeClientFactory:
    """`await edge_client(**overrides)`: a client of a real edge server on `edge_config`."""

    async def make(config: Config | None = None, **overrides: Any) -> TestClient:
        cfg = dataclasses.replace(config or edge_config, **overrides)
        return await aiohttp_client(create_app(cfg))

    return make


@pytest.fixture
def sigint_delivered() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt during the test, even when the suite runs with it
    ignored (a background job, `nohup`, some CI runners): a test that sends itself SIGINT
    tests the program, not how it was started. The disposition is restored afterwards."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
