"""An Expect header changes nothing: GET endpoints answer as usual, never a plain 417."""

from __future__ import annotations

import pytest

PATHS = [
    # The directory answers the public (no build loaded here: the list is 503, a slug 404).
    ("/v1/programs", 503),
    ("/v1/programs/acme", 404),
    ("/v1/me", 401),
    ("/v1/commissions", 401),
    ("/openapi.json", 200),
    ("/healthz", 200),
]


@pytest.mark.parametrize(("path", "status"), PATHS)
@pytest.mark.parametrize("expectation", ["foo", "100-continue"])
async def test_an_expectation_is_ignored(edge_client, path, status, expectation):
    client = await edge_client()
    resp = await client.get(path, headers={"Expect": expectation})
    assert resp.status == status
    if resp.headers["Cache-Control"].startswith("public"):
        # A shared cache replays a public answer to everyone: it names no request.
        assert "X-Request-Id" not in resp.headers
    else:
        assert resp.headers["X-Request-Id"].startswith("req_")
    assert resp.content_type == "application/json"
    if status >= 400:
        assert (await resp.json())["requestId"] == resp.headers["X-Request-Id"]
