"""The incremental cache: unchanged files are neither read nor re-checked, changes always seen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from buildkit import VALID, Content, project_imports, snapshot, submission

from catalog import cache, incremental, loading
from catalog.cache import Cache, code_version
from catalog.loading import Checked
from catalog.model import Listing, program_from_row


def listing_of(item: Checked, records: cache.Records) -> Listing | None:
    """A checked file's listing, as the score stage gives it (None unless published)."""
    if item.outcome.status != "published" or item.outcome.problems:
        return None
    return incremental.score([item], records)[0][0]


def field_of(item: Checked, records: cache.Records, name: str) -> object:
    """A field of a checked, published programme (from the row of its listing)."""
    listing = listing_of(item, records)
    assert listing is not None
    return getattr(program_from_row(listing.row), name)


def load(content: Content, previous: cache.Records) -> tuple[list[Checked], cache.Records]:
    """Validate the content with the cache's memory; the published files scored too, as a
    build does before it saves the records."""
    sources, _ = loading.discover(content.content)
    checked, records = incremental.validate(sources, previous)
    for item in checked:
        listing_of(item, records)
    return checked, records


def age(path: Path, seconds: int = 60) -> None:
    """Make a file look written a while ago (fingerprints of fresh files are not trusted)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - seconds * 10**9))


def test_unchanged_files_are_not_even_read(
    content: Content, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(5):
        age(content.add(f"p-{i}", VALID))
    first, records = load(content, cache.Records(code_version()))
    assert [item.cached for item in first] == [False] * 5
    reads: list[str] = []
    real = incremental._read
    monkeypatch.setattr(incremental, "_read", lambda path: reads.append(path) or real(path))
    age(content.add("p-2", submission(name="Changed")))
    second, records = load(content, records)
    assert [item.cached for item in second] == [True, True, False, True, True]
    assert [Path(p).name for p in reads] == ["p-2.yaml"]
    assert field_of(second[2], records, "name") == "Changed"


def test_fresh_files_are_read_again_but_not_rechecked(content: Content) -> None:
    content.add("p-0", VALID)  # mtime: now, so its fingerprint is not trusted yet
    _, records = load(content, cache.Records(code_version()))
    again, _ = load(content, records)
    assert again[0].cached  # found by content hash after reading


def test_same_size_rewrite_with_restored_mtime_is_seen(content: Content) -> None:
    path = content.add("p-0", submission(cookieDays="30"))
    age(path)
    _, records = load(content, cache.Records(code_version()))
    mtime = path.stat().st_mtime_ns
    path.write_text(submission(cookieDays="60"))  # same size
    os.utime(path, ns=(mtime, mtime))  # and the old mtime: ctime still moves
    again, records = load(content, records)
    assert field_of(again[0], records, "cookieDays") == 60


def test_other_code_version_starts_cold(content: Content, tmp_path: Path) -> None:
    content.add("p-0", VALID)
    store = Cache(tmp_path / "cache")
    _, records = load(content, store.load_records(code_version()))
    store.save_records(records)
    assert store.load_records(code_version()).outcomes
    assert store.load_records("another version").outcomes == {}


def test_damaged_cache_is_ignored(content: Content, no_site: None) -> None:
    content.add("p-0", VALID)
    content.build()
    first = snapshot(content.out)
    for name in (cache.RECORDS, cache.FILES, cache.OUTPUTS):
        path = content.root / ".build-cache" / name
        data = bytearray(path.read_bytes())
        data[-5] ^= 0xFF
        path.write_bytes(bytes(data))
    content.add("p-1", VALID)
    content.build()
    cold = Content(content.root / "cold")
    cold.programs.mkdir(parents=True)
    for path in content.programs.iterdir():
        (cold.programs / path.name).write_bytes(path.read_bytes())
    cold.build(cache=False)
    assert snapshot(content.out) == snapshot(cold.out) != first


def test_worker_processes_give_the_same_outcomes(
    content: Content, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(6):
        content.add(f"p-{i}", submission(cookieDays=str(i * 10)))
    content.add("bad", submission(payout="daily"))
    content.add("draft", "status: rejected\n")
    sequential, _ = load(content, cache.Records(code_version()))
    monkeypatch.setattr(incremental, "PARALLEL_THRESHOLD", 2)
    monkeypatch.setattr(incremental, "CHUNK", 3)
    cold, records = load(content, cache.Records(code_version()))  # workers read and check
    content.add("p-0", submission(cookieDays="1"))
    content.add("p-1", submission(cookieDays="2"))
    warm, records = load(content, records)  # workers check the two misses
    assert [i.outcome for i in cold] == [i.outcome for i in sequential]
    by_stem = {item.source.stem: item for item in warm}
    assert [field_of(by_stem[s], records, "cookieDays") for s in ("p-0", "p-1")] == [1, 2]
    assert [by_stem[s].cached for s in ("p-0", "p-1", "p-2")] == [False, False, True]
    # Remembered outcomes carry no record (the listing's row holds it).
    unchanged = [item.outcome for item in warm if item.source.stem not in ("p-0", "p-1")]
    assert unchanged == [
        i.outcome._replace(record=None) for i in sequential if i.source.stem not in ("p-0", "p-1")
    ]


def test_code_version_covers_everything_validation_imports() -> None:
    """Every project module that catalog.validation and catalog.rendering (the cached listing)
    import, directly or not, is hashed."""
    seen = project_imports("catalog/validation.py", "catalog/rendering.py")
    assert "contract/countries.py" in seen  # the walk follows imports
    assert seen <= set(cache.VALIDATION_SOURCES)


def test_a_change_appends_to_files_bin_until_records_bin_is_rewritten(
    content: Content, tmp_path: Path
) -> None:
    for i in range(10):
        age(content.add(f"p-{i}", submission(cookieDays=str(i + 1))))
    store = Cache(tmp_path / "cache")
    _, records = load(content, store.load_records(code_version()))
    store.save_records(records)
    base = (tmp_path / "cache" / cache.RECORDS).read_bytes()

    age(content.add("p-0", submission(cookieDays="90")))  # one change in ten: appended
    loaded, records = load(content, store.load_records(code_version()))
    assert records.changed
    store.save_records(records)
    assert (tmp_path / "cache" / cache.RECORDS).read_bytes() == base
    again = store.load_records(code_version())
    assert again.outcomes.items() >= records.outcomes.items()
    assert len(again.outcomes) == 11  # and the stale outcome of p-0's old bytes
    warm, unchanged = load(content, again)
    assert all(item.cached for item in warm) and not unchanged.changed
    assert [item.outcome for item in warm] == [
        item.outcome._replace(record=None) for item in loaded
    ]

    for i in range(1, 4):  # past COMPACT_AT: records.bin holds exactly the current outcomes
        age(content.add(f"p-{i}", submission(cookieDays="91")))
    _, records = load(content, store.load_records(code_version()))
    store.save_records(records)
    assert (tmp_path / "cache" / cache.RECORDS).read_bytes() != base
    assert len(store.load_records(code_version()).outcomes) == 10


def test_files_bin_of_another_records_bin_is_ignored(content: Content, tmp_path: Path) -> None:
    age(content.add("p-0", VALID))
    store, other = Cache(tmp_path / "cache"), Cache(tmp_path / "other")
    _, records = load(content, store.load_records(code_version()))
    store.save_records(records)
    age(content.add("p-1", VALID))
    _, records = load(content, cache.Records(code_version()))
    other.save_records(records)
    (tmp_path / "cache" / cache.FILES).write_bytes((tmp_path / "other" / cache.FILES).read_bytes())
    assert store.load_records(code_version()).outcomes == {}


def test_the_remembered_listing_is_what_rendering_makes(content: Content) -> None:
    """The cached listing (catalog.rendering.listing_of, made by the score stage) holds byte
    for byte the row rendering a programme gives, for published files only, and comes back
    the same from the cache."""
    from catalog import rendering, scoring
    from catalog.model import Program
    from contract import shardformat

    for i in range(5):
        content.add(f"p-{i}", submission(cookieDays=str(i * 40), markets="[FR, BE]"))
    content.add("draft", submission(status="unpublished"))
    loaded, records = load(content, cache.Records(code_version()))
    listings = {item.source.stem: listing_of(item, records) for item in loaded}
    assert listings["draft"] is None
    ranked = scoring.rank(listing for listing in listings.values() if listing)
    assert len(ranked) == 5
    for listing in ranked:
        program = program_from_row(listing.row)
        assert type(program) is Program and program.slug == listing.slug
        assert listing.row == rendering.row(program)
        assert listing.markets == program.markets == ("FR", "BE")
        assert listing.digest == cache.output_digest(shardformat.encode_document(listing.row))
    again, records = load(content, records)  # from the cache: the same listings
    assert all(item.cached for item in again)
    assert {item.source.stem: listing_of(item, records) for item in again} == listings


def test_a_newer_verification_rescores_the_cached_programmes(tmp_path: Path) -> None:
    """Ages count to the newest lastVerifiedAt: a file verified later moves the reference
    day, and a cached rebuild then gives what a cold build of the same content gives (the
    other programmes' scores, staleness and pages included)."""
    import orjson

    cached = Content(tmp_path / "cached")
    for i in range(40):  # enough that one more file is not worth rewriting records.bin
        cached.add(f"p-{i}", submission(lastVerifiedAt='"2024-03-01T09:00:00Z"'))
    cached.build()
    before = orjson.loads((cached.out / "api" / "programs" / "p-0.json").read_bytes())["data"]
    assert before["stale"] is False
    cached.add("newer", submission(lastVerifiedAt='"2025-06-01T09:00:00Z"'))
    result = cached.build()
    after = orjson.loads((cached.out / "api" / "programs" / "p-0.json").read_bytes())["data"]
    assert after["stale"] is True and after["score"] < before["score"]
    # The rescored listings are remembered: the next build rescores nothing.
    stored = Cache(incremental.cache_dir(cached.out)).load_records(code_version())
    listings = [o[incremental.LISTING_AT] for o in stored.outcomes.values()]
    assert len(listings) == 41
    assert {Listing(*listing).reference for listing in listings} == {"2025-06-01"}

    cold = Content(tmp_path / "cold")
    for path in sorted(cached.programs.glob("*.yaml")):
        cold.add(path.stem, path.read_text(encoding="utf-8"))
    assert cold.build(cache=False).build_id == result.build_id
    assert snapshot(cold.out) == snapshot(cached.out)
