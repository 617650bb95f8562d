"""The JSON log line every long-lived process writes (`--log-format json`): one object per
line, the same members whichever process wrote it, so one log pipeline reads them all.

Here, below both the edge and the sync worker (neither may import the other), because the
line's shape is a contract with the operators' log tooling like the API's with its clients.

- `ts` (UTC, milliseconds), `level`, `logger`, `message`: always.
- What the process knows about the work under way (`context`): the edge's `requestId`, the
  sync worker's `connection`, `account` and `network`.
- A record's own `fields` (a dict passed as `extra={"fields": ...}`): the edge's access log.
- `exception`, the traceback, when there is one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import IO, Any

import orjson

LOG_FORMATS = ("json", "text")
# The four members a line always has; context and fields never replace them.
CORE = frozenset({"ts", "level", "logger", "message"})


class JsonLineFormatter(logging.Formatter):
    """A record as one JSON object on one line (see the module's docstring)."""

    def context(self, record: logging.LogRecord) -> Mapping[str, Any]:
        """Members describing the work under way when `record` was written; none here."""
        return {}

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": getattr(record, "summary", None) or record.getMessage(),
        }
        line.update(self.context(record))
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update((k, v) for k, v in fields.items() if k not in CORE)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        return orjson.dumps(line, default=str).decode()


def chosen_format(configured: str | None, stream: IO[str]) -> str:
    """The configured format; unset: text on a terminal, json otherwise."""
    if configured:
        return configured
    return "text" if stream.isatty() else "json"
