"""A response whose header block is kept as bytes: the cached directory page's answer.

Why: aiohttp builds every answer's headers in a `CIMultiDict` (the handler's, the
middleware's, then Content-Length, Date, Server and Connection added one by one when it
is prepared) and serialises them character by character in C, checking each for control
characters. For a cached `/v1/programs` page that is 15 headers, about 20,000 CPU
instructions per request, a sixth of what the edge spends over a bare aiohttp handler
(bench/README.md, Directory, session 5). Most of those headers are the same for every
answer with that page, so the page keeps them as bytes (`encode_head`) and only the
per-request values are serialised here.

How: `PreparedResponse` is a `web.Response` whose `CIMultiDict` is only built when
something asks for it. Everything that reads or writes `_headers` (aiohttp's own code,
`.headers`, `content_type`, a signal handler) gets the full `CIMultiDict`, in the order the
plain `web.Response(body=..., headers=...)` followed by `headers.update(...)` would have it,
and from then on the response is an ordinary `web.Response`. When nobody has looked and
the answer is a plain one (GET, a body, no cookies, compression or chunking, no
`on_response_prepare` handler), `_start` writes the bytes aiohttp would have written:

    <status line> <the page's header block> <the added lines> Content-Length, Date,
    Server, and Connection when aiohttp would send one

The added lines are edge_middleware's (`add_lines`: rate limit, CORS, request id), made
from numbers, constants and the request id, so they need none of aiohttp's checks.

and `write_eof` sends them with the body in one write, as aiohttp coalesces them. Any
other case takes aiohttp's own path. tests/edge_programs/test_wire.py compares the bytes
on the wire of both paths over a matrix of requests (HTTP/1.0 and 1.1, keep-alive and
close, HEAD, gzip, If-None-Match, Origin); it fails if an aiohttp upgrade changes what
aiohttp writes.

It overrides `web.Response._start` and `write_eof`, sets the `StreamResponse` state that
aiohttp's `_start` sets (`_req`, `_payload_writer`, `_keep_alive`), and sets the state
`web.Response(body=...)` would without calling its `__init__` (its argument checks cost
6,000 instructions per request): private parts of aiohttp (3.14), kept to this module; a
test checks that a PreparedResponse holds every attribute a web.Response does.
"""

from __future__ import annotations

import re
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion10, HttpVersion11
from aiohttp.web_response import MAX_SYNC_CHUNK_SIZE
from multidict import CIMultiDict

# What aiohttp refuses in a header (http_writer._safe_header); anything but printable
# ASCII and tab also takes aiohttp's path (its serialiser encodes the rest its own way).
_NOT_PLAIN = re.compile(r"[^\t\x20-\x7e]")
# Headers aiohttp adds or rewrites when it prepares a response: a block holding one of
# them could not be sent as it is.
_MANAGED = frozenset(
    {"content-length", "transfer-encoding", "date", "server", "connection", "set-cookie"}
)
_TAIL = f"\r\nServer: {SERVER_SOFTWARE}\r\n"
# The aiohttp series whose private parts this module and edge.app.direct_handler were
# checked against (tests/edge_programs/test_wire.py; pyproject.toml pins it). Under any
# other, both step aside and aiohttp's own paths serve: slower, never different.
VERIFIED_AIOHTTP = ("3.14.",)
ENABLED = aiohttp.__version__.startswith(VERIFIED_AIOHTTP)


def page_response(body: bytes, headers: dict[str, str], head: bytes | None) -> web.Response:
    """The 200 answer of a directory page: a PreparedResponse where this aiohttp is one
    the module was checked against, else the plain `web.Response` it stands for."""
    if ENABLED:
        return PreparedResponse(body, headers, head)
    return web.Response(body=body, headers=headers)


def encode_head(headers: dict[str, str]) -> bytes | None:
    """`headers` as the header lines aiohttp would write for them, or None when they
    cannot be sent so (a value aiohttp would refuse or encode, a header it manages, or
    no Content-Type, which it would add)."""
    if "content-type" not in {name.lower() for name in headers}:
        return None
    lines = []
    for name, value in headers.items():
        if name.lower() in _MANAGED or _NOT_PLAIN.search(name) or _NOT_PLAIN.search(value):
            return None
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines).encode("ascii")


