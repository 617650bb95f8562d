"""GET /v1/payments and GET /v1/payments/{id} through a served edge on SQLite and
PostgreSQL: cursor pages newest first, the network and period filters, invalid input
refused with its parameter, a payment with its reconciled lines, and one 404 for unknown,
malformed and other accounts' ids."""

from __future__ import annotations

import pytest
from support.accountkit import check_resource, new_account
from support.apierror import assert_api_error

from contract.payment import NewPayment, NewPaymentLine
from contract.resources import PAYMENT, PAYMENT_DETAIL
from store import commissions, open_store, payments
from store.base import NewCommission


@pytest.fixture
async def admin(account_config):
    store = await open_store(account_config.database, writable=True, readers=1)
    yield store
    await store.close()


def payment(external_id: str, day: str, amount: str = "10.00", *lines) -> NewPayment:
    return NewPayment(external_id, amount, "EUR", f"{day}T00:00:00Z", tuple(lines))


async def test_pages_newest_first_and_filters(edge_client, admin):
    client = await edge_client()
    account = await new_account(admin)
    days = ["2026-01-05", "2026-01-20", "2026-02-03", "2026-02-17", "2026-03-02"]
    for n, day in enumerate(days):
        network = "awin" if n % 2 == 0 else "skimlinks"
        await admin.write(payments.write, account.uid, network, payment(f"p{n}", day))
    seen: list[dict] = []
    params = {"limit": "2"}
    while True:
        resp = await client.get("/v1/payments", params=params, headers=account.auth)
        assert resp.status == 200
        assert resp.headers["Cache-Control"] == "private, no-store"
        body = await resp.json()
        for item in body["data"]:
            check_resource(item, PAYMENT)
        seen += body["data"]
        if not body["page"]["hasMore"]:
            assert body["page"]["nextCursor"] is None
            break
        assert "Link" in resp.headers
        params = {"limit": "2", "cursor": body["page"]["nextCursor"]}
    assert [p["externalId"] for p in seen] == ["p4", "p3", "p2", "p1", "p0"]
    resp = await client.get(
        "/v1/payments",
        params={"network": "awin", "from": "2026-01-10", "to": "2026-03-01"},
        headers=account.auth,
    )
    assert [p["externalId"] for p in (await resp.json())["data"]] == ["p2"]
    # Another account sees none of them.
    other = await new_account(admin, email="other@example.com")
    resp = await client.get("/v1/payments", headers=other.auth)
    assert (await resp.json())["data"] == []


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("limit=0", "limit"),
        ("from=2026-13-01", "from"),
        ("to=yesterday", "to"),
        ("status=paid", "status"),
        ("cursor=nonsense", "cursor"),
    ],
)
async def test_bad_input_is_refused_with_its_parameter(edge_client, admin, query, param):
    client = await edge_client()
    account = await new_account(admin)
    resp = await client.get(f"/v1/payments?{query}", headers=account.auth)
    assert resp.status == 400
    body = await resp.json()
    assert body["param"] == param


async def test_a_cursor_is_bound_to_its_filters_and_account(edge_client, admin):
    client = await edge_client()
    account = await new_account(admin)
    for n in range(3):
        await admin.write(
            payments.write, account.uid, "awin", payment(f"p{n}", f"2026-01-0{n + 1}")
        )
    resp = await client.get("/v1/payments", params={"limit": "1"}, headers=account.auth)
    token = (await resp.json())["page"]["nextCursor"]
    resp = await client.get(
        "/v1/payments",
        params={"limit": "1", "cursor": token, "network": "awin"},
        headers=account.auth,
    )
    await assert_api_error(resp, 400, "invalid_cursor", "cursor")
    other = await new_account(admin, email="other@example.com")
    resp = await client.get(
        "/v1/payments", params={"limit": "1", "cursor": token}, headers=other.auth
    )
    await assert_api_error(resp, 400, "invalid_cursor", "cursor")


async def test_one_payment_with_its_lines_and_404_for_any_other(edge_client, admin):
    client = await edge_client()
    account = await new_account(admin)
    await admin.write(
        commissions.upsert,
        account.uid,
        "skimlinks",
        [
            NewCommission(
                external_id="c1",
                status="approved",
                raw_status="active",
                commission_amount="4.26",
                currency="EUR",
                transacted_at="2026-01-03T10:12:00Z",
            )
        ],
    )
    lines = (
        NewPaymentLine("commission", "4.26", "EUR", commission_external_id="c1"),
        NewPaymentLine("commission", "1.00", "EUR", commission_external_id="c-unknown"),
    )
    await admin.write(
        payments.write, account.uid, "skimlinks", payment("inv1", "2026-02-01", "10.00", *lines)
    )
    listed = (await (await client.get("/v1/payments", headers=account.auth)).json())["data"]
    resp = await client.get(f"/v1/payments/{listed[0]['id']}", headers=account.auth)
    assert resp.status == 200
    detail = (await resp.json())["data"]
    check_resource(detail, PAYMENT_DETAIL)
    assert [(line["kind"], line["amount"]) for line in detail["lines"]] == [
        ("commission", 4.26),
        ("commission", 1.0),
        ("unallocated", 4.74),
    ]
    assert detail["lines"][0]["commissionId"].startswith("com_")
    assert detail["lines"][1]["commissionId"] is None
    commission = await client.get(
        f"/v1/commissions/{detail['lines'][0]['commissionId']}", headers=account.auth
    )
    assert (await commission.json())["data"]["status"] == "paid"
    other = await new_account(admin, email="other@example.com")
    for who, id_ in (
        (other, listed[0]["id"]),
        (account, "pay_0000000000000000"),
        (account, "pay_nothex"),
        (account, listed[0]["id"].replace("pay_", "com_")),
    ):
        resp = await client.get(f"/v1/payments/{id_}", headers=who.auth)
        await assert_api_error(resp, 404, "not_found")
