"""The rate limit as clients see it: RateLimit-* headers, 429, per plan, through a real server."""

from __future__ import annotations

import re

import pytest
from aiohttp import web
from contract_support import FREE_KEY, PRO_KEY, bearer
from support.apierror import assert_api_error

from edge import appkeys
from edge.http.conditional import is_fresh
from edge.http.conditional import not_modified as conditional_not_modified
from edge.http.errors import invalid

RATE_HEADERS = ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")


async def echo_state(request: web.Request) -> web.Response:
    """What /v1/me will report: the decision the middleware stored for this request."""
    state = request[appkeys.RATE_STATE]
    return web.json_response(
        {"limit": state.limit, "window": state.window_seconds, "remaining": state.remaining}
    )


async def bad_parameter(request: web.Request) -> web.Response:
    raise invalid("limit", "limit must be an integer from 1 to 100")


async def not_modified(request: web.Request) -> web.Response:
    raise web.HTTPNotModified()


ROUTES = {"/v1/_ok": echo_state, "/v1/_bad": bad_parameter, "/v1/_304": not_modified}


def rate(resp) -> tuple[int, int, int]:
    return tuple(int(resp.headers[name]) for name in RATE_HEADERS)


async def test_every_counted_answer_says_limit_remaining_reset(edge_client):
    client = await edge_client(routes=ROUTES, rate_limit_free=(5, 60))
    resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
    assert resp.status == 200
    assert rate(resp) == (5, 4, 12)  # 12 s per request: whole again in 12 s
    assert await resp.json() == {"limit": 5, "window": 60, "remaining": 4}
    resp = await client.get("/v1/_bad", headers=bearer(FREE_KEY))
    assert resp.status == 400
    assert (await resp.json())["code"] == "invalid_parameter"
    assert rate(resp) == (5, 3, 24)
    resp = await client.get("/v1/_304", headers=bearer(FREE_KEY))
    # A 304 is not counted: its cost is given back, the quota is as the 400 left it.
    assert resp.status == 304
    assert rate(resp) == (5, 3, 24)
    resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
    assert rate(resp) == (5, 2, 36)


async def test_a_real_handlers_400_carries_the_headers(edge_client):
    client = await edge_client(rate_limit_free=(5, 60))
    resp = await client.get("/v1/programs?limit=0", headers=bearer(FREE_KEY))
    assert resp.status == 400
    body = await resp.json()
    assert (body["code"], body["param"]) == ("invalid_parameter", "limit")
    assert rate(resp) == (5, 4, 12)


async def test_exhaustion_then_429_then_recovery(edge_client, clock):
    client = await edge_client(routes=ROUTES, rate_limit_free=(3, 30))
    for remaining in (2, 1, 0):
        resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
        assert resp.status == 200 and rate(resp)[1] == remaining
    resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
    await assert_api_error(resp, 429, "rate_limited")
    assert resp.headers["Retry-After"] == "10"
    assert rate(resp) == (3, 0, 30)
    assert resp.content_type == "application/json"
    clock.advance(9.5)
    resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
    assert resp.status == 429 and resp.headers["Retry-After"] == "1"
    clock.advance(0.5)
    resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
    assert resp.status == 200 and rate(resp) == (3, 0, 30)
    clock.advance(30)
    resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
    assert rate(resp) == (3, 2, 10)


async def test_limits_follow_the_plan(edge_client):
    client = await edge_client(routes=ROUTES, rate_limit_free=(2, 60), rate_limit_pro=(4, 60))
    free = [(await client.get("/v1/_ok", headers=bearer(FREE_KEY))).status for _ in range(5)]
    pro = [(await client.get("/v1/_ok", headers=bearer(PRO_KEY))).status for _ in range(5)]
    assert free == [200, 200, 429, 429, 429]
    assert pro == [200, 200, 200, 200, 429]
    resp = await client.get("/v1/_ok", headers=bearer(PRO_KEY))
    assert rate(resp) == (4, 0, 60)


async def test_head_counts_like_get(edge_client):
    client = await edge_client(routes=ROUTES, rate_limit_free=(3, 60))
    resp = await client.head("/v1/_ok", headers=bearer(FREE_KEY))
    assert resp.status == 200 and rate(resp) == (3, 2, 20)
    resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
    assert rate(resp)[1] == 1


