"""The worker's pure parts: signatures, the retry schedule, which targets are refused."""

from __future__ import annotations

import datetime as dt
import ipaddress
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import Webhook, WebhookVerificationError

from accounts.crypto import CredentialsError
from accounts.keyring import Keyring
from webhooks import signing
from webhooks.schedule import DELAYS, GIVE_UP_AFTER, RetryPolicy, next_attempt
from webhooks.targets import TargetPolicy, address_refusal, url_refusal

NOW = dt.datetime.now(dt.UTC)
KEYRING = Keyring((b"parts-secret-" + b"p" * 40,))


def test_the_body_keeps_the_database_json_byte_for_byte():
    body = signing.event_body("evt_9b2d47e0c1a6f853", "commission.created", "2026-03-01T10:00:00Z",
                              '{"amount":10.10,"n":null}')  # fmt: skip
    assert body == (
        b'{"id":"evt_9b2d47e0c1a6f853","type":"commission.created",'
        b'"occurredAt":"2026-03-01T10:00:00Z","data":{"amount":10.10,"n":null}}'
    )


def test_one_signature_per_secret_each_verifying():
    first, second = signing.new_secret(), signing.new_secret()
    assert first.startswith("whsec_") and first != second
    body = b'{"id":"evt_1"}'
    now = dt.datetime.now(dt.UTC)  # the verifier refuses a timestamp 5 minutes off its clock
    headers = signing.headers("evt_1", body, (first, second), now)
    assert headers["webhook-id"] == "evt_1"
    assert headers["webhook-timestamp"] == str(int(now.timestamp()))
    assert [s[:3] for s in headers["webhook-signature"].split(" ")] == ["v1,", "v1,"]
    for secret in (first, second):
        assert Webhook(secret).verify(body, headers) == {"id": "evt_1"}
    with pytest.raises(WebhookVerificationError):
        Webhook(signing.new_secret()).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(first).verify(body + b" ", headers)


def test_a_sealed_secret_opens_on_its_own_endpoint_only():
    secret = signing.new_secret()
    sealed = signing.seal_secret(KEYRING, "acc_a", "whk_a", secret)
    assert secret.encode() not in sealed
    assert signing.open_secret(KEYRING, "acc_a", "whk_a", sealed) == secret
    for account, endpoint in (("acc_b", "whk_a"), ("acc_a", "whk_b")):
        with pytest.raises(CredentialsError):
            signing.open_secret(KEYRING, account, endpoint, sealed)


@given(st.integers(min_value=1, max_value=60), st.integers(min_value=0, max_value=2**32))
def test_each_wait_is_within_its_ceiling_and_a_whole_second(failures, seed):
    policy = RetryPolicy()
    first = NOW - dt.timedelta(hours=1)
    later = next_attempt(policy, failures, first, NOW, random.Random(seed))
    assert later is not None and later.microsecond == 0
    wait = (later - NOW).total_seconds()
    assert 1.0 <= wait <= policy.ceiling(failures) + 1


def test_the_default_schedule_spans_about_three_days():
    assert DELAYS[0] == 5 and max(DELAYS) == 36000 and dt.timedelta(hours=72) == GIVE_UP_AFTER
    policy = RetryPolicy()
    rng = random.Random(7)
    first = now = NOW
    failures = 0
    while True:
        failures += 1
        later = next_attempt(policy, failures, first, now, rng)
        if later is None:
            break
        now = later
    assert dt.timedelta(hours=72) <= now - first < dt.timedelta(hours=82)
    assert failures > len(DELAYS)


@pytest.mark.parametrize("delays", [(), (0.0,), (-1.0, 5.0)])
def test_a_schedule_needs_positive_delays(delays):
    with pytest.raises(ValueError, match="positive"):
        RetryPolicy(delays=delays)


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("100.64.0.1", "not a public"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
    ],
)
def test_only_public_addresses_by_default(address, refused):
    found = address_refusal(ipaddress.ip_address(address), TargetPolicy())
    assert (found is None) if refused is None else (found is not None and refused in found)


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "127.8.9.10"])
def test_allow_loopback_allows_loopback_only(address):
    policy = TargetPolicy(allow_loopback=True)
    assert address_refusal(ipaddress.ip_address(address), policy) is None
    assert address_refusal(ipaddress.ip_address("10.0.0.1"), policy) is not None


@pytest.mark.parametrize(
    ("url", "loopback", "refused"),
    [
        ("https://hooks.example.com/x", False, None),
        ("https://8.8.8.8/x", False, None),
        ("http://hooks.example.com/x", False, "only https://"),
        ("http://127.0.0.1:8080/x", True, None),
        ("http://10.0.0.1/x", True, "private"),
        ("https://hooks.example.com/x#frag", False, "fragment"),
        ("javascript:alert(1)", True, "only https:// and http://"),
        ("https://[::1/x", False, "not a URL"),
    ],
)
def test_url_refusals(url, loopback, refused):
    found = url_refusal(url, TargetPolicy(allow_loopback=loopback))
    assert (found is None) if refused is None else (found is not None and refused in found)
