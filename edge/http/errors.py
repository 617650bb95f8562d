"""Every error answer of the edge: one exception type, one body shape (see docs/api.md),
and the functions that build them, so that a given error is made in one place.

- `ApiError` is raised anywhere below the error step (`error_middleware`), which turns
  it, an aiohttp HTTPException or an unexpected failure into the JSON answer
  (`response_for`).
- `unavailable(message, retry_after)` is every 503; `not_found`, `method_not_allowed`,
  `invalid` the other common ones.
- `protocol_error_response` answers what never reached the application (a request the
  HTTP parser refused, a failure outside it) in the same shape.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler

from contract.endpoints import JSON
from contract.vocabulary import ERROR_CODES
from edge import appkeys
from edge.http.cors import ALLOWED_METHODS
from edge.http.requestid import REQUEST_ID_HEADER, new_request_id
from edge.http.security import SECURITY_HEADERS

log = logging.getLogger("edge")

# Errors are about one request only; no cache, shared or private, should keep them.
NO_STORE = "no-store"
UNPARSABLE = (
    "the request is not valid HTTP/1.1 (a request line or header over 8190 bytes, an "
    "unknown method, or a malformed header); nothing of it was read"
)


class ApiError(Exception):
    """An error answer: raise it anywhere below the error step."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = ERROR_CODES[code]
        self.message = message
        self.param = param
        self.headers = dict(headers or {})


def error_body(code: str, message: str, param: str | None, request_id: str) -> bytes:
    """The one error shape; every member is always present."""
    return orjson.dumps(
        {
            "code": code,
            "message": message,
            "status": ERROR_CODES[code],
            "param": param,
            "requestId": request_id,
        }
    )


# --- the errors ---------------------------------------------------------------------------


def invalid(param: str, message: str) -> ApiError:
    """400 invalid_parameter, naming the parameter."""
    return ApiError("invalid_parameter", message, param=param)


def unavailable(
    message: str, retry_after: int, headers: Mapping[str, str] | None = None
) -> ApiError:
    """503 unavailable with `Retry-After: retry_after` (seconds), and `headers` besides."""
    return ApiError(
        "unavailable", message, headers={**(headers or {}), "Retry-After": str(retry_after)}
    )


def not_found(message: str = "no such resource") -> ApiError:
    """404 not_found."""
    return ApiError("not_found", message)


def method_not_allowed() -> ApiError:
    """405 with `Allow`: every path answers GET and HEAD only."""
    return ApiError(
        "method_not_allowed", "only GET and HEAD are allowed", headers={"Allow": ALLOWED_METHODS}
    )


# --- the answers ----------------------------------------------------------------------------


def error_response(error: ApiError, request_id: str) -> web.Response:
    """The JSON answer for an ApiError, with its extra headers."""
    response = web.Response(
        body=error_body(error.code, error.message, error.param, request_id),
        status=error.status,
        content_type=JSON,
        headers=error.headers,
    )
    if error.status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="api"'
    response.headers.setdefault("Cache-Control", NO_STORE)
    return response


def _from_http_exception(request: web.Request, exc: web.HTTPException) -> ApiError:
    if exc.status == 404 and request.method == "CONNECT":
        # Its target is a host and port, not a path, so no route matched: the method is
        # what the API does not take (405), whatever the target.
        return method_not_allowed()
    if exc.status == 404:
        return not_found()
    if exc.status == 405:
        return method_not_allowed()
    raise exc


def response_for(request: web.Request, exc: Exception) -> web.Response:
    """The error step: every failure as the one error body; the unexpected ones logged,
    never leaked. Re-raises what is not an error (an HTTPException under 400: a 304...)
    and an HTTP error the API has no code for.

    Called from an `except Exception as exc:` block (so log.exception sees the traceback).
    """
    rid = request.get(appkeys.REQUEST_ID) or new_request_id()
    if isinstance(exc, ApiError):
        return error_response(exc, rid)
    if isinstance(exc, web.HTTPException):
        if exc.status < 400:
            raise exc
        return error_response(_from_http_exception(request, exc), rid)
    log.exception(
        "unhandled error",
        extra={"request_id": request.get(appkeys.REQUEST_ID), "path": request.path},
    )
    return error_response(ApiError("internal_error", "internal error"), rid)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The error step, under the CORS step: a failure below it (the key, the rate limit,
    the handler) becomes its error answer, which the steps above mark like any other."""
    try:
        return await handler(request)
    except Exception as exc:
        return response_for(request, exc)


def protocol_error_response(status: int) -> web.Response:
    """The answer to a request the HTTP parser refused (status 400), or to a failure
    outside the app (500): the one error body with a new request id, nothing of the
    request in it, and the connection closed (its state is unknown after it)."""
    if status >= 500:
        error = ApiError("internal_error", "internal error")
    else:
        error = ApiError("invalid_parameter", UNPARSABLE)
    rid = new_request_id()
    response = error_response(error, rid)
    response.headers[REQUEST_ID_HEADER] = rid
    # Made outside the application: its on_response_prepare signal does not run.
    response.headers.update(SECURITY_HEADERS)
    response.force_close()
    return response
