"""Which URLs may be contacted, and the connector that keeps every connection to them.

One check for everything that connects out to a URL someone else chose (`webhook add`,
`webhook test`, the delivery worker): `check_url` reads the URL with yarl, the parser the
HTTP client itself uses, and accepts only a host written in its one canonical ASCII form:

- a DNS name: labels of letters, digits and hyphens (an internationalised name in its
  `xn--` form), the last label not a number;
- a dotted quad of four decimal numbers without leading zeros (`8.8.8.8`);
- a bracketed IPv6 address in its compressed form (`[2606:4700::1111]`), no zone.

Anything the client would rewrite into another host is refused before it can be: Unicode
digits of any script (`１２７．０．０．１`, `①②⑦.0.0.1`), ideographic full stops, the
integer, octal and hexadecimal forms of IPv4 (`2130706433`, `0177.0.0.1`, `0x7f.1`),
percent-escapes, spaces and control characters anywhere in the URL.

By default HTTPS only, to public addresses only: an IP literal, and every address a host
name resolves to, must be global unicast (no loopback, private, link-local, multicast,
reserved or unspecified address, IPv4-mapped ones included). `Gate.admit` resolves the
name at every delivery, checks the whole answer and pins it; the connector's resolver
answers only from those pins and never looks a name up itself, so the connection goes to
an address that was checked and a name that answers differently a moment later (DNS
rebinding) cannot slip through. `allow_loopback` (development, tests) also allows loopback
addresses and plain http://; never private or link-local ones.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Lookup = Callable[[str, int], Awaitable[list[ResolveResult]]]

MAX_URL = 2048  # characters of a target URL
# Printable ASCII without the space: anything else is rewritten or dropped by some parser.
_URL_CHARACTERS = re.compile(r"[\x21-\x7e]+")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# What the WHATWG URL parser (and browsers, curl, some resolvers) read as an IPv4 part.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_PORT = re.compile(r"[0-9]{1,5}")


class TargetRefused(OSError):  # noqa: N818 - reads as the outcome it reports
    """A URL or an address that will not be contacted; the message says why."""


@dataclass(frozen=True, slots=True)
class TargetPolicy:
    allow_loopback: bool = False

    @property
    def schemes(self) -> tuple[str, ...]:
        return ("https", "http") if self.allow_loopback else ("https",)


@dataclass(frozen=True, slots=True)
class Target:
    """A URL that passed `check_url`: as yarl reads it, and its literal address if any."""

    url: URL
    host: str
    port: int
    address: IPAddress | None


def address_refusal(address: IPAddress, policy: TargetPolicy) -> str | None:
    """Why `address` may not be contacted, or None if it may."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:  # ::ffff:10.0.0.1 is 10.0.0.1
        address = mapped
    if address.is_loopback:
        return None if policy.allow_loopback else f"{address} is a loopback address"
    for kind in ("unspecified", "link_local", "multicast", "private", "reserved"):
        if getattr(address, f"is_{kind}"):
            article = "an" if kind[0] in "aeiou" else "a"
            return f"{address} is {article} {kind.replace('_', '-')} address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


