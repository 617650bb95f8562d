"""The one URL check of everything that connects out: hosts only in their canonical ASCII
form, whatever the Unicode, numeric or spacing trick, and connections only to addresses
checked at that delivery."""

from __future__ import annotations

import ipaddress
import socket
import unicodedata

import pytest
from aiohttp.abc import ResolveResult
from aiohttp.helpers import is_ip_address
from hypothesis import given
from hypothesis import strategies as st
from webhookkit import LOOPBACK, Wall, add_commissions, deliveries, worker
from yarl import URL

from store import accounts
from store.webhooks import add_endpoint
from webhooks import signing
from webhooks.targets import (
    Gate,
    PinnedResolver,
    TargetPolicy,
    TargetRefused,
    check_url,
    url_refusal,
)

STRICT = TargetPolicy()

# Every character Unicode gives a decimal digit value, by script, except ASCII's own; and
# the "other" digits (circled, superscript, ...) that NFKC folds to ASCII ones.
UNICODE_DIGITS = [
    chr(c) for c in range(0x80, 0x110000) if unicodedata.digit(chr(c), None) is not None
]
DOTS = [".", "\u3002", "\uff0e", "\uff61", "\u2024", "\ufe52"]


@pytest.mark.parametrize(
    "url",
    [
        "https://１２７．０．０．１/hook",  # fullwidth digits and full stops
        "https://127。0。0。1/hook",  # ideographic full stops
        "https://①②⑦.0.0.1/hook",  # circled digits
        "https://١٦٩.٢٥٤.١٦٩.٢٥٤/hook",  # Arabic-Indic digits: the metadata address
        "https://2130706433/hook",  # 127.0.0.1 as one integer
        "https://0x7f.1/hook",  # hexadecimal, two parts
        "https://0177.0.0.1/hook",  # octal
        "https://127.1/hook",  # a short form
        "https://0x7f000001/hook",
        "https://%31%32%37.0.0.1/hook",  # percent-escaped digits
        "https://hooks.example.com/a\r\nX-Injected: 1",  # CR/LF
        "https://hooks.example.com/a b",  # a space
        "https://hooks.example.com\t/a",  # a tab
        " https://hooks.example.com/a",
        "https://hooks.example.com/a\x00",
        "https://HOOKS.example.com/a",  # not lower case
        "https://bücher.example/a",  # an IDN not in its xn-- form
        "https://[0:0::1]/hook",  # IPv6 not compressed
        "https://[::FFFF:7F00:1]/hook",
        "https://[fe80::1%25eth0]/hook",  # a zone
        "https://hooks.example.com:0/a",
        "https://hooks.example.com:+443/a",
        "https://hooks.example.com:/a",
        "https://hooks..example.com/a",
        "https://-hooks.example.com/a",
        "https://hooks_x.example.com/a",
        "https://user@hooks.example.com/a",
    ],
)
def test_the_findings_urls_are_refused_even_with_loopback_allowed(url):
    assert url_refusal(url, LOOPBACK) is not None
    assert url_refusal(url, STRICT) is not None


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/x?a=1",
        "https://xn--bcher-kva.example/x",
        "https://8.8.8.8:8443/x",
        "https://[2606:4700::1111]/x",
        "https://a-b.c0.example/%E2%82%AC",
    ],
)
def test_canonical_urls_pass(url):
    target = check_url(url, STRICT)
    assert str(target.url) == url or target.url == URL(url)


def _forms(address: ipaddress.IPv4Address) -> list[str]:
    """The non-canonical spellings of an IPv4 address that some parser reads as it."""
    parts = address.packed
    value = int(address)
    return [
        str(value),
        hex(value),
        ".".join(f"0{p:o}" for p in parts),
        ".".join(hex(p) for p in parts),
        f"{parts[0]}.{int.from_bytes(parts[1:], 'big')}",
        f"{parts[0]}.{parts[1]}.{int.from_bytes(parts[2:], 'big')}",
        f"{hex(parts[0])}.{value & 0xFFFFFF}",
        ".".join(f"00{p}" for p in parts),
    ]


@given(st.ip_addresses(v=4), st.sampled_from(DOTS), st.randoms(use_true_random=False))
def test_no_unicode_spelling_of_an_ipv4_address_is_accepted(address, dot, rnd):
    by_value: dict[int, list[str]] = {}
    for c in UNICODE_DIGITS:
        by_value.setdefault(unicodedata.digit(c), []).append(c)
    spelled = dot.join(
        "".join(rnd.choice(by_value[int(d)]) for d in str(part)) for part in address.packed
    )
    assert url_refusal(f"https://{spelled}/x", LOOPBACK) is not None


