"""The access log's buffer: lines are kept off the request path, written in one write by
the event loop soon after, at once past the size bound, and all of them on close."""

from __future__ import annotations

import asyncio
import io
import json

from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from edge import appkeys
from edge.http.accesslog import AccessLog


class CountingStream(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data) -> int:  # type: ignore[override]
        self.writes += 1
        return super().write(data)


def line(log: AccessLog, path: str = "/v1/programs") -> bytes:
    request = make_mocked_request("GET", path)
    request[appkeys.REQUEST_ID] = "req_" + "0" * 24
    return log.line(request, web.Response(status=200), 0.0015)


async def test_lines_are_written_together_soon_after_and_the_rest_on_close():
    stream = CountingStream()
    log = AccessLog(stream, json_lines=False, flush_seconds=0.05)
    for _ in range(3):
        log.write(line(log))
    assert stream.getvalue() == b""  # nothing written while requests are answered
    await asyncio.sleep(0.1)
    assert stream.getvalue().count(b"\n") == 3 and stream.writes == 1
    log.write(line(log))
    log.close()
    records = [json.loads(text) for text in stream.getvalue().splitlines()]
    assert len(records) == 4 and stream.writes == 2
    assert records[0].keys() == {
        "ts", "method", "path", "status", "durationMs", "bytes", "keyPrefix", "requestId"
    }  # fmt: skip
    assert records[0]["durationMs"] == 1.5 and records[0]["requestId"] == "req_" + "0" * 24


async def test_past_the_size_bound_the_buffer_goes_out_on_the_next_turn():
    stream = CountingStream()
    log = AccessLog(stream, json_lines=True, flush_seconds=60, flush_bytes=1000)
    while stream.writes == 0:
        log.write(line(log))
        await asyncio.sleep(0)
    record = json.loads(stream.getvalue().splitlines()[0])
    assert (record["level"], record["logger"], record["message"]) == (
        "INFO",
        "edge.access",
        "GET /v1/programs 200",
    )
    assert record["ts"].endswith("Z") and "." in record["ts"]
    log.close()
