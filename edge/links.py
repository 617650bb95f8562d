"""Links in responses (`Link: <...>; rel="next"`): where they point, the same for every reader.

With `--public-url` set, a link is absolute under it (the API's origin as clients reach it,
behind a proxy that terminates TLS or answers under another name). Unset, a link is a
reference relative to the request's own URL (`</v1/programs?...>`, RFC 8288 section 3.2,
resolved by every HTTP client against the URL it asked): nothing of the request's `Host`
ever gets into an answer, so an answer a shared cache keeps cannot carry another client's
host name (docs/configuration.md).

`valid_authority` is the one check of an authority written in a URL (`--public-url`'s).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edge.config import Config

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
AUTHORITY_RE = re.compile(
    rf"(?:{_LABEL}(?:\.{_LABEL})*\.?|\[[0-9A-Fa-f:.]{{2,45}}(?:%25[0-9A-Za-z._~-]+)?\])"
    r"(?::[0-9]{1,5})?"
)
MAX_AUTHORITY = 261  # a 253-character name, ':' and a port of five digits, and brackets


def valid_authority(host: str | None) -> bool:
    """Whether a host and optional port can be put in a URL as they are."""
    return host is not None and len(host) <= MAX_AUTHORITY and bool(AUTHORITY_RE.fullmatch(host))


def link_origin(config: Config) -> str:
    """What a link's path is written after: `--public-url`, or nothing (a relative
    reference)."""
    return config.public_url or ""


def next_link(config: Config, path_and_query: str) -> str:
    """The `Link` header value of a next page at `path_and_query` (`/v1/...?...`)."""
    return f'<{link_origin(config)}{path_and_query}>; rel="next"'
