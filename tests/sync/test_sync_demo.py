"""The demo account's connections never reach a network: a real sync worker run against the
demo seed records an honest outcome for each without sending one request."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

from aiohttp import web

from accounts.demo import DEMO_CREDENTIAL, DEMO_NETWORKS, DEMO_UID, seed_store
from accounts.keyring import Keyring
from store import connections, open_store
from sync.connectors import CONNECTORS
from sync.model import Outcome
from sync.runner import SyncSettings
from sync.storage import AccountSyncStore, credential_opener
from sync.worker import Worker, WorkerConfig

SECRET = b"demo-sync-secret-" + b"d" * 40


def test_no_connector_can_use_a_demo_credential():
    # What makes the guarantee: every connector needs a credential the demo never holds.
    for network, connector in CONNECTORS.items():
        required = connector.spec.required_credentials
        assert required and DEMO_CREDENTIAL not in required, network


async def test_a_worker_on_the_demo_seed_sends_no_request(
    aiohttp_server: Any, tmp_path: Path, map_status: Any
) -> None:
    seen: list[str] = []

    async def any_request(request: web.Request) -> web.Response:
        seen.append(f"{request.method} {request.path_qs}")
        return web.json_response({})

    catcher = web.Application()
    catcher.router.add_route("*", "/{tail:.*}", any_request)
    server = await aiohttp_server(catcher)
    # Every network's base URL on loopback: a request the demo let out would land here
    # (and never leave the machine).
    base = str(server.make_url("")).rstrip("/")
    settings = SyncSettings(base_urls={network: f"{base}/{network}" for network in CONNECTORS})

    store = await open_store(str(tmp_path / "demo.sqlite3"), writable=True, readers=1, timeout=10.0)
    try:
        await seed_store(store, SECRET, 40)
        worker = Worker(
            AccountSyncStore(store, "demo-worker"),
            credential_opener(Keyring.of(SECRET)),
            map_status,
            # The seed's runs count as attempts (as a real sync's would): an interval that has
            # already passed makes every demo connection due at once.
            WorkerConfig(
                worker_id="demo-worker", poll_seconds=0.01, interval=-dt.timedelta(hours=1)
            ),
            settings,
        )
        stop = asyncio.Event()
        running = asyncio.create_task(worker.run(stop))
        async with asyncio.timeout(30):
            while True:
                # At least once each: the interval passed, a connection may run again.
                if len(worker.reports) >= len(DEMO_NETWORKS):
                    break
                await asyncio.sleep(0.01)
        stop.set()
        await running
        views = await store.read(connections.find_all, DEMO_UID)
    finally:
        await store.close()

    assert seen == []
    assert all(report.counts.requests == 0 for report in worker.reports)
    assert {r.outcome for r in worker.reports} == {Outcome.AUTH_FAILED}
    assert {v.network for v in views} == {network for network, _ in DEMO_NETWORKS}
    for view in views:
        assert (view.status, view.reason_code) == ("auth_failed", "credentials_incomplete")
        assert "reconnect the network" in (view.reason_message or "")
