"""One commission has one public id wherever it shows: the list, the one-commission answer,
the event feed and a webhook payload; the event's id is the same in the feed and the
`webhook-id`. No id carries the row sequence, and no answer carries the id key."""

from __future__ import annotations

import itertools

from support.accountkit import new_account
from webhookkit import Wall, endpoint, worker

from store import NewCommission, accounts, commissions, open_store
from store.base import CommissionQuery
from store.idkey import stored_key


def row(external_id: str) -> NewCommission:
    return NewCommission(external_id, "pending", None, "4.20", "EUR", "2026-03-01T10:00:00Z")


async def test_one_commission_one_public_id_everywhere(
    store, keyring, receivers, edge_client, account_config
):
    wall = Wall()
    receiver = await receivers("")
    owner = await new_account(store)
    _, receiver.secret = await endpoint(store, keyring, owner.uid, receiver.url, wall)
    other = await new_account(store)
    # Interleaved rows of two accounts: consecutive row ids.
    for n in range(3):
        for account in (owner, other):
            await store.write(commissions.upsert, account.uid, "awin", [row(f"{account.uid}{n}")])
    w = worker(store, keyring, wall)
    async with w.session() as session:
        await w.run_once(session)

    client = await edge_client(account_config)
    listed = await (await client.get("/v1/commissions", headers=owner.auth)).json()
    by_external = {c["externalId"]: c["id"] for c in listed["data"]}
    assert len(by_external) == 3
    for external, public in by_external.items():
        one = await client.get(f"/v1/commissions/{public}", headers=owner.auth)
        assert one.status == 200
        assert (await one.json())["data"]["externalId"] == external
        # Another account's key: 404, as an unknown id.
        theirs = await client.get(f"/v1/commissions/{public}", headers=other.auth)
        assert theirs.status == 404
    feed = await (await client.get("/v1/events", headers=owner.auth)).json()
    fed = {e["data"]["externalId"]: e["data"]["id"] for e in feed["data"]}
    assert fed == by_external
    sent = {got.body["data"]["externalId"]: got.body["data"]["id"] for got in receiver.received}
    assert sent == by_external
    assert {got.msg_id for got in receiver.received} == {e["id"] for e in feed["data"]}
    assert {got.body["id"] for got in receiver.received} == {e["id"] for e in feed["data"]}

    # The row ids are consecutive across the two accounts; their public ids are not.
    public_ids = [*by_external.values(), *(i for i in fed.values())]
    seqs = sorted({store.ids.commission_seq(public) or 0 for public in public_ids})
    values = sorted(int(public[4:], 16) for public in by_external.values())
    assert all(b - a > 2**20 for a, b in itertools.pairwise(values))
    assert len(seqs) == 3 and seqs[0] > 0

    # The key never shows in an answer, in any form.
    key = await store.write(stored_key)
    assert key is not None
    answers = [
        await (await client.get(path, headers=owner.auth)).read()
        for path in ("/v1/me", "/v1/commissions", "/v1/events", "/v1/commissions/summary")
    ] + [got.raw for got in receiver.received]
    for body in answers:
        for form in (key, key.hex().encode(), key.hex().upper().encode()):
            assert form not in body


async def test_a_reopened_store_shows_the_same_ids(store, database):
    uid = await store.write(accounts.create, None, "free")
    await store.write(commissions.upsert, uid, "awin", [row("A")])
    (first,) = await store.read(commissions.page, CommissionQuery(uid, limit=10))
    again = await open_store(database, readers=1)
    try:
        assert again.ids.commission(first.seq) == store.ids.commission(first.seq)
    finally:
        await again.close()
