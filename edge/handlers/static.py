"""The HTML of dist/ as static files: the API's docs always, the directory's site when
`serve_site` is on.

The docs (dist/docs/: the guides and the API reference) are part of the API, so the edge
serves them at /docs/ by default (`setup_docs`). The site is for local use and previews: in
production a static host or CDN serves dist/ (docs/site.md); its middleware only answers
requests that no route matched, and never a path under /v1. Both follow the same rules
(types, validators, caching). Files are looked up on every request against the configured
dist path, so a rebuild that swaps dist/ atomically is picked up at once and nothing is
held open.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from aiohttp import hdrs, web
from aiohttp.typedefs import Handler

from edge import appkeys
from edge.http.conditional import is_fresh, not_modified

# What the site is made of; anything else in dist/ is not served from here.
CONTENT_TYPES: dict[str, str] = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".xml": "application/xml; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".json": "application/json",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/vnd.microsoft.icon",
    ".webmanifest": "application/manifest+json",
}
# The API's own files: readable through /v1 with a key, never as static files.
PRIVATE_PREFIXES = ("api/",)
PRIVATE_FILES = frozenset({"manifest.json"})

# `site.3f2a1b9c0d.css`: the name changes with the content, so it may be cached for a year.
FINGERPRINTED = re.compile(r"\.[0-9a-f]{8,}\.[a-z0-9]+$")
CACHE_IMMUTABLE = "public, max-age=31536000, immutable"
# Pages change with every build: caches may keep them but must revalidate (cheap, by ETag).
CACHE_HTML = "no-cache"
CACHE_OTHER = "public, max-age=300"

SITE_METHODS = frozenset({hdrs.METH_GET, hdrs.METH_HEAD})
# What a query may hold as it is (RFC 3986's pchar, '/', '?', and '%' of escapes already
# there); anything else, raw non-ASCII bytes included, is percent-encoded into a redirect.
_QUERY_SAFE = "!$&'()*+,;=:@/?%-._~"
ALLOW = "GET, HEAD"
NOT_FOUND_PAGE = "404.html"
# The publisher dashboard (docs/dashboard.md) handles an API key: its pages get a strict
# policy as a header, which (unlike the pages' meta tag) also rules framing, and no referrer.
APP_PREFIX = "app/"
APP_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# The API's docs, in dist/docs/ (contract.openapi.DOCS_URL).
DOCS_ROOT = "/docs"


@dataclass(frozen=True, slots=True)
class Found:
    path: str  # relative to the dist root, e.g. "programs/x/index.html"
    body: bytes


@dataclass(frozen=True, slots=True)
class Redirect:
    location: str  # an absolute path on this host, e.g. "/programs/x/"


def is_api_path(path: str) -> bool:
    return path == "/v1" or path.startswith("/v1/")


def site_relative(url_path: str) -> tuple[list[str], bool] | None:
    """The path segments a URL path names under the site root, and whether it ended in `/`.

    None for anything that could leave the root or reach a hidden or private file: `..` and
    `.` segments (also when they arrived percent-encoded: aiohttp has decoded them by now),
    dotfiles, backslashes and NUL. Empty segments are dropped, so `//etc/passwd` is
    `etc/passwd` under the root, never an absolute path."""
    if "\x00" in url_path or "\\" in url_path:
        return None
    segments = [s for s in url_path.split("/") if s]
    if any(s.startswith(".") for s in segments):
        return None
    if is_private("/".join(segments)):
        return None
    return segments, url_path.endswith("/") or not segments


def is_private(relative: str) -> bool:
    """Whether a path relative to the dist root is the API's (also the `api` directory)."""
    return (
        relative in PRIVATE_FILES
        or relative.startswith(PRIVATE_PREFIXES)
        or relative + "/" in PRIVATE_PREFIXES
    )


