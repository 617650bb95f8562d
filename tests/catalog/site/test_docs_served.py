"""/docs/: the API's guides and reference, served by the edge by default (no --serve-site),
with the site's rules (types, ETag, Cache-Control), and linked from the site and the
OpenAPI document."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from site_samples import BASE_URL

from catalog import guides
from contract import openapi

pytestmark = pytest.mark.usefixtures("built_dist")


@pytest.fixture
async def client(edge_client, built_dist):
    return await edge_client(dist=built_dist)  # serve_site off: the default


async def test_docs_are_served_without_the_site(client):
    resp = await client.get("/docs", allow_redirects=False)
    assert resp.status == 301 and resp.headers["Location"] == "/docs/"
    for path in ("/docs/", "/docs/reference/", "/docs/getting-started/"):
        resp = await client.get(path)
        assert resp.status == 200, path
        assert resp.headers["Content-Type"] == "text/html; charset=utf-8"
        assert resp.headers["Cache-Control"] == "no-cache"  # the site's rule for pages
        etag = resp.headers["ETag"]
        again = await client.get(path, headers={"If-None-Match": etag})
        assert again.status == 304 and await again.read() == b""
    # The site itself is not served by default.
    assert (await client.get("/about/")).status == 404


@pytest.mark.parametrize(
    "path", ["/docs/nothing/", "/docs/../manifest.json", "/docs/%2e%2e/manifest.json", "/docsx"]
)
async def test_anything_else_is_the_apis_404(client, path):
    resp = await client.get(path)
    assert resp.status == 404
    assert (await resp.json())["code"] == "not_found"


async def test_head_and_other_methods(client):
    resp = await client.head("/docs/reference/")
    assert resp.status == 200 and resp.headers["ETag"] and await resp.read() == b""
    resp = await client.post("/docs/")
    assert resp.status == 405 and (await resp.json())["code"] == "method_not_allowed"


async def test_no_key_is_needed(client):
    resp = await client.get("/docs/", headers={"Authorization": "Bearer afk_nonsense"})
    assert resp.status == 200 and "RateLimit-Limit" not in resp.headers


def test_every_site_page_links_the_docs(built_dist: Path):
    for page in ("index.html", "about/index.html", "programs/academie-du-code/index.html"):
        html = (built_dist / page).read_text("utf-8")
        assert re.search(r'href="(\.\./)*docs/"', html), page


def test_the_sitemap_lists_the_docs(built_dist: Path):
    sitemap = (built_dist / "sitemap.xml").read_text("utf-8")
    for path in guides.urls():
        assert f"<loc>{BASE_URL.rstrip('/')}/{path}</loc>" in sitemap, path
    assert "docs/reference/" in guides.urls() and "docs/getting-started/" in guides.urls()


def test_the_openapi_document_points_to_the_docs(built_dist: Path):
    document = orjson.loads((built_dist / "openapi.json").read_bytes())
    assert document["externalDocs"]["url"] == openapi.DOCS_URL == f"/{guides.DOCS}/"
    assert openapi.REFERENCE_PATH.startswith(f"{guides.DOCS}/")
