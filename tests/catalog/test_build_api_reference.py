"""dist/api-reference/index.html: the OpenAPI document as a page, made at build time,
listing every path and loading nothing from anywhere."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from buildkit import Content, submission

from catalog import apireference, rendering
from contract import openapi, shardformat

# Attributes through which a page makes the browser fetch something.
FETCHING = {"src", "href", "srcset", "action", "data", "poster", "formaction"}


class Refs(HTMLParser):
    """Every URL-bearing attribute and every element of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.tags: set[str] = set()
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self._in_style = tag == "style"
        for name, value in attrs:
            if name in FETCHING and value is not None:
                self.urls.append((tag, name, value))

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def built(content: Content) -> Path:
    for i in range(3):
        content.add(f"prog-{i}", submission(name=f"Programme {i}"))
    content.build()
    return content.out / apireference.PATH


def test_the_page_is_in_dist_and_lists_every_path(content: Content) -> None:
    page = built(content)
    assert page.is_file()
    text = page.read_text("utf-8")
    document = openapi.document()
    for path, item in document["paths"].items():
        for method, op in item.items():
            assert f"<code>{path}</code>" in text, path
            assert f'id="{op["operationId"]}"' in text, (method, path)
            for status in op["responses"]:
                assert f"<td>{status}</td>" in text, (path, status)
    for name in document["components"]["schemas"]:
        assert f'id="schema-{name}"' in text, name
    for header in ("RateLimit-Policy", "RateLimit", "RateLimit-Remaining", "X-Request-Id"):
        assert f"<code>{header}</code>" in text


def test_the_page_requests_nothing_from_another_host(content: Content) -> None:
    refs = Refs()
    refs.feed(built(content).read_text("utf-8"))
    assert "script" not in refs.tags and "iframe" not in refs.tags and "img" not in refs.tags
    assert refs.urls, "the page links its own sections and the document"
    for tag, name, url in refs.urls:
        assert not re.match(r"^[a-z][a-z0-9+.-]*:|^//", url, re.I), (tag, name, url)
    for css in refs.styles:
        assert "url(" not in css and "@import" not in css
    # The one link out of the page is the document beside it, in dist/.
    assert ("a", "href", "../openapi.json") in refs.urls
    assert (content.out / "openapi.json").read_bytes() == openapi.render()


def test_the_page_is_the_only_file_it_adds(content: Content) -> None:
    built(content)
    files = {str(p.relative_to(content.out)) for p in content.out.rglob("*") if p.is_file()}
    documents = {p for p in files if p.startswith(shardformat.program_path("x").split("/")[0])}
    api_files = files - documents - {p for p in files if p.split("/")[0] not in rendering.RESERVED}
    assert apireference.PATH in files
    # The rows, keys, shards, manifest and the document, as before, and the page.
    assert (
        api_files
        == {
            shardformat.ROWS,
            shardformat.KEYS,
            shardformat.SHARDS,
            shardformat.MANIFEST,
            rendering.OPENAPI,
            apireference.PATH,
        }
        - documents
    )


def test_the_page_is_deterministic() -> None:
    assert apireference.render() == apireference.render()
    assert apireference.render().startswith(b"<!doctype html>")
