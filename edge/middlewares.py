"""Request id and error middlewares: every response has an id, every error one shape."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web

from edge import appkeys
from edge.errors import ApiError, error_body

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
log = logging.getLogger("edge")

JSON = "application/json"
ALLOWED_METHODS = "GET, HEAD"


def new_request_id() -> str:
    return "req_" + secrets.token_hex(12)


@web.middleware
async def request_id_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Give every request an id, echoed as X-Request-Id on every response."""
    request[appkeys.REQUEST_ID] = rid = new_request_id()
    response = await handler(request)
    response.headers["X-Request-Id"] = rid
    return response


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


def _from_http_exception(exc: web.HTTPException) -> ApiError:
    if exc.status == 404:
        return ApiError("not_found", "no such resource")
    if exc.status == 405:
        return ApiError(
            "method_not_allowed",
            "only GET and HEAD are allowed",
            headers={"Allow": ALLOWED_METHODS},
        )
    raise exc


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn every failure into the one error body; log the unexpected ones, never leak them."""
    try:
        return await handler(request)
    except ApiError as error:
        return error_response(request, error)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return error_response(request, _from_http_exception(exc))
    except Exception:
        log.exception(
            "unhandled error",
            extra={"request_id": request.get(appkeys.REQUEST_ID), "path": request.path},
        )
        return error_response(request, ApiError("internal_error", "internal error"))
