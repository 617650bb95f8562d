"""GET /openapi.json: the OpenAPI document, readable without a key (outside /v1, whose
paths all need one).

The bytes are generated in-process once per process, when the first application is made,
from the same `contract` tables as the build's `dist/openapi.json`, so the two copies are
identical. Its gzip coding is compressed once too, beside it, and sent to clients that
accept gzip.
"""

from __future__ import annotations

import functools
import hashlib
import zlib
from dataclasses import dataclass

from aiohttp import web

from contract import openapi
from contract.endpoints import JSON
from edge.http.conditional import is_fresh, not_modified
from edge.http.expect import ignore_expectation
from edge.http.httpcache import VARY, accepts_gzip, gzip_bytes, gzip_tag

CACHE_CONTROL = "public, max-age=300"


@dataclass(frozen=True, slots=True)
class Document:
    body: bytes
    etag: str
    gzipped: bytes

    @classmethod
    def of(cls, body: bytes) -> Document:
        return cls(
            body=body,
            etag='"' + hashlib.sha256(body).hexdigest()[:32] + '"',
            # Made once per process: the best ratio is worth its few milliseconds.
            gzipped=gzip_bytes(body, zlib.Z_BEST_COMPRESSION),
        )


DOCUMENT = web.AppKey("openapi_document", Document)


@functools.cache
def served_document() -> Document:
    """The document every application serves: a function of the `contract` tables alone,
    so rendered and compressed once per process however many applications are made."""
    return Document.of(openapi.render())


async def get_openapi(request: web.Request) -> web.Response:
    # Query parameters are ignored: this path lists no 400 and takes none.
    document = request.app[DOCUMENT]
    gzipped = accepts_gzip(request.headers.get("Accept-Encoding", ""))
    etag = gzip_tag(document.etag) if gzipped else document.etag
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL, "Vary": VARY}
    if is_fresh(request, etag):
        return not_modified(headers)
    if gzipped:
        headers["Content-Encoding"] = "gzip"
        return web.Response(body=document.gzipped, content_type=JSON, headers=headers)
    return web.Response(body=document.body, content_type=JSON, headers=headers)


def setup(app: web.Application) -> None:
    """Register the route and the document it serves."""
    app[DOCUMENT] = served_document()
    app.router.add_get(openapi.PATH, get_openapi, expect_handler=ignore_expectation)
