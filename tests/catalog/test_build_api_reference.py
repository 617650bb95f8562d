"""dist/docs/reference/index.html: the OpenAPI document as a page, made at build time,
listing every path with examples, readable (Markdown rendered, no long pattern), loading
nothing from anywhere."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from buildkit import Content, submission

from catalog import apireference, docpages, rendering
from contract import openapi, shardformat

# Attributes through which a page makes the browser fetch something.
FETCHING = {"src", "href", "srcset", "action", "data", "poster", "formaction"}


class Refs(HTMLParser):
    """Every URL-bearing attribute and every element of the page, and its prose: the text
    outside code, `pre` and `style`."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.tags: set[str] = set()
        self.styles: list[str] = []
        self.prose: list[str] = []
        self._in_style = False
        self._in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self._in_style = tag == "style"
        if tag in ("code", "pre"):
            self._in_code += 1
        for name, value in attrs:
            if name in FETCHING and value is not None:
                self.urls.append((tag, name, value))

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False
        if tag in ("code", "pre"):
            self._in_code -= 1

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)
        elif not self._in_code:
            self.prose.append(data)


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
        if tag == "a":  # a link the reader may follow (the country code list) loads nothing
            continue
        assert not re.match(r"^[a-z][a-z0-9+.-]*:|^//", url, re.I), (tag, name, url)
    for css in refs.styles:
        assert "url(" not in css and "@import" not in css
    # The document, in dist/, two levels up.
    assert ("a", "href", "../../openapi.json") in refs.urls
    assert (content.out / "openapi.json").read_bytes() == openapi.render()


def test_markdown_is_rendered_and_no_long_pattern_is_left(content: Content) -> None:
    html = built(content).read_text("utf-8")
    refs = Refs()
    refs.feed(html)
    prose = "".join(refs.prose)
    for marker in ("`", "**", "]("):
        assert marker not in prose, marker
    assert (
        "<code>Error</code>" in html
        and "<code>Authorization: Bearer &lt;API key&gt;</code>" in html
    )
    assert not re.search(r"\^[^\s<]{200,}", html), "a pattern of 200 characters or more"
    # Enumerations as lists, the market's list one click away.
    assert "<li><code>saas</code></li>" in html
    assert 'href="https://www.iso.org/obp/ui/#search/code/"' in html


def test_every_operation_has_an_example_per_documented_status(content: Content) -> None:
    html = built(content).read_text("utf-8")
    for item in openapi.document()["paths"].values():
        for op in item.values():
            for status in op["responses"]:
                start = html.find(f'id="{op["operationId"]}-{status}"')
                assert start > 0, (op["operationId"], status)
                example = html[start : html.find("</div>", start)]
                for language in ("curl -s", "httpx.get(", "await fetch("):
                    assert language in example, (op["operationId"], status, language)
                assert f"HTTP/1.1 {status}" in example
            for code in op["responses"].get("400", {}).get("x-error-codes", []):
                assert f"<code>{code}</code>" in html


def test_the_docs_pages_are_the_only_files_they_add(content: Content) -> None:
    built(content)
    files = {str(p.relative_to(content.out)) for p in content.out.rglob("*") if p.is_file()}
    documents = {p for p in files if p.startswith(shardformat.program_path("x").split("/")[0])}
    api_files = files - documents - {p for p in files if p.split("/")[0] not in rendering.RESERVED}
    assert apireference.PATH in files
    # The rows, keys, shards, manifest and the document, as before, and the docs pages.
    assert (
        api_files
        == {
            shardformat.ROWS,
            shardformat.KEYS,
            shardformat.SHARDS,
            shardformat.MANIFEST,
            rendering.OPENAPI,
            *docpages.render_docs(),
        }
        - documents
    )


def test_the_page_is_deterministic() -> None:
    assert apireference.render() == apireference.render()
    assert apireference.render().startswith(b"<!doctype html>")


def test_each_operation_says_whether_it_needs_a_key(content: Content) -> None:
    """The directory's optional security (`[{}, apiKey]`) reads as no key needed; account
    endpoints need one; /openapi.json needs none."""
    text = built(content).read_text()
    sections = dict(
        re.findall(r'<section class="operation" id="([^"]+)">(.*?)</section>', text, re.S)
    )
    document = openapi.document()
    for item in document["paths"].values():
        for op in item.values():
            said = sections[op["operationId"]]
            security = op.get("security", document.get("security"))
            needs = "Needs <code>Authorization: Bearer" in said
            assert needs is (security not in ([], None) and {} not in security), op["operationId"]
    assert "No key needed" in sections["listPrograms"]
