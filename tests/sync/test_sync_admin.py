"""The operator's commands end to end, in process: `network connect` with the planted
credentials, `network sync --since` against the loopback fake network, and `network list` /
`network show` telling the outcome and its reason, never a credential. On a SQLite file and
on PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest
from support.adminrun import run_admin
from sync_support import CONNECTION_CURRENCY, CREDENTIALS, PLANTED, SECRET, FakeNetworks, expected

from edge.config import Config
from store import connections, open_store


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Admin:
    """`affdir-admin` on the test database; every output joins the transcript."""

    database: str
    transcript: list[str]

    async def __call__(self, *args: str, stdin: bytes | None = None) -> Done:
        # In a thread of its own: the fake networks answer from this test's event loop.
        ran = await asyncio.to_thread(
            run_admin,
            {"EDGE_SECRET_KEY": SECRET},
            "--database",
            self.database,
            *args,
            stdin=stdin or b"",
        )
        done = Done(ran.returncode, ran.stdout.decode(), ran.stderr.decode())
        self.transcript += [done.stdout, done.stderr]
        return done


@pytest.fixture
async def admin(account_config: Config, transcript: list[str]) -> Admin:
    run = Admin(account_config.database, transcript)
    created = await run("account", "create", "--plan", "pro")
    assert created.returncode == 0, created.stderr
    run.uid = created.stdout.strip()  # type: ignore[attr-defined]
    return run


async def connect(admin: Admin, network: str) -> None:
    currency = CONNECTION_CURRENCY.get(network)
    done = await admin(
        "network", "connect", "--account", admin.uid, "--network", network,  # type: ignore[attr-defined]
        *(("--currency", currency) if currency else ()),
        "--credentials-file", "-", stdin=json.dumps(CREDENTIALS[network]).encode(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def base_url(networks: FakeNetworks, network: str) -> str:
    return f"{network}={networks.url}/{network}"  # type: ignore[attr-defined]


def assert_clean(*outputs: Done) -> None:
    text = "\n".join(o.stdout + o.stderr for o in outputs)
    assert not [v for v in PLANTED if v in text]


async def test_network_sync_since_a_date_collects_the_rows_and_list_and_show_say_ok(
    admin: Admin, networks: FakeNetworks, database: str
):
    uid = admin.uid  # type: ignore[attr-defined]
    await connect(admin, "impact")
    synced = await admin(
        "--json", "network", "sync", "--account", uid, "--network", "impact",
        "--since", "2025-12-01", "--base-url", base_url(networks, "impact"),
    )  # fmt: skip
    assert synced.returncode == 0, synced.stderr
    result = json.loads(synced.stdout)
    assert (result["status"], result["reasonCode"]) == ("ok", None)
    assert result["inserted"] == len(expected("impact"))
    # The first window asked for starts on the date given.
    assert min(first for first, _ in networks["impact"].windows).date().isoformat() == (
        "2025-12-01"
    )

    listed = await admin("network", "list", "--account", uid)
    assert listed.returncode == 0, listed.stderr
    assert f"{uid} impact: ok" in listed.stdout
    assert f"{len(expected('impact'))} transactions" in listed.stdout
    shown = await admin("--json", "network", "show", "--account", uid, "--network", "impact")
    view = json.loads(shown.stdout)
    assert (view["status"], view["reasonCode"], view["leasedBy"]) == ("ok", None, None)
    assert view["transactions"] == len(expected("impact"))
    assert view["completeThrough"] is not None

    # Again without --since: from the committed position, nothing new.
    again = await admin(
        "--json", "network", "sync", "--account", uid, "--network", "impact",
        "--base-url", base_url(networks, "impact"),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert (json.loads(again.stdout)["inserted"], json.loads(again.stdout)["updated"]) == (0, 0)

    store = await open_store(database, writable=True, readers=1, timeout=10.0)
    try:
        view_stored = await store.read(connections.find, uid, "impact")
    finally:
        await store.close()
    assert view_stored is not None and view_stored.transactions == len(expected("impact"))
    assert_clean(synced, listed, shown, again)


async def test_a_rejected_credential_is_auth_failed_with_its_reason_in_list_and_show(
    admin: Admin, networks: FakeNetworks
):
    uid = admin.uid  # type: ignore[attr-defined]
    await connect(admin, "effiliation")
    networks["effiliation"].reject_auth = True  # Effiliation's 200 "bad credentials !"
    synced = await admin(
        "network", "sync", "--account", uid, "--network", "effiliation",
        "--since", "2026-01-01", "--base-url", base_url(networks, "effiliation"),
    )  # fmt: skip
    # The run failed: so does the command, with the reason.
    assert synced.returncode == 1, synced.stderr
    assert "effiliation: auth_failed [auth_rejected]" in synced.stdout
    listed = await admin("network", "list")
    assert f"{uid} effiliation: auth_failed" in listed.stdout
    assert "[auth_rejected]" in listed.stdout
    shown = await admin("network", "show", "--account", uid, "--network", "effiliation")
    assert "status: auth_failed" in shown.stdout
    assert "reasonCode: auth_rejected" in shown.stdout
    assert_clean(synced, listed, shown)


async def test_network_sync_is_refused_while_a_worker_holds_the_connection(
    admin: Admin, networks: FakeNetworks, database: str
):
    uid = admin.uid  # type: ignore[attr-defined]
    await connect(admin, "kwanko")
    store = await open_store(database, writable=True, readers=1, timeout=10.0)
    try:
        assert await store.write(connections.claim, uid, "kwanko", "worker-elsewhere", 600.0)
        refused = await admin(
            "network", "sync", "--account", uid, "--network", "kwanko",
            "--base-url", base_url(networks, "kwanko"),
        )  # fmt: skip
        view = await store.read(connections.find, uid, "kwanko")
    finally:
        await store.close()
    assert refused.returncode == 1
    assert "being synced by worker-elsewhere" in refused.stderr
    assert networks["kwanko"].seen == []
    assert view is not None and view.lease_owner == "worker-elsewhere"
    assert_clean(refused)
