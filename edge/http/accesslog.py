"""The access log: one JSON line per request, never a header value or a key.

A line is serialised once, when its request ends (`AccessLog.line`), and kept in a buffer;
the event loop writes the buffer out `flush_seconds` later, or as soon as it holds
`flush_bytes`, in one write. So a request pays for one small JSON encoding, never for a
`logging.LogRecord`, a formatter or a write, and a busy edge makes a few writes a second
instead of one per request. `close` writes what is left: a clean stop loses no line (the
runner closes it after its last request, edge.serving).

What a line holds, with `--log-format text` (`access_record`): `ts` (UTC, seconds),
`method`, `path`, `status`, `durationMs`, `bytes`, `keyPrefix`, `requestId`. With
`--log-format json`, the line is the one every process writes (contract.logformat): `ts`
(UTC, milliseconds), `level` (INFO), `logger` (`edge.access`), `message` (`METHOD PATH
STATUS`), then the same members.
"""

from __future__ import annotations

import asyncio
import time
from typing import IO, Any

import orjson
from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from edge import appkeys
from edge.http.requestid import REQUEST_ID_HEADER

LOGGER = "edge.access"  # the `logger` of a JSON line, as the other processes name theirs
FLUSH_SECONDS = 0.25
FLUSH_BYTES = 64 * 1024


def access_record(
    request: web.BaseRequest, response: web.StreamResponse, seconds: float
) -> dict[str, Any]:
    """What one access-log line says besides its time (the key's prefix at most, never the
    key)."""
    principal = request.get(appkeys.PRINCIPAL)
    return {
        "method": request.method,
        "path": request.path,
        "status": response.status,
        "durationMs": round(seconds * 1000, 3),
        "bytes": response.body_length,
        "keyPrefix": principal.prefix if principal else None,
        # A request the HTTP parser refused never reached the app, and a public answer does
        # not carry its id: the request's own first, then the answer's.
        "requestId": request.get(appkeys.REQUEST_ID) or response.headers.get(REQUEST_ID_HEADER),
    }


class AccessLog:
    """Access-log lines buffered in memory and written to `stream` by the event loop."""

    def __init__(
        self,
        stream: IO[bytes],
        *,
        json_lines: bool,
        flush_seconds: float = FLUSH_SECONDS,
        flush_bytes: int = FLUSH_BYTES,
    ) -> None:
        self.stream = stream
        self.json_lines = json_lines
        self.flush_seconds = flush_seconds
        self.flush_bytes = flush_bytes
        self._lines: list[bytes] = []
        self._size = 0
        self._pending: asyncio.Handle | None = None
        # The UTC second last written, formatted: formatting a time costs more than the
        # rest of a line, and a busy edge writes hundreds of lines a second.
        self._second = -1
        self._stamp = ""

    def line(self, request: web.BaseRequest, response: web.StreamResponse, seconds: float) -> bytes:
        """One request's line, newline included."""
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        fields = access_record(request, response, seconds)
        if self.json_lines:
            line = {
                "ts": f"{self._stamp}.{int(now * 1000) % 1000:03d}Z",
                "level": "INFO",
                "logger": LOGGER,
                "message": f"{fields['method']} {fields['path']} {fields['status']}",
                **fields,
            }
        else:
            line = {"ts": self._stamp + "Z", **fields}
        return orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)

    def write(self, line: bytes) -> None:
        """Keep `line`; it is written within `flush_seconds`, sooner past `flush_bytes`."""
        self._lines.append(line)
        self._size += len(line)
        if self._pending is None:
            loop = asyncio.get_running_loop()
            if self._size >= self.flush_bytes:
                self._pending = loop.call_soon(self.flush)
            else:
                self._pending = loop.call_later(self.flush_seconds, self.flush)
        elif self._size >= self.flush_bytes and isinstance(self._pending, asyncio.TimerHandle):
            self._pending.cancel()
            self._pending = asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Write every kept line now, in one write."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        if not self._lines:
            return
        data = b"".join(self._lines)
        self._lines.clear()
        self._size = 0
        self.stream.write(data)
        self.stream.flush()

    def close(self) -> None:
        """Write what is left (the runner calls it once its last request has ended)."""
        self.flush()

    def logger_class(self) -> type[AbstractAccessLogger]:
        """The aiohttp access logger of the connections, writing its lines here."""
        log = self

        class BufferedAccessLogger(AbstractAccessLogger):
            def log(
                self, request: web.BaseRequest, response: web.StreamResponse, time: float
            ) -> None:
                log.write(log.line(request, response, time))

        return BufferedAccessLogger
