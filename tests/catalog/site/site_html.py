"""Reading the rendered pages back: links, ids, meta tags and JSON-LD blocks."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urldefrag, urlsplit


@dataclass
class Page:
    links: list[str] = field(default_factory=list)  # href of <a> and <link>
    sources: list[str] = field(default_factory=list)  # src of anything
    ids: list[str] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)  # name/property -> content
    link_rels: dict[str, str] = field(default_factory=dict)  # rel -> href of <link>
    jsonld: list[Any] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # type of every <script>
    lang: str = ""
    tags: set[str] = field(default_factory=set)
    attributes: set[str] = field(default_factory=set)
    text: list[str] = field(default_factory=list)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._script: str | None = None
        self._buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.page.tags.add(tag)
        self.page.attributes.update(a)
        if "id" in a:
            self.page.ids.append(a["id"])
        if tag == "html":
            self.page.lang = a.get("lang", "")
        if tag in {"a", "link"} and "href" in a:
            self.page.links.append(a["href"])
        if tag == "link" and "rel" in a:
            self.page.link_rels[a["rel"]] = a.get("href", "")
        if "src" in a:
            self.page.sources.append(a["src"])
        if tag == "meta" and "content" in a:
            key = a.get("name") or a.get("property") or a.get("http-equiv") or ""
            self.page.meta[key] = a["content"]
        if tag == "script":
            self._script = a.get("type", "")
            self.page.scripts.append(self._script)
            self._buffer = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            if self._script == "application/ld+json":
                self.page.jsonld.append(json.loads("".join(self._buffer)))
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._buffer.append(data)
        else:
            self.page.text.append(data)


def parse(html: bytes | str) -> Page:
    parser = _Parser()
    parser.feed(html.decode() if isinstance(html, bytes) else html)
    parser.close()
    return parser.page


def resolve(page_path: str, href: str) -> str | None:
    """The site file an internal href of the page at `page_path` leads to; None if external."""
    href, _ = urldefrag(href)
    if not href:
        return page_path
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return None
    directory = posixpath.dirname(page_path)
    target = (
        posixpath.normpath(posixpath.join(directory, parts.path))
        if not href.startswith("/")
        else parts.path.lstrip("/")
    )
    if href.endswith("/") or target == ".":
        target = posixpath.join("" if target == "." else target, "index.html")
    return target
