"""edge/handlers/static.py: the real edge serving a real build's site, next to the API."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from support.apierror import assert_api_error

from edge.handlers import static

pytestmark = pytest.mark.usefixtures("built_dist")


@pytest.fixture
async def client(edge_client, built_dist):
    return await edge_client(dist=built_dist, serve_site=True)


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/", "text/html; charset=utf-8"),
        ("/index.html", "text/html; charset=utf-8"),
        ("/about/", "text/html; charset=utf-8"),
        ("/static/site.css", "text/css; charset=utf-8"),
        ("/static/favicon.svg", "image/svg+xml"),
        ("/sitemap.xml", "application/xml; charset=utf-8"),
        ("/robots.txt", "text/plain; charset=utf-8"),
    ],
)
async def test_site_files_have_their_content_types(client, path, content_type):
    resp = await client.get(path)
    assert resp.status == 200
    assert resp.headers["Content-Type"] == content_type
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    # The edge's middlewares still apply: a page a shared cache may keep names no request.
    public = resp.headers["Cache-Control"].startswith("public")
    assert ("X-Request-Id" in resp.headers) is not public


async def test_directory_index_and_trailing_slash_redirect(client, built_dist):
    slug = next((built_dist / "programs").iterdir()).name
    resp = await client.get(f"/programs/{slug}/")
    assert resp.status == 200
    assert (await resp.read()) == (built_dist / "programs" / slug / "index.html").read_bytes()
    resp = await client.get(f"/programs/{slug}?utm=x", allow_redirects=False)
    assert resp.status == 301
    assert resp.headers["Location"] == f"/programs/{slug}/?utm=x"


async def test_html_revalidates_with_an_etag(client):
    resp = await client.get("/")
    assert resp.headers["Cache-Control"] == "no-cache"
    etag = resp.headers["ETag"]
    again = await client.get("/", headers={"If-None-Match": etag})
    assert again.status == 304
    assert again.headers["ETag"] == etag
    assert (await again.read()) == b""


async def test_fingerprinted_css_is_immutable_and_the_plain_one_is_not(client, built_dist):
    fingerprinted = next(p.name for p in (built_dist / "static").glob("site.*.css"))
    resp = await client.get(f"/static/{fingerprinted}")
    assert resp.status == 200
    assert resp.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    resp = await client.get("/static/site.css")
    assert resp.headers["Cache-Control"] == "public, max-age=300"


async def test_head_answers_headers_only(client):
    resp = await client.head("/")
    assert resp.status == 200
    assert int(resp.headers["Content-Length"]) > 0
    assert (await resp.read()) == b""


@pytest.mark.parametrize("path", ["/nope", "/programs/nope/", "/deep/er/path.html", "/x.exe"])
async def test_misses_answer_the_404_page(client, built_dist, path):
    resp = await client.get(path)
    assert resp.status == 404
    assert resp.headers["Content-Type"] == "text/html; charset=utf-8"
    assert (await resp.read()) == (built_dist / "404.html").read_bytes()


@pytest.mark.parametrize(
    "raw",
    [
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/static/..%2f..%2f..%2fetc/passwd",
        "//etc/passwd",
        "/%2Fetc%2Fpasswd",
        "/static/..%5c..%5cetc%5cpasswd",
        "/.hidden",
        "/%00index.html",
    ],
)
async def test_no_path_traversal(client, raw):
    status, body = await raw_get(client, raw)
    assert status in {400, 404}, raw
    assert b"root:" not in body


async def raw_get(client, target: str) -> tuple[int, bytes]:
    """GET `target` exactly as written: HTTP clients normalise `..` away before sending."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(f"GET {target} HTTP/1.1\r\nHost: site\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def test_locate_refuses_anything_outside_the_root(tmp_path):
    root = tmp_path / "dist"
    (root / "static").mkdir(parents=True)
    (root / "index.html").write_text("home")
    (tmp_path / "secret.html").write_text("secret")
    (root / "static" / "link.html").symlink_to(tmp_path / "secret.html")
    assert isinstance(static.locate(root, "/"), static.Found)
    for path in (
        "/../secret.html",
        "/static/../../secret.html",
        "/static/link.html",
        "/\\secret.html",
    ):
        assert static.locate(root, path) is None, path
    assert static.locate(tmp_path / "missing", "/") is None
    assert static.locate(root, "/index.html/") is None


async def test_the_api_files_are_not_static_files(client, built_dist):
    assert (built_dist / "manifest.json").exists()
    for path in ("/manifest.json", "/api/rows.jsonl", "/api/keys.json", "/api", "/api/"):
        resp = await client.get(path, allow_redirects=False)
        assert resp.status == 404, path  # not even a redirect that says /api/ is there


def test_links_inside_dist_do_not_make_the_api_files_public(tmp_path):
    root = tmp_path / "dist"
    (root / "api").mkdir(parents=True)
    (root / "static").mkdir()
    (root / "manifest.json").write_text("{}")
    (root / "api" / "keys.json").write_text("{}")
    (root / "static" / "m.json").symlink_to(root / "manifest.json")
    (root / "static" / "apilink").symlink_to(root / "api")
    for path in ("/static/m.json", "/static/apilink/keys.json"):
        assert static.locate(root, path) is None, path


