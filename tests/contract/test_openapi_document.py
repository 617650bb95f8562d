"""The OpenAPI document: valid 3.1, generated from the contract tables, served as built."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from openapi_spec_validator.versions.shortcuts import get_spec_version
from support.apierror import assert_api_error

from contract import openapi
from contract import vocabulary as v
from contract.endpoints import COMMISSIONS, ENDPOINTS, PROGRAMS
from contract.resources import RESOURCES
from edge.http.errors import ApiError
from edge.request import query

DOC = orjson.loads(openapi.render())


def op(path: str) -> dict:
    return DOC["paths"][path]["get"]


def test_the_document_is_valid_openapi_3_1():
    validate(DOC)
    assert get_spec_version(DOC).major == "3" and DOC["openapi"] == "3.1.0"


def test_rendering_is_deterministic_with_sorted_keys():
    first, second = openapi.render(), openapi.render()
    assert first == second
    assert first.endswith(b"\n")
    assert first == orjson.dumps(DOC, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def test_every_endpoint_and_only_those_and_the_document_itself():
    assert set(DOC["paths"]) == {e.path for e in ENDPOINTS} | {"/openapi.json"}
    for path in DOC["paths"]:
        assert set(DOC["paths"][path]) == {"get"}


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
def test_statuses_are_exactly_the_specs(endpoint):
    responses = op(endpoint.path)["responses"]
    conditional = {304} if endpoint.name in openapi.CONDITIONAL else set()
    assert {int(s) for s in responses} == {200, *conditional, *endpoint.statuses}
    for status, response in responses.items():
        # A public answer (a directory 200 or 304 without a key) carries no request id.
        public = endpoint.anonymous and status in ("200", "304")
        assert response["headers"]["X-Request-Id"]["required"] is not public
        if status == "401":
            assert response["headers"]["WWW-Authenticate"]["required"] is True
            assert "RateLimit-Limit" not in response["headers"]
        else:
            assert set(openapi.RATE_HEADERS) <= set(response["headers"])
        if status in ("429", "503"):
            assert response["headers"]["Retry-After"]["required"] is True
        if int(status) >= 400:
            # One shared Error component: generated clients get one error class.
            schema = response["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/Error"}
            codes = response["x-error-codes"]
            assert codes and {v.ERROR_CODES[c] for c in codes} == {int(status)}
            assert all(f"`{code}`" in response["description"] for code in codes)


def test_the_error_code_is_an_open_string_with_its_known_values():
    code = DOC["components"]["schemas"]["Error"]["properties"]["code"]
    assert code["type"] == "string" and "enum" not in code
    assert all(f"`{c}` ({s})" in code["description"] for c, s in v.ERROR_CODES.items())


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
def test_if_none_match_is_declared_exactly_where_a_304_is_possible(endpoint):
    headers = [p["name"] for p in op(endpoint.path)["parameters"] if p["in"] == "header"]
    assert headers == (["If-None-Match"] if "304" in op(endpoint.path)["responses"] else [])
    assert [p["name"] for p in op("/openapi.json")["parameters"]] == ["If-None-Match"]


def test_no_pattern_is_longer_than_a_reader_reads():
    def patterns(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str):
                    yield value
                else:
                    yield from patterns(value)
        elif isinstance(node, list):
            for value in node:
                yield from patterns(value)

    assert max(len(p) for p in patterns(DOC)) <= 200


def test_country_and_currency_codes_are_a_shape_and_a_referenced_list():
    schemas = DOC["components"]["schemas"]
    markets = schemas["Program"]["properties"]["markets"]["items"]
    currency = schemas["Commission"]["properties"]["currency"]
    assert markets["pattern"] == "^[A-Z]{2}$" and "iso.org" in markets["externalDocs"]["url"]
    assert currency["pattern"] == "^[A-Z]{3}$" and "4217" in currency["externalDocs"]["url"]


def test_400_codes_per_endpoint():
    def codes(path: str) -> set[str]:
        return set(op(path)["responses"]["400"]["x-error-codes"])

    assert codes("/v1/programs") == {"invalid_parameter", "unknown_parameter", "invalid_cursor"}
    assert codes("/v1/commissions") == {
        "invalid_parameter",
        "unknown_parameter",
        "invalid_cursor",
        "invalid_date_range",
    }


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
def test_parameters_in_validation_order_with_their_constraints(endpoint):
    params = [p for p in op(endpoint.path)["parameters"] if p["in"] == "query"]
    assert [p["name"] for p in params] == [p.name for p in endpoint.params]
    for param, declared in zip(endpoint.params, params, strict=True):
        schema = declared["schema"]
        assert declared["required"] is False
        if param.enum:
            # A list parameter (groupBy) has the values of its items.
            assert schema.get("items", schema)["enum"] == list(param.enum)
        if param.kind == "integer":
            assert (schema["type"], schema["minimum"], schema["maximum"]) == (
                "integer",
                param.minimum,
                param.maximum,
            )
            assert schema.get("default") == param.default
    if "{slug}" in endpoint.path:
        (slug,) = [p for p in op(endpoint.path)["parameters"] if p["in"] == "path"]
        assert slug["schema"]["pattern"] == v.SLUG_PATTERN
        assert slug["schema"]["maxLength"] == v.SLUG_MAX_LENGTH


def test_specific_parameter_rules():
    programs = {p["name"]: p["schema"] for p in op("/v1/programs")["parameters"]}
    assert programs["limit"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 25}
    assert programs["minScore"] == {"type": "integer", "minimum": 0, "maximum": 100}
    assert programs["market"]["pattern"] == "^[A-Za-z]{2}$"
    assert programs["market"]["externalDocs"]["url"].startswith("https://www.iso.org/")
    assert programs["recurring"] == {"type": "boolean"}
    assert programs["vertical"]["enum"] == list(v.VERTICALS)
    commissions = {p["name"]: p["schema"] for p in op("/v1/commissions")["parameters"]}
    assert commissions["from"]["pattern"] == r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    assert commissions["from"]["format"] == "date"
    assert commissions["status"]["enum"] == list(v.COMMISSION_STATUSES)


@pytest.mark.parametrize("resource", RESOURCES, ids=lambda r: r.name)
def test_every_field_is_required_and_nullability_is_a_type(resource):
    schema = DOC["components"]["schemas"][resource.name]
    assert schema["required"] == list(resource.always)
    # Open, so that a member added later does not break generated models; the answers
    # are checked against closed_components() (test_documented_answers) all the same.
    assert "additionalProperties" not in schema
    for field in resource.fields:
        prop = schema["properties"][field.name]
        if field.ref or field.any_of:
            continue
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        assert ("null" in types) is field.nullable
        assert field.type in types


def test_envelopes():
    schemas = DOC["components"]["schemas"]
    assert schemas["ProgramList"]["required"] == ["data", "page"]
    assert schemas["ProgramList"]["properties"]["page"] == {"$ref": "#/components/schemas/PageInfo"}
    assert schemas["AccountResponse"]["required"] == ["data"]
    ok = op("/v1/me")["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/AccountResponse"}


def test_security_is_bearer_everywhere_optional_on_the_directory_none_on_the_document():
    assert DOC["security"] == [{"apiKey": []}]
    assert DOC["components"]["securitySchemes"]["apiKey"] == {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "API key",
        "description": DOC["components"]["securitySchemes"]["apiKey"]["description"],
    }
    assert op("/openapi.json")["security"] == []
    for endpoint in ENDPOINTS:
        if endpoint.anonymous:  # no credentials, or a key
            assert op(endpoint.path)["security"] == [{}, {"apiKey": []}]
            assert "without a key" in op(endpoint.path)["description"]
        else:
            assert "security" not in op(endpoint.path)
    directory = {"/v1/programs", "/v1/programs/facets", "/v1/programs/{slug}"}
    assert {e.path for e in ENDPOINTS if e.anonymous} == directory


def test_links_lead_to_the_next_page_and_to_a_programme():
    links = op("/v1/programs")["responses"]["200"]["links"]
    # Only expressions every 200 answer resolves: never a query parameter the request may
    # not have had.
    assert links["nextPage"]["parameters"] == {"cursor": "$response.body#/page/nextCursor"}
    assert links["programBySlug"]["operationId"] == "getProgram"
    links = op("/v1/commissions")["responses"]["200"]["links"]
    assert links["nextPage"]["parameters"] == {"cursor": "$response.body#/page/nextCursor"}


def test_no_link_reads_the_request():
    for path in DOC["paths"].values():
        for name, link in path["get"]["responses"]["200"].get("links", {}).items():
            for expression in link["parameters"].values():
                assert expression.startswith("$response.body#/"), (name, expression)


def test_servers_is_the_serving_origin():
    assert DOC["servers"] == [{"url": "/", "description": DOC["servers"][0]["description"]}]


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("0", False),
        ("a.b", False),
        ("0" * 40 + "." + "0" * 16, True),  # the shape; whether it was issued is the edge's
        ("A" * 52 + "." + "B" * 15, False),
        ("A" * 52 + ".." + "B" * 16, False),
        ("A" * 52 + "=." + "B" * 16, False),
    ],
)
def test_the_cursor_schema_is_the_cursor_shape(value, valid):
    schema = op("/v1/programs")["parameters"]
    cursor_schema = next(p["schema"] for p in schema if p["name"] == "cursor")
    validator = Draft202012Validator(cursor_schema)
    assert validator.is_valid(value) is valid


@pytest.mark.parametrize("endpoint", ["programs", "commissions"])
def test_issued_cursors_fit_the_schema(endpoint):
    from edge.request import cursor

    position = [0, "a"] if endpoint == "programs" else ["2024-01-01T00:00:00Z", 1]
    token = cursor.encode(b"s" * 32, endpoint, {}, position)
    schema = op(f"/v1/{endpoint}")["parameters"]
    cursor_schema = next(p["schema"] for p in schema if p["name"] == "cursor")
    assert Draft202012Validator(cursor_schema).is_valid(token), token


# --- Served by the edge --------------------------------------------------------------


async def test_the_edge_serves_the_same_bytes_without_a_key(edge_client):
    client = await edge_client()
    resp = await client.get("/openapi.json?anything=ignored")
    assert resp.status == 200
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.headers["Cache-Control"] == "public, max-age=300"
    assert await resp.read() == openapi.render()
    # Public: a shared cache replays it to everyone, so it names no request.
    assert "X-Request-Id" not in resp.headers
    etag = resp.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"')

    for validator in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        resp = await client.get("/openapi.json", headers={"If-None-Match": validator})
        assert resp.status == 304, validator
        assert resp.headers["ETag"] == etag
        assert await resp.read() == b""
    resp = await client.get("/openapi.json", headers={"If-None-Match": '"stale"'})
    assert resp.status == 200

    resp = await client.head("/openapi.json")
    assert resp.status == 200 and resp.headers["ETag"] == etag


async def test_the_document_is_sent_gzip_coded_to_who_asks(edge_client):
    client = await edge_client()
    plain = await client.get("/openapi.json", headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain.headers
    assert await plain.read() == openapi.render()
    packed = await client.get("/openapi.json", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert packed.headers["Vary"] == plain.headers["Vary"] == "Accept-Encoding"
    # Compressed once, when the application was made: a fifth of the size or less.
    assert int(packed.headers["Content-Length"]) * 5 < len(openapi.render())
    assert await packed.read() == openapi.render()  # the client decodes it
    assert packed.headers["ETag"] != plain.headers["ETag"]
    again = await client.get(
        "/openapi.json",
        headers={"Accept-Encoding": "gzip", "If-None-Match": packed.headers["ETag"]},
    )
    assert again.status == 304


async def test_other_methods_on_the_document_are_405(edge_client):
    client = await edge_client()
    resp = await client.post("/openapi.json")
    await assert_api_error(resp, 405, "method_not_allowed")
    assert resp.headers["Allow"] == "GET, HEAD"


# --- The document and the parser agree ---------------------------------------------------


def test_bounds_are_the_parsers():
    assert openapi.MAX_STRING == query.MAX_STRING
    assert openapi.MAX_CURSOR == query.MAX_CURSOR


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=openapi.MAX_STRING))
def test_a_free_text_value_is_accepted_exactly_when_the_pattern_says(text):
    accepted = re.fullmatch(openapi.PRINTABLE_PATTERN, text) is not None
    try:
        query.parse_query(COMMISSIONS, [("network", text)])
    except ApiError as error:
        assert error.code == "invalid_parameter"
        assert not accepted, repr(text)
    else:
        assert accepted, repr(text)


@settings(max_examples=100, deadline=None)
@given(st.from_regex(v.MARKET_PATTERN, fullmatch=True), st.from_regex(openapi.CURSOR_PATTERN))
# The document gives the market's shape (MARKET_QUERY_PATTERN); which codes are assigned is
# the vocabulary's pattern, the one the parser enforces.
@pytest.mark.slow
def test_values_matching_the_patterns_pass_the_parser(market, token):
    query.parse_query(PROGRAMS, [("market", market)])
    try:
        query.parse_query(PROGRAMS, [("cursor", token[: openapi.MAX_CURSOR])])
    except ApiError as error:  # only an empty match can fail: the parser refuses ""
        assert token == ""
        assert error.code == "invalid_parameter"


async def test_the_document_is_outside_v1_where_every_path_needs_a_key(edge_client):
    # At /v1/openapi.json it would be the one /v1 path without a key and without a data
    # member; so it is outside /v1, and /v1/openapi.json is an unknown path.
    client = await edge_client()
    resp = await client.get("/v1/openapi.json")
    await assert_api_error(resp, 404, "not_found")
    resp = await client.get("/openapi.json")
    assert resp.status == 200 and (await resp.json())["openapi"] == "3.1.0"
