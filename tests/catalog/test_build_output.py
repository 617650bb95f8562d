"""What lands in dist/: reproducible, atomic, drafts never, incremental rebuilds exact."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from buildkit import VALID, Content, leftovers, snapshot, submission

from catalog import rendering, writing
from catalog.errors import BuildError
from contract import shardformat


def catalogue(content: Content, n: int = 6) -> None:
    """n published programmes with varied terms, one unpublished and one rejected draft."""
    verticals = ("saas", "ecommerce", "finance")
    for i in range(n):
        content.add(
            f"prog-{i}",
            submission(
                name=f"Programme {i}",
                vertical=verticals[i % 3],
                cookieDays=str(7 * i),
                recurring="true" if i % 2 else "false",
                markets="[FR, BE]" if i % 2 else '[FR, "NO", DE]',
            ),
        )
    content.add("secret-draft", submission(status="unpublished", name="Zanzibar Draftname"))
    content.add("refused-one", submission(status="rejected", name="Quokka Refusedname"))


def test_two_builds_are_byte_identical(content: Content, tmp_path: Path) -> None:
    catalogue(content)
    content.build(cache=False)
    first = snapshot(content.out)
    other = Content(tmp_path / "elsewhere")
    other.programs.mkdir(parents=True)
    for path in content.programs.iterdir():
        os.utime(path, (0, 0))  # timestamps of the sources must not matter either
        (other.programs / path.name).write_bytes(path.read_bytes())
    other.build(cache=False)
    assert snapshot(other.out) == first
    content.build()  # a rebuild over the same dist/ (cache, hard links) too
    assert snapshot(content.out) == first


def test_manifest_counts_and_build_id(content: Content, no_site: None) -> None:
    catalogue(content)
    result = content.build()
    manifest = orjson.loads((content.out / shardformat.MANIFEST).read_bytes())
    rows = (content.out / shardformat.ROWS).read_bytes()
    assert manifest["buildId"] == rendering.build_id(rows) == result.build_id
    counts = manifest["counts"]
    assert (counts["submissions"], counts["published"]) == (8, 6)
    assert (counts["unpublished"], counts["rejected"]) == (1, 1)
    assert counts["shards"] == len(manifest["shards"])
    files = [p for p in content.out.rglob("*") if p.is_file()]
    assert counts["files"] == len(files) == result.files


def test_build_id_follows_the_rows_only(content: Content, no_site: None) -> None:
    catalogue(content)
    first = content.build().build_id
    content.add("another-draft", submission(status="unpublished"))
    assert content.build().build_id == first  # drafts change counts, not what is served
    content.add("prog-0", submission(name="Programme zero"))
    assert content.build().build_id != first


def test_drafts_never_reach_any_output_file(content: Content) -> None:
    """Real site rendering included: no byte of dist/ mentions a draft's slug or name."""
    catalogue(content)
    content.build()
    for path, data in snapshot(content.out).items():
        for secret in (b"secret-draft", b"Zanzibar", b"refused-one", b"Quokka"):
            assert secret not in data, f"{secret!r} found in {path}"
        assert "secret-draft" not in path and "refused-one" not in path


def test_each_published_programme_has_its_document(content: Content, no_site: None) -> None:
    catalogue(content)
    content.build()
    rows = (content.out / shardformat.ROWS).read_bytes().splitlines()
    for row in rows:
        slug = orjson.loads(row)["slug"]
        document = (content.out / shardformat.program_path(slug)).read_bytes()
        assert document == b'{"data":' + row + b"}"
    assert not (content.out / shardformat.program_path("secret-draft")).exists()