def test_a_redirect_is_only_to_a_page_that_is_there(tmp_path):
    root = tmp_path / "dist"
    (root / "programs" / "x").mkdir(parents=True)
    (root / "programs" / "x" / "index.html").write_text("x")
    (root / "api").mkdir()
    (root / "api" / "index.html").write_text("private")
    (root / "static").mkdir()
    (root / "static" / "apilink").symlink_to(root / "api")
    assert isinstance(static.locate(root, "/programs/x"), static.Redirect)
    assert static.locate(root, "/programs") is None  # a directory without a page
    assert static.locate(root, "/static/apilink") is None  # into the API's files


@pytest.mark.parametrize(
    ("sent", "location_query"),
    [
        (b"a=%0d%0aSet-Cookie:%20x=1", b"a=%0d%0aSet-Cookie:%20x=1"),
        (b'a"<b>{|}^`', b"a%22%3Cb%3E%7B%7C%7D%5E%60"),  # what a URL may not hold, encoded
    ],
)
async def test_a_redirect_location_is_always_a_url(client, built_dist, sent, location_query):
    slug = next((built_dist / "programs").iterdir()).name.encode()
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(b"GET /programs/" + slug + b"?" + sent + b" HTTP/1.1\r\nHost: site\r\n"
                     b"Connection: close\r\n\r\n")  # fmt: skip
        await writer.drain()
        head = (await reader.read()).partition(b"\r\n\r\n")[0]
    finally:
        writer.close()
        await writer.wait_closed()
    assert head.split(b" ", 2)[1] == b"301"
    assert b"\r\nLocation: /programs/" + slug + b"/?" + location_query + b"\r\n" in head


@pytest.mark.parametrize(
    "query",
    ["a=%0d%0aSet-Cookie:%20x=1", "a=%01", "next=%23frag&q=caf%C3%A9&s=a%20b", "utm=x"],
)
async def test_a_redirect_keeps_the_query_as_it_was_sent(client, built_dist, query):
    slug = next((built_dist / "programs").iterdir()).name
    status, _ = await raw_get(client, f"/programs/{slug}?{query}")
    assert status == 301
    resp = await client.get(f"/programs/{slug}?{query}", allow_redirects=False)
    # (the client sends percent escapes in capitals: compared without case)
    assert resp.headers["Location"].lower() == f"/programs/{slug}/?{query}".lower()
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


async def test_api_routes_take_precedence(client):
    resp = await client.get("/v1/me")
    assert resp.status == 401  # the API answered (it wants a key), not the site
    assert resp.headers["Content-Type"].startswith("application/json")
    resp = await client.get("/v1/programs")
    assert resp.status == 200 and "data" in await resp.json()  # the API's page, public
    resp = await client.get("/v1/nope")
    await assert_api_error(resp, 404, "not_found")  # the API's JSON 404, not 404.html


async def test_other_methods_are_not_allowed_on_site_files(client):
    for method in ("POST", "OPTIONS"):
        resp = await client.request(method, "/index.html")
        assert resp.status == 405, method
        assert resp.headers["Allow"] == "GET, HEAD"
    resp = await client.delete("/nope")
    assert resp.status == 404


async def test_a_swapped_dist_is_served_at_once(edge_client, built_dist, tmp_path):
    live = tmp_path / "dist"
    site_only = shutil.ignore_patterns("api", "programs")  # small copies: the home page is enough
    shutil.copytree(built_dist, tmp_path / "a", ignore=site_only)
    shutil.copytree(built_dist, tmp_path / "b", ignore=site_only)
    (tmp_path / "b" / "index.html").write_text("rebuilt")
    live.symlink_to(tmp_path / "a")
    client = await edge_client(dist=live, serve_site=True)
    assert (await (await client.get("/")).read()) == (built_dist / "index.html").read_bytes()
    swap = tmp_path / "swap"
    swap.symlink_to(tmp_path / "b")
    swap.replace(live)  # what an atomic rebuild does
    assert (await (await client.get("/")).text()) == "rebuilt"


async def test_site_is_off_unless_asked(edge_client, built_dist):
    client = await edge_client(dist=built_dist)
    resp = await client.get("/")
    await assert_api_error(resp, 404, "not_found")


async def test_no_build_yet_means_the_api_404(edge_client, tmp_path):
    client = await edge_client(dist=tmp_path / "nothing", serve_site=True)
    resp = await client.get("/")
    await assert_api_error(resp, 404, "not_found")


def test_cache_policy():
    assert static.cache_control("programs/x/index.html") == "no-cache"
    assert static.cache_control("static/site.0123456789.css") == static.CACHE_IMMUTABLE
    assert static.cache_control("static/site.css") == static.CACHE_OTHER
    assert static.cache_control("sitemap.xml") == static.CACHE_OTHER


def test_site_relative():
    assert static.site_relative("/") == ([], True)
    assert static.site_relative("/programs/x") == (["programs", "x"], False)
    assert static.site_relative("//a//b/") == (["a", "b"], True)
    assert static.site_relative("/a/../b") is None
    assert static.site_relative("/api/rows.jsonl") is None
    assert static.site_relative("/manifest.json") is None


def test_paths_of_the_test_are_real(built_dist: Path):
    assert (built_dist / "index.html").exists() and (built_dist / "404.html").exists()
