"""Logging of the edge process: levels and format, and aiohttp's parse errors kept quiet."""

from __future__ import annotations

import logging
import sys

from aiohttp.http_exceptions import HttpProcessingError

from edge.config import Config

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


def configure_logging(config: Config) -> None:
    """Root logging at the configured level; the access log on its own handler (JSON lines)."""
    logging.basicConfig(
        level=config.log_level.upper(),
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    access = logging.getLogger("edge.access")
    access.disabled = not config.access_log
    # Its own level: --access-log says whether it is written, not --log-level (WARNING
    # would otherwise silence these INFO lines).
    access.setLevel(logging.INFO)
    access.propagate = False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    access.addHandler(handler)
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
