"""Credentials that change: a network that rotates its refresh token on every use (Daisycon)
or hands out tokens with a lifetime (Skimlinks, 7 days). The runner stores what the network
now honours, sealed and atomically, before anything uses it: a run that dies after a
refresh never locks the account out. And a key carried in a URL never reaches a log line."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from aiohttp import web
from sync_support import ACCOUNT, MemoryStore, decrypt, seal

from accounts.crypto import encrypt_credentials
from store import connections
from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    Page,
    Send,
    collect,
    expect_ok,
    json_body,
)
from sync.http import HttpRequest, HttpResponse, NetworkClient
from sync.logs import logger
from sync.model import Outcome, Window
from sync.ports import Connection
from sync.ratelimit import Limiters
from sync.runner import Syncer, sync_connection
from sync.spec import AmountFormat, ConnectorSpec, CredentialField, CurrencySource, Pagination, Rate
from sync.storage import AccountSyncStore, credential_opener, credential_sealer

NETWORK = "rotating"
# A key with the characters a URL encodes: it is redacted in both forms.
API_KEY = "PLANTED key/+=rotating"
FIRST = {"refreshToken": "PLANTED-rt-1", "apiKey": API_KEY}
log = logger("sync.connectors.rotating")

SPEC = ConnectorSpec(
    network=NETWORK,
    base_url="http://127.0.0.1:1",
    credential_fields=(
        CredentialField("refreshToken", "refresh token"),
        CredentialField("apiKey", "key"),
    ),
    auth="OAuth2 refresh token, rotated on every use",
    max_window=dt.timedelta(days=31),
    granularity=dt.timedelta(days=1),
    pagination=Pagination.NONE,
    rate=Rate(100, 1),
    rate_source="test",
    amount_format=AmountFormat.STRING,
    currency_source=CurrencySource.RECORD,
    sub_id_field="sub",
    rescan=dt.timedelta(0),
    horizon=dt.timedelta(days=365),
)
LIFETIME = dt.timedelta(days=7)


class Rotating(Connector):
    """A connector whose network rotates its refresh token and whose key rides in the URL."""

    spec = SPEC
    reauthenticates = True

    async def authenticate(self, ctx: CallContext, send: Send) -> None:
        creds = ctx.credentials
        expires = creds.get("accessTokenExpiresAt")
        if creds.get("accessToken") and expires and dt.datetime.fromisoformat(expires) > ctx.now():
            ctx.auth_headers = {"Authorization": f"Bearer {creds['accessToken']}"}
            return
        answer = await send(
            HttpRequest(
                "POST",
                ctx.url("/token"),
                form={"grant_type": "refresh_token", "refresh_token": creds["refreshToken"]},
            )
        )
        expect_ok(NETWORK, answer)
        token = json_body(NETWORK, answer)
        await ctx.keep_credentials(
            {
                "refreshToken": token["refresh_token"],
                "accessToken": token["access_token"],
                "accessTokenExpiresAt": (ctx.now() + LIFETIME).isoformat(),
            }
        )
        ctx.auth_headers = {"Authorization": f"Bearer {ctx.credentials['accessToken']}"}

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        key = quote(ctx.credentials["apiKey"], safe="")
        url = ctx.url(f"/v/{key}/data")
        log.info("fetching %s?key=%s", url, key)  # a careless line: redacted all the same
        return HttpRequest(
            "GET", url, params=(("key", ctx.credentials["apiKey"]),), headers=ctx.auth_headers
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok(NETWORK, response)
        records = json_body(NETWORK, response)
        done, refused = collect(
            ctx, records, lambda r: Fields(r["id"], "approved", r["c"], "EUR", r["at"])
        )
        return Page(done, refused)


class RotatingNetwork:
    """Honours one refresh token at a time: using it issues the next and retires it."""

    def __init__(self) -> None:
        self.valid_refresh = FIRST["refreshToken"]
        self.access: set[str] = set()
        self.issued = 0
        self.data_calls = 0
        self.on_data: Any = None
        self.app = web.Application()
        self.app.router.add_post("/token", self.token)
        self.app.router.add_get("/v/{key}/data", self.data)

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("refresh_token") != self.valid_refresh:
            return web.json_response({"error": "invalid_grant"}, status=401)
        self.issued += 1
        self.valid_refresh = f"PLANTED-rt-{self.issued + 1}"
        access = f"PLANTED-at-{self.issued}"
        self.access.add(access)
        return web.json_response({"refresh_token": self.valid_refresh, "access_token": access})

    async def data(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if auth not in self.access or request.query.get("key") != API_KEY:
            return web.json_response({"error": "unauthorised"}, status=401)
        self.data_calls += 1
        if self.on_data is not None:
            await self.on_data()
        at = "2026-03-01T10:00:00Z"
        return web.json_response([{"id": "r1", "c": "1.50", "at": at}])


@pytest.fixture
async def rotating(aiohttp_server) -> RotatingNetwork:
    network = RotatingNetwork()
    server = await aiohttp_server(network.app, access_log=None)
    network.url = str(server.make_url("")).rstrip("/")  # type: ignore[attr-defined]
    return network


@pytest.fixture
async def run_rotating(rotating, clock, settings, map_status):
    session = aiohttp.ClientSession()
    connectors = {NETWORK: Rotating()}
    cfg = settings.__class__(base_urls={NETWORK: rotating.url}, retry=settings.retry)

    async def run(store, opener=decrypt, sealer=seal, **kw):
        syncer = Syncer(
            store,
            opener,
            map_status,
            NetworkClient(session, clock, cfg.retry, rand=lambda: 0.5),
            Limiters(clock),
            cfg,
            connectors,
            sealer,
        )
        return await sync_connection(syncer, Connection(ACCOUNT, NETWORK), **kw)

    yield run
    await session.close()


def memory(clock) -> MemoryStore:
    store = MemoryStore(clock)
    store.add(Connection(ACCOUNT, NETWORK), FIRST)
    return store


def stored(store: MemoryStore) -> dict[str, str]:
    return dict(decrypt(Connection(ACCOUNT, NETWORK), store.credentials[(ACCOUNT, NETWORK)]))


async def test_a_run_killed_right_after_a_refresh_leaves_the_rotated_token_stored(
    clock, rotating, run_rotating
):
    store = memory(clock)
    seen_stored: list[str] = []
    running = asyncio.create_task(run_rotating(store))

    async def die() -> None:
        # The network has answered the refresh; what does the store hold now?
        seen_stored.append(stored(store)["refreshToken"])
        running.cancel()  # the worker is killed here

    rotating.on_data = die
    with pytest.raises(asyncio.CancelledError):
        await running
    # The new refresh token was stored before the new access token was first used.
    assert seen_stored == [rotating.valid_refresh] == ["PLANTED-rt-2"]
    rotating.on_data = None
    clock.advance(8 * 86400)  # the access token has expired: the next run refreshes again
    report = await run_rotating(store)
    assert report.outcome is Outcome.OK, report.reason
    assert rotating.issued == 2
    assert stored(store)["refreshToken"] == rotating.valid_refresh == "PLANTED-rt-3"


async def test_a_token_with_a_lifetime_is_reused_until_it_ends(clock, rotating, run_rotating):
    store = memory(clock)
    assert (await run_rotating(store)).outcome is Outcome.OK
    clock.advance(6 * 86400)
    assert (await run_rotating(store)).outcome is Outcome.OK
    assert rotating.issued == 1  # the stored token still had a day to live
    clock.advance(2 * 86400)
    assert (await run_rotating(store)).outcome is Outcome.OK
    assert rotating.issued == 2
    assert stored(store)["apiKey"] == API_KEY  # the operator's members are kept


async def test_credentials_reconnected_meanwhile_are_never_overwritten(
    clock, rotating, run_rotating
):
    store = memory(clock)
    conn = Connection(ACCOUNT, NETWORK)
    original = store.replace_credentials

    async def reconnected_first(c, old, new):
        store.credentials[(ACCOUNT, NETWORK)] = seal(conn, {**FIRST, "refreshToken": "operator"})
        return await original(c, old, new)

    store.replace_credentials = reconnected_first  # type: ignore[method-assign]
    report = await run_rotating(store)
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "credentials_changed"
    assert stored(store)["refreshToken"] == "operator"
    assert rotating.data_calls == 0  # the refreshed token was never used


async def test_a_process_that_cannot_store_a_refresh_never_uses_it(clock, rotating, run_rotating):
    store = memory(clock)
    report = await run_rotating(store, sealer=None)
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "credentials_unstorable"
    assert rotating.data_calls == 0


async def test_a_key_in_the_url_is_redacted_from_every_line_and_reason(
    clock, rotating, run_rotating, caplog
):
    caplog.set_level(logging.DEBUG)
    store = memory(clock)
    rotating.valid_refresh = "nothing"  # the refresh fails: the reason is written
    report = await run_rotating(store)
    assert report.outcome is Outcome.AUTH_FAILED
    rotating.valid_refresh = FIRST["refreshToken"]
    assert (await run_rotating(store)).outcome is Outcome.OK
    text = "\n".join(r.getMessage() for r in caplog.records) + str(report)
    assert "fetching" in text and "[redacted]" in text
    for secret in (
        API_KEY,
        quote(API_KEY, safe=""),
        "PLANTED-rt-1",
        "PLANTED-rt-2",
        "PLANTED-at-1",
    ):
        assert secret not in text


@pytest.fixture
async def real_rotating(real_store, keyring):
    sealed = encrypt_credentials(keyring, ACCOUNT, NETWORK, json.dumps(FIRST).encode())
    await real_store.write(connections.connect, ACCOUNT, NETWORK, sealed)
    return AccountSyncStore(real_store, "w1")


async def test_the_rotated_token_is_sealed_in_the_account_store_before_use(
    clock, rotating, run_rotating, real_rotating, keyring
):
    opener, sealer = credential_opener(keyring), credential_sealer(keyring)
    conn = Connection(ACCOUNT, NETWORK)
    held: list[str] = []
    assert await real_rotating.claim(conn, "w1", 3600)
    running = asyncio.create_task(run_rotating(real_rotating, opener, sealer))

    async def die() -> None:
        blob = await real_rotating.load_credentials(conn)
        held.append(str(opener(conn, blob)["refreshToken"]))
        running.cancel()

    rotating.on_data = die
    with pytest.raises(asyncio.CancelledError):
        await running
    assert held == ["PLANTED-rt-2"]
    rotating.on_data = None
    clock.advance(8 * 86400)  # the killed run's lease has ended: another run claims it
    assert await real_rotating.claim(conn, "w1", 3600)
    report = await run_rotating(real_rotating, opener, sealer)
    assert report.outcome is Outcome.OK, report.reason
    assert (
        str(opener(conn, await real_rotating.load_credentials(conn))["refreshToken"])
        == "PLANTED-rt-3"
    )
