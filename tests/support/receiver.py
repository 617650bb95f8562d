"""A webhook receiver for the tests: a real aiohttp server on 127.0.0.1 that verifies each
request's signature with `standardwebhooks.Webhook(secret).verify(...)`, as a client
would, and records what it got. What it answers is the test's: `answer(request number)`
gives a status (and a delay), by default 204 at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from standardwebhooks import Webhook, WebhookVerificationError


@dataclass
class Received:
    msg_id: str
    body: dict[str, Any]
    signature: str
    verified: bool
    status: int
    raw: bytes
    headers: dict[str, str]


@dataclass
class Receiver:
    secret: str
    # (n-th request, from 1) -> (status, seconds to wait before answering)
    answer: Callable[[int], tuple[int, float]] = lambda _n: (204, 0.0)
    received: list[Received] = field(default_factory=list)
    port: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items()}
        try:
            payload = Webhook(self.secret).verify(body, headers)
            verified = True
        except WebhookVerificationError:
            payload, verified = {}, False
        status, delay = self.answer(len(self.received) + 1)
        self.received.append(
            Received(
                headers.get("webhook-id", ""),
                payload,
                headers.get("webhook-signature", ""),
                verified,
                status,
                body,
                headers,
            )
        )
        self.arrived.set()
        if delay:
            await asyncio.sleep(delay)
        if 300 <= status < 400:
            raise web.HTTPFound("http://127.0.0.1:9/elsewhere")
        return web.Response(status=status, text="ignored")

    async def start(self) -> web.AppRunner:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        # Stopped with its test: an answer still being delayed (`answer`) is cut off, not
        # waited for up to aiohttp's graceful minute.
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = runner.addresses[0][1]
        return runner

    def delivered_ids(self) -> list[str]:
        """The webhook-ids of the requests it accepted (answered 2xx), duplicates kept."""
        return [r.msg_id for r in self.received if 200 <= r.status < 300]
