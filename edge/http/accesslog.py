"""Structured access log: one JSON line per request, never a header value or a key."""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from edge import appkeys
from edge.http.requestid import REQUEST_ID_HEADER


def access_record(
    request: web.BaseRequest, response: web.StreamResponse, seconds: float
) -> dict[str, Any]:
    """What one access-log line says (the key's prefix at most, never the key)."""
    principal = request.get(appkeys.PRINCIPAL)
    return {
        "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "method": request.method,
        "path": request.path,
        "status": response.status,
        "durationMs": round(seconds * 1000, 3),
        "bytes": response.body_length,
        "keyPrefix": principal.prefix if principal else None,
        # A request the HTTP parser refused never reached the app: its id is the answer's.
        "requestId": request.get(appkeys.REQUEST_ID) or response.headers.get(REQUEST_ID_HEADER),
    }


class JsonAccessLogger(AbstractAccessLogger):
    """aiohttp access logger writing `access_record` as JSON."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        record = access_record(request, response, time)
        # The line is the record as JSON; with --log-format json, edge.logs writes the
        # record's fields into the one JSON object of the line instead (`fields`), under
        # a short `summary` as its message.
        summary = f"{record['method']} {record['path']} {record['status']}"
        self.logger.info(
            orjson.dumps(record).decode(), extra={"fields": record, "summary": summary}
        )

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)