def _split_authority(authority: str) -> tuple[str, str | None, bool]:
    """(host as written, port text or None, bracketed) of an authority without userinfo."""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise ValueError("unclosed bracket")
        rest = authority[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError("text after the bracket")
        return authority[1:end], (rest[1:] if rest else None), True
    host, colon, port = authority.partition(":")
    return host, (port if colon else None), False


def host_refusal(written: str, bracketed: bool) -> str | None:
    """Why a host, as written in a URL, is not in its canonical ASCII form; None if it is."""
    if bracketed:
        try:
            address = ipaddress.IPv6Address(written)
        except ValueError:
            return f"[{written}] is not an IPv6 address"
        if written != address.compressed:
            return f"write the IPv6 address as [{address.compressed}]"
        return None
    if not written:
        return "the URL names no host"
    if written != written.lower():
        return f"write the host in lower case: {written.lower()}"
    labels = written.split(".")
    if all(_NUMERIC_LABEL.fullmatch(label) for label in labels) and len(labels) == 4:
        try:
            canonical = str(ipaddress.IPv4Address(written))
        except ValueError:
            canonical = None
        if canonical == written:
            return None
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        return (
            f"{written} is not a canonical host: an IPv4 address is four decimal numbers "
            "0-255 without leading zeros (a.b.c.d), a name does not end in a number"
        )
    if len(written) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return (
            f"{written} is not a DNS name (letters, digits and hyphens; an internationalised "
            "name in its xn-- form)"
        )
    return None


def check_url(url: str, policy: TargetPolicy) -> Target:
    """`url` as a Target, from its text alone (an IP literal's address checked too; a
    name is still to be resolved and checked), or TargetRefused saying why not."""
    if len(url) > MAX_URL:
        raise TargetRefused(f"longer than {MAX_URL} characters")
    if not _URL_CHARACTERS.fullmatch(url):
        raise TargetRefused(
            "only printable ASCII without spaces (percent-encode the rest; an "
            "internationalised host in its xn-- form)"
        )
    try:
        parsed = URL(url)
        parsed.port  # noqa: B018 - raises ValueError for a port out of range
    except (ValueError, TypeError):
        raise TargetRefused("not a URL") from None
    if parsed.scheme not in policy.schemes:
        raise TargetRefused(
            "only https:// URLs are allowed"
            if not policy.allow_loopback
            else "only https:// and http:// URLs are allowed"
        )
    if parsed.user is not None or parsed.password is not None or "@" in parsed.raw_authority:
        raise TargetRefused("the URL carries credentials; the signature authenticates the requests")
    if parsed.raw_fragment or "#" in url:
        raise TargetRefused("the URL has a fragment, which is never sent")
    try:
        # The authority as written: yarl's own is already rewritten (lower case, IDNA).
        written, port_text, bracketed = _split_authority(urllib.parse.urlsplit(url).netloc)
    except ValueError:
        raise TargetRefused("not a URL") from None
    refusal = host_refusal(written, bracketed)
    if refusal is not None:
        raise TargetRefused(refusal)
    if parsed.raw_host != written:  # the client would connect elsewhere than is written
        raise TargetRefused(f"{written} is not a canonical host")
    if port_text is not None and (not _PORT.fullmatch(port_text) or not 0 < int(port_text) < 65536):
        raise TargetRefused("the port must be a number from 1 to 65535")
    port = parsed.port
    assert port is not None  # http and https have default ports
    address: IPAddress | None = None
    if bracketed or _NUMERIC_LABEL.fullmatch(written.rsplit(".", 1)[-1]):
        address = ipaddress.ip_address(written)
        refusal = address_refusal(address, policy)
        if refusal is not None:
            raise TargetRefused(refusal)
    return Target(parsed, written, port, address)


def url_refusal(url: str, policy: TargetPolicy) -> str | None:
    """Why `url` is not a target (`check_url`'s reason), or None if it may be one."""
    try:
        check_url(url, policy)
    except TargetRefused as exc:
        return str(exc)
    return None


async def system_lookup(host: str, port: int) -> list[ResolveResult]:
    """Every address the system's resolver gives for `host` (IPv4 and IPv6)."""
    resolver = aiohttp.ThreadedResolver()
    try:
        return await resolver.resolve(host, port, socket.AF_UNSPEC)
    finally:
        await resolver.close()


@dataclass
class Gate:
    """The one way out to a target: `admit` checks a URL, resolves its name once and pins
    the checked addresses; `connector` connects only to pinned addresses."""

    policy: TargetPolicy
    lookup: Lookup = system_lookup
    pins: dict[str, list[ResolveResult]] = field(default_factory=dict)

    async def admit(self, url: str) -> Target:
        """The checked target of `url`, its name resolved now and every address checked,
        or TargetRefused. The connector then reaches the addresses of this answer only."""
        target = check_url(url, self.policy)
        if target.address is not None:
            return target  # the client connects to a literal without resolving it
        try:
            found = await self.lookup(target.host, target.port)
        except OSError as exc:
            raise TargetRefused(f"{target.host} does not resolve: {exc.strerror or exc}") from None
        if not found:
            raise TargetRefused(f"{target.host} resolves to no address")
        for result in found:
            refusal = address_refusal(ipaddress.ip_address(result["host"]), self.policy)
            if refusal is not None:
                raise TargetRefused(f"{target.host} resolves to {refusal}")
        self.pins[target.host] = found
        return target

    def connector(self, **options: Any) -> aiohttp.TCPConnector:
        """A connector whose resolver answers from the pins only, without a DNS cache."""
        return aiohttp.TCPConnector(resolver=PinnedResolver(self), use_dns_cache=False, **options)


class PinnedResolver(AbstractResolver):
    """Answers a name with the addresses `Gate.admit` last checked for it, and refuses a
    name it never checked: the connector never looks a name up by itself."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_UNSPEC
    ) -> list[ResolveResult]:
        pinned = self.gate.pins.get(host)
        if pinned is None:
            raise TargetRefused(f"{host} was not checked before connecting")
        return [
            {**result, "port": port}
            for result in pinned
            if family == socket.AF_UNSPEC or result["family"] == family
        ]

    async def close(self) -> None:
        return None
