"""Logging of the sync worker: level, format (`--log-format`), and the connection a line
concerns.

- `json`: one JSON object per line, the shape the edge writes too (contract.logformat):
  `ts`, `level`, `logger`, `message`, `exception` when there is one, and on every line
  written while a connection syncs (the worker's task for it, and everything that task
  awaits) `connection` (`account/network`), `account` and `network`; the worker's lines
  about a connection outside that task carry them too (`about`).
- `text`: `time LEVEL logger: message` lines.

No line carries a credential whatever the format: the sync never logs request headers,
queries or bodies, nor the text of an exception that could quote them (sync.http); and
every line of a sync logger (`logger`) is redacted by `sync.errors.redact` with the
credentials of the run under way (`CURRENT_SECRETS`), as written and percent-encoded, a
key carried in a query string or a path included.
"""

from __future__ import annotations

import contextvars
import logging
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from contract.logformat import JsonLineFormatter, chosen_format
from sync.errors import redact
from sync.ports import Connection

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The connection the current task syncs; set by the worker in each sync's own task.
CURRENT_CONNECTION: contextvars.ContextVar[Connection | None] = contextvars.ContextVar(
    "sync_connection", default=None
)


# The credential values of the run the current task performs (sync.runner sets it; the
# list grows when the run stores refreshed credentials).
CURRENT_SECRETS: contextvars.ContextVar[Sequence[str]] = contextvars.ContextVar(
    "sync_secrets", default=()
)


class Redacting(logging.Filter):
    """Rewrites a record's message (and traceback) without the current run's secrets."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = CURRENT_SECRETS.get()
        if secrets:
            record.msg = redact(record.getMessage(), secrets)
            record.args = None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = redact(record.exc_text, secrets)
        return True


_REDACTING = Redacting()


def logger(name: str) -> logging.Logger:
    """The logger `name` with the redaction of the current run's secrets on it."""
    found = logging.getLogger(name)
    if _REDACTING not in found.filters:
        found.addFilter(_REDACTING)
    return found


def connection_fields(connection: Connection) -> dict[str, str]:
    """The members a JSON line about `connection` carries."""
    return {
        "connection": str(connection),
        "account": connection.account_uid,
        "network": connection.network,
    }


def about(connection: Connection) -> dict[str, Any]:
    """`extra=` for a line about `connection` written outside its sync's task."""
    return {"fields": connection_fields(connection)}


class SyncJsonFormatter(JsonLineFormatter):
    """The shared JSON line with the connection being synced, when there is one."""

    def context(self, record: logging.LogRecord) -> Mapping[str, Any]:
        connection = CURRENT_CONNECTION.get()
        return {} if connection is None else connection_fields(connection)


def configure_logging(log_format: str | None, level: str = "INFO") -> str:
    """Root logging to stderr at `level`, in `log_format` (unset: text on a terminal, json
    otherwise); returns the format chosen."""
    chosen = chosen_format(log_format, sys.stderr)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        SyncJsonFormatter() if chosen == "json" else logging.Formatter(TEXT_FORMAT)
    )
    logging.basicConfig(level=level, handlers=[handler], force=True)
    return chosen
