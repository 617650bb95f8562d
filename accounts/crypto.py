"""Encryption of network credentials at rest (AES-256-GCM, key derived from the edge secret).

The key is derived with HKDF-SHA256 and a purpose label, so the secret that signs cursors
is never used directly as an encryption key, and a future purpose gets its own key.
Each ciphertext is bound to its (account, network) row as associated data: a ciphertext
copied onto another row does not decrypt.

Wire form: b"v1" + 12-byte random nonce + AES-GCM ciphertext-and-tag.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

CREDENTIALS_LABEL = b"affdir/network-credentials/v1"
_VERSION = b"v1"
_NONCE_BYTES = 12


class CredentialsError(ValueError):
    """A ciphertext that this secret cannot open (other secret, other row, or tampered)."""


def derive_key(secret: bytes, label: bytes) -> bytes:
    """A 256-bit key for one purpose, derived from the edge secret."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=label).derive(secret)


def _associated_data(account_uid: str, network: str) -> bytes:
    return f"{account_uid}\x00{network}".encode()


def encrypt_credentials(secret: bytes, account_uid: str, network: str, plaintext: bytes) -> bytes:
    nonce = os.urandom(_NONCE_BYTES)
    sealed = AESGCM(derive_key(secret, CREDENTIALS_LABEL)).encrypt(
        nonce, plaintext, _associated_data(account_uid, network)
    )
    return _VERSION + nonce + sealed


def decrypt_credentials(secret: bytes, account_uid: str, network: str, blob: bytes) -> bytes:
    """For the synchronisation worker; no API read path ever calls this."""
    if not blob.startswith(_VERSION) or len(blob) < len(_VERSION) + _NONCE_BYTES + 16:
        raise CredentialsError("not a credentials ciphertext of a known version")
    nonce = blob[len(_VERSION) : len(_VERSION) + _NONCE_BYTES]
    try:
        return AESGCM(derive_key(secret, CREDENTIALS_LABEL)).decrypt(
            nonce, blob[len(_VERSION) + _NONCE_BYTES :], _associated_data(account_uid, network)
        )
    except InvalidTag:
        raise CredentialsError("credentials do not open with this secret for this row") from None
