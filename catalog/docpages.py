"""The API's docs as pages in dist/docs/: the guides, their index and the reference.

The guides are Markdown in docs/guides/ (they read on GitHub as they are); each becomes
`docs/<name>/index.html`, the folder's README.md becomes `docs/index.html`, and the API
reference (`catalog.apireference`) `docs/reference/index.html`. Links between the Markdown
files become links between the pages, `../api.md` the reference. Written by every build,
with or without the site: the edge serves /docs/ as part of the API.
"""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Template

from catalog import apireference, markup
from catalog.guides import DOCS, GUIDES_DIR, INDEX, Guide, load_guides
from catalog.site.pages import TEMPLATES_DIR, make_environment
from contract import openapi
from contract.endpoints import ENDPOINTS

GUIDE_TEMPLATE = "docs-guide.html"
REFERENCE_SOURCE = "../api.md"  # how a guide links the reference, on GitHub


def links(guides: list[Guide], root: str) -> dict[str, str]:
    """Markdown link -> page link, for a page `root` below the docs folder."""
    mapping = {f"{g.name}.md": f"{root}{g.name}/" for g in guides}
    mapping[INDEX] = root
    mapping[REFERENCE_SOURCE] = f"{root}reference/"
    mapping.update(reference_anchors(guides, f"{root}reference/"))
    return mapping


def reference_anchors(guides: list[Guide], reference: str) -> dict[str, str]:
    """The guides' links to a section of api.md, as links into the reference page.

    The reference is made from the OpenAPI document, not from api.md: an endpoint's
    heading (`#get-v1events`) becomes its operation's anchor there; a section the page
    does not have leads to the page itself, never to an anchor that is not on it."""
    operations = {
        markup.heading_id(f"GET {endpoint.path}"): openapi.OPERATION_IDS[endpoint.name]
        for endpoint in ENDPOINTS
        if endpoint.name in openapi.OPERATION_IDS
    }
    hrefs = {
        href
        for guide in guides
        for href in re.findall(rf"\]\(({re.escape(REFERENCE_SOURCE)}#[^)\s]+)\)", guide.text)
    }
    out = {}
    for href in hrefs:
        anchor = href.partition("#")[2]
        out[href] = f"{reference}#{operations[anchor]}" if anchor in operations else reference
    return out


# The first guides, in the header of every docs page.
HEADER_GUIDES = 1


def nav(guides: list[Guide]) -> tuple[tuple[str, str, str], ...]:
    """The docs' header links: the index, the first guide, the reference."""
    first = tuple((f"{g.name}/", g.title, g.name) for g in guides[:HEADER_GUIDES])
    return (apireference.NAV[0], *first, *apireference.NAV[1:])


def page(guide: Guide, guides: list[Guide], root: str, current: str, template: Template) -> bytes:
    """One docs page's bytes, rendered with `template` (GUIDE_TEMPLATE, compiled once for
    every page of the build)."""
    md = markup.parser(links(guides, root))
    return template.render(
        root=root,
        nav=nav(guides),
        title=guide.title,
        current=current,
        body=markup.block(guide.text, md),
        guides=[(g.name, g.title) for g in guides],
    ).encode("utf-8")


def render_docs(folder: Path = GUIDES_DIR) -> dict[str, bytes]:
    """Every docs page: {path in dist/: bytes}. Deterministic."""
    index, guides = load_guides(folder)
    files = {openapi.REFERENCE_PATH: apireference.render(nav=nav(guides))}
    if index is None:
        index = Guide("", "API docs", "# API docs\n\nThe [reference](../api.md).\n")
    template = make_environment(TEMPLATES_DIR).get_template(GUIDE_TEMPLATE)
    files[f"{DOCS}/index.html"] = page(index, guides, "", "index", template)
    for guide in guides:
        files[f"{DOCS}/{guide.name}/index.html"] = page(guide, guides, "../", guide.name, template)
    return files
