"""The service's outer shell: ids, error shape, 404 and 405 outside the endpoints."""

from __future__ import annotations

import pytest
from support.apierror import assert_api_error


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/nope", 404, "not_found"),
        ("GET", "/v1/nope", 404, "not_found"),
        ("DELETE", "/nope", 404, "not_found"),
    ],
)
async def test_unknown_paths_answer_the_error_shape(edge_client, method, path, status, code):
    client = await edge_client()
    resp = await client.request(method, path)
    await assert_api_error(resp, status, code)
    assert resp.headers["X-Request-Id"].startswith("req_")
