"""A loopback network that misbehaves on purpose: answers too large (announced or endless),
answers cut short, pages that never end or loop, slow answers; it counts the requests it
is answering at once per credential (two workers on one connection would show as 2)."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

CHUNK = b"[" + b" " * (2**16 - 1)  # a JSON array that never closes, 64 KiB at a time


@dataclass
class Hostile:
    """`mode` says how every data request is answered:

    - `endless_pages`: Affilae pages of one valid record each, whose total never ends;
    - `looping_cursor`: Partnerize pages whose cursors go A, B, A, B...;
    - `announced_huge`: a Content-Length of 2 GB, then the body as fast as it is read;
    - `endless_body`: a chunked body that never ends;
    - `truncated`: a Content-Length of 1,000 bytes and 10 bytes sent before closing.
    """

    mode: str = "endless_pages"
    delay: float = 0.0
    on_request: Callable[[], None] | None = None
    requests: int = 0
    # Bytes written to each answer before the client went away.
    sent: list[int] = field(default_factory=list)
    in_flight: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    most_at_once: int = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{network}/{tail:.*}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        credential = request.headers.get("Authorization", "")
        self.in_flight[credential] += 1
        self.most_at_once = max(self.most_at_once, self.in_flight[credential])
        self.requests += 1
        try:
            if self.on_request is not None:
                self.on_request()
            if self.delay:
                await asyncio.sleep(self.delay)
            return await getattr(self, f"_{self.mode}")(request)
        finally:
            self.in_flight[credential] -= 1

    async def _endless_pages(self, request: web.Request) -> web.Response:
        offset = int(request.query.get("offset", "0"))
        record = {
            "id": f"E{offset}",
            "status": "pending",
            "commission": 125,
            "currency": "EUR",
            "createdAt": request.query["from"],
            "amount": 2500,
        }
        body = {"conversions": {"data": [record], "total": 10**9}}
        return web.json_response(body)

    async def _looping_cursor(self, request: web.Request) -> web.Response:
        cursor = request.query.get("cursor_id")
        following = "B" if cursor == "A" else "A"
        conversion = {
            "conversion_id": f"P{self.requests}",
            "conversion_status": "pending",
            "publisher_commission": "1.25",
            "currency": "EUR",
            "conversion_time": request.query["start_date"],
        }
        body = {
            "conversions": [{"conversion_data": conversion}],
            "hypermedia": {"pagination": {"next_page": f"/next?cursor_id={following}"}},
        }
        return web.Response(body=json.dumps(body), content_type="application/json")

    async def _stream(self, request: web.Request, headers: dict[str, str]) -> web.StreamResponse:
        response = web.StreamResponse(headers=headers)
        response.content_type = "application/json"
        await response.prepare(request)
        sent = 0
        try:
            while sent < 4 * 2**30:
                await response.write(CHUNK)
                sent += len(CHUNK)
        except (ConnectionError, RuntimeError):
            pass  # the client went away: what it refused stays unsent
        finally:
            self.sent.append(sent)
        return response

    async def _announced_huge(self, request: web.Request) -> web.StreamResponse:
        return await self._stream(request, {"Content-Length": str(2 * 2**30)})

    async def _endless_body(self, request: web.Request) -> web.StreamResponse:
        return await self._stream(request, {})

    async def _truncated(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": "1000"})
        response.content_type = "application/json"
        await response.prepare(request)
        await response.write(b'{"conversi')
        assert request.transport is not None
        request.transport.close()
        return response
