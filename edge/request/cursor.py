"""Opaque, signed page cursors (pure functions).

A cursor carries the sort key of the last row of a page. It is bound to the endpoint, to
the filters it was made with (not to `limit`) and, on an account's endpoints, to the
account it was issued to, and signed with the edge's secret so a tampered, foreign or
another account's cursor is refused instead of silently starting somewhere else. The
current secret signs; every configured one verifies, so cursors outlive a secret's rotation
until the retired secret is removed.

Wire form: base64url(orjson([version, endpoint, filters digest, *position])) "."
base64url(mac); an account's cursor is version 2, [2, endpoint, account, filters digest,
*position].
Every integer of a position is a signed 64-bit one (a row id, a score), as the databases
store them: one outside that range is not a cursor this API made, whoever signed it.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

import orjson

from accounts.keyring import Keyring
from edge.http.errors import ApiError

_MAC_BYTES = 12
_VERSION = 1  # the directory's: no account
_ACCOUNT_VERSION = 2  # an account's: bound to it
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def filters_digest(filters: Mapping[str, Any]) -> str:
    """A short, order-independent digest of the filters a cursor is bound to."""
    return _digest(frozenset((k, str(v)) for k, v in filters.items() if v is not None))


@functools.lru_cache(maxsize=4096)
def _digest(items: frozenset[tuple[str, str]]) -> str:
    # Memoised: list requests ask for it twice each, and clients reuse a few filter sets.
    canonical = orjson.dumps(dict(items), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()[:16]


def _mac(secret: bytes, payload: bytes) -> bytes:
    # hmac.digest: the one-shot C implementation, several times faster than hmac.new().
    return hmac.digest(secret, b"cursor:" + payload, "sha256")[:_MAC_BYTES]


def _secrets(secrets: Keyring | bytes) -> tuple[bytes, ...]:
    return secrets.secrets if isinstance(secrets, Keyring) else (secrets,)


def encode(
    secrets: Keyring | bytes,
    endpoint: str,
    filters: Mapping[str, Any],
    position: list[Any],
    account: str | None = None,
) -> str:
    """A cursor that resumes after `position` (the last row's sort key), for `account`'s
    pages only when given."""
    head: list[Any] = (
        [_VERSION, endpoint] if account is None else [_ACCOUNT_VERSION, endpoint, account]
    )
    payload = orjson.dumps([*head, filters_digest(filters), *position])
    return _b64(payload) + "." + _b64(_mac(_secrets(secrets)[0], payload))


def _not_ours() -> ApiError:
    # Made only on failure: building an exception on the happy path costs every list request.
    return ApiError("invalid_cursor", "cursor is not one this API issued", param="cursor")


def decode(
    secrets: Keyring | bytes,
    token: str,
    endpoint: str,
    filters: Mapping[str, Any],
    account: str | None = None,
) -> list[Any]:
    """The position in a cursor; ApiError(invalid_cursor) unless made here, for these
    filters and (when given) for this account."""
    body, dot, sig = token.partition(".")
    if not dot or not body or not sig or not token.isascii():
        raise _not_ours()
    try:
        payload, mac = _unb64(body), _unb64(sig)
    except (binascii.Error, ValueError):
        raise _not_ours() from None
    # Only the exact text this API wrote: base64 decoding skips characters outside its
    # alphabet and accepts padding, so `<cursor>=`, `<cursor>%20` or a `!` in the middle
    # would otherwise pass as the same cursor.
    if _b64(payload) != body or _b64(mac) != sig:
        raise _not_ours()
    if not any(hmac.compare_digest(mac, _mac(s, payload)) for s in _secrets(secrets)):
        raise _not_ours()
    position: list[Any]
    try:
        version, made_for, *rest = orjson.loads(payload)
        issued_to = rest.pop(0) if version == _ACCOUNT_VERSION else None
        digest, *position = rest
    except (orjson.JSONDecodeError, ValueError, TypeError, IndexError):
        raise _not_ours() from None
    if version not in (_VERSION, _ACCOUNT_VERSION) or made_for != endpoint:
        raise ApiError(
            "invalid_cursor",
            f"cursor was made for another endpoint, not {endpoint}",
            param="cursor",
        )
    if issued_to != account:
        raise ApiError("invalid_cursor", "cursor was issued to another account", param="cursor")
    if digest != filters_digest(filters):
        raise ApiError(
            "invalid_cursor",
            "cursor was made for other filters; repeat the filters of the first page",
            param="cursor",
        )
    if not all(_fits(value) for value in position):
        raise _not_ours()
    return position


def _fits(value: Any) -> bool:
    """False for an integer no database column holds (SQLite's binding would overflow)."""
    return not isinstance(value, int) or INT64_MIN <= value <= INT64_MAX
