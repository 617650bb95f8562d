"""Logging of the edge process: levels and format, and aiohttp's parse errors kept quiet.

Two formats (`--log-format`), for every logger, and for the access log, which
edge.http.accesslog writes in the same form without going through `logging`:

- `json`: one JSON object per line (contract.logformat, shared with the sync worker): `ts`
  (UTC, milliseconds), `level`, `logger`, `message`, `requestId` when written while a
  request is handled, `exception` with the traceback when there is one. An access-log line
  adds its record's fields (method, path, status, durationMs, bytes, keyPrefix), its
  message being `METHOD PATH STATUS`.
- `text`: `LEVEL logger: message` lines; the access log's lines are its records as JSON.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import IO, Any

from aiohttp.http_exceptions import HttpProcessingError

from contract.logformat import JsonLineFormatter, chosen_format
from edge.config import Config
from edge.http.requestid import CURRENT_REQUEST_ID

# The logger aiohttp's HTTP server writes its own errors to.
AIOHTTP_SERVER = "aiohttp.server"


class ClientParseErrors(logging.Filter):
    """A request aiohttp cannot parse (a request line over 8190 bytes, a method its parser
    does not know, a broken header) is logged by aiohttp at ERROR with a traceback: noise
    that any client can make, and that buries the errors that matter. Such a record becomes
    one WARNING line naming the error, without the traceback and without aiohttp's detail:
    that quotes the offending bytes, which may be an Authorization header and its key."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not (isinstance(exc, HttpProcessingError) and 400 <= (exc.code or 0) < 500):
            return True
        record.msg = f"{record.getMessage()}: {type(exc).__name__} {exc.code}"
        record.args = ()
        record.exc_info = record.exc_text = None
        # What aiohttp logs at ERROR becomes a WARNING, and passed the level check as an
        # ERROR: check again. What it keeps at DEBUG on purpose (a connection's first
        # request with a bad method: stray TLS or junk traffic) stays at DEBUG.
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return logging.getLogger(AIOHTTP_SERVER).isEnabledFor(record.levelno)


TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"


class JsonFormatter(JsonLineFormatter):
    """The shared JSON line (contract.logformat) with the request's id while one is handled."""

    def context(self, record: logging.LogRecord) -> Mapping[str, Any]:
        request_id = CURRENT_REQUEST_ID.get() or getattr(record, "request_id", None)
        return {"requestId": request_id} if request_id else {}


def log_format(config: Config, stream: IO[str]) -> str:
    """The configured format; unset: text on a terminal, json otherwise."""
    return chosen_format(config.log_format, stream)


def configure_logging(config: Config) -> None:
    """Root logging at the configured level, in the configured format (the access log is
    not written through `logging`: edge.http.accesslog, whatever --log-level says)."""
    json_lines = log_format(config, sys.stderr) == "json"
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_lines else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=config.log_level.upper(), handlers=[handler])
    install_parse_error_filter()


def install_parse_error_filter() -> ClientParseErrors:
    """Add ClientParseErrors to aiohttp's server logger (once); returns it."""
    logger = logging.getLogger(AIOHTTP_SERVER)
    for existing in logger.filters:
        if isinstance(existing, ClientParseErrors):
            return existing
    installed = ClientParseErrors()
    logger.addFilter(installed)
    return installed
