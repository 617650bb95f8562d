"""Request id and error steps: every response has an id, every error one shape."""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Awaitable, Callable

from aiohttp import web

from edge import appkeys
from edge.http.errors import ApiError, error_body

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
log = logging.getLogger("edge")

JSON = "application/json"
REQUEST_ID_HEADER = "X-Request-Id"
ALLOWED_METHODS = "GET, HEAD"


# Request ids must be unique, not secret: 96 bits from a generator seeded by the OS (per
# process: reseeded in every forked child) cost no system call per request, where
# os.urandom is one `getrandom` each time.
_ids = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _ids.seed(os.urandom(32)))


def new_request_id() -> str:
    """A request id: `req_` and 96 random bits as 24 hex digits."""
    return f"req_{_ids.getrandbits(96):024x}"


async def ignore_expectation(request: web.Request) -> None:
    """The routes' `expect_handler`: an `Expect` header is ignored.

    It is for requests with a body, and every endpoint is GET or HEAD; aiohttp's default
    answers any expectation but 100-continue with a plain-text 417, a status no endpoint
    lists, before any middleware runs (so without JSON body or request id)."""
    return None


def error_response(request: web.Request, error: ApiError) -> web.Response:
    """The JSON answer for an ApiError, with its extra headers."""
    rid = request.get(appkeys.REQUEST_ID) or new_request_id()
    response = web.Response(
        body=error_body(error.code, error.message, error.param, rid),
        status=error.status,
        content_type=JSON,
        headers=error.headers,
    )
    if error.status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="api"'
    # Errors are about this request only; no shared cache should keep them.
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def method_not_allowed() -> ApiError:
    """405 with `Allow`: every path answers GET and HEAD only."""
    return ApiError(
        "method_not_allowed", "only GET and HEAD are allowed", headers={"Allow": ALLOWED_METHODS}
    )


def _from_http_exception(exc: web.HTTPException) -> ApiError:
    if exc.status == 404:
        return ApiError("not_found", "no such resource")
    if exc.status == 405:
        return method_not_allowed()
    raise exc


def response_for(request: web.Request, exc: Exception) -> web.Response:
    """The error step: every failure as the one error body; the unexpected ones logged,
    never leaked. Re-raises what is not an error (an HTTPException under 400: a 304...).

    Called from an `except Exception as exc:` block (so log.exception sees the traceback).
    """
    if isinstance(exc, ApiError):
        return error_response(request, exc)
    if isinstance(exc, web.HTTPException):
        if exc.status < 400:
            raise exc
        if exc.status == 404 and request.method == "CONNECT":
            # Its target is a host and port, not a path, so no route matched: the method
            # is what the API does not take (405), whatever the target.
            return error_response(request, method_not_allowed())
        return error_response(request, _from_http_exception(exc))
    log.exception(
        "unhandled error",
        extra={"request_id": request.get(appkeys.REQUEST_ID), "path": request.path},
    )
    return error_response(request, ApiError("internal_error", "internal error"))
