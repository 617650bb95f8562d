"""The real build (build.py) writes the site into dist/, next to the API's files."""

from __future__ import annotations

from pathlib import Path

from site_samples import BASE_URL, sample_programs

from catalog.rendering import RESERVED
from catalog.site.pages import render_site


def site_files_in(dist: Path) -> dict[str, bytes]:
    return {
        p.relative_to(dist).as_posix(): p.read_bytes()
        for p in sorted(dist.rglob("*"))
        if p.is_file() and p.relative_to(dist).parts[0] not in RESERVED
    }


def test_the_build_writes_the_site_into_dist(built_dist):
    assert (built_dist / "manifest.json").exists() and (built_dist / "api").is_dir()
    for path in ("index.html", "404.html", "sitemap.xml", "robots.txt", "static/site.css"):
        assert (built_dist / path).is_file(), path
    for program in sample_programs():
        assert (built_dist / "programs" / program.slug / "index.html").is_file()
    assert f"{BASE_URL}/programs/" in (built_dist / "sitemap.xml").read_text()


def test_the_build_renders_exactly_render_site_of_its_programmes(built_dist):
    # Same slugs and pages as rendering the sample directly; only the scores (ours are a
    # stub) may order them differently, so compare the set of files, not their bytes.
    expected = render_site(sample_programs(), BASE_URL)
    assert set(site_files_in(built_dist)) == set(expected)
    assert (built_dist / "static" / "site.css").read_bytes() == expected["static/site.css"]
