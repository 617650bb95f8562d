"""What receivers get is what the OpenAPI document's `webhooks` describe: every event type's
body, as the worker sent it, validates against the schema of its type."""

from __future__ import annotations

import datetime as dt

import jsonschema
import orjson
from webhookkit import Wall, add_commissions, endpoint, worker

from contract import openapi
from contract.payment import NewPayment, NewPaymentLine
from contract.webhooks import TEST_EVENT
from store import NewCommission, accounts, commissions, connections, payments
from webhooks import signing

DOC = openapi.document()


def validate(body: dict, event_type: str) -> None:
    schema = DOC["webhooks"][event_type]["post"]["requestBody"]["content"]["application/json"]
    jsonschema.Draft202012Validator({**schema["schema"], "components": DOC["components"]}).validate(
        body
    )


async def test_every_type_sent_matches_its_schema(store, keyring, receivers):
    wall = Wall()
    receiver = await receivers("")
    account = await store.write(accounts.create, None, "pro")
    _, receiver.secret = await endpoint(store, keyring, account, receiver.url, wall)
    await store.write(connections.connect, account, "awin", b"sealed elsewhere")
    await add_commissions(store, account, 2)
    changed = NewCommission("E1", "approved", "ok", "1.30", "EUR", "2026-03-01T10:00:00Z")
    await store.write(commissions.upsert, account, "awin", [changed])
    await store.write(
        connections.record_outcome, account, "awin", "error", ("network_error", "timed out")
    )
    await store.write(connections.record_outcome, account, "awin", "ok", None)
    line = NewPaymentLine("commission", "1.30", "EUR", commission_external_id="E1")
    paid = NewPayment("9876543", "5.00", "EUR", "2026-03-02T00:00:00Z", (line,), "BACS")
    await store.write(payments.write, account, "awin", paid)
    w = worker(store, keyring, wall)
    async with w.session() as session:
        await w.run_once(session)

    by_type: dict[str, list[dict]] = {}
    for got in receiver.received:
        assert got.verified
        by_type.setdefault(got.body["type"], []).append(got.body)
    assert sorted(by_type) == sorted(
        [
            "commission.created",
            "commission.updated",
            "connection.sync_failed",
            "connection.recovered",
            "payment.created",
        ]
    )
    for event_type, bodies in by_type.items():
        for body in bodies:
            validate(body, event_type)
    # E1 changed once by its import, once by the payment naming it (paid).
    updated, _paid = by_type["commission.updated"]
    assert _paid["data"]["status"] == "paid"
    assert updated["data"]["previous"]["status"] == "pending"
    assert updated["data"]["commissionAmount"] == 1.30
    (payment,) = by_type["payment.created"]
    assert payment["data"]["id"].startswith("pay_") and payment["data"]["amount"] == 5.00
    # Not just any body: another type's schema refuses it.
    try:
        validate(updated, "connection.recovered")
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("a commission.updated body passed as connection.recovered")


def test_the_test_event_matches_its_schema():
    body = signing.probe_body("test_0123456789abcdef", "whk_" + "a" * 16, dt.datetime.now(dt.UTC))
    validate(orjson.loads(body), TEST_EVENT)
