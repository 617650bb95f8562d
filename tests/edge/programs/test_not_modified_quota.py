"""A 304 Not Modified on the directory endpoints costs the key nothing (GitHub's rule):
with a tiny limit, any number of conditional requests answered 304 leave the quota, and
the RateLimit headers they carry, as the last counted request left them."""

from __future__ import annotations

import random

import pytest
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH

LIMIT, WINDOW = 3, 3600


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    dist = tmp_path_factory.mktemp("quota") / "dist"
    publish(dist, random_catalogue(random.Random(11), 30), "b1")
    return dist


def quota(resp) -> tuple[str, ...]:
    names = ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit")
    return tuple(resp.headers[name] for name in names)


@pytest.mark.parametrize("coding", ["identity", "gzip"])
@pytest.mark.parametrize("path", ["/v1/programs?limit=5", "/v1/programs/{slug}"])
async def test_conditional_hits_leave_the_quota_whole(edge_client, shared_dist, path, coding):
    client = await edge_client(dist=shared_dist, rate_limit_pro=(LIMIT, WINDOW))
    headers = {**AUTH, "Accept-Encoding": coding}
    if "{slug}" in path:
        listing = await (await client.get("/v1/programs?limit=1", headers=headers)).json()
        path = path.format(slug=listing["data"][0]["slug"])
        spent = 2
    else:
        spent = 1
    first = await client.get(path, headers=headers)
    assert first.status == 200
    assert first.headers["RateLimit-Remaining"] == str(LIMIT - spent)
    assert first.headers["RateLimit"].startswith(f'"default";r={LIMIT - spent};')
    conditional = {**headers, "If-None-Match": first.headers["ETag"]}
    for _ in range(3 * LIMIT):
        resp = await client.get(path, headers=conditional)
        assert resp.status == 304
        assert quota(resp) == quota(first)
    # Counted requests still count: the rest of the quota, then 429.
    for remaining in range(LIMIT - spent - 1, -1, -1):
        resp = await client.get(path, headers=headers)
        assert resp.status == 200 and resp.headers["RateLimit-Remaining"] == str(remaining)
    assert (await client.get(path, headers=conditional)).status == 429


async def test_a_stale_validator_is_counted(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist, rate_limit_pro=(LIMIT, WINDOW))
    stale = {**AUTH, "If-None-Match": '"not-the-current-tag"'}
    remaining = [
        (await client.get("/v1/programs", headers=stale)).headers["RateLimit-Remaining"]
        for _ in range(LIMIT)
    ]
    assert remaining == [str(n) for n in range(LIMIT - 1, -1, -1)]
