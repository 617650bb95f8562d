"""Shard format 5: every page in api/shards.jsonl, found through the manifest's byte ranges."""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from buildkit import Content, submission
from support.distwriter import random_programme

from contract import searchindex
from contract import shardformat as sf


def test_encode_shards_lays_out_sorted_combinations_and_indexes_them() -> None:
    ranks = {"b.any.any.any": [0, 2, 5], "a.any.any.any": [], "c.any.any.any": list(range(7))}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sf, "PAGE_SIZE", 3)
        blob, index = sf.encode_shards(ranks)
    assert list(index) == sorted(ranks)
    assert blob.splitlines() == [b"[]", b"[0,2,5]", b"[0,1,2]", b"[3,4,5]", b"[6]"]
    for key, (count, offset, length) in index.items():
        part = blob[offset : offset + length]
        assert part.endswith(b"\n")
        pages = [orjson.loads(line) for line in part.splitlines()]
        assert [r for page in pages for r in page] == ranks[key] and count == len(ranks[key])
    assert sum(length for _, _, length in index.values()) == len(blob)


def catalogue(content: Content) -> None:
    for i, vertical in enumerate(("saas", "ecommerce", "finance", "saas", "voyage")):
        content.add(f"prog-{i}", submission(vertical=vertical, cookieDays=str(10 * i)))


def test_a_range_request_gives_one_combination(content: Content, no_site: None) -> None:
    """What a static client does: manifest, then a byte range of api/shards.jsonl."""
    catalogue(content)
    content.build()
    manifest = orjson.loads((content.out / sf.MANIFEST).read_bytes())
    assert manifest["format"] == sf.FORMAT_VERSION == 5
    blob = (content.out / sf.SHARDS).read_bytes()
    directory = sf.load(content.out)
    assert set(manifest["shards"]) == set(directory.shards)
    for key, (count, offset, length) in manifest["shards"].items():
        lines = blob[offset : offset + length].splitlines()
        ranks = [rank for line in lines for rank in orjson.loads(line)]
        assert ranks == directory.shards[key].tolist() and len(ranks) == count
    assert not (content.out / "api" / "shards").exists()  # no directory per combination


def test_a_rebuild_after_one_change_writes_a_handful_of_files(
    content: Content, no_site: None
) -> None:
    catalogue(content)
    content.build()
    content.add("prog-0", submission(vertical="saas", cookieDays="365"))  # re-scored
    result = content.build()
    # rows, keys, shards, search.json and search.bin, the programme's document, the
    # programme links (they name the build), the manifest; the rest is linked
    assert result.written == 8
    assert result.written + result.linked == result.files


