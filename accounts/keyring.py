"""The service's secrets: the current one signs and encrypts, every configured one verifies
and decrypts.

Several secrets make rotation possible without losing anything: add a new secret in front,
re-encrypt the stored credentials under it (`affdir-admin credentials reencrypt`), wait for
the cursors signed with the old one to age out, then remove the old one (docs/deploy.md,
"Rotating the secret").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

SECRET_MIN = 32  # characters of a secret: cursor signatures and credential encryption
KEY_ID_BYTES = 4


class SecretError(ValueError):
    """A secret that cannot be used; the message never quotes it."""


def key_id(secret: bytes) -> bytes:
    """A short public name of a secret, stored beside what it sealed so that decryption
    picks the right secret at once. One-way: it reveals nothing of the secret."""
    return hashlib.sha256(b"affdir/key-id\x00" + secret).digest()[:KEY_ID_BYTES]


def check_secret(text: str, where: str = "the secret") -> bytes:
    """`text` as a secret's bytes, or SecretError if it is too short to be one."""
    value = text.strip()
    if len(value) < SECRET_MIN:
        raise SecretError(f"{where} must be at least {SECRET_MIN} characters")
    return value.encode()


@dataclass(frozen=True)
class Keyring:
    """The configured secrets, the current one first; never empty, no repeats."""

    secrets: tuple[bytes, ...]

    def __post_init__(self) -> None:
        if not self.secrets:
            raise SecretError("at least one secret is needed")
        if len(set(self.secrets)) != len(self.secrets):
            raise SecretError("the same secret is configured twice")
        if len({key_id(s) for s in self.secrets}) != len(self.secrets):
            raise SecretError("two configured secrets share a key id; replace one of them")

    @classmethod
    def of(cls, current: bytes, retired: Iterable[bytes] = ()) -> Keyring:
        """The current secret and the retired ones still accepted, in that order."""
        return cls((current, *(s for s in retired if s != current)))

    @property
    def current(self) -> bytes:
        """The secret that signs and encrypts."""
        return self.secrets[0]

    def by_id(self, kid: bytes) -> bytes | None:
        """The configured secret with this key id, if any."""
        for secret in self.secrets:
            if key_id(secret) == kid:
                return secret
        return None

    def __repr__(self) -> str:  # never the secrets themselves
        return f"Keyring({len(self.secrets)} secrets)"
