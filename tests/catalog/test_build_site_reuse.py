"""A rebuild takes the site pages whose inputs did not change from dist/ instead of
rendering them again (catalog.site.pages.Reuse), and its output stays a cold build's."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from buildkit import Content, project_imports, snapshot, submission

from catalog import cache, writing
from catalog.model import Existing
from catalog.rendering import _site_path
from catalog.site import pages as site


def catalogue(content: Content, n: int = 60) -> None:
    """Enough programmes for listings of several pages (24 cards a page)."""
    for i in range(n):
        content.add(
            f"prog-{i:02d}",
            submission(
                name=f"Programme {i}",
                vertical=("saas", "ecommerce")[i % 2],
                cookieDays=str(i),
                markets="[FR, BE]",
            ),
        )


def cold(content: Content, where: Path) -> dict[str, bytes]:
    other = Content(where)
    other.programs.mkdir(parents=True)
    for path in content.programs.iterdir():
        shutil.copy(path, other.programs / path.name)
    other.build(cache=False)
    return snapshot(other.out)


def rendered_pages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records which programme and listing pages the next builds render."""
    seen: list[str] = []
    for name in ("program_page", "listing_page"):
        original = getattr(site._Renderer, name)

        def spy(self, *args, _original=original, _name=name):  # type: ignore[no-untyped-def]
            seen.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(site._Renderer, name, spy)
    return seen


@pytest.mark.slow
def test_a_rebuild_renders_only_the_pages_whose_inputs_changed(
    content: Content, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue(content)
    content.build()
    seen = rendered_pages(monkeypatch)
    content.build()  # nothing changed: every page taken from dist/
    assert seen == []
    # The lowest-scored programme's terms change, but not its rank: its own page, and the
    # last page of each listing it is on (its vertical, its model, FR, BE, its payment
    # cadence, commission type and platform), are rendered.
    content.add("prog-00", submission(name="Programme zero", vertical="saas", cookieDays="0"))
    content.build()
    assert sorted(seen) == ["listing_page"] * 7 + ["program_page"]
    assert snapshot(content.out) == cold(content, tmp_path / "cold-1")
    # Now it climbs to the top: every page it passes on the way is rendered again.
    seen.clear()
    content.add("prog-00", submission(name="Programme zero", vertical="saas", cookieDays="400"))
    content.build()
    assert seen.count("program_page") == 1 and seen.count("listing_page") > 4
    assert snapshot(content.out) == cold(content, tmp_path / "cold-2")


def test_a_changed_template_or_base_url_renders_everything_again(
    content: Content, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue(content, n=5)
    content.build()
    seen = rendered_pages(monkeypatch)
    content.build(base_url="https://other.example/")
    assert seen.count("program_page") == 5
    templates = tmp_path / "templates"
    shutil.copytree(site.TEMPLATES_DIR, templates)
    before = site.site_version("https://x.example/", templates)
    (templates / "program.html").write_text((templates / "program.html").read_text() + " ")
    assert site.site_version("https://x.example/", templates) != before


def test_without_the_cache_nothing_is_taken_from_dist(
    content: Content, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue(content, n=3)
    content.build()
    seen = rendered_pages(monkeypatch)
    content.build(cache=False)
    assert seen.count("program_page") == 3


def test_a_page_that_vanished_from_dist_during_the_build_fails_it(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    page, manifest = b"<p>kept</p>", b'{"v": 1}'
    first = writing.write({"a/index.html": page, "manifest.json": manifest}, out, cache.Outputs())
    digest = cache.output_digest(page)
    (out / "a" / "index.html").unlink()  # someone deletes it while the next build runs
    files = {"a/index.html": Existing(digest, len(page)), "manifest.json": b'{"v": 2}'}
    with pytest.raises(writing.WriteError, match="changed in dist/ during the build"):
        writing.write(files, out, first.outputs)
    assert (out / "manifest.json").read_bytes() == manifest  # dist/ as it was
    assert sorted(os.listdir(tmp_path)) == ["dist"]  # no staging left behind


def test_where_files_cannot_be_linked_the_kept_pages_are_copied(
    content: Content, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Some file systems refuse hard links: the pages taken from dist/ are then read there.
    catalogue(content, n=30)
    content.build()

    def no_links(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    content.add("prog-03", submission(name="Renamed", vertical="ecommerce", cookieDays="3"))
    result = content.build()
    assert result.linked == 0 and result.written > 0
    assert snapshot(content.out) == cold(content, tmp_path / "cold")


@pytest.mark.parametrize("path", ["index.html", "programs/a/index.html", "static/x.css"])
def test_site_paths_that_are_relative_and_normalised_pass(path: str) -> None:
    assert _site_path(path) == path


@pytest.mark.parametrize(
    "path",
    ["", "/etc/passwd", "a//b.html", "a/", "./a.html", "a/./b.html", "../x", "a/../../x"],
)
def test_site_paths_that_could_escape_or_alias_are_refused(path: str) -> None:
    with pytest.raises(ValueError, match="unsafe path"):
        _site_path(path)


@pytest.mark.parametrize("path", ["manifest.json", "api/rows.jsonl", "openapi.json"])
def test_site_paths_may_not_replace_the_apis_files(path: str) -> None:
    with pytest.raises(ValueError, match="reserved for the API"):
        _site_path(path)


def test_site_version_covers_everything_the_site_imports() -> None:
    """Every project module catalog.site imports, directly or not, is hashed."""
    seen = project_imports("catalog/site/pages.py")
    assert "contract/labels.py" in seen  # the walk follows imports
    assert seen <= set(site.SITE_SOURCES)
