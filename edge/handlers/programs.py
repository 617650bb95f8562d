"""GET /v1/programs and /v1/programs/{slug}: answered from the build held in memory.

A list request without search, typed filters or another sort costs a query parse, a shard
lookup, two binary searches and a copy of at most `limit` pre-serialised rows; the others
AND their filters' bitmaps and read the first set bits after the cursor (`edge.directory.search`).
No row is parsed, sorted or serialised here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import orjson
from aiohttp import web

from accounts.keyring import Keyring
from contract.endpoints import (
    DIRECTORY_FILTERS,
    JSON,
    PROGRAM,
    PROGRAM_FACETS,
    PROGRAMS,
    SCORE_BREAKDOWN,
)
from contract.searchindex import CREATED_AT, NAME, SCORE
from contract.vocabulary import SCORE_MAX, SCORE_MIN
from edge import appkeys, links
from edge.config import Config
from edge.directory.pages import Build, RenderedPage, select_page
from edge.directory.search import Key, Query
from edge.http.conditional import is_fresh, none_match, not_modified
from edge.http.errors import ApiError, not_found, unavailable
from edge.http.expect import ignore_expectation
from edge.http.httpcache import GZIP_MIN_BYTES, VARY, accepts_gzip, gzip_tag
from edge.http.publiccache import cache_control
from edge.request import cursor
from edge.request.query import parse_query

# The list filters, in the endpoint's order, and the sort: what a cursor is bound to (limit
# is not).
FILTERS = (*(p.name for p in DIRECTORY_FILTERS), "sort")


def setup(app: web.Application) -> None:
    """Register the directory routes (the build is edge.lifecycle.directory_context's)."""
    app.router.add_get(
        PROGRAMS.path, list_programs, name=PROGRAMS.name, expect_handler=ignore_expectation
    )
    # Before the by-slug route, which `facets` would otherwise match (the build refuses
    # that slug: catalog.validation).
    app.router.add_get(
        PROGRAM_FACETS.path,
        program_facets,
        name=PROGRAM_FACETS.name,
        expect_handler=ignore_expectation,
    )
    app.router.add_get(
        PROGRAM.path, get_program, name=PROGRAM.name, expect_handler=ignore_expectation
    )


# One answer for unknown, unpublished and rejected slugs (and for any slug while no build
# is loaded): the three must be indistinguishable.
NO_SUCH_SLUG = "no published programme has this slug"


def cursor_filters(query: dict[str, Any]) -> dict[str, Any]:
    """What a cursor is bound to: the filters and the sort. The default sort is left out,
    so that a cursor of the directory order is the same whether `sort=score` is given."""
    filters = {name: query.get(name) for name in FILTERS}
    if filters["sort"] == SCORE:
        filters["sort"] = None
    return filters


def cursor_position(
    secret: Keyring, token: str | None, filters: dict[str, Any], sort: str = SCORE
) -> Key | None:
    """The sort key a cursor resumes after, ascending in `sort`'s order: (-score, slug),
    (name key, slug), (-cookieDays, slug) or (-createdAt, slug); ApiError(invalid_cursor)
    when the cursor is not ours or not for these filters and sort."""
    if token is None:
        return None
    position = cursor.decode(secret, token, PROGRAMS.name, filters)
    match position:
        case [str(name), str(slug)] if sort == NAME:
            return name, slug
        case [int(score), str(slug)] if (
            sort == SCORE and not isinstance(score, bool) and SCORE_MIN <= score <= SCORE_MAX
        ):
            return -score, slug
        case [int(value), str(slug)] if sort not in (SCORE, NAME) and not isinstance(value, bool):
            return -value, slug
    raise ApiError("invalid_cursor", "cursor is not one this API issued", param="cursor")


def select_rows(
    build: Build, query: Query, after: Key | None, limit: int
) -> tuple[Sequence[int], bool]:
    """The ranks of the page after the sort key `after` (`cursor_position`'s), and whether
    more follow: the shard seek for a plain query, the search bitmaps for the others."""
    if query.plain:
        after_score = None if after is None else (-after[0], after[1])
        page = select_page(
            build.index, query.combo, min_score=query.min_score, after=after_score, limit=limit
        )
        return page.ranks, page.has_more
    return build.searcher.select(query, after, limit)


def position_of(build: Build, sort: str, rank: int) -> list[Any]:
    """What a cursor carries for the last row of a page: its sort value and slug."""
    directory = build.directory
    slug = directory.slugs[rank]
    if sort == SCORE:
        return [directory.scores[rank], slug]
    columns = directory.search.columns
    if sort == NAME:
        return [columns["nameKey"][rank], slug]
    if sort == CREATED_AT:
        return [columns["createdAt"][rank], slug]
    return [columns["cookieDays"][rank], slug]


def list_etag(build: Build, query: dict[str, Any]) -> str:
    """A strong tag for one list page: the build (and cursor secret) plus the parsed query.

    The same build and query always give the same bytes, so this names them without
    hashing the body. The normalised values are used, so `market=fr` and `market=FR` share
    it; the cursor string stands for its position.
    """
    named = (*FILTERS, "include", "limit", "cursor")
    canonical = "\x1f".join([str(query.get(name)) for name in named])
    digest = hashlib.blake2b(build.list_tag + canonical.encode(), digest_size=12).hexdigest()
    return f'"{digest}"'


def next_link(request: web.Request, next_cursor: str) -> str:
    """The path and query of the next page: the same parameters, the new cursor."""
    # Every name got here through parse_query (letters only), and so did every value, but
    # `q` and `platform` are free text: values are percent-encoded.
    pairs = [
        f"{name}={quote(value, safe='')}"
        for name, value in request.query.items()
        if name != "cursor"
    ]
    pairs.append(f"cursor={next_cursor}")
    return f"{request.path}?{'&'.join(pairs)}"


def page_rows(build: Build, ranks: Sequence[int], details: bool) -> bytes:
    """The rows of a page, joined: each as a list row (its bytes before its details, then
    `}`), or whole with `details` (include=scoreBreakdown). Views of the build's rows, joined
    once: nothing is parsed or serialised."""
    if details:
        return b",".join([build.directory.rows[rank] for rank in ranks])
    if not ranks:
        return b""
    return b"},".join([build.heads[rank] for rank in ranks]) + b"}"


def page_body(data: bytes, limit: int, has_more: bool, next_cursor: str | None) -> bytes:
    """`{"data":[rows...],"page":{...}}` around the joined rows (`page_rows`)."""
    page = orjson.dumps({"limit": limit, "hasMore": has_more, "nextCursor": next_cursor})
    return b"".join((b'{"data":[', data, b'],"page":', page, b"}"))


def render_page(request: web.Request, build: Build | None) -> RenderedPage:
    """Validate the query and render its page from `build` (503 when there is none)."""
    query = parse_query(PROGRAMS, request.query.items())
    filters = cursor_filters(query)
    secret = request.app[appkeys.SECRET]
    wanted = Query.of(query)
    after = cursor_position(secret, query.get("cursor"), filters, wanted.sort)
    if build is None:
        raise unavailable(
            "the directory is not loaded yet; retry later",
            request.app[appkeys.CONFIG].retry_after,
        )
    limit: int = query["limit"]
    ranks, has_more = select_rows(build, wanted, after, limit)
    next_cursor = link = None
    if has_more:
        position = position_of(build, wanted.sort, ranks[-1])
        next_cursor = cursor.encode(secret, PROGRAMS.name, filters, position)
        link = next_link(request, next_cursor)
    details = query.get("include") == SCORE_BREAKDOWN
    body = page_body(page_rows(build, ranks, details), limit, has_more, next_cursor)
    return RenderedPage(body=body, etag=list_etag(build, query), next_link=link)


def _current(request: web.Request) -> Build | None:
    return request.app[appkeys.DIRECTORY].current


def page_headers(page: RenderedPage, config: Config, etag: str, control: str) -> dict[str, str]:
    """The headers of a list page's answer (200 or 304) under `Cache-Control: control`; the
    caller adds the coding and type, the request steps CORS and, on a private answer, the
    request id and the limits. The same for every reader: the Link is under --public-url or
    relative (edge.links), never built from the request."""
    headers = {"Cache-Control": control, "Vary": VARY}
    if page.next_link is not None:
        headers["Link"] = links.next_link(config, page.next_link)
    headers["ETag"] = etag
    return headers


async def list_programs(request: web.Request) -> web.StreamResponse:
    return await _answer(request, request.rel_url.raw_query_string, render_page)


# Facet answers share the build's page cache under keys no list query string can be: a
# space cannot appear in a request's raw query string.
FACETS_KEY = "facets "


def facets_etag(build: Build, query: dict[str, Any]) -> str:
    """A strong tag for one facets answer: the build plus the parsed filters."""
    canonical = "\x1f".join(["facets", *(str(query.get(p.name)) for p in DIRECTORY_FILTERS)])
    digest = hashlib.blake2b(build.list_tag + canonical.encode(), digest_size=12).hexdigest()
    return f'"{digest}"'


def render_facets(request: web.Request, build: Build | None) -> RenderedPage:
    """Validate the query and count its facets in `build` (503 when there is none)."""
    query = parse_query(PROGRAM_FACETS, request.query.items())
    if build is None:
        raise unavailable(
            "the directory is not loaded yet; retry later",
            request.app[appkeys.CONFIG].retry_after,
        )
    body = orjson.dumps({"data": build.searcher.facets(Query.of(query))})
    return RenderedPage(body=body, etag=facets_etag(build, query), next_link=None)


async def program_facets(request: web.Request) -> web.StreamResponse:
    return await _answer(request, FACETS_KEY + request.rel_url.raw_query_string, render_facets)


async def _answer(
    request: web.Request,
    key: str,
    render: Callable[[web.Request, Build | None], RenderedPage],
) -> web.StreamResponse:
    """A directory answer from the build's page cache, rendered on a miss; ETag, 304 and
    gzip alike for list pages and facets."""
    # One read of the reference: this request runs on this build even if a reload swaps it.
    build = _current(request)
    page = build.pages.get(key) if build is not None else None
    if page is None:
        # A bad query is answered 400, then no build 503.
        page = render(request, build)
        assert build is not None  # render answered 503 without one
        build.pages.put(key, page)
    assert build is not None  # a page was found in, or put into, its pages
    asked = request.headers
    gzipped = len(page.body) >= GZIP_MIN_BYTES and accepts_gzip(asked.get("Accept-Encoding", ""))
    etag = gzip_tag(page.etag) if gzipped else page.etag
    control = cache_control(request.get(appkeys.PRINCIPAL))
    config = request.app[appkeys.CONFIG]
    inm = asked.get("If-None-Match")
    if inm and none_match(inm, etag):
        return not_modified(page_headers(page, config, etag, control))
    # The usual answer: its body and headers are made once per page, coding and kind of
    # reader (private or public), and kept with the page; aiohttp copies the headers into
    # the response and sends the body's bytes as they are. The gzip coding is compressed
    # once per page, never per request.
    body = build.pages.gzipped(key, page) if gzipped else page.body
    return web.Response(body=body, headers=kept_headers(config, page, gzipped, etag, control))


def kept_headers(
    config: Config, page: RenderedPage, gzipped: bool, etag: str, control: str
) -> dict[str, str]:
    """The headers of a page's 200 answer in one coding under `control`, made on the first
    such answer and kept with the page: they depend on nothing else of the request."""
    headers = page.headers.get((gzipped, control))
    if headers is None:
        headers = page_headers(page, config, etag, control)
        if gzipped:
            headers["Content-Encoding"] = "gzip"
        # Content-Type in the one dict (last, where content_type= would add it): one header
        # write less on the Response's CIMultiDict.
        headers["Content-Type"] = JSON
        page.headers[(gzipped, control)] = headers
    return headers


async def get_program(request: web.Request) -> web.StreamResponse:
    # Query parameters are ignored here: the endpoint takes none, and 400 is not among
    # the statuses the spec lists for it.
    build = _current(request)
    slug = request.match_info["slug"]
    # A dict lookup: unknown, unpublished and rejected slugs take the same path and time.
    document = build.documents.get(slug) if build is not None else None
    if document is None or build is None:
        raise not_found(NO_SUCH_SLUG)
    headers = {"Cache-Control": cache_control(request.get(appkeys.PRINCIPAL)), "Vary": VARY}
    body, etag, coding = document.body, document.etag, None
    if accepts_gzip(request.headers.get("Accept-Encoding", "")):
        gzipped = build.gzipped(slug, document)
        if gzipped is not None:
            body, etag, coding = gzipped, gzip_tag(etag), "gzip"
    headers["ETag"] = etag
    if is_fresh(request, etag):
        return not_modified(headers)
    if coding is not None:
        headers["Content-Encoding"] = coding
    return web.Response(body=body, content_type=JSON, headers=headers)
