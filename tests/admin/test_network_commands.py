"""The operator's network commands, in process, on SQLite and PostgreSQL: `network connect`
refuses a network without a connector (a typo) and lists the known ones, `--import-only`
connects one for file imports (never synced), `network list --account` lists one account's
connections, `network disconnect` stops the sync and keeps the commissions with a
`connection.disconnected` event, and `network sync` exits non-zero when its run fails."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from aiohttp import web
from support.adminrun import run_admin

from store import CommissionQuery, commissions, connections, open_store
from store.events import EventQuery, account_events
from sync.connectors import CONNECTORS

SECRET = "network-commands-secret-" + "n" * 32
AWIN = {"accessToken": "token-for-the-test", "publisherId": "123456"}


@pytest.fixture
def env(tmp_path: Path, database: str) -> dict[str, str]:
    return {
        "EDGE_DATABASE": database,
        "EDGE_SECRET_KEY": SECRET,
        "EDGE_SECRET_FILE": str(tmp_path / "secret.key"),
    }


def run(env: dict[str, str], *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    done = run_admin(env, *args, stdin=stdin)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


@pytest.fixture
def uid(env: dict[str, str]) -> str:
    created = run(env, "account", "create", "--plan", "pro")
    assert created.returncode == 0, created.stderr
    return created.stdout.strip()


def connect_awin(env: dict[str, str], uid: str) -> None:
    done = run(
        env, "network", "connect", "--account", uid, "--network", "awin",
        "--credentials-file", "-", stdin=json.dumps(AWIN).encode(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_an_unknown_network_is_refused_with_the_known_ones_listed(env, uid):
    done = run(
        env, "network", "connect", "--account", uid, "--network", "awinn",
        "--credentials-file", "-", stdin=json.dumps(AWIN).encode(),
    )  # fmt: skip
    assert done.returncode == 1
    assert "awinn" in done.stderr and "--import-only" in done.stderr
    assert all(network in done.stderr for network in CONNECTORS)
    listed = run(env, "--json", "network", "list", "--account", uid)
    assert json.loads(listed.stdout)["connections"] == []


async def test_an_import_only_network_is_connected_without_credentials_and_never_due(
    env, uid, database
):
    done = run(env, "network", "connect", "--account", uid, "--network", "amazon", "--import-only")
    assert done.returncode == 0, done.stderr
    assert "file imports only" in done.stdout
    listed = run(env, "--json", "network", "list", "--account", uid)
    assert [(c["network"], c["importOnly"]) for c in json.loads(listed.stdout)["connections"]] == [
        ("amazon", True)
    ]
    store = await open_store(database, writable=True, readers=1, timeout=10.0)
    try:
        assert await store.write(connections.due, "9999-01-01T00:00:00Z", 50) == []
        view = await store.read(connections.find, uid, "amazon")
        assert view is not None and view.status == "never"
    finally:
        await store.close()
    # With credentials it is refused, not half done.
    again = run(
        env, "network", "connect", "--account", uid, "--network", "amazon2", "--import-only",
        "--credentials-file", "-", stdin=b"{}",
    )  # fmt: skip
    assert again.returncode == 1 and "no credentials" in again.stderr


def test_network_list_names_one_accounts_connections(env, uid):
    other = run(env, "account", "create", "--plan", "pro").stdout.strip()
    connect_awin(env, uid)
    connect_awin(env, other)
    listed = run(env, "--json", "network", "list", "--account", uid)
    assert listed.returncode == 0, listed.stderr
    shown = json.loads(listed.stdout)["connections"]
    assert [(c["account"], c["network"], c["importOnly"]) for c in shown] == [(uid, "awin", False)]
    assert "token-for-the-test" not in listed.stdout


async def test_disconnect_stops_the_sync_keeps_the_commissions_and_records_an_event(
    env, uid, database, tmp_path
):
    connect_awin(env, uid)
    export = tmp_path / "awin.csv"
    export.write_text(
        "externalId,status,commissionAmount,currency,transactedAt\n"
        "T-1,approved,4.26,EUR,2026-01-05T10:00:00Z\n"
    )
    imported = run(env, "commissions", "import", "--account", uid, "--network", "awin", str(export))
    assert imported.returncode == 0, imported.stderr
    done = run(env, "network", "disconnect", "--account", uid, "--network", "awin")
    assert done.returncode == 0, done.stderr
    store = await open_store(database, writable=True, readers=1, timeout=10.0)
    try:
        assert await store.read(connections.find, uid, "awin") is None
        assert await store.write(connections.due, "9999-01-01T00:00:00Z", 50) == []
        kept = await store.read(commissions.page, CommissionQuery(uid, limit=10, network="awin"))
        assert [r.external_id for r in kept] == ["T-1"]
        events = await store.read(
            account_events, EventQuery(uid, limit=50, since="2000-01-01T00:00:00Z")
        )
        disconnected = [e for e in events if e.type == "connection.disconnected"]
        assert len(disconnected) == 1
        data = json.loads(disconnected[0].data)
        assert (data["network"], data["status"], data["previousStatus"]) == (
            "awin",
            "never",
            "never",
        )
    finally:
        await store.close()
    twice = run(env, "network", "disconnect", "--account", uid, "--network", "awin")
    assert twice.returncode == 1 and "has not connected awin" in twice.stderr


async def test_network_sync_exits_non_zero_with_the_reason_when_the_run_fails(
    env, uid, aiohttp_server
):
    connect_awin(env, uid)

    async def refuse(request: web.Request) -> web.Response:
        return web.json_response({"error": "invalid token"}, status=401)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", refuse)
    server = await aiohttp_server(app)
    done = await asyncio.to_thread(
        run, env, "network", "sync", "--account", uid, "--network", "awin",
        "--base-url", f"awin={server.make_url('')}",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "awin: auth_failed [auth_rejected]" in done.stdout
