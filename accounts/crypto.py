"""Encryption of network credentials at rest (AES-256-GCM, keys derived from the secrets).

Each key is derived with HKDF-SHA256 and a purpose label, so the secret that signs cursors
is never used directly as an encryption key, and another purpose gets its own key.
Each ciphertext is bound to its (account, network) row as associated data: a ciphertext
copied onto another row does not decrypt.

Wire form: b"v2" + 4-byte key id of the secret (accounts.keyring.key_id) + 12-byte random
nonce + AES-GCM ciphertext-and-tag. The key id lets decryption pick the right one of several
configured secrets, and lets an operator count what is still sealed under a retired one.
b"v1" ciphertexts (no key id) are still opened, by trying each configured secret.
"""

from __future__ import annotations

import functools
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from accounts.keyring import KEY_ID_BYTES, Keyring, key_id

CREDENTIALS_LABEL = b"affdir/network-credentials/v1"
_V1 = b"v1"
_V2 = b"v2"
_NONCE_BYTES = 12
_TAG_BYTES = 16


class CredentialsError(ValueError):
    """A ciphertext that the configured secrets cannot open (other secret, other row, or
    tampered); the message never quotes a secret or the plaintext."""


@functools.lru_cache(maxsize=16)
def derive_key(secret: bytes, label: bytes) -> bytes:
    """A 256-bit key for one purpose, derived from a secret."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=label).derive(secret)


def _keyring(secrets: Keyring | bytes) -> Keyring:
    return secrets if isinstance(secrets, Keyring) else Keyring((secrets,))


def _associated_data(account_uid: str, network: str) -> bytes:
    return f"{account_uid}\x00{network}".encode()


def encrypt_credentials(
    secrets: Keyring | bytes, account_uid: str, network: str, plaintext: bytes
) -> bytes:
    """Seal `plaintext` for one (account, network) row under the current secret."""
    secret = _keyring(secrets).current
    nonce = os.urandom(_NONCE_BYTES)
    sealed = AESGCM(derive_key(secret, CREDENTIALS_LABEL)).encrypt(
        nonce, plaintext, _associated_data(account_uid, network)
    )
    return _V2 + key_id(secret) + nonce + sealed


def sealed_key_id(blob: bytes) -> bytes | None:
    """The key id a ciphertext names (None for a v1 one, which names none)."""
    if blob.startswith(_V2) and len(blob) >= len(_V2) + KEY_ID_BYTES:
        return blob[len(_V2) : len(_V2) + KEY_ID_BYTES]
    return None


def is_current(secrets: Keyring | bytes, blob: bytes) -> bool:
    """Whether `blob` is sealed under the current secret (else it needs re-encrypting)."""
    return sealed_key_id(blob) == key_id(_keyring(secrets).current)


def decrypt_credentials(
    secrets: Keyring | bytes, account_uid: str, network: str, blob: bytes
) -> bytes:
    """For the sync worker and the re-encryption command; no API read path calls this."""
    keyring = _keyring(secrets)
    aad = _associated_data(account_uid, network)
    if blob.startswith(_V2) and len(blob) >= len(_V2) + KEY_ID_BYTES + _NONCE_BYTES + _TAG_BYTES:
        secret = keyring.by_id(blob[len(_V2) : len(_V2) + KEY_ID_BYTES])
        if secret is None:
            raise CredentialsError(
                "credentials are sealed under a secret that is not configured any more"
            )
        body = blob[len(_V2) + KEY_ID_BYTES :]
        candidates: tuple[bytes, ...] = (secret,)
    elif blob.startswith(_V1) and len(blob) >= len(_V1) + _NONCE_BYTES + _TAG_BYTES:
        body = blob[len(_V1) :]
        candidates = keyring.secrets
    else:
        raise CredentialsError("not a credentials ciphertext of a known version")
    nonce, sealed = body[:_NONCE_BYTES], body[_NONCE_BYTES:]
    for secret in candidates:
        try:
            return AESGCM(derive_key(secret, CREDENTIALS_LABEL)).decrypt(nonce, sealed, aad)
        except InvalidTag:
            continue
    raise CredentialsError("credentials do not open with the configured secrets for this row")