def rewrite_manifest(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def breakage(root: Path) -> None:
        manifest = orjson.loads((root / sf.MANIFEST).read_bytes())
        change(manifest)
        (root / sf.MANIFEST).write_bytes(orjson.dumps(manifest))

    return breakage


def first(manifest: dict) -> list[int]:
    return manifest["shards"][next(iter(manifest["shards"]))]


def last(manifest: dict) -> list[int]:
    return manifest["shards"][list(manifest["shards"])[-1]]


def grow_last_range(manifest: dict) -> None:
    last(manifest)[2] += 1


def shift_first_range(manifest: dict) -> None:
    first(manifest)[1] += 1


def miscount(manifest: dict) -> None:
    first(manifest)[0] += 1


def drop_last(manifest: dict) -> None:
    manifest["shards"].popitem()  # its bytes are then not indexed


def reverse_order(manifest: dict) -> None:
    manifest["shards"] = dict(reversed(manifest["shards"].items()))


def old_format(manifest: dict) -> None:
    manifest["format"] = 1


def page_size_one(manifest: dict) -> None:
    manifest["pageSize"] = 1  # pages then hold too many ranks


def rank_out_of_bounds(root: Path) -> None:
    blob = (root / sf.SHARDS).read_bytes()
    (root / sf.SHARDS).write_bytes(blob.replace(b"[0,", b"[9,", 1))


def truncated_shards(root: Path) -> None:
    blob = (root / sf.SHARDS).read_bytes()
    (root / sf.SHARDS).write_bytes(blob[:-1])


def missing_shards(root: Path) -> None:
    (root / sf.SHARDS).unlink()


def rewrite_search(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def breakage(root: Path) -> None:
        doc = orjson.loads((root / sf.SEARCH).read_bytes())
        change(doc)
        (root / sf.SEARCH).write_bytes(orjson.dumps(doc))

    breakage.__name__ = f"search_{change.__name__}"
    return breakage


def other_build(doc: dict) -> None:
    doc["buildId"] = "another"


def unsorted_words(doc: dict) -> None:
    doc["words"] = "\n".join(reversed(doc["words"].split("\n")))


def short_names(doc: dict) -> None:
    doc["nameKeys"] = doc["nameKeys"].rpartition("\n")[0]


def rewrite_section(name: str, change: Callable[[array], None]) -> Callable[[Path], None]:
    """Change one array of api/search.bin in place (its length kept)."""

    def breakage(root: Path) -> None:
        doc = orjson.loads((root / sf.SEARCH).read_bytes())
        blob = bytearray((root / sf.BINARY).read_bytes())
        at = 0
        for section, typecode, count in doc["sections"]:
            data = array(typecode)
            size = data.itemsize * count
            if section == name:
                data.frombytes(bytes(blob[at : at + size]))
                change(data)
                blob[at : at + size] = data.tobytes()
            at += size
        (root / sf.BINARY).write_bytes(bytes(blob))

    breakage.__name__ = f"{name}_{change.__name__}"
    return breakage


def repeat_first(data: array) -> None:
    data[0] = data[1]


def grow_first(data: array) -> None:
    data[0] += 1


def out_of_bounds_last(data: array) -> None:
    data[-1] = 10**6


def missing_search(root: Path) -> None:
    (root / sf.SEARCH).unlink()


def truncated_binary(root: Path) -> None:
    blob = (root / sf.BINARY).read_bytes()
    (root / sf.BINARY).write_bytes(blob[:-2])


def rewrite_links(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def breakage(root: Path) -> None:
        doc = {"buildId": orjson.loads((root / sf.KEYS).read_bytes())["buildId"], "links": []}
        doc["links"] = [{"network": "awin", "programId": "1", "slug": "prog-0"}]
        change(doc)
        (root / sf.PROGRAM_LINKS).write_bytes(orjson.dumps(doc))

    breakage.__name__ = f"links_{change.__name__}"
    return breakage


def unknown_slug(doc: dict) -> None:
    doc["links"][0]["slug"] = "no-such-programme"


def pair_twice(doc: dict) -> None:
    doc["links"].append({"network": "awin", "programId": "1", "slug": "prog-1"})


def not_text(doc: dict) -> None:
    doc["links"][0]["programId"] = 1


def missing_links(root: Path) -> None:
    (root / sf.PROGRAM_LINKS).unlink()


def test_load_reads_sound_links(content: Content, no_site: None) -> None:
    catalogue(content)
    content.build(cache=False)
    rewrite_links(lambda doc: None)(content.out)
    assert sf.load(content.out).program_links == {("awin", "1"): "prog-0"}


@pytest.mark.parametrize(
    "breakage",
    [
        rewrite_links(other_build),
        rewrite_links(unknown_slug),
        rewrite_links(pair_twice),
        rewrite_links(not_text),
        missing_links,
        rewrite_search(other_build),
        rewrite_search(unsorted_words),
        rewrite_search(short_names),
        rewrite_section("order.name", repeat_first),
        rewrite_section("wordCounts", grow_first),
        rewrite_section("postings", out_of_bounds_last),
        rewrite_section("vertical", out_of_bounds_last),
        rewrite_section("marketStarts", grow_first),
        truncated_binary,
        missing_search,
        rewrite_manifest(grow_last_range),
        rewrite_manifest(shift_first_range),
        rewrite_manifest(miscount),
        rewrite_manifest(drop_last),
        rewrite_manifest(reverse_order),
        rewrite_manifest(old_format),
        rewrite_manifest(page_size_one),
        rank_out_of_bounds,
        truncated_shards,
        missing_shards,
    ],
    ids=lambda f: getattr(f, "__name__", None),
)
def test_load_refuses_an_inconsistent_build(
    content: Content, no_site: None, breakage: Callable[[Path], None]
) -> None:
    catalogue(content)
    content.build(cache=False)
    sf.load(content.out)  # sound before
    breakage(content.out)
    with pytest.raises(sf.FormatError):
        sf.load(content.out)


def bare_search(build_id: str, slugs: list[str]) -> tuple[bytes, bytes]:
    """A consistent search index for rows of these slugs."""
    rng = random.Random(1)
    return searchindex.encode(build_id, [random_programme(rng, slug) for slug in slugs], slugs)


def test_load_refuses_a_short_page_before_the_last(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sf, "PAGE_SIZE", 2)
        rows = [sf.encode_row({"slug": f"s{i}"}) for i in range(4)]
        search = bare_search("b", [f"s{i}" for i in range(4)])
        files = {
            sf.ROWS: sf.encode_rows(rows),
            sf.KEYS: sf.encode_keys("b", [1] * 4, [f"s{i}" for i in range(4)]),
            sf.SHARDS: b"[0]\n[1,2]\n[3]\n",  # 3 pages for 4 ranks in pages of 2
            sf.SEARCH: search[0],
            sf.BINARY: search[1],
            sf.PROGRAM_LINKS: sf.encode_links("b", {}),
        }
        index = {"any.any.any.any": [4, 0, len(files[sf.SHARDS])]}
        files[sf.MANIFEST] = sf.encode_manifest("b", {"programs": 4}, index)
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    with pytest.raises(sf.FormatError):
        sf.load(tmp_path)
    (tmp_path / sf.SHARDS).write_bytes(b"[0,1]\n[2,3]\n")
    index = {"any.any.any.any": [4, 0, 12]}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sf, "PAGE_SIZE", 2)
        (tmp_path / sf.MANIFEST).write_bytes(sf.encode_manifest("b", {"programs": 4}, index))
    assert sf.load(tmp_path).shards["any.any.any.any"].tolist() == [0, 1, 2, 3]
