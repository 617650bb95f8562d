"""API key format (pure functions): `afk_` + 32 random base62 characters + 6-character checksum.

    afk_ 7Qm2YxK0 pRb9...(24 more)... Xc81Zq
    |    |--------- random: 32 base62 chars, ~190 bits ---------|-- CRC32, base62, 6 --|
    |-- prefix shown by /v1/me: the first 12 characters (afk_ + 8 random) --|

- The fixed `afk_` marker and the checksum let secret scanners recognise a leaked key
  without asking us (as GitHub's `ghp_` tokens do), and let the edge refuse a mistyped or
  truncated key without a store lookup.
- Only `key_hash(key)` is stored. A plain SHA-256 is enough here: the key has ~190 bits of
  entropy, so there is nothing to brute-force, and it keeps keys valid if the secret changes.
- `prefix_of(key)` tells keys apart in listings and logs; 8 random characters are far too
  few to use or guess the key.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import zlib
from dataclasses import dataclass

MARKER = "afk_"
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RANDOM_LENGTH = 32
CHECKSUM_LENGTH = 6  # 62**6 > 2**32: every CRC32 value fits
PREFIX_LENGTH = len(MARKER) + 8
KEY_LENGTH = len(MARKER) + RANDOM_LENGTH + CHECKSUM_LENGTH
KEY_PATTERN = rf"{MARKER}[0-9A-Za-z]{{{RANDOM_LENGTH + CHECKSUM_LENGTH}}}"
_KEY_RE = re.compile(KEY_PATTERN)


@dataclass(frozen=True, slots=True)
class IssuedKey:
    """A new key: `key` is shown once to its owner, everything else is what we keep."""

    key: str
    prefix: str
    key_hash: str

    def __repr__(self) -> str:  # never print the key by accident (tracebacks, debug logs)
        return f"IssuedKey(prefix={self.prefix!r})"


def base62(value: int, width: int) -> str:
    """`value` in base62, left-padded with '0' to exactly `width` characters."""
    digits = []
    while value:
        value, rest = divmod(value, 62)
        digits.append(ALPHABET[rest])
    text = "".join(reversed(digits)).rjust(width, "0")
    if len(text) != width:
        raise ValueError(f"{value} does not fit in {width} base62 characters")
    return text


def checksum(random_part: str) -> str:
    """The 6-character checksum of a key's random part."""
    return base62(zlib.crc32(random_part.encode("ascii")), CHECKSUM_LENGTH)


def generate_key() -> IssuedKey:
    random_part = "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))
    key = MARKER + random_part + checksum(random_part)
    return IssuedKey(key=key, prefix=prefix_of(key), key_hash=key_hash(key))


def is_well_formed(token: str) -> bool:
    """True when `token` has the key's shape and a matching checksum (no lookup needed)."""
    if len(token) != KEY_LENGTH or not _KEY_RE.fullmatch(token):
        return False
    random_part = token[len(MARKER) : len(MARKER) + RANDOM_LENGTH]
    return checksum(random_part) == token[-CHECKSUM_LENGTH:]


def key_hash(key: str) -> str:
    """What the store keeps and looks keys up by."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def prefix_of(key: str) -> str:
    return key[:PREFIX_LENGTH]