def test_invalid_submission_leaves_dist_untouched(content: Content, no_site: None) -> None:
    catalogue(content)
    content.build()
    before = snapshot(content.out)
    content.add("prog-1", submission(cookieDays="-3"))
    with pytest.raises(BuildError):
        content.build()
    assert snapshot(content.out) == before
    assert leftovers(content.root) == []


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failure_mid_write_leaves_dist_untouched(
    content: Content, no_site: None, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    catalogue(content)
    content.build()
    before = snapshot(content.out)
    content.add("prog-new", VALID)  # so the next build has something new to write
    calls = 0
    real = writing._write_file

    def failing(root_fd: int, path: str, data: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise error
        real(root_fd, path, data)

    monkeypatch.setattr(writing, "_write_file", failing)
    with pytest.raises(type(error)):
        content.build()
    assert calls >= 3
    assert snapshot(content.out) == before
    assert leftovers(content.root) == []


def test_failure_of_the_swap_leaves_dist_untouched(
    content: Content, no_site: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue(content)
    content.build()
    before = snapshot(content.out)
    content.add("prog-new", VALID)

    def broken_swap(staging: Path, out: Path) -> str:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(writing, "_swap", broken_swap)
    with pytest.raises(OSError):
        content.build()
    assert snapshot(content.out) == before
    assert leftovers(content.root) == []


@pytest.mark.slow
def test_first_build_renames_then_exchange_or_nothing(content: Content, no_site: None) -> None:
    catalogue(content)
    assert content.build().swap == "rename"
    inode = content.out.stat().st_ino
    unchanged = content.build()
    assert (unchanged.swap, unchanged.written, unchanged.linked) == ("unchanged", 0, 0)
    assert content.out.stat().st_ino == inode  # the very same directory, untouched
    content.add("another-draft", submission(status="rejected"))
    assert content.build().swap == "exchange"  # the manifest's counts changed


def test_without_exchange_the_fallback_swaps_whole_trees(
    content: Content, no_site: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue(content)
    content.build()
    monkeypatch.setattr(writing, "exchange", lambda a, b: False)
    content.add("prog-new", VALID)
    result = content.build()
    assert result.swap == "rename-aside"
    assert (content.out / shardformat.program_path("prog-new")).exists()
    assert leftovers(content.root) == []


def cold_snapshot(content: Content, where: Path) -> dict[str, bytes]:
    """What a cold build of the same content gives."""
    cold = Content(where)
    cold.programs.mkdir(parents=True, exist_ok=True)
    for path in content.programs.iterdir():
        (cold.programs / path.name).write_bytes(path.read_bytes())
    cold.build(cache=False)
    return snapshot(cold.out)


@pytest.mark.slow
def test_recycled_spare_builds_equal_cold_builds(content: Content, tmp_path: Path) -> None:
    """Real site included: pages appear and disappear, directories too."""
    catalogue(content, n=8)
    content.build()
    steps = [
        lambda: content.add("prog-2", submission(name="Renamed", markets="[FR, CH, LU]")),
        lambda: (content.programs / "prog-4.yaml").unlink(),
        lambda: content.add("prog-9", submission(vertical="voyage", markets='["NO"]')),
        lambda: content.add("prog-1", submission(status="unpublished")),
        lambda: content.add("prog-1", submission(cookieDays="365")),
    ]
    spare = writing.spare_path(content.out)
    for number, step in enumerate(steps):
        before = snapshot(content.out)
        step()
        result = content.build()
        assert result.swap == "exchange"
        assert result.assembled_in == ("staging" if number == 0 else "spare")
        assert snapshot(content.out) == cold_snapshot(content, tmp_path / f"cold-{number}")
        # The previous build is the spare now, byte for byte: recycling never wrote into a
        # file that the live build shares through a hard link.
        assert snapshot(spare) == before
    assert leftovers(content.root) == []


def test_failure_while_recycling_leaves_dist_untouched(
    content: Content, tmp_path: Path, no_site: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue(content)
    content.build()
    content.add("prog-2", submission(cookieDays="90"))
    content.build()  # the spare exists from here on
    before = snapshot(content.out)
    content.add("prog-3", submission(cookieDays="120"))
    monkeypatch.setattr(writing, "_write_file", _fail_on_second_call(writing._write_file))
    with pytest.raises(OSError, match="injected"):
        content.build()
    assert snapshot(content.out) == before
    assert not writing.spare_path(content.out).exists()  # half-updated: deleted
    assert leftovers(content.root) == []
    monkeypatch.undo()
    assert content.build().assembled_in == "staging"
    assert snapshot(content.out) == cold_snapshot(content, tmp_path / "cold")


def test_half_updated_spare_left_by_a_crash_is_not_trusted(
    content: Content, tmp_path: Path, no_site: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue(content)
    content.build()
    content.add("prog-2", submission(cookieDays="90"))
    content.build()
    content.add("prog-3", submission(cookieDays="120"))
    monkeypatch.setattr(writing, "_write_file", _fail_on_second_call(writing._write_file))
    monkeypatch.setattr(writing, "remove_tree", lambda root: None)  # as if killed: no cleanup
    with pytest.raises(OSError, match="injected"):
        content.build()
    spare = writing.spare_path(content.out)
    assert spare.exists() and not (spare / "manifest.json").exists()
    monkeypatch.undo()
    assert content.build().assembled_in == "staging"
    assert snapshot(content.out) == cold_snapshot(content, tmp_path / "cold")


def _fail_on_second_call(real):
    calls = 0

    def writer(root_fd: int, path: str, data: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise OSError(28, "injected: no space left")
        real(root_fd, path, data)

    return writer


def test_without_cache_the_previous_build_is_deleted(content: Content, no_site: None) -> None:
    catalogue(content)
    content.build(cache=False)
    content.add("prog-new", VALID)
    result = content.build(cache=False)
    assert (result.swap, result.assembled_in) == ("exchange", "staging")
    assert sorted(p.name for p in content.root.iterdir()) == ["content", "dist"]


def test_stale_staging_directories_are_removed(content: Content, no_site: None) -> None:
    catalogue(content)
    stale = content.root / ".dist-staging-killed1"
    (stale / "api").mkdir(parents=True)
    (stale / "api" / "rows.jsonl").write_text("half a build")
    content.build()
    assert leftovers(content.root) == []


def test_a_second_concurrent_build_is_refused(content: Content, no_site: None) -> None:
    import fcntl

    catalogue(content)
    fd = os.open(content.root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(writing.WriteError, match="another build"):
            content.build()
    finally:
        os.close(fd)


def test_unchanged_files_are_linked_and_rebuild_equals_cold_build(
    content: Content, tmp_path: Path, no_site: None
) -> None:
    catalogue(content, n=12)
    content.build()
    content.add("prog-3", submission(name="Programme three, renamed", cookieDays="365"))
    warm = content.build()
    assert warm.swap == "exchange"
    assert warm.linked > warm.written > 0  # most files are unchanged: linked, not rewritten
    cold = Content(tmp_path / "cold")
    cold.programs.mkdir(parents=True)
    for path in content.programs.iterdir():
        (cold.programs / path.name).write_bytes(path.read_bytes())
    cold.build(cache=False)
    assert snapshot(content.out) == snapshot(cold.out)


@pytest.mark.parametrize("umask", [0o077, 0o000])
def test_modes_are_fixed_whatever_the_umask(content: Content, umask: int) -> None:
    # A web server must be able to read dist/ (0644 files, 0755 directories) and nobody
    # else write it, whatever umask the build ran under.
    catalogue(content)
    previous = os.umask(umask)
    try:
        content.build(cache=False)
        catalogue(content, n=7)  # a rebuild into the recycled tree too
        content.build()
    finally:
        os.umask(previous)
    modes = {}
    for root, _dirs, files in os.walk(content.out):
        modes[root] = os.stat(root).st_mode & 0o777
        for name in files:
            modes[os.path.join(root, name)] = os.stat(os.path.join(root, name)).st_mode & 0o777
    assert modes[str(content.out)] == 0o755
    assert {mode for path, mode in modes.items() if os.path.isdir(path)} == {0o755}
    assert {mode for path, mode in modes.items() if not os.path.isdir(path)} == {0o644}


def test_unchanged_documents_are_linked_without_being_encoded_or_hashed(
    content: Content, tmp_path: Path, no_site: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cached listing carries its document's digest: a rebuild hands every document
    dist/ already holds to the writer as `Existing` (hard-linked), and encodes and hashes
    only the changed programme's."""
    from catalog import cache

    catalogue(content, n=12)
    content.build()
    before = {p.name: p.stat().st_ino for p in (content.out / "api" / "programs").iterdir()}
    content.add("prog-3", submission(name="Programme three, renamed", cookieDays="365"))
    encoded: list[bytes] = []
    real_encode, real_digest = shardformat.encode_document, cache.output_digest
    monkeypatch.setattr(
        shardformat, "encode_document", lambda row: encoded.append(row) or real_encode(row)
    )
    hashed: list[bytes] = []
    monkeypatch.setattr(
        cache, "output_digest", lambda data: hashed.append(data) or real_digest(data)
    )
    content.build()
    after = {p.name: p.stat().st_ino for p in (content.out / "api" / "programs").iterdir()}
    # Encoded twice (its listing's digest as it is checked, then its bytes for the writer).
    assert {orjson.loads(row)["slug"] for row in encoded} == {"prog-3"}
    assert [d for d in hashed if d.startswith(b'{"data":')] == [real_encode(encoded[0])]
    assert {name for name in after if after[name] != before[name]} == {"prog-3.json"}
    monkeypatch.undo()
    assert snapshot(content.out) == cold_snapshot(content, tmp_path / "cold")


def test_a_document_deleted_from_dist_fails_one_build_and_the_next_restores_it(
    content: Content, tmp_path: Path, no_site: None
) -> None:
    """dist/ is the build's own, but a file removed there by hand must not wedge every build
    after it: the one that finds it gone fails (dist/ untouched) and forgets what dist/
    holds, so the next one writes every file again."""
    catalogue(content)
    content.build()
    (content.out / "api" / "programs" / "prog-1.json").unlink()
    before = snapshot(content.out)
    content.add("prog-2", submission(cookieDays="90"))
    with pytest.raises(writing.WriteError, match="changed in dist/ during the build"):
        content.build()
    assert snapshot(content.out) == before
    result = content.build()
    assert result.written == result.files
    assert snapshot(content.out) == cold_snapshot(content, tmp_path / "cold")


def test_a_site_only_change_and_back_gives_the_cold_build(content: Content, tmp_path: Path) -> None:
    """A change to the site alone (here the base URL) leaves the manifest as it was, so the
    new build and the previous one (now the spare) have the same manifest: the cache must
    not take one tree for the other, or changing the URL back kept the other URL's pages."""
    catalogue(content)
    content.build()
    first = snapshot(content.out)
    content.build(base_url="https://x.example/sub")
    assert snapshot(content.out) != first
    assert (content.out / "manifest.json").read_bytes() == first["manifest.json"]
    result = content.build()
    assert snapshot(content.out) == first
    assert result.swap != "unchanged"
    content.add("prog-2", submission(cookieDays="90"))  # and later builds stay exact
    content.build()
    assert snapshot(content.out) == cold_snapshot(content, tmp_path / "cold")


def test_a_file_already_gone_from_the_recycled_spare_is_not_an_error(
    content: Content, tmp_path: Path, no_site: None
) -> None:
    """A file removed from dist/ by hand goes with that tree to the spare; when the spare is
    recycled and the file is no longer wanted, its absence is no failure."""
    catalogue(content)
    content.build()
    content.add("prog-2", submission(cookieDays="90"))
    content.build()  # the spare exists from here on
    (content.out / "api" / "programs" / "prog-1.json").unlink()
    content.add("prog-3", submission(cookieDays="120"))
    content.build()  # the tree missing prog-1.json is now the spare
    (content.programs / "prog-1.yaml").unlink()
    result = content.build()
    assert result.assembled_in == "spare"
    assert snapshot(content.out) == cold_snapshot(content, tmp_path / "cold")
