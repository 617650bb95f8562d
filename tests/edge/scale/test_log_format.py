"""`--log-format json`: every line the edge writes to stderr is one JSON object, and the
lines written while a request is handled carry its request id."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import signal
import sys

import aiohttp
import pytest
from aiohttp import web
from support.edgeprocess import ROOT, start_edge, wait_healthy
from support.slowedge import SLOW_STARTED

from edge.app import create_app
from edge.config import Config, ConfigError, load
from edge.logs import JsonFormatter, log_format

FIELDS = {"ts", "level", "logger", "message"}


async def test_every_line_is_json_and_the_access_line_has_the_request_id(
    tmp_path, edges, built_dist
):
    args = ["--dist", str(built_dist), "--database", str(tmp_path / "edge.sqlite3")]
    edge = start_edge(tmp_path, [*args, "--log-format", "json", "--access-log", "true"])
    edges.append(edge)
    await wait_healthy(edge)
    ids = []
    async with aiohttp.ClientSession() as session:
        for path in ("/readyz", "/v1/programs", "/no/such/path"):
            async with session.get(edge.base_url + path) as resp:
                await resp.read()
                # A public answer (/v1/programs without a key) carries no request id.
                ids.append((path, resp.status, resp.headers.get("X-Request-Id")))
    assert edge.stop() == 0
    lines = [json.loads(line) for line in edge.log_text().splitlines()]
    assert lines, "the edge wrote nothing"
    for line in lines:
        assert line.keys() >= FIELDS, line
    accessed = [line for line in lines if line["logger"] == "edge.access"]
    by_id = {line["requestId"]: line for line in accessed}
    assert all(rid.startswith("req_") for rid in by_id)
    for path, status, rid in ids:
        (access,) = (
            [line for line in accessed if line["path"] == path] if rid is None else [by_id[rid]]
        )
        assert (access["path"], access["status"]) == (path, status)
        assert access["message"] == f"GET {path} {status}"
    # The lines of the process itself (start, stop) carry no request id.
    assert any(line["logger"] == "edge" and "requestId" not in line for line in lines)


async def test_a_log_line_written_during_a_request_carries_its_id(aiohttp_client, edge_config):
    app = create_app(edge_config)
    logger = logging.getLogger("edge.test-handler")

    async def noisy(request: web.Request) -> web.Response:
        logger.warning("inside %s", request.path)
        return web.json_response({"data": "ok"})

    app.router.add_get("/noisy", noisy)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger.addHandler(handler)
    try:
        client = await aiohttp_client(app)
        resp = await client.get("/noisy")
        rid = resp.headers["X-Request-Id"]
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    inside, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["requestId"] == rid and inside["message"] == "inside /noisy"
    assert inside["level"] == "WARNING" and inside["logger"] == "edge.test-handler"
    assert "requestId" not in outside


def test_an_exception_stays_inside_its_one_line():
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        record = logging.LogRecord("edge", logging.ERROR, __file__, 1, "failed", (), None)
        record.exc_info = sys.exc_info()
    line = JsonFormatter().format(record)
    assert "\n" not in line
    assert "RuntimeError: a bug" in json.loads(line)["exception"]


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("configured", "tty", "chosen"),
    [(None, True, "text"), (None, False, "json"), ("json", True, "json"), ("text", False, "text")],
)
def test_the_format_defaults_to_text_on_a_terminal_only(configured, tty, chosen):
    config = Config(log_format=configured)
    assert log_format(config, Stream(tty)) == chosen


def test_an_unknown_format_is_refused_by_name():
    with pytest.raises(ConfigError, match="--log-format / EDGE_LOG_FORMAT: 'xml' is not one of"):
        load(["--log-format", "xml"], {})


async def test_a_stopping_edge_logs_that_readyz_says_not_ready_and_finishes_its_request(
    tmp_path, edges
):
    slow_edge = (str(ROOT / "tests" / "support" / "slowedge.py"),)
    args = ["--database", str(tmp_path / "edge.sqlite3"), "--log-format", "json"]
    edge = start_edge(tmp_path, args, program=slow_edge)
    edges.append(edge)
    await wait_healthy(edge)
    reader, writer = await asyncio.open_connection("127.0.0.1", edge.port)
    writer.write(b"GET /slow?s=2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    await writer.drain()
    while SLOW_STARTED not in edge.log_text():  # the request reaches its handler
        assert edge.process.poll() is None, edge.log_text()
        await asyncio.sleep(0.02)
    edge.process.send_signal(signal.SIGTERM)
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b'{"data": "slow"}')
    assert await asyncio.to_thread(edge.process.wait, 30) == 0
    messages = [json.loads(line)["message"] for line in edge.log_text().splitlines()]
    assert "shutting down: /readyz answers 503" in messages


@pytest.mark.parametrize("log_format", ["json", "text"])
async def test_every_request_has_its_line_after_a_clean_stop(
    tmp_path, edges, built_dist, log_format
):
    """The access log is written in batches off the request path: a clean stop writes the
    last batch, so N requests leave exactly N lines."""
    args = ["--dist", str(built_dist), "--database", str(tmp_path / "edge.sqlite3")]
    quota = ["--rate-limit-anonymous", "100000/60"]
    edge = start_edge(tmp_path, [*args, *quota, "--log-format", log_format, "--access-log", "true"])
    edges.append(edge)
    await wait_healthy(edge)
    count = 300
    async with aiohttp.ClientSession() as session:
        for number in range(count):
            async with session.get(f"{edge.base_url}/v1/programs?limit={number % 100 + 1}") as resp:
                assert resp.status == 200
                await resp.read()
    assert edge.stop() == 0
    lines = [line for line in edge.log_text().splitlines() if "/v1/programs" in line]
    records = [json.loads(line[line.index("{") :]) for line in lines]
    assert len(records) == count
    assert sorted(r["status"] for r in records) == [200] * count
    assert {r["path"] for r in records} == {"/v1/programs"}
