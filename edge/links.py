"""Absolute links in responses (`Link: <...>; rel="next"`): the origin they start with.

The request's `Host` is used only when it is a well-formed authority: a host name, an IPv4
address or a bracketed IPv6 literal, and an optional port. Anything else (a Host such as
`evil.example/x?>; rel="next", <http://other`, or none at all in HTTP/1.0) must not become
part of a link: the link then names the address and port the client connected to. Behind a
proxy that terminates TLS or answers under another name, set `--public-url`: every link
then starts with it, whatever the request says (docs/configuration.md).
"""

from __future__ import annotations

import re
from typing import Protocol

from aiohttp import web


class Origin(Protocol):
    """What links need of the configuration (edge.config.Config has it): the configured
    origin, else the address and port to fall back on."""

    @property
    def public_url(self) -> str | None: ...
    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...


_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
AUTHORITY_RE = re.compile(
    rf"(?:{_LABEL}(?:\.{_LABEL})*\.?|\[[0-9A-Fa-f:.]{{2,45}}(?:%25[0-9A-Za-z._~-]+)?\])"
    r"(?::[0-9]{1,5})?"
)
MAX_AUTHORITY = 261  # a 253-character name, ':' and a port of five digits, and brackets


def valid_authority(host: str | None) -> bool:
    """Whether a Host header value can be put in a URL as it is."""
    return host is not None and len(host) <= MAX_AUTHORITY and bool(AUTHORITY_RE.fullmatch(host))


def request_origin(request: web.Request, config: Origin) -> str:
    """`scheme://authority` for absolute links in the answer to `request`."""
    if config.public_url:
        return config.public_url
    host = request.headers.get("Host")
    if not valid_authority(host):
        host = _local_authority(request, config)
    return f"{request.scheme}://{host}"


def _local_authority(request: web.Request, config: Origin) -> str:
    """The address and port this connection reached (the configured ones if unknown)."""
    transport = request.transport
    sockname = transport.get_extra_info("sockname") if transport is not None else None
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        address, port = sockname[0], sockname[1]
    else:
        address, port = config.host, config.port
    if ":" not in address:
        return f"{address}:{port}"
    # IPv6, with a zone (fe80::1%eth0) written as URLs write it (RFC 6874: %25).
    return f"[{address.replace('%', '%25')}]:{port}"
