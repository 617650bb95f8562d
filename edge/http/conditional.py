"""Conditional requests (`If-None-Match`, RFC 9110 section 13.1.2): the one parser of the
header and the one way a 304 Not Modified is made, for every endpoint with an ETag."""

from __future__ import annotations

import re
from collections.abc import Mapping

from aiohttp import web

_ENTITY_TAG = r'(?:W/)?("[\x21\x23-\x7e\x80-\xff]*")'
# One element of a comma-separated list: optional whitespace, a tag or nothing, then a
# comma or the end; trailing whitespace alone is fine too.
_LIST_ELEMENT = re.compile(rf"[ \t]*(?:{_ENTITY_TAG}[ \t]*(?:,|\Z)|,|\Z)")


def none_match(header: str | None, etag: str) -> bool:
    """Whether `If-None-Match: header` matches `etag` (so the answer is 304).

    `*` matches any current representation; otherwise the listed tags are compared with
    the weak comparison (a `W/` prefix is ignored on either side), RFC 9110 section 13.1.2.
    """
    if not header:
        return False
    if header.strip() == "*":
        return True
    tags = entity_tags(header)
    return tags is not None and etag.removeprefix("W/") in tags


def entity_tags(header: str) -> list[str] | None:
    """The opaque tags of an If-None-Match list, or None when it is not one.

    A malformed header (`w/"x"`, a bare `x`, tags run together) matches nothing: it is
    ignored, and the full answer goes out, rather than read as whatever parts look valid.
    Empty list elements (`"a", , "b"`) are allowed, as RFC 9110 section 5.6.1 says.
    """
    tags: list[str] = []
    position, end = 0, len(header)
    while position < end:
        match = _LIST_ELEMENT.match(header, position)
        if match is None:
            return None
        if match[1] is not None:
            tags.append(match[1])
        position = match.end()
    return tags


def is_fresh(request: web.BaseRequest, etag: str) -> bool:
    """Whether the client already holds the representation tagged `etag` (a 304 then)."""
    return none_match(request.headers.get("If-None-Match"), etag)


def not_modified(headers: Mapping[str, str]) -> web.Response:
    """The 304 answer: no body, the headers the 200 would have had that describe the
    representation (ETag, Cache-Control, Vary, Link...), RFC 9110 section 15.4.5."""
    return web.Response(status=304, headers=headers)
