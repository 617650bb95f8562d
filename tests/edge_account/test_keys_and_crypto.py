"""API key format (prefix, checksum, hash) and credential encryption: pure functions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounts import apikeys
from accounts.crypto import CredentialsError, decrypt_credentials, encrypt_credentials

SECRET = b"s" * 40


def test_a_new_key_has_the_marker_length_checksum_and_enough_entropy():
    issued = apikeys.generate_key()
    assert issued.key.startswith("afk_")
    assert len(issued.key) == apikeys.KEY_LENGTH == 42
    assert apikeys.is_well_formed(issued.key)
    assert issued.prefix == issued.key[:12]
    assert issued.key_hash == apikeys.key_hash(issued.key)
    assert len(issued.key_hash) == 64 and issued.key not in issued.key_hash
    assert apikeys.RANDOM_LENGTH * math.log2(62) >= 128
    assert issued.key not in repr(issued)  # never printed by accident


def test_keys_are_all_different():
    keys = {apikeys.generate_key().key for _ in range(200)}
    assert len(keys) == 200
    assert len({k[:12] for k in keys}) == 200  # prefixes tell them apart in practice


@given(st.data())
def test_any_single_character_change_breaks_the_checksum(data):
    key = apikeys.generate_key().key
    index = data.draw(st.integers(min_value=len(apikeys.MARKER), max_value=len(key) - 1))
    replacement = data.draw(st.sampled_from(apikeys.ALPHABET).filter(lambda c: c != key[index]))
    mutated = key[:index] + replacement + key[index + 1 :]
    assert not apikeys.is_well_formed(mutated)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "afk_",
        "afk_short",
        "ghp_" + "a" * 38,
        "AFK_" + "a" * 38,
        "afk_" + "a" * 37,
        "afk_" + "a" * 39,
        "afk_" + "!" * 38,
        "afk_" + "a" * 32 + "zzzzzz",
        " afk_" + "a" * 38,
    ],
)
def test_malformed_tokens_are_refused_without_lookup(token):
    assert not apikeys.is_well_formed(token)


def test_base62_is_fixed_width_and_refuses_overflow():
    assert apikeys.base62(0, 6) == "000000"
    assert apikeys.base62(2**32 - 1, 6) == apikeys.base62(2**32 - 1, 6).rjust(6, "0")
    with pytest.raises(ValueError):
        apikeys.base62(62**6, 6)


def test_credentials_round_trip_and_are_bound_to_their_row_and_secret():
    plain = b'{"apiToken": "tok-PLANTED-123"}'
    blob = encrypt_credentials(SECRET, "acc_1", "awin", plain)
    assert b"PLANTED" not in blob and plain not in blob
    assert decrypt_credentials(SECRET, "acc_1", "awin", blob) == plain
    assert encrypt_credentials(SECRET, "acc_1", "awin", plain) != blob  # fresh nonce
    with pytest.raises(CredentialsError):
        decrypt_credentials(SECRET, "acc_2", "awin", blob)
    with pytest.raises(CredentialsError):
        decrypt_credentials(SECRET, "acc_1", "cj", blob)
    with pytest.raises(CredentialsError):
        decrypt_credentials(b"t" * 40, "acc_1", "awin", blob)
    with pytest.raises(CredentialsError):
        decrypt_credentials(SECRET, "acc_1", "awin", blob[:-1] + bytes([blob[-1] ^ 1]))
    with pytest.raises(CredentialsError):
        decrypt_credentials(SECRET, "acc_1", "awin", b"v0" + blob[2:])
