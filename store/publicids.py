"""Public ids that reveal no volume: a keyed permutation of the row ids.

A commission's and an event's row id is a sequence shared by every account: written as it
is, any account could read how much the whole service handles from two of its own ids.
Their public forms (`com_`, `evt_` and `pay_` + 16 lowercase hex digits, contract.resources)
therefore carry the row id permuted by a keyed pseudo-random permutation of the 64-bit
integers, one key per kind of id, so that ids of consecutive rows look unrelated and a
commission id and an event id of the same number differ.

The permutation is a balanced Feistel network on two 32-bit halves (L, R), `ROUNDS`
rounds, each `L, R = R, L ^ F(round, R)` with F the BLAKE2b of the half, keyed with a key
of its own per kind and round (the round number is also in its personalisation),
truncated to 32 bits. Whatever F is, each round is a bijection with an explicit
inverse (`R, L = L, R ^ F(round, L)`, rounds taken in reverse order), so the whole
network is a bijection of the 64-bit integers and `decode` undoes `encode` exactly: every
row id has one public id, and every public id names at most one row id. A public id that
decodes to a row id the store does not have (or another account's) is answered as unknown.

The keys derive from one random 32-byte id key, made once per store and kept in it
(schema step 8, store/schema/v008_id_key.py): every process of a deployment shares it,
a backup carries it, and rotating the service secret leaves every id as it was. The key
is never returned nor logged; the read connections may not select its table
(store.core.SECRET_TABLES): the stores read it when they open.

The order of public ids means nothing: lists are ordered by their own fields (commissions
by transactedAt then the row id, the event feed by its cursor).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

KEY_BYTES = 32
ROUNDS = 6
_HALF = 0xFFFFFFFF
COMMISSION_PREFIX = "com_"
EVENT_PREFIX = "evt_"
PAYMENT_PREFIX = "pay_"
_HEX16 = re.compile(r"[0-9a-f]{16}")
# Events whose data names a commission start with its id, as the event triggers write it
# (store/schema/v005_events.py): `{"id":"com_` + 16 hex digits of the row id + `"`.
_DATA_ID_HEAD = '{"id":"' + COMMISSION_PREFIX
_DATA_ID_START = len(_DATA_ID_HEAD)
_DATA_ID_END = _DATA_ID_START + 16
# A payment.created event's data starts with the payment's id, as store.payments writes it.
_PAYMENT_ID_HEAD = '{"id":"' + PAYMENT_PREFIX


def _round_functions(key: bytes, kind: str) -> tuple[Any, ...]:
    """The round functions of the permutation of one kind of id: BLAKE2b keyed with a key
    per kind and round derived from the id key, prepared once (each use copies the keyed
    state rather than setting the key up again: an id is made per row of a page)."""
    kind_key = hashlib.blake2b(kind.encode(), key=key, person=b"affdir-ids").digest()
    return tuple(
        hashlib.blake2b(key=kind_key, person=b"affdir-round" + bytes([n]), digest_size=4)
        for n in range(ROUNDS)
    )


@dataclass(frozen=True, slots=True)
class Permutation:
    """A keyed bijection of the 64-bit integers (a Feistel network, see the module)."""

    rounds: tuple[Any, ...] = field(repr=False)  # keyed BLAKE2b states, one per round

    def _f(self, n: int, half: int) -> int:
        state = self.rounds[n].copy()
        state.update(half.to_bytes(4, "big"))
        return int.from_bytes(state.digest(), "big")

    def forward(self, value: int) -> int:
        """The image of `value` (0 <= value < 2**64)."""
        if not 0 <= value < 2**64:
            raise ValueError("a public id permutes 64-bit values")
        left, right = value >> 32, value & _HALF
        for n in range(ROUNDS):
            left, right = right, left ^ self._f(n, right)
        return (left << 32) | right

    def backward(self, value: int) -> int:
        """The value whose image is `value`: forward's inverse."""
        if not 0 <= value < 2**64:
            raise ValueError("a public id permutes 64-bit values")
        left, right = value >> 32, value & _HALF
        for n in reversed(range(ROUNDS)):
            left, right = right ^ self._f(n, left), left
        return (left << 32) | right


@dataclass(frozen=True, slots=True)
class PublicIds:
    """The public ids of one store: commission and event row ids to and from their public
    form. Make it with `PublicIds.from_key(key)`; its repr shows no key."""

    commissions: Permutation = field(repr=False)
    events: Permutation = field(repr=False)
    payments: Permutation = field(repr=False)

    @classmethod
    def from_key(cls, key: bytes) -> PublicIds:
        if len(key) != KEY_BYTES:
            raise ValueError(f"the id key is {KEY_BYTES} bytes")
        return cls(
            Permutation(_round_functions(key, "commission")),
            Permutation(_round_functions(key, "event")),
            Permutation(_round_functions(key, "payment")),
        )

    def commission(self, seq: int) -> str:
        """The public id of commission row `seq`: `com_` + 16 lowercase hex digits."""
        return f"{COMMISSION_PREFIX}{self.commissions.forward(seq):016x}"

    def commission_seq(self, public: str) -> int | None:
        """The row id `public` names, None for text that is no commission id."""
        return _decode(self.commissions, COMMISSION_PREFIX, public)

    def event(self, seq: int) -> str:
        """The public id of event row `seq`: `evt_` + 16 lowercase hex digits."""
        return f"{EVENT_PREFIX}{self.events.forward(seq):016x}"

    def event_seq(self, public: str) -> int | None:
        """The row id `public` names, None for text that is no event id."""
        return _decode(self.events, EVENT_PREFIX, public)

    def payment(self, seq: int) -> str:
        """The public id of payment row `seq`: `pay_` + 16 lowercase hex digits."""
        return f"{PAYMENT_PREFIX}{self.payments.forward(seq):016x}"

    def payment_seq(self, public: str) -> int | None:
        """The row id `public` names, None for text that is no payment id."""
        return _decode(self.payments, PAYMENT_PREFIX, public)

    def event_data(self, data: str) -> str:
        """An event's stored `data` with the commission's row id its trigger wrote replaced
        by its public id, and a payment's likewise; other data (a connection's events) as
        it is. The one place the feed and the webhook payloads translate it, so both carry
        the same id."""
        if data.startswith(_DATA_ID_HEAD):
            permutation = self.commissions
        elif data.startswith(_PAYMENT_ID_HEAD):
            permutation = self.payments
        else:
            return data
        # Both heads have the same length: `{"id":"` and a four-character prefix.
        if data[_DATA_ID_END : _DATA_ID_END + 1] != '"':
            return data
        raw = data[_DATA_ID_START:_DATA_ID_END]
        if not _HEX16.fullmatch(raw):
            return data
        public = f"{permutation.forward(int(raw, 16)):016x}"
        return data[:_DATA_ID_START] + public + data[_DATA_ID_END:]


def _decode(permutation: Permutation, prefix: str, public: str) -> int | None:
    if not (public.startswith(prefix) and _HEX16.fullmatch(public[len(prefix) :])):
        return None
    return permutation.backward(int(public[len(prefix) :], 16))
