"""HTTP caching and content-coding helpers for the directory endpoints (pure functions).

See docs/directory-api.md for the choices: strong entity tags, `Cache-Control` private for a
key and public without one,
gzip when the client accepts it (`If-None-Match` is edge.http.conditional's).
"""

from __future__ import annotations

import functools
import zlib

# An answer to a request with a key stays private: a shared cache that kept it would serve
# it to others outside that key's rate limit. Browsers and client libraries (private caches)
# may keep a page a minute and revalidate cheaply with ETag.
CACHE_CONTROL = "private, max-age=60, stale-while-revalidate=60"
# An answer to a request without a key is the same bytes anyone may have: a shared cache (a
# CDN) may keep it five minutes and serve it stale ten more while it revalidates; a new build
# changes every ETag, so a revalidation after a swap fetches the new page
# (edge.http.publiccache).
PUBLIC_CACHE_CONTROL = "public, max-age=60, s-maxage=300, stale-while-revalidate=600"
# The representation is chosen by Accept-Encoding, whether or not this one is compressed.
VARY = "Accept-Encoding"
# Bodies smaller than this are sent uncompressed: gzip's framing and the CPU spent would buy
# next to nothing (the idea of nginx's gzip_min_length).
GZIP_MIN_BYTES = 512
# List pages are built per request: a fast level, most of the gain for little CPU.
LIST_GZIP_LEVEL = 1


def _quality(params: str) -> float:
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return 0.0
            return q if 0.0 <= q <= 1.0 else 0.0  # also rejects nan
    return 1.0


@functools.lru_cache(maxsize=256)
def accepts_gzip(header: str) -> bool:
    """Whether an `Accept-Encoding` value accepts gzip (RFC 9110 section 12.5.3).

    Memoised: clients send a handful of distinct values, and this runs on every request.
    """
    gzip_q: float | None = None
    star_q: float | None = None
    for item in header.split(","):
        coding, _, params = item.partition(";")
        coding = coding.strip().lower()
        if coding in ("gzip", "x-gzip"):
            gzip_q = _quality(params)
        elif coding == "*":
            star_q = _quality(params)
    if gzip_q is not None:
        return gzip_q > 0
    return star_q is not None and star_q > 0


def gzip_bytes(data: bytes, level: int = LIST_GZIP_LEVEL) -> bytes:
    """A complete gzip member (wbits 31); deterministic, since zlib writes no timestamp."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def gzip_tag(etag: str) -> str:
    """The entity tag of the gzip-coded representation of `etag`'s.

    A different content coding is a different representation, so it needs a different
    strong tag (RFC 9110 section 8.8.3); deriving it keeps the two related.
    """
    return etag[:-1] + '-gz"'
