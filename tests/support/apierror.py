"""The one check of the API's error shape (docs/spec/api-spec.md, "Errors")."""

from __future__ import annotations

from typing import Any

from aiohttp import ClientResponse


async def assert_api_error(
    resp: ClientResponse, status: int, code: str, param: str | None = None
) -> dict[str, Any]:
    """`resp` is the error `status`/`code`/`param`: exactly the five members, a message, and
    the request id of its X-Request-Id header. Returns the body."""
    assert resp.status == status, f"{resp.status} != {status}: {await resp.text()}"
    body = await resp.json()
    assert body == {
        "code": code,
        "message": body.get("message"),
        "status": status,
        "param": param,
        "requestId": resp.headers["X-Request-Id"],
    }
    assert isinstance(body["message"], str) and body["message"], body
    return body
