"""The directory for machines: `llms.txt` lists every published programme in directory order,
each linking to its Markdown page, and those pages hold the terms and the score's parts."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
import yaml
from site_samples import BASE_URL, CONTENT

from catalog.model import Program
from catalog.site.pages import markdown_text

LINE = re.compile(r"^- \[(?P<name>.+)\]\((?P<url>[^)]+)\): ")


def published_slugs() -> set[str]:
    slugs = set()
    for path in CONTENT.glob("*.yaml"):
        if yaml.safe_load(path.read_text(encoding="utf-8")).get("status") == "published":
            slugs.add(path.stem)
    return slugs


def listed(llms: str) -> list[tuple[str, str]]:
    """The links of the Programmes section."""
    section = llms.split("\n## Programmes\n", 1)[1].split("\n## ", 1)[0]
    return [(m["name"], m["url"]) for m in map(LINE.match, section.splitlines()) if m]


def test_llms_txt_lists_every_published_programme_in_directory_order(built_dist: Path) -> None:
    llms = (built_dist / "llms.txt").read_text(encoding="utf-8")
    assert llms.startswith("# ") and "\n> " in llms  # llmstxt.org: a title, then a summary
    urls = [url for _, url in listed(llms)]
    slugs = [url.removeprefix(f"{BASE_URL}/programs/").split("/")[0] for url in urls]
    assert set(slugs) == published_slugs()
    rows = (built_dist / "api" / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    in_order = [re.search(r'"slug":"([^"]+)"', row)[1] for row in rows]  # type: ignore[index]
    assert slugs == in_order
    for slug, url in zip(slugs, urls, strict=True):
        assert url == f"{BASE_URL}/programs/{slug}/index.html.md"
        assert (built_dist / "programs" / slug / "index.html.md").is_file()


def test_unpublished_programmes_have_no_markdown(built_dist: Path) -> None:
    published = published_slugs()
    pages = {p.parent.name for p in (built_dist / "programs").glob("*/index.html.md")}
    assert pages == published
    hidden = {p.stem for p in CONTENT.glob("*.yaml")} - published
    assert hidden, "the sample content should hold unpublished or rejected files"
    llms = (built_dist / "llms.txt").read_text(encoding="utf-8")
    for slug in hidden:
        assert f"/programs/{slug}/" not in llms


def test_a_markdown_page_holds_the_terms_and_the_scores_parts(
    built_dist: Path, programs: list[Program]
) -> None:
    for slug in ("sendivo-mail", "factureo"):
        page = (built_dist / "programs" / slug / "index.html.md").read_text(encoding="utf-8")
        data = yaml.safe_load((CONTENT / f"{slug}.yaml").read_text(encoding="utf-8"))
        assert page.startswith(f"# {markdown_text(data['name'])}\n")
        assert f"- Sign up: <{data['signupUrl']}>" in page
        assert f"- Terms stated at: <{data['evidence']}>" in page
        score = int(re.search(r"- Score: (\d+)/100", page)[1])  # type: ignore[index]
        cells = [row.rsplit("|", 2)[1].strip() for row in page.splitlines() if row.count("|") == 5]
        assert cells[:2] == ["points", "---:"]  # the table's head
        assert sum(int(cell) for cell in cells[2:]) == score
        assert f"/v1/programs/{slug}>" in page


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Acme *best* deals", "Acme \\*best\\* deals"),
        ("[click](https://evil.example)", "\\[click\\](https://evil.example)"),
        ("<script>x</script>", "\\<script\\>x\\</script\\>"),
        ("# not a heading", "\\# not a heading"),
        ("a | b", "a \\| b"),
        ("two\nlines  and\ttabs", "two lines and tabs"),
        ("back\\slash `code` _u_", "back\\\\slash \\`code\\` \\_u\\_"),
    ],
)
def test_submission_text_is_escaped_for_markdown(text: str, shown: str) -> None:
    assert markdown_text(text) == shown


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/llms.txt", "text/plain; charset=utf-8"),
        ("/programs/factureo/index.html.md", "text/markdown; charset=utf-8"),
    ],
)
def test_the_edge_serves_them_with_their_types(
    site_server: str, built_dist: Path, path: str, content_type: str
) -> None:
    with urllib.request.urlopen(site_server + path, timeout=10) as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"] == content_type
        assert answer.read() == (built_dist / path.lstrip("/")).read_bytes()


def test_the_search_index_lists_every_published_programme_in_order(built_dist: Path) -> None:
    index = json.loads((built_dist / "search.json").read_bytes())
    rows = (built_dist / "api" / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert [entry["slug"] for entry in index] == [json.loads(row)["slug"] for row in rows]
    assert {entry["slug"] for entry in index} == published_slugs()
    for entry in index:
        assert entry["name"] in entry["text"] and entry["commission"] in entry["text"]


def test_only_the_sites_own_scripts_may_run(built_dist: Path) -> None:
    csp = re.compile(r'http-equiv="Content-Security-Policy" content="([^"]+)"')
    home = csp.search((built_dist / "index.html").read_text(encoding="utf-8"))[1]  # type: ignore[index]
    assert "script-src" not in home and "form-action 'self'" in home
    # A programme page runs its own age.js, and reads nothing.
    programme = (built_dist / "programs" / "factureo" / "index.html").read_text(encoding="utf-8")
    policy = csp.search(programme)[1]  # type: ignore[index]
    assert "script-src 'self'" in policy and "connect-src" not in policy
    search = (built_dist / "search" / "index.html").read_text(encoding="utf-8")
    app = (built_dist / "app" / "index.html").read_text(encoding="utf-8")
    for page in (search, app):
        policy = csp.search(page)[1]  # type: ignore[index]
        assert "script-src 'self'" in policy and "connect-src 'self'" in policy
        assert "'unsafe-inline'" not in policy
        assert "<noscript>" in page and 'name="robots" content="noindex"' in page
    assert '<script src="../static/search.js"></script>' in search
    assert '<script src="../static/dashboard.js"></script>' in app