class PreparedResponse(web.Response):
    """A 200 `web.Response` of `body` with `headers`, whose encoded lines are `head`
    (`encode_head(headers)`; None: an ordinary response)."""

    def __init__(self, body: bytes, headers: dict[str, str], head: bytes | None) -> None:
        self._given = headers
        self._head = head
        self._pending = True  # `headers` (and `_lines`) not yet in the CIMultiDict
        # Header lines added since (edge_middleware's: add_lines), sent after the page's.
        self._lines = ""
        self._multidict: CIMultiDict[str] | None = None
        self._wire: bytes | None = None
        # What web.Response(body=body) sets (aiohttp 3.14), without its checks of
        # arguments this class never passes.
        self._state: dict[Any, Any] = {}
        self._multidict = CIMultiDict()
        self._status, self._reason = 200, "OK"
        self._body = body
        self._compressed_body = None
        self._zlib_executor_size = MAX_SYNC_CHUNK_SIZE
        self._zlib_executor = None

    # -- the CIMultiDict, built on first use --------------------------------------------

    @property  # type: ignore[override]
    def _headers(self) -> CIMultiDict[str]:
        headers = self._multidict
        assert headers is not None
        if self._pending:
            # As web.Response(headers=...) and the middleware's update would leave it;
            # from now on an ordinary web.Response.
            self._pending = False
            self._head = None
            headers.update(self._given)
            if self._lines:
                headers.update(_parse_lines(self._lines))
                self._lines = ""
        return headers

    @_headers.setter
    def _headers(self, value: CIMultiDict[str]) -> None:
        # StreamResponse.__init__ sets an empty one; the headers go in when it is read.
        self._multidict = value

    def add_lines(self, lines: str) -> None:
        """Add header lines made by the edge itself from values that need no check
        (numbers, constants, request ids): `Name: value\r\n` each."""
        if self._pending:
            self._lines += lines
        else:
            self._headers.update(_parse_lines(lines))

    # -- sending -----------------------------------------------------------------------

    async def _start(self, request: web.BaseRequest) -> Any:
        head = self._head
        if (
            head is None
            or self._must_be_empty_body
            or request.method != "GET"
            or self._cookies
            or self._compression
            or self._chunked
            or not self._body
            or _prepare_hooks(request)
        ):
            return await super()._start(request)
        version = request.version
        if version == HttpVersion11:
            status_line = f"HTTP/1.1 {self._status} {self._reason}\r\n"
        elif version == HttpVersion10:
            status_line = f"HTTP/1.0 {self._status} {self._reason}\r\n"
        else:
            return await super()._start(request)
        # What StreamResponse._start and _prepare_headers do for such a response.
        keep_alive = self._keep_alive
        if keep_alive is None:
            keep_alive = request.keep_alive
        self._keep_alive = keep_alive
        if keep_alive:
            connection = "Connection: keep-alive\r\n" if version == HttpVersion10 else ""
        else:
            connection = "Connection: close\r\n" if version == HttpVersion11 else ""
        body = self._body
        assert isinstance(body, bytes)
        self._req = request
        writer = self._payload_writer = request._payload_writer
        writer.length = len(body)
        self._wire = b"".join(
            (
                status_line.encode("ascii"),
                head,
                f"{self._lines}Content-Length: {len(body)}\r\nDate: {rfc822_formatted_time()}"
                f"{_TAIL}{connection}\r\n".encode("ascii"),
                body,
            )
        )
        return writer

    async def write_eof(self, data: bytes = b"") -> None:
        wire = self._wire
        if wire is None or self._eof_sent:
            return await super().write_eof(data)
        self._wire = None
        writer = self._payload_writer
        assert writer is not None and not data
        # The headers and the body in one write, as aiohttp sends a buffered header block
        # with the body; then StreamResponse.write_eof's bookkeeping.
        await writer.write_eof(wire)
        self._eof_sent = True
        self._req = None
        self._body_length = writer.output_size
        self._payload_writer = None


def _parse_lines(lines: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in lines.split("\r\n") if line)  # type: ignore[misc]


def _prepare_hooks(request: web.BaseRequest) -> bool:
    """Whether an application of this request has `on_response_prepare` handlers."""
    match_info = getattr(request, "_match_info", None)
    if match_info is not None:
        for app in match_info.apps:
            if app.on_response_prepare:
                return True
    return False