@given(st.ip_addresses(v=4), st.data())
def test_no_integer_octal_or_hex_form_is_accepted(address, data):
    form = data.draw(st.sampled_from(_forms(address)))
    if form == str(address):
        return
    assert url_refusal(f"https://{form}/x", LOOPBACK) is not None


@given(st.text(min_size=1, max_size=40))
def test_whatever_is_accepted_is_what_the_client_connects_to(host):
    url = f"https://{host}/x"
    try:
        target = check_url(url, LOOPBACK)
    except TargetRefused:
        return
    # The host the HTTP client reads is the host that was checked, and a literal address
    # it would connect to without resolving is one that passed the address check.
    assert URL(url).raw_host == target.host
    assert host.isascii() and host == host.strip()
    if is_ip_address(target.host):
        assert target.address == ipaddress.ip_address(target.host)


@given(st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9](\.[a-z][a-z0-9]{0,10}){1,3}", fullmatch=True))
def test_dns_names_pass(name):
    assert check_url(f"https://{name}/x", STRICT).host == name


@given(st.ip_addresses())
def test_a_literal_address_passes_exactly_when_the_address_check_passes(address):
    host = f"[{address.compressed}]" if address.version == 6 else str(address)
    refusal = url_refusal(f"https://{host}/x", STRICT)
    public = (
        not any(
            getattr(address.ipv4_mapped or address if address.version == 6 else address, f"is_{k}")
            for k in ("loopback", "private", "link_local", "multicast", "reserved", "unspecified")
        )
        and (address.ipv4_mapped or address if address.version == 6 else address).is_global
    )
    assert (refusal is None) == public


async def test_the_gate_resolves_once_and_the_connection_takes_the_checked_answer():
    asked: list[str] = []

    async def lookup(host: str, port: int) -> list[ResolveResult]:
        asked.append(host)
        # Rebinding: the first answer is checked; any later one would point inward.
        address = "127.0.0.1" if len(asked) == 1 else "10.0.0.1"
        return [
            {"hostname": host, "host": address, "port": port, "family": socket.AF_INET,
             "proto": 0, "flags": 0}
        ]  # fmt: skip

    gate = Gate(LOOPBACK, lookup=lookup)
    await gate.admit("http://hooks.test:9/x")
    assert asked == ["hooks.test"]
    resolver = PinnedResolver(gate)  # what gate.connector() connects with
    (answer,) = await resolver.resolve("hooks.test", 9)
    assert answer["host"] == "127.0.0.1" and asked == ["hooks.test"]
    with pytest.raises(TargetRefused, match="not checked"):
        await resolver.resolve("other.test", 9)
    # The next delivery looks the name up again, and the inward answer is refused.
    with pytest.raises(TargetRefused, match=r"10\.0\.0\.1 is a private"):
        await gate.admit("http://hooks.test:9/x")


@pytest.mark.parametrize(
    "url_of",
    [
        pytest.param(lambda port: f"http://１２７．０．０．１:{port}/hook", id="fullwidth"),
        pytest.param(lambda port: f"http://127。0。0。1:{port}/hook", id="ideographic-stop"),
        pytest.param(lambda port: f"http://2130706433:{port}/hook", id="integer"),
        pytest.param(lambda port: f"http://127.1:{port}/hook", id="short"),
        pytest.param(lambda port: f"http://127.0.0.1:{port}/a\r\nb", id="crlf"),
    ],
)
async def test_a_delivery_never_reaches_a_rewritten_host(store, keyring, receivers, url_of):
    receiver = await receivers("")
    account = await store.write(accounts.create, None, "pro")
    uid = "whk_" + "u" * 16
    sealed = signing.seal_secret(keyring, account, uid, signing.new_secret())
    # Stored as it came (the admin CLI refuses it; the worker checks again at delivery).
    await store.write(
        add_endpoint, account, uid, url_of(receiver.port), sealed, "2026-01-01T00:00:00Z"
    )
    await add_commissions(store, account, 1)
    w = worker(store, keyring, Wall(), policy=LOOPBACK)
    async with w.session() as session:
        await w.run_once(session)
    assert receiver.received == []
    (delivery,) = await deliveries(store, uid)
    assert delivery.last_reason is not None and delivery.last_reason.startswith("refused: ")
