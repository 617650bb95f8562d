"""Answers schemathesis cannot provoke (403, 429, 503...), checked against the document.

Each answer must have a status the OpenAPI document lists for its operation, the headers it
marks required, and a body valid against the schema it gives for that status.
"""

from __future__ import annotations

import orjson
import pytest
from contract_support import FREE_KEY, SUSPENDED_KEY, bearer
from jsonschema import Draft202012Validator

from accounts import apikeys
from contract import openapi
from contract.endpoints import ENDPOINTS
from edge import appkeys
from store import NewCommission, accounts, commissions, open_store

DOC = orjson.loads(openapi.render())


def closed_components(components: dict) -> dict:
    """The document's schemas with no member beyond those listed: the document leaves its
    response objects open for clients' generated models, the answers must not use that."""
    schemas = {}
    for name, schema in components["schemas"].items():
        if "properties" in schema and "additionalProperties" not in schema:
            schema = {**schema, "additionalProperties": False}
        schemas[name] = schema
    return {**components, "schemas": schemas}


CLOSED = closed_components(DOC["components"])


def check_documented(template: str, status: int, headers, body: bytes) -> None:
    responses = DOC["paths"][template]["get"]["responses"]
    assert str(status) in responses, f"{status} is not documented for {template}"
    response = responses[str(status)]
    for name, header in response.get("headers", {}).items():
        if header["required"]:
            assert name in headers, f"{template} {status}: required header {name} missing"
    content = response.get("content")
    if content is None:
        assert body == b""
        return
    assert headers["Content-Type"] == "application/json"
    schema = {"components": CLOSED, **content["application/json"]["schema"]}
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = [e.message for e in validator.iter_errors(orjson.loads(body))]
    assert not errors, f"{template} {status}: {errors}"


async def answer(client, path: str, key: str | None):
    resp = await client.get(path, headers=bearer(key) if key else {})
    return resp.status, resp.headers, await resp.read()


@pytest.mark.parametrize(
    ("path", "template"),
    [
        ("/v1/programs", "/v1/programs"),
        ("/v1/programs/academie-du-code", "/v1/programs/{slug}"),
        ("/v1/me", "/v1/me"),
        ("/v1/commissions", "/v1/commissions"),
        ("/v1/commissions/com_3c9e0a57d1b84f26", "/v1/commissions/{id}"),
    ],
)
async def test_401_429_answers_are_documented(edge_client, path, template):
    client = await edge_client(rate_limit_free=(1, 60), rate_limit_anonymous=(1, 60))
    status, headers, body = await answer(client, path, None)
    public = any(e.anonymous and e.path == template for e in ENDPOINTS)
    if public:
        # Without a key the directory answers the public (no build is loaded here: the list
        # is 503, a slug 404), under the anonymous limit.
        assert status == (503 if template == "/v1/programs" else 404)
        check_documented(template, status, headers, body)
        status, headers, body = await answer(client, path, None)
        assert status == 429
    else:
        assert status == 401
    check_documented(template, status, headers, body)
    status, headers, body = await answer(client, path, "afk_not_a_key")
    assert status == 401 and orjson.loads(body)["code"] == "invalid_api_key"
    check_documented(template, status, headers, body)
    await answer(client, path, FREE_KEY)  # spends the only request of the window
    status, headers, body = await answer(client, path, FREE_KEY)
    assert status == 429
    check_documented(template, status, headers, body)


async def test_a_suspended_account_gets_403_on_me_and_401_elsewhere(edge_client):
    client = await edge_client()
    status, headers, body = await answer(client, "/v1/me", SUSPENDED_KEY)
    assert status == 403 and orjson.loads(body)["code"] == "forbidden"
    check_documented("/v1/me", status, headers, body)
    for path, template in [
        ("/v1/programs", "/v1/programs"),
        ("/v1/programs/x", "/v1/programs/{slug}"),
        ("/v1/commissions", "/v1/commissions"),
        ("/v1/commissions/com_3c9e0a57d1b84f26", "/v1/commissions/{id}"),
    ]:
        status, headers, body = await answer(client, path, SUSPENDED_KEY)
        assert status == 401 and orjson.loads(body)["code"] == "invalid_api_key"
        check_documented(template, status, headers, body)


async def test_no_build_loaded_is_a_documented_503(edge_client):
    client = await edge_client()  # edge_config's dist/ does not exist
    status, headers, body = await answer(client, "/v1/programs", FREE_KEY)
    assert status == 503
    check_documented("/v1/programs", status, headers, body)
    status, headers, body = await answer(client, "/v1/programs/x", FREE_KEY)
    assert status == 404
    check_documented("/v1/programs/{slug}", status, headers, body)


async def test_bad_parameters_are_documented_400s(edge_client):
    client = await edge_client()
    for path, template, code in [
        ("/v1/programs?limit=0", "/v1/programs", "invalid_parameter"),
        ("/v1/programs?minscore=1", "/v1/programs", "unknown_parameter"),
        ("/v1/programs?cursor=abc.def", "/v1/programs", "invalid_cursor"),
        ("/v1/commissions?from=2025-02-01&to=2025-01-01", "/v1/commissions", "invalid_date_range"),
        ("/v1/commissions?status=", "/v1/commissions", "invalid_parameter"),
    ]:
        status, headers, body = await answer(client, path, FREE_KEY)
        assert (status, orjson.loads(body)["code"]) == (400, code), path
        check_documented(template, status, headers, body)


async def test_one_commission_its_404_and_its_503_are_documented(edge_client, client_config):
    """GET /v1/commissions/{id}: a commission with a history, ids that name none, and the
    store gone, each answered as the document says."""
    store = await open_store(client_config.database, writable=True)
    try:
        uid = await store.write(accounts.create, None, "pro")
        issued = apikeys.generate_key()
        await store.write(
            accounts.create_key, uid, issued.key_hash, issued.prefix, "history", ("read",)
        )
        for status in ("pending", "approved"):
            await store.write(
                commissions.upsert,
                uid,
                "awin",
                [
                    NewCommission(
                        external_id="A",
                        status=status,
                        raw_status=status,
                        commission_amount="4.26",
                        currency="EUR",
                        transacted_at="2026-01-03T10:12:00Z",
                    )
                ],
            )
    finally:
        await store.close()
    client = await edge_client(retry_after=7)
    _, _, listed = await answer(client, "/v1/commissions", issued.key)
    (item,) = orjson.loads(listed)["data"]
    status, headers, body = await answer(client, f"/v1/commissions/{item['id']}", issued.key)
    assert status == 200 and orjson.loads(body)["data"]["statusHistory"]
    check_documented("/v1/commissions/{id}", status, headers, body)
    for other in (f"/v1/commissions/{item['id']}", "/v1/commissions/com_x"):
        status, headers, body = await answer(client, other, FREE_KEY)
        assert status == 404 and orjson.loads(body)["code"] == "not_found"
        check_documented("/v1/commissions/{id}", status, headers, body)
    await client.app[appkeys.STORE].close()
    status, headers, body = await answer(client, f"/v1/commissions/{item['id']}", issued.key)
    assert status == 503
    check_documented("/v1/commissions/{id}", status, headers, body)
