"""Refused keys are limited per client address: past `--auth-failure-limit`, an address
gets 429 (the spec's error shape, the rate limit headers, Retry-After) instead of a key
lookup, while other addresses and keys the cache knows go on; memory stays bounded."""

from __future__ import annotations

import ipaddress
import random
from pathlib import Path

import pytest
from support.apierror import assert_api_error
from support.clock import FakeClock
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH

from accounts import apikeys
from contract import ratelimit
from contract.endpoints import ENDPOINTS
from edge import appkeys
from edge.auth.failures import AuthFailures
from edge.http.clientaddress import address_key, client_address, parse_networks

LIMIT = 3
TRUSTED = parse_networks("127.0.0.1")


@pytest.fixture(scope="module")
def small_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("failures") / "dist"
    publish(dist, random_catalogue(random.Random(4), 5), "b1")
    return dist


def bad_key() -> dict[str, str]:
    return {"Authorization": f"Bearer {apikeys.generate_key().key}"}


def from_address(address: str, headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "X-Forwarded-For": address}


async def assert_limited(resp, limit: int = LIMIT) -> None:
    body = await assert_api_error(resp, 429, "rate_limited")
    assert "unknown, revoked or malformed API key" in body["message"]
    assert int(resp.headers["Retry-After"]) >= 1
    assert resp.headers[ratelimit.LIMIT] == str(limit)
    assert resp.headers[ratelimit.REMAINING] == "0"
    assert resp.headers[ratelimit.POLICY] == f'"default";q={limit};w=3600'


def test_every_endpoint_that_checks_a_key_lists_429():
    # A refused key can now be answered 429, wherever a key is checked.
    for endpoint in ENDPOINTS:
        if endpoint.path.startswith("/v1/"):
            assert 429 in endpoint.statuses, endpoint.path


@pytest.mark.parametrize("path", ["/v1/programs", "/v1/me", "/v1/commissions"])
async def test_an_address_past_the_limit_gets_429_another_does_not(
    edge_client, small_dist, clock: FakeClock, path
):
    client = await edge_client(
        dist=small_dist, auth_failure_limit=(LIMIT, 3600), trusted_proxies=TRUSTED
    )
    # A key known to the cache before the flood: it keeps working from the flooding address.
    assert (await client.get(path, headers=from_address("203.0.113.7", AUTH))).status == 200
    for _ in range(LIMIT):
        resp = await client.get(path, headers=from_address("203.0.113.7", bad_key()))
        await assert_api_error(resp, 401, "invalid_api_key")
    await assert_limited(await client.get(path, headers=from_address("203.0.113.7", bad_key())))
    # The same made-up key as before, answered from the negative cache: limited too.
    # Another address is not limited.
    other = await client.get(path, headers=from_address("198.51.100.9", bad_key()))
    await assert_api_error(other, 401, "invalid_api_key")
    known = await client.get(path, headers=from_address("203.0.113.7", AUTH))
    assert known.status == 200
    # The allowance comes back with time (GCRA: one failure per window / limit).
    clock.advance(3600 / LIMIT)
    again = await client.get(path, headers=from_address("203.0.113.7", bad_key()))
    await assert_api_error(again, 401, "invalid_api_key")
    await assert_limited(await client.get(path, headers=from_address("203.0.113.7", bad_key())))


async def test_a_limited_address_costs_no_lookup(edge_client, small_dist, monkeypatch):
    client = await edge_client(dist=small_dist, auth_failure_limit=(LIMIT, 3600))
    authenticator = client.app[appkeys.AUTHENTICATOR]
    asked: list[str] = []
    real = authenticator.authenticate

    async def counting(key: str):
        asked.append(key)
        return await real(key)

    monkeypatch.setattr(authenticator, "authenticate", counting)
    for _ in range(LIMIT):
        assert (await client.get("/v1/programs", headers=bad_key())).status == 401
    assert len(asked) == LIMIT
    for _ in range(5):
        await assert_limited(await client.get("/v1/programs", headers=bad_key()))
    assert len(asked) == LIMIT  # refused before the key cache and the store were asked


