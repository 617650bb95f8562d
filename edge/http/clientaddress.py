"""The client's address, as every per-address count reads it (refused keys, anonymous reads).

The client address is the connection's peer, or, when the peer is one of
`--trusted-proxies`, the right-most address of `X-Forwarded-For` that is not a trusted proxy
(a client can write anything in that header; only what a trusted proxy appended is
believed). Hops may carry a port (`203.0.113.7:51234`, `[2001:db8::1]:443`), as some
proxies and load balancers write them. IPv6 addresses count per /64, the block one host usually holds.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from aiohttp import web

IPV6_HOST_PREFIX = 64

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_networks(text: str) -> tuple[Network, ...]:
    """Comma-separated addresses or CIDR blocks (`10.0.0.0/8, ::1`); ValueError naming the
    first that is neither."""
    networks = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"{part!r} is not an IP address or CIDR block") from None
    return tuple(networks)


def _address(text: str | None) -> Address | None:
    """The address of one hop as proxies write it: `a.b.c.d`, `a.b.c.d:port`, an IPv6
    address bare or bracketed, `[v6]:port`; None for anything else."""
    if not text:
        return None
    hop = text.strip()
    if hop.startswith("["):
        inside, bracket, rest = hop[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and _is_port(rest[1:]))):
            return None
        hop = inside
    elif hop.count(":") == 1:  # IPv4 with a port (a bare IPv6 address has several colons)
        hop, _, port = hop.partition(":")
        if not _is_port(port):
            return None
    try:
        return ipaddress.ip_address(hop)
    except ValueError:
        return None


def _is_port(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 5 and int(text) <= 65535


def client_address(
    peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]
) -> Address | None:
    """The client's address: `peer`, or when `peer` is a trusted proxy, the last address of
    the X-Forwarded-For values that is not one (each proxy appends the address it saw). A
    malformed entry stops the walk at the last trusted hop: what lies before it is the
    client's own writing."""
    current = _address(peer)
    if current is None or not trusted:
        return current
    hops = [hop for value in forwarded_for for hop in value.split(",")]
    while any(current in network for network in trusted) and hops:
        previous = _address(hops.pop())
        if previous is None:
            break
        current = previous
    return current


def address_key(address: Address | None) -> str:
    """What an address is counted under: itself (IPv4), its /64 (IPv6)."""
    if address is None:
        return "unknown"  # a Unix socket, a test transport: one shared count
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d is the IPv4 client a.b.c.d
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/{IPV6_HOST_PREFIX}", strict=False))
    return str(address)


def client_key(request: web.BaseRequest, trusted: Sequence[Network]) -> str:
    """What `request` is counted under (`address_key` of its `client_address`)."""
    forwarded = request.headers.getall("X-Forwarded-For", ()) if trusted else ()
    return address_key(client_address(request.remote, forwarded, trusted))
