"""Small pure helpers of the HTML directory: URLs, text, dates, numbers and JSON-LD."""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import orjson
from markupsafe import Markup

# Control characters and whitespace have no business in a URL we put in an attribute.
_UNSAFE_URL_CHARS = re.compile(r"[\x00-\x20\x7f\"'<>\\`]")
_SPACES = re.compile(r"\s+")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# Inside <script>, "</script" or "<!--" would end or confuse the block whatever the JSON
# says; escaping <, > and & as \u escapes keeps the JSON identical once parsed.
# U+2028/2029 are escaped too, as JSON embedded in HTML conventionally does.
_JSON_IN_HTML = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)

SITEMAP_MAX_URLS = 50_000  # the sitemaps.org limit per file


def normalise_base_url(base_url: str) -> str:
    """`https://host[/path]` without a trailing slash; ValueError for anything else.

    Canonical URLs, the sitemap and robots.txt are built from it, so a typo must fail the
    build rather than publish a site that points elsewhere."""
    parts = urlsplit(base_url)
    try:
        port = parts.port  # ValueError for a port that is no number or out of range
    except ValueError:
        port = -1
    if (
        parts.scheme not in {"http", "https"}
        or not _valid_host(parts.hostname, parts.netloc)
        or "@" in parts.netloc  # user:password@ has no place in public links
        or port in {-1, 0}
        or "?" in base_url
        or "#" in base_url
        or _UNSAFE_URL_CHARS.search(base_url)
    ):
        raise ValueError(
            f"base URL {base_url!r} must be an absolute http(s) URL without query or "
            "fragment, e.g. https://affiliates.example"
        )
    # The scheme in lower case, as every link of the site writes it.
    return parts.scheme + base_url[len(parts.scheme) :].rstrip("/")


_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST_NAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?")


def _valid_host(host: str | None, netloc: str) -> bool:
    """A host name (`localhost` and intranet names included), an IPv4 address, or an IPv6
    one in brackets: what a browser can reach, so no `_`, `%` escapes or empty labels."""
    if not host:
        return False
    if netloc.startswith("[") or netloc.rpartition("@")[2].startswith("["):
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return False
        return True
    if not host.isascii():
        return _valid_unicode_name(host)
    if _HOST_NAME.fullmatch(host) is None:
        return False
    last = host.rstrip(".").rpartition(".")[2]
    if last.isdigit():  # all-numeric: only a real IPv4 address
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return False
    return True


def _valid_unicode_name(host: str) -> bool:
    """An internationalised host name (bücher.example, faß.de): its ASCII labels as any
    host's, its other labels letters, marks, digits and inner hyphens in NFKC form. So no
    invisible character (U+200B, a soft hyphen) nor look-alike (fullwidth letters, "。"),
    which IDNA would silently drop or map, and every link would carry as typed."""
    labels = host.removesuffix(".").split(".")
    if len(host) > 253:
        return False
    for label in labels:
        if label.isascii():
            if not re.fullmatch(_LABEL, label):
                return False
        elif not (
            len(label) <= 63
            and not label.startswith("-")
            and not label.endswith("-")
            and unicodedata.normalize("NFKC", label) == label
            and all(c == "-" or unicodedata.category(c)[0] in "LMN" for c in label)
        ):
            return False
    return True


def safe_url(url: str) -> str | None:
    """`url` if it is an absolute http(s) URL safe to put in href, else None.

    Autoescaping stops markup injection but not `javascript:` links: submissions are
    validated by the build, and this keeps the pages safe even if a bad URL got through."""
    if not url or _UNSAFE_URL_CHARS.search(url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in {"http", "https"} or not parts.netloc:
        return None
    return url


def excerpt(text: str, limit: int = 160) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters."""
    flat = _SPACES.sub(" ", text).strip()
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + "…"


def human_date(timestamp: str) -> str:
    """`2024-09-03T08:00:00+02:00` -> `3 September 2024` (no locale: output is deterministic)."""
    try:
        when = datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    return f"{when.day} {_MONTHS[when.month - 1]} {when.year}"


def number(value: float) -> str:
    """`1000000` -> `1,000,000`; `12.5` -> `12.5`; `50.0` -> `50`."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}"


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{number(count)} {word}"


def json_ld(data: Mapping[str, Any] | Sequence[Any]) -> Markup:
    """JSON-LD for a <script type="application/ld+json"> block, safe against `</script>`."""
    text = orjson.dumps(data).decode()  # compact, keys in insertion order: deterministic
    for char, escaped in _JSON_IN_HTML:  # str.replace: much faster than str.translate here
        text = text.replace(char, escaped)
    return Markup(text)  # safe inside <script type="application/ld+json"> after the escapes


def sitemap_chunks(urls: Sequence[str]) -> list[Sequence[str]]:
    """The URLs split into sitemap files of at most SITEMAP_MAX_URLS each."""
    return [urls[i : i + SITEMAP_MAX_URLS] for i in range(0, len(urls), SITEMAP_MAX_URLS)] or [[]]
