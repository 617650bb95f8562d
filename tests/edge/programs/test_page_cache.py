"""The per-build cache of rendered list pages: invisible to clients, bounded, per build."""

from __future__ import annotations

import gc
import gzip
import random
import tracemalloc

import pytest
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH, directory_state, wait_for_build

from edge.directory import pages as directory
from edge.directory.pages import PageCache, RenderedPage

# The headers of a list page's answer besides Link and ETag (edge.handlers.programs).
HEADERS = {
    "Cache-Control": "private, max-age=60, stale-while-revalidate=60",
    "Vary": "Accept-Encoding",
    "Content-Type": "application/json",
}


def page(size: int, tag: str = '"t"', link: str | None = None) -> RenderedPage:
    return RenderedPage(body=b"x" * size, etag=tag, next_link=link)


def cost(key: str, size: int) -> int:
    return directory.ENTRY_OVERHEAD + len(key) + size


def test_the_cache_is_a_bounded_lru():
    cache = PageCache(max_bytes=cost("a", 100) * 2 + 50)
    a, b, c = page(100), page(100), page(100)
    cache.put("a", a)
    cache.put("b", b)
    assert cache.get("a") is a  # now the most recently used
    cache.put("c", c)  # over budget: the least recently used (b) goes
    assert (cache.get("b"), cache.get("a"), cache.get("c")) == (None, a, c)
    assert (len(cache), cache.size) == (2, cost("a", 100) * 2)
    cache.put("huge", page(cache.max_bytes))  # larger than the whole budget: never stored
    assert cache.get("huge") is None and cache.size == cost("a", 100) * 2


def test_gzip_codings_count_and_only_held_pages_keep_theirs():
    cache = PageCache(max_bytes=10_000)
    held = RenderedPage(body=b'{"data":[]}' * 100, etag='"t"', next_link=None)
    cache.put("held", held)
    packed = cache.gzipped("held", held)
    assert gzip.decompress(packed) == held.body
    assert held.gzipped is packed and cache.size == cost("held", len(held.body)) + len(packed)
    loose = page(1000)
    assert cache.gzipped("loose", loose) and loose.gzipped is None
    assert cache.size == cost("held", len(held.body)) + len(packed)


def test_a_zero_budget_turns_it_off():
    cache = PageCache(max_bytes=0)
    cache.put("a", page(10))
    assert (cache.get("a"), len(cache), cache.size) == (None, 0, 0)


@pytest.mark.parametrize("padding", [0, 100, 8_000])
@pytest.mark.slow
def test_keys_and_links_are_charged_so_memory_stays_within_the_budget(padding):
    # A client controls the key: '&' repeated thousands of times around a valid query
    # makes a new key for the same tiny page. The memory the cache holds, counted by
    # tracemalloc, must stay within its budget (plus a little for the dict's own table).
    budget = 1 << 20
    link = "/v1/programs?market=zz&limit=5&cursor=" + "c" * 90
    gc.collect()
    tracemalloc.start()
    try:
        cache = PageCache(budget)
        before = tracemalloc.get_traced_memory()[0]
        for i in range(3_000):
            entry = page(65, f'"{i:024x}"', link if i % 2 else None)
            key = f"market=zz&limit={i % 100 + 1}{'&' * padding}&n={i}"
            cache.put(key, entry)
            # What the handler keeps with a page at most: its headers for each coding and
            # each kind of reader (keyed, public), a dict each.
            for gzipped in (False, True):
                for control in ("private", "public"):
                    kept = {**HEADERS, "Cache-Control": control, "ETag": entry.etag}
                    if entry.next_link is not None:
                        kept["Link"] = f'<{entry.next_link}>; rel="next"'
                    entry.headers[(gzipped, control)] = kept
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert cache.size <= budget
    assert held <= budget * 1.1, (held, len(cache))
    assert len(cache) >= budget // (directory.ENTRY_OVERHEAD + padding + 500) - 1


QUERIES = [
    "",
    "limit=3",
    "market=fr&limit=2",
    "market=FR&limit=2",
    "vertical=saas&minScore=35",
    "recurring=true&limit=100",
    "model=cps&market=de&recurring=false&minScore=1&limit=1",
]


async def answers(client, query, **headers):
    # One Host for every client, so that Link headers compare.
    resp = await client.get(
        f"/v1/programs?{query}", headers={**AUTH, "Host": "api.example", **headers}
    )
    assert resp.status == 200
    kept = ("ETag", "Link", "Content-Encoding", "Vary", "Cache-Control")
    return await resp.read(), {h: resp.headers.get(h) for h in kept}


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
async def test_cached_answers_are_the_uncached_ones(edge_client, dist, monkeypatch, encoding):
    programmes = random_catalogue(random.Random(12), 50)
    publish(dist, programmes, "b1")
    cached = await edge_client()
    monkeypatch.setattr(directory, "PAGE_CACHE_BYTES", 0)
    uncached = await edge_client()
    assert len(directory_state(uncached).current.pages) == 0
    for query in QUERIES:
        reference = await answers(uncached, query, **{"Accept-Encoding": encoding})
        first = await answers(cached, query, **{"Accept-Encoding": encoding})
        again = await answers(cached, query, **{"Accept-Encoding": encoding})
        assert first == again == reference, query
        # Follow the cursor too: the next page is the same from both.
        cursor = reference[1]["Link"]
        if cursor:
            path = cursor.split("/v1/programs", 1)[1].split(">", 1)[0]
            assert await answers(cached, path[1:]) == await answers(uncached, path[1:])
    assert len(directory_state(cached).current.pages) >= len(QUERIES)
    assert len(directory_state(uncached).current.pages) == 0


# Reads the process's memory through ctypes, which asks `ldconfig` where libc is.
@pytest.mark.process
async def test_the_cache_dies_with_its_build(edge_client, dist):
    first = random_catalogue(random.Random(14), 10)
    publish(dist, first, "b1")
    client = await edge_client()
    before = await (await client.get("/v1/programs", headers=AUTH)).json()
    second = random_catalogue(random.Random(15), 10)
    publish(dist, second, "b2")
    await wait_for_build(client, "b2")
    after = await (await client.get("/v1/programs", headers=AUTH)).json()
    assert {r["slug"] for r in before["data"]} == {p["slug"] for p in first}
    assert {r["slug"] for r in after["data"]} == {p["slug"] for p in second}


async def test_invalid_queries_are_never_cached(edge_client, dist):
    publish(dist, random_catalogue(random.Random(16), 10), "b1")
    client = await edge_client()
    for _ in range(2):
        resp = await client.get("/v1/programs?limit=0", headers=AUTH)
        assert resp.status == 400
    assert len(directory_state(client).current.pages) == 0
