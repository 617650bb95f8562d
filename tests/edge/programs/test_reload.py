"""Hot reload: rebuilds mid-walk, swaps under load, broken builds, no build, SIGHUP."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import shutil
import signal
from collections import Counter

import orjson
import pytest
from support.distwriter import brute_force, install, publish, random_catalogue, write_dist
from support.programkit import AUTH, directory_state, wait_for_build, walk

from contract import shardformat as sf


def renamed(programmes, build_id):
    """The same catalogue with every name stamped with the build, to tell builds apart."""
    return [{**p, "name": f"{p['slug']} @ {build_id}"} for p in programmes]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.process
async def test_a_rebuild_between_pages_neither_repeats_nor_skips_unchanged_programmes(
    edge_client, dist, seed
):
    rng = random.Random(seed)
    before = random_catalogue(rng, 40)
    publish(dist, before, "b1")
    client = await edge_client()
    seen, pages = await walk(client, {}, [7, 7], partial=True)
    cursor = pages[-1]["nextCursor"]

    after = [dict(p) for p in before]
    # Remove one (on odd seeds, the very row the cursor points after), re-score one, add one.
    order = brute_force(before)
    gone = order[13] if seed % 2 else rng.choice(order)
    after = [p for p in after if p["slug"] != gone]
    rescored = rng.choice(after)
    rescored["score"] = rng.choice([s for s in (0, 35, 64, 100) if s != rescored["score"]])
    added = random_catalogue(rng, 1)[0]
    added["slug"] = "zz-added"
    after.append(added)
    publish(dist, after, "b2")
    await wait_for_build(client, "b2")

    rest, _ = await walk(client, {"cursor": cursor}, [rng.randint(1, 9) for _ in range(50)])
    walked = Counter(row["slug"] for row in seen + rest)
    unchanged = {p["slug"] for p in before} - {gone, rescored["slug"]}
    for slug in unchanged:
        assert walked[slug] == 1, slug
    assert walked[gone] <= 1
    # What came after the cursor is exactly the new build's order past that sort key.
    last = seen[-1]
    key = (-last["score"], last["slug"])
    expected = [s for s in brute_force(after) if (-by_slug(after)[s]["score"], s) > key]
    assert [row["slug"] for row in rest] == expected


def by_slug(programmes):
    return {p["slug"]: p for p in programmes}


@pytest.mark.parametrize("exchange", [True, False], ids=["rename-exchange", "two-renames"])
@pytest.mark.process
async def test_no_request_fails_while_builds_are_swapped(edge_client, dist, exchange):
    rng = random.Random(42)
    builds = {}
    for n in range(1, 6):
        build_id = f"b{n}"
        catalogue = random_catalogue(rng, rng.randint(10, 30))
        builds[build_id] = renamed(catalogue, build_id)
    publish(dist, builds["b1"], "b1")
    client = await edge_client()
    stop = asyncio.Event()
    outcomes: Counter[str] = Counter()
    served: set[str] = set()

    async def hammer(worker: int) -> None:
        local = random.Random(worker)
        while not stop.is_set():
            limit = local.choice((1, 5, 25, 100))
            market = local.choice((None, "FR", "DE"))
            params = {"limit": str(limit)} | ({"market": market} if market else {})
            resp = await client.get("/v1/programs", params=params, headers=AUTH)
            outcomes[str(resp.status)] += 1
            assert resp.status == 200, await resp.text()
            data = (await resp.json())["data"]
            if not data:
                continue
            # One page, one build: exactly that build's first page for these filters.
            build_id = data[0]["name"].rsplit(" @ ", 1)[1]
            served.add(build_id)
            expected = brute_force(builds[build_id], market=market)[:limit]
            assert [row["slug"] for row in data] == expected
            assert {row["name"].rsplit(" @ ", 1)[1] for row in data} == {build_id}
            one = local.choice(data)["slug"]
            doc = await client.get(f"/v1/programs/{one}", headers=AUTH)
            # The slug may be gone from a newer build by now: 404 is the right answer then.
            outcomes[str(doc.status)] += 1
            assert doc.status in (200, 404)

    workers = [asyncio.create_task(hammer(i)) for i in range(8)]
    try:
        for build_id in list(builds)[1:]:
            await asyncio.sleep(0.05)
            await asyncio.to_thread(publish, dist, builds[build_id], build_id, exchange=exchange)
            await wait_for_build(client, build_id)
        await asyncio.sleep(0.05)
    finally:
        stop.set()
        await asyncio.gather(*workers)
    assert set(outcomes) <= {"200", "404"}
    assert outcomes["200"] > 100
    assert len(served) >= 3  # the requests really did span several builds


def corrupt_keys(root):
    keys = orjson.loads((root / sf.KEYS).read_bytes())
    (root / sf.KEYS).write_bytes(orjson.dumps({**keys, "buildId": "someone-else"}))


def truncate_rows(root):
    rows = (root / sf.ROWS).read_bytes().splitlines(keepends=True)
    (root / sf.ROWS).write_bytes(b"".join(rows[:-1]))


def garbage_manifest(root):
    (root / sf.MANIFEST).write_bytes(b"{not json")


def list_manifest(root):
    (root / sf.MANIFEST).write_bytes(b"[]")


def future_format(root):
    manifest = orjson.loads((root / sf.MANIFEST).read_bytes())
    (root / sf.MANIFEST).write_bytes(orjson.dumps({**manifest, "format": 99}))


def missing_shards(root):
    (root / sf.SHARDS).unlink()


def truncated_shards(root):
    blob = (root / sf.SHARDS).read_bytes()
    (root / sf.SHARDS).write_bytes(blob[: len(blob) // 2])


def unsorted_shard(root):
    """A shard whose ranks are not ascending, consistent with the manifest otherwise."""
    lines = (root / sf.SHARDS).read_bytes().split(b"\n")
    first = orjson.loads(lines[0])  # any.any.any.any sorts first: every rank
    assert len(first) > 1
    swapped = orjson.dumps(first[::-1])
    assert len(swapped) == len(lines[0])
    (root / sf.SHARDS).write_bytes(b"\n".join([swapped, *lines[1:]]))


def unsorted_rows(root):
    keys = orjson.loads((root / sf.KEYS).read_bytes())
    keys["scores"] = keys["scores"][::-1]
    (root / sf.KEYS).write_bytes(orjson.dumps(keys))


@pytest.mark.parametrize(
    "breakage",
    [
        corrupt_keys,
        truncate_rows,
        garbage_manifest,
        list_manifest,
        future_format,
        missing_shards,
        truncated_shards,
        unsorted_shard,
        unsorted_rows,
    ],
)
@pytest.mark.process
async def test_a_broken_build_is_refused_and_the_old_one_keeps_serving(
    edge_client, dist, caplog, breakage
):
    good = random_catalogue(random.Random(1), 8)
    publish(dist, good, "b1")
    client = await edge_client()
    before = await (await client.get("/v1/programs", headers=AUTH)).read()

    staged = dist.with_name("broken")
    write_dist(staged, random_catalogue(random.Random(2), 8), "b-broken")
    breakage(staged)
    with caplog.at_level(logging.ERROR, logger="edge.directory.pages"):
        install(staged, dist)
        for _ in range(200):
            if any("refused the build" in r.getMessage() for r in caplog.records):
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the broken build was never looked at")
    assert directory_state(client).current.build_id == "b1"
    resp = await client.get("/v1/programs", headers=AUTH)
    assert resp.status == 200 and await resp.read() == before
    # And the next good build is taken.
    publish(dist, good, "b2")
    await wait_for_build(client, "b2")


async def test_no_build_means_503_for_the_list_and_404_by_slug(edge_client, dist):
    client = await edge_client(retry_after=7)
    resp = await client.get("/v1/programs", headers=AUTH)
    assert resp.status == 503
    body = await resp.json()
    assert (body["code"], body["param"]) == ("unavailable", None)
    assert resp.headers["Retry-After"] == "7"
    assert resp.headers["Cache-Control"] == "no-store"
    # Input is still checked first, and the key before that; the public gets the same 503.
    assert (await client.get("/v1/programs?limit=0", headers=AUTH)).status == 400
    assert (await client.get("/v1/programs", headers={"Authorization": "Bearer x"})).status == 401
    assert (await client.get("/v1/programs")).status == 503
    # The by-slug endpoint may not answer 503: while nothing is loaded, nothing is published.
    programmes = random_catalogue(random.Random(1), 5)
    slug = programmes[0]["slug"]
    missing = await client.get(f"/v1/programs/{slug}", headers=AUTH)
    unknown = await client.get("/v1/programs/nope", headers=AUTH)
    assert missing.status == unknown.status == 404
    assert {**await missing.json(), "requestId": ""} == {**await unknown.json(), "requestId": ""}

    publish(dist, programmes, "b1")
    await wait_for_build(client, "b1")
    assert (await client.get("/v1/programs", headers=AUTH)).status == 200
    assert (await client.get(f"/v1/programs/{slug}", headers=AUTH)).status == 200


async def test_a_vanished_dist_keeps_the_last_build_serving(edge_client, dist):
    publish(dist, random_catalogue(random.Random(1), 5), "b1")
    client = await edge_client()
    shutil.rmtree(dist)
    await asyncio.sleep(0.1)  # several polls
    assert (await client.get("/v1/programs", headers=AUTH)).status == 200
    publish(dist, random_catalogue(random.Random(2), 5), "b2")
    await wait_for_build(client, "b2")


@pytest.mark.process
async def test_sighup_reloads_at_once(edge_client, dist):
    publish(dist, random_catalogue(random.Random(1), 5), "b1")
    client = await edge_client(reload_interval=3600.0)  # polling will not do it
    state = directory_state(client)
    if not state.sighup:
        pytest.skip("SIGHUP cannot be handled here (not the main thread, or no Unix signals)")
    publish(dist, random_catalogue(random.Random(2), 5), "b2")
    await asyncio.sleep(0.05)
    assert state.current.build_id == "b1"
    os.kill(os.getpid(), signal.SIGHUP)
    await wait_for_build(client, "b2", within=2.0)