async def test_preflights_and_unauthenticated_requests_do_not_count(edge_client):
    client = await edge_client(routes=ROUTES, rate_limit_free=(3, 60))
    preflight = {
        **bearer(FREE_KEY),
        "Origin": "https://example.org",
        "Access-Control-Request-Method": "GET",
    }
    for _ in range(5):
        resp = await client.options("/v1/_ok", headers=preflight)
        assert resp.status < 300
        assert "RateLimit-Remaining" not in resp.headers
    for _ in range(5):
        resp = await client.get("/v1/_ok", headers=bearer("afk_unknown"))
        assert resp.status == 401
        assert "RateLimit-Remaining" not in resp.headers
    resp = await client.get("/openapi.json")
    assert resp.status == 200 and "RateLimit-Limit" not in resp.headers
    resp = await client.get("/v1/_ok", headers=bearer(FREE_KEY))
    assert rate(resp) == (3, 2, 20)


# --- The draft's structured fields beside the integer ones -------------------------------

POLICY_RE = re.compile(r'^"default";q=(\d+);w=(\d+)$')
RATELIMIT_RE = re.compile(r'^"default";r=(\d+);t=(\d+)$')


def structured(resp) -> tuple[int, int, int, int]:
    """(q, w, r, t) of `RateLimit-Policy` and `RateLimit`; fails when either is malformed."""
    policy = POLICY_RE.fullmatch(resp.headers["RateLimit-Policy"])
    left = RATELIMIT_RE.fullmatch(resp.headers["RateLimit"])
    assert policy is not None and left is not None, dict(resp.headers)
    return int(policy[1]), int(policy[2]), int(left[1]), int(left[2])


def assert_agree(resp, window: int) -> None:
    limit, remaining, reset = rate(resp)
    assert structured(resp) == (limit, window, remaining, reset)


@pytest.mark.parametrize(("limit", "window"), [(5, 60), (3, 30), (600, 60), (1, 1)])
async def test_both_header_forms_agree_on_every_answer(edge_client, clock, limit, window):
    client = await edge_client(routes=ROUTES, rate_limit_free=(limit, window))
    statuses = set()
    for path in ("/v1/_ok", "/v1/_bad", "/v1/_304") * (limit + 1):
        resp = await client.get(path, headers=bearer(FREE_KEY))
        statuses.add(resp.status)
        assert_agree(resp, window)
        clock.advance(window / limit / 3)
    # Two counted requests per interval, one refilled: every limit is met, and its 429.
    assert {200, 429} <= statuses


async def test_cors_exposes_both_header_forms(edge_client):
    client = await edge_client(routes=ROUTES, rate_limit_free=(5, 60))
    resp = await client.get("/v1/_ok", headers={**bearer(FREE_KEY), "Origin": "https://a.test"})
    exposed = {h.strip() for h in resp.headers["Access-Control-Expose-Headers"].split(",")}
    assert {*RATE_HEADERS, "RateLimit-Policy", "RateLimit", "Retry-After"} <= exposed


# --- A 304 Not Modified costs nothing ----------------------------------------------------

ETAG = '"v1"'


async def tagged(request: web.Request) -> web.Response:
    """A representation with an ETag, answered 304 on a match (the real helpers)."""
    if is_fresh(request, ETAG):
        return conditional_not_modified({"ETag": ETAG})
    return web.Response(body=b"{}", content_type="application/json", headers={"ETag": ETAG})


async def test_conditional_hits_do_not_use_the_quota(edge_client, clock):
    client = await edge_client(routes={"/v1/_tagged": tagged}, rate_limit_free=(3, 3600))
    first = await client.get("/v1/_tagged", headers=bearer(FREE_KEY))
    assert first.status == 200 and rate(first)[:2] == (3, 2)
    conditional = {**bearer(FREE_KEY), "If-None-Match": ETAG}
    for _ in range(10):  # far more than the limit
        resp = await client.get("/v1/_tagged", headers=conditional)
        assert resp.status == 304
        assert rate(resp) == rate(first)
        assert_agree(resp, 3600)
    # The quota is still what the one 200 left: two more requests, then 429.
    for remaining in (1, 0):
        resp = await client.get("/v1/_tagged", headers=bearer(FREE_KEY))
        assert resp.status == 200 and rate(resp)[1] == remaining
    resp = await client.get("/v1/_tagged", headers=bearer(FREE_KEY))
    assert resp.status == 429
    # Over the limit, a conditional request is refused like any other.
    resp = await client.get("/v1/_tagged", headers=conditional)
    assert resp.status == 429 and rate(resp)[1] == 0
