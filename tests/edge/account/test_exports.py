"""CSV and NDJSON exports of /v1/commissions and /v1/commissions/summary through a served
edge, on both stores: every row parses back (Python's csv and json) to exactly what the
JSON pages answer, in both CSV dialects, streamed a keyset chunk at a time; the format by
parameter or by Accept; bad combinations name their parameter."""

from __future__ import annotations

import csv
import io
import json
import random
from typing import Any

import pytest
from support.accountkit import Seeded, new_account
from support.apierror import assert_api_error
from support.storedrows import StoredRows

from contract.exports import DIALECTS, EXCEL_EU, RFC4180
from contract.resources import COMMISSION, COMMISSION_TOTAL
from edge.handlers import account as account_handlers
from store import AccountStore

from .test_summary import insert, make_rows

AMOUNTS = {"saleAmount", "commissionAmount", "commission", "sale"}


def text_json(text: str) -> Any:
    """JSON with every number as the text it is written in: amounts compared digit for digit."""
    return json.loads(text, parse_float=str, parse_int=str)


async def json_pages(client, auth, path: str, **params: str) -> list[dict[str, Any]]:
    """Every row the JSON pages answer (numbers as text)."""
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        resp = await client.get(path, params=query, headers=auth)
        assert resp.status == 200, await resp.text()
        body = text_json(await resp.text())
        out += body["data"]
        cursor = body.get("page", {}).get("nextCursor")
        if cursor is None:
            return out


def as_cells(item: dict[str, Any], decimal: str) -> dict[str, str]:
    """A JSON row as its CSV cells: null empty, count as text, amounts with `decimal`."""
    return {
        k: "" if v is None else v.replace(".", decimal) if k in AMOUNTS else str(v)
        for k, v in item.items()
    }


def parse_csv(data: bytes, delimiter: str) -> tuple[list[str], list[dict[str, str]]]:
    text = data.decode("utf-8-sig")
    assert "\r\n" in text or text == ""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header, *rows = list(reader)
    return header, [dict(zip(header, row, strict=True)) for row in rows]


async def write_owner(store: AccountStore) -> Seeded:
    rng = random.Random(5)
    seeded = await new_account(store)
    await insert(store, seeded.uid, make_rows(rng, 300, "e"))
    other = await new_account(store)  # never in the owner's export
    await insert(store, other.uid, make_rows(rng, 50, "e"))
    return seeded


@pytest.fixture(scope="module")
def stored_rows(tmp_path_factory: pytest.TempPathFactory) -> StoredRows:
    """`owner`'s rows, written once per backend and copied into each test's database."""
    return StoredRows(write_owner, tmp_path_factory.mktemp("exports"))


@pytest.fixture
def owner(stored_rows: StoredRows, account_config, monkeypatch) -> Seeded:
    # Chunks of 7 rows: an export of 300 crosses some 40 keyset reads.
    monkeypatch.setattr(account_handlers, "EXPORT_CHUNK", 7)
    return stored_rows.value(account_config.database)


@pytest.mark.parametrize("dialect", list(DIALECTS))
@pytest.mark.parametrize(
    "filters", [{}, {"network": "cj", "status": "pending"}, {"subId": "home", "from": "2026-01-01"}]
)
async def test_a_csv_export_is_every_row_of_the_pages(edge_client, owner, dialect, filters):
    client = await edge_client()
    pages = await json_pages(client, owner.auth, "/v1/commissions", limit="100", **filters)
    resp = await client.get(
        "/v1/commissions",
        params={"format": "csv", "dialect": dialect, **filters},
        headers=owner.auth,
    )
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("text/csv")
    assert resp.headers["Content-Disposition"] == 'attachment; filename="commissions.csv"'
    assert resp.headers["Cache-Control"] == "private, no-store"
    data = await resp.read()
    chosen = DIALECTS[dialect]
    assert data.startswith(b"\xef\xbb\xbf") == chosen.bom
    header, rows = parse_csv(data, chosen.delimiter)
    assert header == list(COMMISSION.names)
    assert rows == [as_cells(item, chosen.decimal) for item in pages]
    assert len(rows) > 7 or filters


@pytest.mark.parametrize("how", ["parameter", "accept"])
async def test_an_ndjson_export_is_every_row_of_the_pages(edge_client, owner, how):
    client = await edge_client()
    pages = await json_pages(client, owner.auth, "/v1/commissions", limit="100")
    params, headers = (
        ({"format": "ndjson"}, {})
        if how == "parameter"
        else ({}, {"Accept": "application/x-ndjson"})
    )
    resp = await client.get("/v1/commissions", params=params, headers={**owner.auth, **headers})
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("application/x-ndjson")
    text = await resp.text()
    assert text.endswith("\n")
    assert [text_json(line) for line in text.splitlines()] == pages
    assert len(pages) == 300


