"""API errors: one exception type, one body shape (see docs/api.md)."""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from contract.vocabulary import ERROR_CODES


class ApiError(Exception):
    """An error answer: raise it anywhere below the error middleware."""

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


def invalid(param: str, message: str) -> ApiError:
    return ApiError("invalid_parameter", message, param=param)
