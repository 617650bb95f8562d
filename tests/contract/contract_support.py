"""Helpers of the contract tests: a controllable clock, test keys, a live server in a thread.

Imported as `contract_support` (pytest puts this directory on sys.path; the directory is not a
package, since a package named `contract` would shadow the real one).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from edge import appkeys
from edge.auth import Principal
from edge.config import Config


@dataclass
class FakeClock:
    """A clock that moves only when told to: limiter tests never sleep."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _principal(name: str, plan: str, *, suspended: bool = False) -> Principal:
    return Principal(
        key_id=f"key_{name}",
        account_uid=f"acct_{name}",
        plan=plan,
        prefix=f"afk_{name}"[:12],
        label=f"contract tests ({name})",
        scopes=("read",),
        suspended=suspended,
    )


TEST_KEYS: dict[str, Principal] = {
    "afk_test_free_0000000000000000000000000000": _principal("free", "free"),
    "afk_test_pro_00000000000000000000000000000": _principal("pro", "pro"),
    "afk_test_susp_0000000000000000000000000000": _principal("susp", "free", suspended=True),
}
FREE_KEY, PRO_KEY, SUSPENDED_KEY = TEST_KEYS


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


class StaticAuthenticator:
    """Knows TEST_KEYS and nothing else."""

    async def authenticate(self, key: str) -> Principal | None:
        for known, principal in TEST_KEYS.items():
            if hmac.compare_digest(key.encode(), known.encode()):
                return principal
        return None


async def install_test_authenticator(app: web.Application) -> None:
    # on_startup runs after the cleanup contexts' startup halves, so this one wins.
    app[appkeys.AUTHENTICATOR] = StaticAuthenticator()


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
    script = ROOT / "build.py"
    if not script.exists():
        return False
    subprocess.run(
        [
            sys.executable,
            str(script),
            "--content",
            str(ROOT / "content"),
            "--out",
            str(dist),
            "--quiet",
        ],
        check=True,
        cwd=ROOT,
    )
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


@contextlib.contextmanager
def live_edge(workdir: Path, commissions: int = 400) -> Iterator[LiveEdge]:
    from edge.app import create_app
    from edge.demo import seed_demo

    config = live_config(workdir)
    built = build_sample(config.dist)
    key = seed_demo(config, n=commissions)
    with serve_in_thread(create_app(config)) as server:
        yield LiveEdge(server=server, config=config, key=key, built=built)
