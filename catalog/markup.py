"""Markdown to HTML for the API's docs pages (the guides, the OpenAPI document's texts).

CommonMark with tables (markdown-it-py), raw HTML refused (written as text), headings given
the ids GitHub gives them so that `#anchors` work on both, and links between Markdown files
turned into links between the pages they become (`links`: the file's link -> the page's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup

_NOT_IN_ID = re.compile(r"[^\w\- ]", re.UNICODE)


def heading_id(text: str) -> str:
    """The anchor GitHub makes of a heading: lower case, punctuation dropped, `-` for spaces."""
    return _NOT_IN_ID.sub("", text.strip().lower()).replace(" ", "-")


def rewrite(href: str, links: Mapping[str, str]) -> str:
    """A link of the Markdown source as the rendered page needs it: the link itself when
    `links` names it, else its target's page with its `#anchor` kept."""
    if href in links:
        return links[href]
    target, hash_, anchor = href.partition("#")
    if target in links:
        return links[target] + hash_ + anchor
    return href


def parser(links: Mapping[str, str] | None = None) -> MarkdownIt:
    """A Markdown parser whose links are rewritten by `links` and headings have ids."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    mapping = dict(links or {})

    def link_open(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        href = tokens[idx].attrGet("href")
        if isinstance(href, str):
            tokens[idx].attrSet("href", rewrite(href, mapping))
        return str(renderer.renderToken(tokens, idx, options, env))

    def heading_open(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        inline = tokens[idx + 1]
        tokens[idx].attrSet("id", heading_id(inline.content.replace("`", "")))
        return str(renderer.renderToken(tokens, idx, options, env))

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("heading_open", heading_open)
    return md


def block(text: str, md: MarkdownIt | None = None) -> Markup:
    """Markdown paragraphs, lists, tables and code as HTML."""
    return Markup((md or parser()).render(text))  # markdown-it escapes the text (html off)


def inline(text: str, md: MarkdownIt | None = None) -> Markup:
    """One line of Markdown (code spans, emphasis, links) as HTML, with no paragraph."""
    return Markup((md or parser()).renderInline(text))  # escaped by markdown-it
