"""No credential reaches a log line, an error message, an exception text or a report.

The autouse guard in conftest.py greps every log line of every sync test; these tests
drive each failure path on purpose and grep what they leave behind as well."""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path

import pytest
from sync_support import CREDENTIALS, NETWORKS, NOW, PLANTED, Canned, connection

from store import connections
from sync.connectors import CONNECTORS
from sync.connectors.base import CallContext, Credentials
from sync.errors import SyncError
from sync.http import HttpRequest
from sync.model import Outcome, Window
from sync.runner import open_credentials


def assert_clean(*texts: object) -> None:
    joined = "\n".join(str(t) + repr(t) for t in texts)
    leaked = [v for v in PLANTED if v in joined]
    assert not leaked, leaked


FAILURES = {
    "429": lambda st: st.inject.extend([Canned(429, b"slow down", {"Retry-After": "100000"})]),
    "500": lambda st: st.inject.extend([Canned(500, b"boom")] * 50),
    "401": lambda st: st.inject.append(Canned(401, b"no")),
    "own bad credentials": lambda st: setattr(st, "reject_auth", True),
    "truncated": lambda st: st.inject.append(Canned(200, b'{"data": [1, 2')),
}


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("network", NETWORKS)
async def test_failure_reports_carry_no_credential(network, failure, networks, store, run_sync):
    FAILURES[failure](networks[network])
    report = await run_sync(network)
    assert report.outcome is not Outcome.OK
    assert_clean(report, report.reason, store.reports)


async def test_a_refused_connection_names_no_key_even_when_the_url_carries_it(
    store, settings, run_sync
):
    # Effiliation puts its key in the query string; aiohttp's errors quote the URL.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    closed = dataclasses.replace(
        settings, base_urls={**settings.base_urls, "effiliation": f"http://127.0.0.1:{port}"}
    )
    report = await run_sync("effiliation", settings=closed)
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "network_unavailable"
    assert_clean(report)


async def test_a_decrypt_error_quoting_the_secret_is_not_repeated(store, map_status):
    def leaky(conn, blob):
        raise ValueError(f"cannot parse {CREDENTIALS['awin']['accessToken']}")

    with pytest.raises(SyncError) as caught:
        await open_credentials(store, connection("awin"), leaky, CONNECTORS["awin"].spec)
    assert caught.value.code == "credentials_unreadable"
    assert_clean(caught.value, caught.value.__cause__, caught.value.__context__)


async def test_missing_credential_fields_are_named_not_valued(store, run_sync):
    values = dict(CREDENTIALS["partnerize"])
    del values["userApiKey"]
    store.add(connection("partnerize", account_uid="acc_other"), values)
    report = await run_sync(
        "partnerize", connection=connection("partnerize", account_uid="acc_other")
    )
    assert report.outcome is Outcome.AUTH_FAILED
    assert report.reason.code == "credentials_incomplete"
    assert "userApiKey" in report.reason.message
    assert_clean(report)


@pytest.mark.parametrize("network", NETWORKS)
def test_requests_contexts_and_credentials_do_not_show_secrets_in_repr(network, map_status):
    connector = CONNECTORS[network]
    ctx = CallContext(
        spec=connector.spec,
        base_url="http://127.0.0.1:9",
        credentials=Credentials(CREDENTIALS[network]),
        currency="EUR",
        page_size=10,
        map_status=map_status,
        auth_headers={"Authorization": "Bearer PLANTED-td-secret-22bb"},
    )
    request = connector.request(ctx, Window(NOW.replace(day=1), NOW), None)
    assert isinstance(request, HttpRequest)
    assert_clean(ctx, ctx.credentials, request)


@pytest.mark.parametrize("failure", ["401", "truncated", "own bad credentials"])
async def test_what_the_real_store_keeps_of_every_failed_sync_names_no_credential(
    failure, networks, real_store, keyring, run_sync, database
):
    from sync.storage import AccountSyncStore, credential_opener

    sync_store = AccountSyncStore(real_store, "w1")
    for network in NETWORKS:
        FAILURES[failure](networks[network])
        conn = connection(network)
        assert await sync_store.claim(conn, "w1", 600.0)
        try:
            await run_sync(network, store=sync_store, decrypt=credential_opener(keyring))
        finally:
            await sync_store.release(conn, "w1")
    views = await real_store.read(connections.find_all)
    assert {v.status for v in views} <= {"auth_failed", "partial", "error"}
    assert_clean(*views)
    if not database.startswith("postgresql"):
        stored = b"".join(p.read_bytes() for p in Path(database).parent.glob("store.sqlite3*"))
        assert not [v for v in PLANTED if v.encode() in stored]
