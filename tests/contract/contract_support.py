"""Helpers of the contract tests: test keys, a live server in a thread.

Imported as `contract_support` (pytest puts this directory on sys.path; the directory is not a
package, since a package named `contract` would shadow the real one).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from support import sample

from accounts import apikeys
from edge.config import Config
from store import accounts, open_store
from store.core import Session


def _key(name: str) -> str:
    """A well-formed key (marker, 32 base62 characters, checksum) fixed so tests can name it."""
    random = (name + "0" * 32)[:32]
    return apikeys.MARKER + random + apikeys.checksum(random)


FREE_KEY, PRO_KEY, SUSPENDED_KEY = _key("ContractFree"), _key("ContractPro"), _key("ContractSusp")
# key -> (plan, suspended): the accounts make_accounts() creates.
TEST_KEYS: dict[str, tuple[str, bool]] = {
    FREE_KEY: ("free", False),
    PRO_KEY: ("pro", False),
    SUSPENDED_KEY: ("free", True),
}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def make_accounts(path: Path) -> None:
    """A real account store at `path`: one account per TEST_KEYS entry, owning that key."""
    store = await open_store(str(path), writable=True)
    try:
        for n, (key, (plan, suspended)) in enumerate(TEST_KEYS.items()):
            uid = await store.write(accounts.create, f"contract-{n}@example.com", plan)
            await store.write(accounts.set_suspended, uid, suspended)
            await store.write(
                accounts.create_key,
                uid,
                apikeys.key_hash(key),
                apikeys.prefix_of(key),
                f"contract {n}",
                ("read",),
            )
    finally:
        await store.close()


# --- A real server on a real port, for clients that are not asyncio (schemathesis) --------


@dataclass(frozen=True)
class LiveServer:
    base_url: str
    app: web.Application


@contextlib.contextmanager
def serve_in_thread(app: web.Application, host: str = "127.0.0.1") -> Iterator[LiveServer]:
    """Run `app` on an ephemeral port in a thread with its own event loop, until exit."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, host, 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, name="live-edge", daemon=True)
    thread.start()
    try:
        yield LiveServer(base_url=f"http://{host}:{port}", app=app)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.run_until_complete(runner.cleanup())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


ROOT = Path(__file__).resolve().parents[2]
LIVE_SECRET = "contract-tests-secret-" + "z" * 40
# High enough that no run of the contract tests ever meets its own limit.
LIVE_RATE = (1_000_000, 60)


def build_sample(dist: Path) -> bool:
    """Build content/ into `dist` with the real build; False while there is no build.py."""
    if not (ROOT / "build.py").exists():
        return False
    sample.build_sample(dist)
    return True


def live_config(workdir: Path) -> Config:
    return Config(
        dist=workdir / "dist",
        database=str(workdir / "edge.sqlite3"),
        secret_key=LIVE_SECRET,
        secret_file=workdir / "secret.key",
        access_log=False,
        rate_limit_free=LIVE_RATE,
        rate_limit_pro=LIVE_RATE,
    )


@dataclass(frozen=True)
class LiveEdge:
    """A real edge on a real port: the sample build, the demo account and its key."""

    server: LiveServer
    config: Config
    key: str
    built: bool

    @property
    def base_url(self) -> str:
        return self.server.base_url


async def _set_id_key(s: Session, key: bytes) -> None:
    await s.execute("UPDATE id_key SET key = ? WHERE id = 1", key)


async def use_id_key(database: str, key: bytes) -> None:
    """Make `key` the store's id key (store.publicids), so that its public ids are known in
    advance (recorded examples); every store opened afterwards reads it."""
    store = await open_store(database, writable=True, readers=1)
    try:
        await store.write(_set_id_key, key)
    finally:
        await store.close()


@contextlib.contextmanager
def live_edge(
    workdir: Path,
    commissions: int = 400,
    id_key: bytes | None = None,
    seed: Callable[[str], Awaitable[None]] | None = None,
) -> Iterator[LiveEdge]:
    from accounts.demo import seed_demo
    from edge.app import create_app

    config = live_config(workdir)
    built = build_sample(config.dist)
    key = seed_demo(config.database, config.resolved_secret(), n=commissions)
    if id_key is not None:
        asyncio.run(use_id_key(config.database, id_key))
    if seed is not None:  # more of the account's data (the examples' payment)
        asyncio.run(seed(config.database))
    with serve_in_thread(create_app(config)) as server:
        yield LiveEdge(server=server, config=config, key=key, built=built)
