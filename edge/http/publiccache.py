"""Public and private directory answers: who may keep them, and what they carry.

A directory answer to a request without a key (the public) is the same bytes for everyone,
so shared caches (a CDN) may keep it and replay it to anyone (`PUBLIC_CACHE_CONTROL`); an
answer to a keyed request stays private (`CACHE_CONTROL`): it was counted against the key
(docs/directory-api.md). The directory's handlers pick one with `cache_control`, once per
page and kept with the page's headers.

A public answer carries only what is the same for every reader: the request steps leave
their per-client headers (`X-Request-Id`, `RateLimit-*`) off any answer that `is_public`
says a shared cache may keep (the OpenAPI document and the site's pages too); errors are `no-store`, so they keep theirs
(docs/guides/caching.md lists the headers of each).
"""

from __future__ import annotations

from collections.abc import Mapping

from edge.auth.principal import Principal
from edge.http.httpcache import CACHE_CONTROL, PUBLIC_CACHE_CONTROL


def cache_control(principal: Principal | None) -> str:
    """The `Cache-Control` of a directory answer (200 or 304) to `principal`'s request."""
    if principal is not None and principal.anonymous:
        return PUBLIC_CACHE_CONTROL
    return CACHE_CONTROL


def is_public(headers: Mapping[str, str]) -> bool:
    """Whether an answer with these headers may be kept by a shared cache and replayed to
    other readers (its `Cache-Control` says `public`: a directory answer without a key, the
    OpenAPI document, a page of the site), so may carry nothing about the one who asked."""
    control = headers.get("Cache-Control")
    return control is not None and "public" in (d.strip() for d in control.split(","))