async def test_a_forwarded_header_is_ignored_unless_the_peer_is_a_trusted_proxy(
    edge_client, small_dist
):
    client = await edge_client(dist=small_dist, auth_failure_limit=(LIMIT, 3600))
    for number in range(LIMIT):
        resp = await client.get(
            "/v1/programs", headers=from_address(f"192.0.2.{number}", bad_key())
        )
        assert resp.status == 401
    # A new X-Forwarded-For each time does not make a new client: the peer is counted.
    spoofed = await client.get("/v1/programs", headers=from_address("192.0.2.200", bad_key()))
    await assert_limited(spoofed)


async def test_requests_without_a_key_and_good_keys_are_not_counted(edge_client, small_dist):
    client = await edge_client(dist=small_dist, auth_failure_limit=(LIMIT, 3600))
    for _ in range(LIMIT * 3):
        assert (await client.get("/v1/me")).status == 401  # missing_api_key
        assert (await client.get("/v1/programs")).status == 200  # the public
        assert (await client.get("/v1/programs", headers=AUTH)).status == 200
    assert len(client.app[appkeys.AUTH_FAILURES]) == 0
    assert (await client.get("/v1/programs", headers=bad_key())).status == 401


def test_memory_stays_bounded_under_many_addresses():
    clock = FakeClock()
    failures = AuthFailures(LIMIT, 3600, capacity=100, clock=clock)
    for number in range(5_000):
        failures.failed(f"10.{number // 65536}.{number // 256 % 256}.{number % 256}")
        assert len(failures) <= failures.capacity
    assert len(failures) > failures.capacity // 2  # kept, not flushed


def test_a_blocked_check_counts_nothing():
    failures = AuthFailures(2, 60, clock=FakeClock())
    assert failures.blocked("a") is None and len(failures) == 0
    assert failures.failed("a").allowed and failures.blocked("a") is None
    assert failures.failed("a").allowed
    denied = failures.blocked("a")
    assert denied is not None and not denied.allowed and denied.retry_after_seconds >= 1
    assert failures.blocked("b") is None


@pytest.mark.parametrize(
    ("peer", "forwarded", "trusted", "client"),
    [
        ("203.0.113.7", [], "", "203.0.113.7"),
        ("203.0.113.7", ["1.2.3.4"], "", "203.0.113.7"),  # not a proxy: header ignored
        ("10.0.0.2", ["1.2.3.4"], "10.0.0.0/8", "1.2.3.4"),
        ("10.0.0.2", ["6.6.6.6, 1.2.3.4"], "10.0.0.0/8", "1.2.3.4"),  # the client wrote 6.6.6.6
        ("10.0.0.2", ["1.2.3.4, 10.0.0.9"], "10.0.0.0/8", "1.2.3.4"),  # two proxies
        ("10.0.0.2", ["1.2.3.4", "10.0.0.9"], "10.0.0.0/8", "1.2.3.4"),  # two headers
        ("10.0.0.2", ["nonsense, 10.0.0.9"], "10.0.0.0/8", "10.0.0.9"),  # stops at garbage
        ("10.0.0.2", [], "10.0.0.0/8", "10.0.0.2"),
        ("::1", ["2001:db8::5"], "::1", "2001:db8::5"),
        (None, ["1.2.3.4"], "10.0.0.0/8", None),
    ],
)
def test_the_client_address(peer, forwarded, trusted, client):
    found = client_address(peer, forwarded, parse_networks(trusted))
    assert found == (None if client is None else ipaddress.ip_address(client))


def test_ipv6_addresses_count_per_64_and_mapped_ipv4_as_ipv4():
    one = address_key(ipaddress.ip_address("2001:db8:1:2::1"))
    assert one == address_key(ipaddress.ip_address("2001:db8:1:2:ffff::9")) == "2001:db8:1:2::/64"
    assert address_key(ipaddress.ip_address("2001:db8:1:3::1")) != one
    assert address_key(ipaddress.ip_address("::ffff:192.0.2.1")) == "192.0.2.1"
    assert address_key(None) == "unknown"


@pytest.mark.parametrize("text", ["10.0.0.0/33", "proxy.example", "1.2.3"])
def test_a_bad_trusted_proxy_is_named(text):
    with pytest.raises(ValueError, match=repr(text).replace(".", r"\.").replace("[", r"\[")):
        parse_networks(f"10.0.0.1, {text}")
