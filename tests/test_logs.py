"""aiohttp's parse errors (any client can cause them) are one WARNING line, no traceback."""

from __future__ import annotations

import asyncio
import logging

import pytest

from edge.logs import AIOHTTP_SERVER, install_parse_error_filter

KEY = b"afk_ThisIsTheSecretKeyOfTheClient0123"
MALFORMED = [
    b"GET /v1/programs?" + b"x" * 9000 + b" HTTP/1.1\r\nHost: a\r\n\r\n",  # line too long
    b"FOO /v1/programs HTTP/1.1\r\nHost: a\r\n\r\n",  # a method the parser does not know
    b"GET /v1/programs HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n",  # no colon
    # A key in a header the parser refuses: the log line must not quote it.
    b"GET /v1/me HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + KEY + b"\x01\r\n\r\n",
    b"GET /v1/me HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + KEY + b"x" * 9000 + b"\r\n\r\n",
]


@pytest.fixture
def parse_error_filter():
    installed = install_parse_error_filter()
    assert install_parse_error_filter() is installed  # installed once
    yield installed
    logging.getLogger(AIOHTTP_SERVER).removeFilter(installed)


async def send_raw(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


@pytest.mark.parametrize(
    "request_bytes", MALFORMED, ids=["long-line", "method", "header", "key-control", "key-long"]
)
async def test_a_malformed_request_logs_one_warning_line(
    edge_client, parse_error_filter, caplog, request_bytes
):
    client = await edge_client()
    # A request first: aiohttp logs a bad method at DEBUG on a connection's first request.
    prefix = b"GET /openapi.json HTTP/1.1\r\nHost: a\r\n\r\n"
    with caplog.at_level(logging.DEBUG, logger=AIOHTTP_SERVER):
        answer = await send_raw(client.port, prefix + request_bytes)
    assert b" 400 Bad Request\r\n" in answer
    records = [r for r in caplog.records if r.name == AIOHTTP_SERVER]
    assert records, "aiohttp logged nothing"
    for record in records:
        # One line, no traceback; at WARNING, or at DEBUG where aiohttp keeps it on purpose.
        assert record.levelno in (logging.WARNING, logging.DEBUG) and record.exc_info is None
        message = record.getMessage()
        assert "\n" not in message and len(message) < 400
        # Nothing the client sent is quoted: it may be a key.
        assert "xxxxxxxxxx" not in message and KEY.decode() not in message


async def test_other_errors_keep_their_level_and_traceback(parse_error_filter, caplog):
    logger = logging.getLogger(AIOHTTP_SERVER)
    with caplog.at_level(logging.ERROR, logger=AIOHTTP_SERVER):
        try:
            raise RuntimeError("a bug")
        except RuntimeError:
            logger.exception("Error handling request")
    (record,) = [r for r in caplog.records if r.name == AIOHTTP_SERVER]
    assert record.levelno == logging.ERROR and record.exc_info is not None


def test_a_downgraded_record_respects_the_loggers_level(parse_error_filter):
    # aiohttp logs at ERROR, so the record passed an ERROR level check before it became a
    # WARNING: the filter checks again.
    from aiohttp.http_exceptions import LineTooLong

    logger = logging.getLogger(AIOHTTP_SERVER)
    previous = logger.level
    record = logger.makeRecord(
        AIOHTTP_SERVER, logging.ERROR, __file__, 1, "Error handling request", (),
        (LineTooLong, LineTooLong("x" * 10, "8190"), None),
    )  # fmt: skip
    try:
        logger.setLevel(logging.ERROR)
        assert parse_error_filter.filter(record) is False
        logger.setLevel(logging.WARNING)
        assert parse_error_filter.filter(record) is True
    finally:
        logger.setLevel(previous)


def test_a_record_aiohttp_keeps_at_debug_stays_there(parse_error_filter):
    # aiohttp logs a bad method on a connection's first request at DEBUG on purpose (stray
    # TLS or junk traffic): the filter raises nothing.
    from aiohttp.http_exceptions import BadHttpMethod

    logger = logging.getLogger(AIOHTTP_SERVER)
    record = logger.makeRecord(
        AIOHTTP_SERVER, logging.DEBUG, __file__, 1, "Error handling request", (),
        (BadHttpMethod, BadHttpMethod("FOO"), None),
    )  # fmt: skip
    previous = logger.level
    try:
        logger.setLevel(logging.DEBUG)
        assert parse_error_filter.filter(record) is True
    finally:
        logger.setLevel(previous)
    assert record.levelno == logging.DEBUG and record.exc_info is None
