"""Who may use the MCP server over HTTP: a client with an API key the edge accepts, through
a host name the operator allowed.

Every HTTP request carries `Authorization: Bearer <key>`, the API's own keys: the key is
checked by asking the edge (`GET /v1/me`), and each tool call then asks the API with that
same key, so a client reaches exactly what its key and the key's scopes reach over the API
itself, never the account of another key. Verdicts are kept a few seconds (the edge's own
key cache is as long), so a revoked key stops working within that bound.

The Host and Origin headers must name an allowed host (DNS rebinding: a web page that
makes a browser reach this port under its own name is refused).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from agents.apiclient import ApiClient, ApiError

VERDICT_SECONDS = 5.0  # as long as the edge caches a key lookup
MAX_VERDICTS = 4096
RETRY_AFTER = 5
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

ASGIApp = Callable[..., Any]


@dataclass(frozen=True)
class Verdict:
    """What the edge said of a key: `status` 200 (accepted) or the HTTP status to answer."""

    status: int
    code: str = ""
    message: str = ""
    retry_after: int | None = None


def bearer_key(authorization: str | None) -> str | None:
    """The key of an `Authorization: Bearer KEY` header, or None."""
    if authorization is None:
        return None
    scheme, _, key = authorization.strip().partition(" ")
    key = key.strip()
    if scheme.lower() != "bearer" or not key or not key.isascii() or " " in key:
        return None
    return key


class KeyChecker:
    """Asks the edge whether a key is accepted (`GET /v1/me` with it); accepted and refused
    verdicts are kept `seconds`, keyed by a hash of the key (never the key itself)."""

    def __init__(
        self,
        api: ApiClient,
        seconds: float = VERDICT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api = api
        self.seconds = seconds
        self.clock = clock
        self._verdicts: OrderedDict[bytes, tuple[float, Verdict]] = OrderedDict()

    async def check(self, key: str) -> Verdict:
        name = hashlib.sha256(key.encode()).digest()
        kept = self._verdicts.get(name)
        now = self.clock()
        if kept is not None and kept[0] > now:
            return kept[1]
        verdict = await self._ask(key)
        if verdict.status in (200, 401, 403):
            self._verdicts[name] = (now + self.seconds, verdict)
            self._verdicts.move_to_end(name)
            while len(self._verdicts) > MAX_VERDICTS:
                self._verdicts.popitem(last=False)
        return verdict

    async def _ask(self, key: str) -> Verdict:
        try:
            answer = await self.api.get("/v1/me", (), key=key)
        except ApiError as exc:
            return Verdict(503, exc.code, exc.message, RETRY_AFTER)
        if answer.status == 200:
            return Verdict(200)
        document = answer.document if isinstance(answer.document, dict) else {}
        found = document.get("code")
        code = found if isinstance(found, str) else "unavailable"
        message = document.get("message")
        text = message if isinstance(message, str) else f"the API answered {answer.status}"
        if answer.status in (401, 403):  # 403: a suspended account's key
            return Verdict(answer.status, code, text)
        if answer.status == 429:
            return Verdict(429, code, text, answer.retry_after or RETRY_AFTER)
        return Verdict(503, code, text, answer.retry_after or RETRY_AFTER)


class RequireKey:
    """ASGI middleware: an HTTP request without a key the edge accepts is answered 401 (403
    for a suspended account's, 429 or 503 when the edge cannot say now) and never reaches
    the MCP server."""

    def __init__(self, app: ASGIApp, checker: KeyChecker) -> None:
        self.app = app
        self.checker = checker

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        key = bearer_key(headers.get("authorization"))
        if key is None:
            verdict = Verdict(
                401,
                "missing_api_key",
                "send your affdir API key: Authorization: Bearer afk_...",
            )
        else:
            verdict = await self.checker.check(key)
        if verdict.status == 200:
            await self.app(scope, receive, send)
            return
        await _refuse(send, verdict)


async def _refuse(send: Any, verdict: Verdict) -> None:
    body = orjson.dumps({"code": verdict.code, "message": verdict.message})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if verdict.status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="affdir", error="invalid_token"'))
    if verdict.retry_after is not None:
        headers.append((b"retry-after", str(verdict.retry_after).encode()))
    await send({"type": "http.response.start", "status": verdict.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def parse_allowed_hosts(text: str) -> tuple[str, ...]:
    """Comma-separated host names or addresses (an optional `:PORT`, IPv6 in brackets);
    ValueError naming the first that is not one."""
    hosts = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name = part.lower()
        if not all(c.isalnum() or c in ".-:[]" for c in name) or not name.isascii():
            raise ValueError(f"{part!r} is not a host name or address")
        if name.count(":") > 1 and not name.startswith("["):
            raise ValueError(f"{part!r}: write an IPv6 address in brackets, [{part}]")
        hosts.append(name)
    return tuple(hosts)


def allowed(hosts: Sequence[str]) -> tuple[list[str], list[str]]:
    """(Host header values, Origin values) the transport's guard accepts for `hosts`."""
    host_values, origins = [], []
    for host in hosts:
        with_port = host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]")
        host_values += [host] if with_port else [host, f"{host}:*"]
        for scheme in ("http", "https"):
            origins += (
                [f"{scheme}://{host}"]
                if with_port
                else [
                    f"{scheme}://{host}",
                    f"{scheme}://{host}:*",
                ]
            )
    return host_values, origins
