"""API key format (prefix, checksum, hash) and credential encryption: pure functions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounts import apikeys
from accounts.crypto import (
    CredentialsError,
    decrypt_credentials,
    encrypt_credentials,
    is_current,
    sealed_key_id,
)
from accounts.keyring import Keyring, SecretError, key_id

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
    # The key too is drawn (as generate_key makes one), not taken from `secrets`: a strategy
    # that depends on a value hypothesis does not control cannot be replayed.
    alphabet = apikeys.ALPHABET
    random_part = data.draw(
        st.text(alphabet, min_size=apikeys.RANDOM_LENGTH, max_size=apikeys.RANDOM_LENGTH)
    )
    key = apikeys.MARKER + random_part + apikeys.checksum(random_part)
    assert apikeys.is_well_formed(key)
    index = data.draw(st.integers(min_value=len(apikeys.MARKER), max_value=len(key) - 1))
    # Another character of the alphabet: any of the others, by a non-zero shift.
    shift = data.draw(st.integers(min_value=1, max_value=len(alphabet) - 1))
    replacement = alphabet[(alphabet.index(key[index]) + shift) % len(alphabet)]
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


NEW = b"n" * 40
OLD = b"o" * 40


def test_credentials_name_the_secret_that_sealed_them_and_open_under_a_keyring():
    sealed = encrypt_credentials(Keyring((OLD,)), "acc_1", "awin", b'{"token":"t"}')
    assert sealed_key_id(sealed) == key_id(OLD) and key_id(OLD) not in OLD
    rotated = Keyring.of(NEW, [OLD])
    assert decrypt_credentials(rotated, "acc_1", "awin", sealed) == b'{"token":"t"}'
    assert not is_current(rotated, sealed)
    resealed = encrypt_credentials(rotated, "acc_1", "awin", b'{"token":"t"}')
    assert is_current(rotated, resealed) and sealed_key_id(resealed) == key_id(NEW)
    with pytest.raises(CredentialsError, match="not configured any more") as caught:
        decrypt_credentials(Keyring((NEW,)), "acc_1", "awin", sealed)
    assert "o" * 8 not in str(caught.value)


def test_v1_credentials_without_a_key_id_still_open_under_any_configured_secret():
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from accounts.crypto import CREDENTIALS_LABEL, derive_key

    nonce = b"\x01" * 12
    v1 = (
        b"v1"
        + nonce
        + AESGCM(derive_key(OLD, CREDENTIALS_LABEL)).encrypt(nonce, b"plain", b"acc_1\x00cj")
    )
    assert decrypt_credentials(Keyring.of(NEW, [OLD]), "acc_1", "cj", v1) == b"plain"
    assert sealed_key_id(v1) is None and not is_current(Keyring((OLD,)), v1)
    with pytest.raises(CredentialsError):
        decrypt_credentials(Keyring((NEW,)), "acc_1", "cj", v1)


@pytest.mark.parametrize(
    ("secrets", "message"),
    [((), "at least one"), ((NEW, NEW), "twice")],
)
def test_a_keyring_refuses_what_cannot_work(secrets, message):
    with pytest.raises(SecretError, match=message):
        Keyring(secrets)


def test_a_keyring_never_shows_its_secrets():
    assert "n" * 8 not in repr(Keyring.of(NEW, [OLD])) and "o" * 8 not in str(Keyring((OLD,)))


def test_cursors_signed_with_a_retired_secret_pass_until_it_is_removed():
    from edge.http.errors import ApiError
    from edge.request import cursor

    token = cursor.encode(Keyring((OLD,)), "commissions", {}, ["2026-01-01", 7])
    assert cursor.decode(Keyring.of(NEW, [OLD]), token, "commissions", {}) == ["2026-01-01", 7]
    with pytest.raises(ApiError) as refused:
        cursor.decode(Keyring((NEW,)), token, "commissions", {})
    assert refused.value.code == "invalid_cursor"
    fresh = cursor.encode(Keyring.of(NEW, [OLD]), "commissions", {}, [1])
    assert cursor.decode(Keyring((NEW,)), fresh, "commissions", {}) == [1]
