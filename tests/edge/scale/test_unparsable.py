"""Requests aiohttp's HTTP parser refuses get the API's JSON error from a real edge process,
single or with workers, and nothing of what was sent comes back (it may be a key)."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.edgeprocess import EdgeProcess, start_edge, wait_healthy
from test_logs import KEY, MALFORMED, send_raw

IDS = ["long-line", "method", "header", "key-control", "key-long"]


def parse_answer(answer: bytes) -> tuple[str, dict[str, str], dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, _, value in (line.partition(": ") for line in lines)}
    return status_line, headers, json.loads(body)


@pytest.fixture(params=[1, 2], ids=["one-process", "two-workers"])
async def edge(request, tmp_path, edges, built_dist) -> EdgeProcess:
    args = ["--database", str(tmp_path / "edge.sqlite3"), "--dist", str(built_dist)]
    args += ["--workers", str(request.param), "--access-log", "true"]
    if request.param > 1:
        args += ["--redis-url", request.getfixturevalue("shared_redis").url]
    process = start_edge(tmp_path, args)
    edges.append(process)
    await wait_healthy(process)
    return process


@pytest.mark.parametrize("request_bytes", MALFORMED, ids=IDS)
async def test_an_unparsable_request_gets_the_api_error_and_no_echo(edge, request_bytes):
    answer = await send_raw(edge.port, request_bytes)
    status_line, headers, body = parse_answer(answer)
    assert status_line.endswith(" 400 Bad Request")
    assert headers["content-type"].startswith("application/json")
    assert headers["cache-control"] == "no-store"
    # Answered by the connection, outside the app: still the app's headers, no version.
    assert (headers["server"], headers["x-content-type-options"]) == ("affdir", "nosniff")
    assert body["code"] == "invalid_parameter" and body["status"] == 400
    assert body["param"] is None and "not valid HTTP/1.1" in body["message"]
    assert body["requestId"] == headers["x-request-id"]
    assert set(body) == {"code", "message", "status", "param", "requestId"}
    assert KEY not in answer and b"xxxxxxxxxx" not in answer and b"/v1" not in answer
    # The access log line carries the same request id, so the answer can be found in it.
    for _ in range(50):
        if body["requestId"] in edge.log_text():
            break
        await asyncio.sleep(0.1)
    assert body["requestId"] in edge.log_text()
    assert KEY.decode() not in edge.log_text()


async def test_a_good_request_on_the_same_edge_is_unaffected(edge):
    answer = await send_raw(
        edge.port, b"GET /v1/me HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    )
    status_line, _, body = parse_answer(answer)
    assert status_line == "HTTP/1.1 401 Unauthorized" and body["code"] == "missing_api_key"
    assert edge.stop() == 0
