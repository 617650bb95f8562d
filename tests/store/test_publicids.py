"""Public ids reveal no volume: the keyed permutation of store.publicids is a bijection of
the 64-bit integers that inverts exactly, consecutive rows get unrelated ids, and the id
key is made once per store, kept across reopens, shared by every handle and never read
through a read connection."""

from __future__ import annotations

import itertools
import secrets
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.accountkit import new_commission

from store import accounts, commissions, open_store
from store.base import CommissionQuery, StoreUnavailable
from store.idkey import stored_key
from store.publicids import KEY_BYTES, PublicIds

IDS = PublicIds.from_key(bytes(range(KEY_BYTES)))
OTHER = PublicIds.from_key(bytes(range(1, KEY_BYTES + 1)))
U64 = st.integers(min_value=0, max_value=2**64 - 1)


@given(U64)
def test_the_permutation_inverts_exactly(value: int):
    for permutation in (IDS.commissions, IDS.events):
        assert permutation.backward(permutation.forward(value)) == value
        assert permutation.forward(permutation.backward(value)) == value


@given(st.lists(U64, min_size=2, max_size=50, unique=True))
def test_distinct_values_have_distinct_images(values: list[int]):
    assert len({IDS.commissions.forward(v) for v in values}) == len(values)


@given(st.integers(min_value=1, max_value=2**63 - 2))
def test_public_ids_round_trip_and_hold_their_shape(seq: int):
    com, evt = IDS.commission(seq), IDS.event(seq)
    assert com.startswith("com_") and len(com) == 20 and com == com.lower()
    assert evt.startswith("evt_") and len(evt) == 20
    assert IDS.commission_seq(com) == seq
    assert IDS.event_seq(evt) == seq
    # Each kind and each key has its own permutation.
    assert com[4:] != evt[4:]
    assert OTHER.commission(seq) != com


@pytest.mark.parametrize(
    "text", ["", "com_", "com_0123", "evt_0000000000000001", "com_ABCDEF0123456789"]
)
def test_text_that_is_no_commission_id_decodes_to_nothing(text: str):
    assert IDS.commission_seq(text) is None


def test_consecutive_rows_are_not_adjacent():
    ids = [IDS.commissions.forward(seq) for seq in range(1, 1001)]
    gaps = [abs(b - a) for a, b in itertools.pairwise(ids)]
    # A sequence, or a sequence with a fixed stride, would show small or equal gaps.
    assert min(gaps) > 2**20
    assert len(set(gaps)) == len(gaps)
    assert sorted(ids) != ids


def test_event_data_gets_the_commission_public_id():
    raw = '{"id":"com_000000000000002a","network":"awin"}'
    assert IDS.event_data(raw) == '{"id":"' + IDS.commission(42) + '","network":"awin"}'
    connection = '{"network":"awin","status":"error"}'
    assert IDS.event_data(connection) == connection


def test_a_key_is_thirty_two_bytes():
    with pytest.raises(ValueError, match="32 bytes"):
        PublicIds.from_key(b"short")


async def test_the_key_persists_across_reopen_and_is_shared(database: str):
    first = await open_store(database, writable=True, readers=1)
    second = await open_store(database, readers=1)
    try:
        await first.write(accounts.create, None, "free", uid="acc_a")
        await first.write(accounts.create, None, "free", uid="acc_b")
        for uid in ("acc_a", "acc_b"):
            await first.write(commissions.upsert, uid, "awin", [new_commission(f"{uid}-1")])
        assert first.ids.commission(1) == second.ids.commission(1)
        assert first.ids.event(7) == second.ids.event(7)
        key = await first.write(stored_key)
        assert key is not None and len(key) == KEY_BYTES
    finally:
        await first.close()
        await second.close()
    again = await open_store(database, writable=True, readers=1)
    try:
        assert again.ids.commission(1) == PublicIds.from_key(key).commission(1)
        # Two accounts' consecutive commissions: their public ids show no sequence.
        rows = []
        for uid in ("acc_a", "acc_b"):
            rows += await again.read(commissions.page, CommissionQuery(uid, limit=10))
        seqs = sorted(r.seq for r in rows)
        assert seqs[1] == seqs[0] + 1
        public = [int(again.ids.commission(s)[4:], 16) for s in seqs]
        assert abs(public[1] - public[0]) > 2**20
    finally:
        await again.close()


async def test_racing_first_opens_agree_on_one_key(database: str):
    import asyncio

    stores = await asyncio.gather(
        *(open_store(database, writable=True, readers=1) for _ in range(3))
    )
    try:
        assert len({s.ids.commission(5) for s in stores}) == 1
    finally:
        for store in stores:
            await store.close()


async def test_a_read_connection_may_not_read_the_key(database: str):
    store = await open_store(database, writable=True, readers=1)
    try:
        with pytest.raises(StoreUnavailable):
            await store.read(stored_key)
    finally:
        await store.close()


def test_keys_differ_per_store():
    a, b = (PublicIds.from_key(secrets.token_bytes(KEY_BYTES)) for _ in range(2))
    assert a.commission(1) != b.commission(1)


@pytest.mark.sqlite_only
async def test_a_backup_carries_the_key(database: str, tmp_path):
    from accounts.backup import backup

    store = await open_store(database, writable=True, readers=1)
    try:
        before = store.ids.commission(42)
    finally:
        await store.close()
    target = tmp_path / "copy.sqlite3"
    backup(Path(database), target)
    restored = await open_store(str(target), readers=1)
    try:
        assert restored.ids.commission(42) == before
    finally:
        await restored.close()