def locate(root: Path, url_path: str) -> Found | Redirect | None:
    """What a GET of `url_path` answers from the site in `root` (blocking: run in a thread)."""
    named = site_relative(url_path)
    if named is None:
        return None
    segments, directory = named
    try:
        base = root.resolve(strict=True)
        target = base.joinpath(*segments).resolve()
        # Belt and braces against symlinks inside dist/ that point elsewhere.
        if not target.is_relative_to(base):
            return None
        if target.is_dir():
            target = target / "index.html"
            if not directory:
                # /programs/x -> /programs/x/: relative links in the page need the slash. Only
                # to a page that is there, and not into the API's files by a link.
                if not target.is_file() or is_private(target.relative_to(base).as_posix()):
                    return None
                return Redirect("/" + "/".join(quote(s) for s in segments) + "/")
        elif directory:
            return None  # `/index.html/` names a directory that is not there
        if target.suffix not in CONTENT_TYPES or not target.is_file():
            return None
        relative = target.relative_to(base).as_posix()
        if is_private(relative):  # reached through a link inside dist/: still private
            return None
        return Found(relative, target.read_bytes())
    except (OSError, RuntimeError, ValueError):  # missing dist, symlink loops, odd names
        return None


def entity_tag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def cache_control(path: str) -> str:
    if path.endswith(".html"):
        return CACHE_HTML
    if FINGERPRINTED.search(path):
        return CACHE_IMMUTABLE
    return CACHE_OTHER


def file_response(request: web.Request, found: Found, status: int = 200) -> web.Response:
    """The file, with its type, validators and caching policy; 304 when the client has it."""
    etag = entity_tag(found.body)
    headers = {
        hdrs.ETAG: etag,
        hdrs.CACHE_CONTROL: CACHE_HTML if status != 200 else cache_control(found.path),
        "X-Content-Type-Options": "nosniff",
    }
    if found.path.startswith(APP_PREFIX):
        headers["Content-Security-Policy"] = APP_CSP
        headers["Referrer-Policy"] = "no-referrer"
    if status == 200 and is_fresh(request, etag):
        return not_modified(headers)
    suffix = found.path[found.path.rfind(".") :]
    headers[hdrs.CONTENT_TYPE] = CONTENT_TYPES[suffix]
    return web.Response(status=status, body=found.body, headers=headers)


def redirect_response(request: web.Request, found: Redirect) -> web.Response:
    """301 to the directory's address with its slash, the query kept."""
    # The query as it was sent (still percent-encoded): the decoded one may hold a space,
    # a '#' or a control character, which is no URL, or no header at all.
    query = quote(request.rel_url.raw_query_string, safe=_QUERY_SAFE, errors="surrogateescape")
    location = found.location + (f"?{query}" if query else "")
    headers = {
        hdrs.LOCATION: location,
        hdrs.CACHE_CONTROL: CACHE_OTHER,
        "X-Content-Type-Options": "nosniff",
    }
    return web.Response(status=301, headers=headers)


def in_docs(relative: str) -> bool:
    return relative.startswith(DOCS_ROOT.lstrip("/") + "/")


async def get_docs(request: web.Request) -> web.StreamResponse:
    """GET /docs and below: a page of dist/docs/, or the API's JSON 404."""
    root = Path(request.app[appkeys.CONFIG].dist)
    found = await asyncio.to_thread(locate, root, request.path)
    if isinstance(found, Redirect) and in_docs(found.location.lstrip("/")):
        return redirect_response(request, found)
    if isinstance(found, Found) and in_docs(found.path):
        return file_response(request, found)
    raise web.HTTPNotFound()


def setup_docs(app: web.Application) -> None:
    """Serve dist/docs/ at /docs/, with or without the site, with the site's rules."""
    app.router.add_get(DOCS_ROOT, get_docs)
    app.router.add_get(DOCS_ROOT + "/{tail:.*}", get_docs)


@web.middleware
async def site_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Answer the requests no route matched from the site in dist/; pass the rest on.

    `edge.app.create_app` installs it when `config.serve_site` is on, innermost: request
    ids, errors, CORS and the rest still apply."""
    if request.match_info.http_exception is None or is_api_path(request.path):
        return await handler(request)
    root = Path(request.app[appkeys.CONFIG].dist)
    found = await asyncio.to_thread(locate, root, request.path)
    if request.method not in SITE_METHODS:
        if isinstance(found, Found):
            raise web.HTTPMethodNotAllowed(request.method, sorted(SITE_METHODS))
        return await handler(request)
    if isinstance(found, Redirect):
        return redirect_response(request, found)
    if isinstance(found, Found):
        return file_response(request, found)
    page = await asyncio.to_thread(locate, root, "/" + NOT_FOUND_PAGE)
    if isinstance(page, Found):
        return file_response(request, page, status=404)
    return await handler(request)  # no site built: the API's JSON 404
