"""Fixtures of the webhook tests: a writable store on either database, the service's
secrets, and receivers: real aiohttp servers on loopback that verify every signature with
the `standardwebhooks` package and answer as each test tells them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web
from support.receiver import Receiver
from webhookkit import SERVICE_SECRET

from accounts.keyring import Keyring
from edge.config import Config
from store import AccountStore, open_store


@pytest.fixture
def keyring() -> Keyring:
    return Keyring((SERVICE_SECRET,))


@pytest.fixture
async def store(account_config: Config) -> AsyncIterator[AccountStore]:
    """A writable store on the test's database, migrated and empty (`account_config`)."""
    opened = await open_store(account_config.database, writable=True, readers=1)
    yield opened
    await opened.close()


@pytest.fixture
async def receivers() -> AsyncIterator[Callable[..., Awaitable[Receiver]]]:
    """`await receivers(secret, answer=None)`: a started receiver on 127.0.0.1."""
    runners: list[web.AppRunner] = []

    async def start(secret: str, **options: object) -> Receiver:
        receiver = Receiver(secret, **options)  # type: ignore[arg-type]
        runners.append(await receiver.start())
        return receiver

    yield start
    for runner in runners:
        await runner.cleanup()