async def test_accept_text_csv_exports_and_the_parameter_wins(edge_client, owner):
    client = await edge_client()
    resp = await client.get("/v1/commissions", headers={**owner.auth, "Accept": "text/csv"})
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/csv")
    assert "Accept" in resp.headers["Vary"]
    resp = await client.get(
        "/v1/commissions", params={"format": "json"}, headers={**owner.auth, "Accept": "text/csv"}
    )
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("application/json")
    refused = {**owner.auth, "Accept": "text/csv;q=0, application/json"}
    resp = await client.get("/v1/commissions", headers=refused)
    assert resp.headers["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    "params",
    [
        {"groupBy": "network,status"},
        {"groupBy": "program,month"},
        {"groupBy": "subId", "network": "awin"},
        {},
    ],
)
@pytest.mark.parametrize("export_format", ["csv", "excel-eu", "ndjson"])
async def test_a_summary_export_is_every_row_of_the_answer(
    edge_client, owner, params, export_format
):
    client = await edge_client()
    ranked = "program" in params.get("groupBy", "") or "subId" in params.get("groupBy", "")
    pages = await json_pages(
        client,
        owner.auth,
        "/v1/commissions/summary",
        **params,
        **({"limit": "100"} if ranked else {}),
    )
    query = {**params, "format": "ndjson" if export_format == "ndjson" else "csv"}
    if export_format == "excel-eu":
        query["dialect"] = EXCEL_EU.name
    resp = await client.get("/v1/commissions/summary", params=query, headers=owner.auth)
    assert resp.status == 200
    data = await resp.read()
    if export_format == "ndjson":
        assert [text_json(line) for line in data.decode().splitlines()] == pages
        return
    assert resp.headers["Content-Disposition"] == 'attachment; filename="commission-summary.csv"'
    chosen = EXCEL_EU if export_format == "excel-eu" else RFC4180
    header, rows = parse_csv(data, chosen.delimiter)
    assert header == list(COMMISSION_TOTAL.always)  # an export holds no `include` member
    assert rows == [as_cells(item, chosen.decimal) for item in pages]


@pytest.mark.parametrize(
    ("path", "query", "param"),
    [
        ("/v1/commissions", "format=xml", "format"),
        ("/v1/commissions", "dialect=excel-eu", "dialect"),
        ("/v1/commissions", "format=ndjson&dialect=rfc4180", "dialect"),
        ("/v1/commissions", "format=csv&limit=10", "limit"),
        ("/v1/commissions", "format=csv&cursor=abc", "cursor"),
        ("/v1/commissions", "format=csv&dialect=excel", "dialect"),
        ("/v1/commissions/summary", "format=csv&groupBy=program&limit=5", "limit"),
        ("/v1/commissions/summary", "dialect=excel-eu", "dialect"),
        ("/v1/commissions/summary", "format=", "format"),
    ],
)
async def test_bad_export_queries_name_their_parameter(
    edge_client, admin_store, path, query, param
):
    seeded = await new_account(admin_store)
    client = await edge_client()
    resp = await client.get(f"{path}?{query}", headers=seeded.auth)
    await assert_api_error(resp, 400, "invalid_parameter", param)


async def test_an_empty_export_is_its_header(edge_client, admin_store):
    seeded = await new_account(admin_store)
    client = await edge_client()
    resp = await client.get("/v1/commissions?format=csv", headers=seeded.auth)
    assert resp.status == 200
    assert await resp.read() == (",".join(COMMISSION.names) + "\r\n").encode()
    resp = await client.get("/v1/commissions?format=ndjson", headers=seeded.auth)
    assert await resp.read() == b""


@pytest.mark.parametrize("export_format", ["csv", "ndjson"])
async def test_a_streamed_export_carries_the_cors_headers(edge_client, owner, export_format):
    # A browser page (another origin) can read an export only with them; the handler sends
    # the headers itself, before any middleware sees its answer.
    client = await edge_client()
    resp = await client.get(
        "/v1/commissions",
        params={"format": export_format},
        headers={**owner.auth, "Origin": "https://reports.example"},
    )
    assert resp.status == 200
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert "X-Request-Id" in resp.headers["Access-Control-Expose-Headers"]
    await resp.read()
