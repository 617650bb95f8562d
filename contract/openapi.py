"""The OpenAPI 3.1 document of /v1, generated from the contract tables.

Everything here is derived from `contract.vocabulary`, `contract.resources` and
`contract.endpoints`, the same definitions the edge validates queries with, so the document
cannot drift from the code; its response examples are answers recorded from a served edge
(`contract.examples`), checked again by the tests. `render()` gives the exact bytes that
the build writes to `dist/openapi.json` and that the edge serves at `GET /openapi.json`.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import orjson

from contract import examples as recorded
from contract import exports
from contract import ratelimit as rl
from contract import vocabulary as v
from contract import webhooks as wh
from contract.endpoints import ENDPOINTS, JSON, Endpoint, Param
from contract.resources import (
    BY_NAME,
    COMMISSION_ID_PATTERN,
    EVENT,
    EVENT_DATA,
    PAYMENT_ID_PATTERN,
    PROGRAM,
    RESOURCES,
    Field,
    Resource,
)

OPENAPI_VERSION = "3.1.0"
DOCUMENT_VERSION = "1.0.0"
# Outside /v1: every /v1 path needs a key and answers {"data": ...}
# (docs/spec/api-decisions.md); this document is for tools, readable without a key, as it is.
PATH = "/openapi.json"
# Where the guides and the reference are read (dist/docs/, served by the edge at /docs/).
DOCS_URL = "/docs/"
# Where the build writes the document as a page to read (catalog.apireference), in dist/.
REFERENCE_PATH = "docs/reference/index.html"
SECURITY_SCHEME = "apiKey"

REQUEST_ID_PATTERN = r"^req_[0-9a-f]{24}$"
# Values the edge's query parser accepts for a free-text filter: no control characters.
PRINTABLE_PATTERN = r"^[^\u0000-\u001f\u007f-\u009f]+$"
# Dates are written with ASCII digits only (`\d` of the spec, in ECMA-262's sense).
DATE_PATTERN = v.DATE_PATTERN.replace(r"\d", "[0-9]")
# The `market` filter's shape; which two letters are assigned is in COUNTRY_CODES_DOCS.
MARKET_QUERY_PATTERN = r"^[A-Za-z]{2}$"
COUNTRY_CODES_DOCS = {
    "description": "The officially assigned ISO 3166-1 alpha-2 codes",
    "url": "https://www.iso.org/obp/ui/#search/code/",
}
CURRENCY_CODES_DOCS = {
    "description": "The ISO 4217 currency codes",
    "url": "https://www.iso.org/iso-4217-currency-codes.html",
}
# A code's shape stays in its pattern; which codes exist is referenced, not spelt out.
CODE_LISTS: dict[str, dict[str, str]] = {
    v.COUNTRY_PATTERN: COUNTRY_CODES_DOCS,
    v.CURRENCY_PATTERN: CURRENCY_CODES_DOCS,
}
MAX_STRING = 200  # edge.request.query.MAX_STRING
MAX_CURSOR = 512  # edge.request.query.MAX_CURSOR
# What a cursor looks like (edge.request.cursor): base64url of its payload, a dot, base64url of its
# 12-byte signature (16 characters). Its payload (version, endpoint, filters digest,
# position) is never shorter than 30 bytes, 40 characters. Still opaque: a string of this
# shape that the API did not issue for these filters is refused (400 invalid_cursor).
CURSOR_MIN = 57
CURSOR_PATTERN = r"^[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{16}$"
# Where the document says the API is: the origin it is served from (the edge serves it
# at /openapi.json; a copy on a static host is read with the API's address as its base).
SERVERS = [{"url": "/", "description": "The origin this document is served from."}]

# Endpoints answering conditional GETs (ETag / If-None-Match -> 304).
CONDITIONAL: frozenset[str] = frozenset({"programs", "programFacets", "program", "openapi"})

OPERATION_IDS: dict[str, str] = {
    "programs": "listPrograms",
    "programFacets": "getProgramFacets",
    "program": "getProgram",
    "me": "getMe",
    "commissions": "listCommissions",
    "commission": "getCommission",
    "commission_summary": "summarizeCommissions",
    "payments": "listPayments",
    "payment": "getPayment",
    "events": "listEvents",
    "openapi": "getOpenApiDocument",
}
TAGS: dict[str, str] = {
    "programs": "directory",
    "programFacets": "directory",
    "program": "directory",
    "me": "account",
    "commissions": "account",
    "commission": "account",
    "commission_summary": "account",
    "payments": "account",
    "payment": "account",
    "events": "account",
    "openapi": "meta",
}

STATUS_DESCRIPTIONS: dict[int, str] = {
    304: "Not modified: the representation still matches the ETag given in If-None-Match.",
    400: "A query parameter is unknown, invalid or inconsistent; `code` and `param` say which.",
    401: "No usable `Authorization: Bearer` header (`missing_api_key`); a malformed, unknown "
    "or revoked key, or outside /v1/me a suspended account's key (`invalid_api_key`).",
    403: "The key's account is suspended (`forbidden`); its keys answer 401 elsewhere.",
    404: "No published programme has this slug (unknown, unpublished and rejected alike).",
    429: "The key is over its rate limit, or the client address over its limit of refused "
    "keys; retry after `Retry-After` seconds.",
    503: "The data behind the endpoint cannot be read right now; retry after `Retry-After`.",
}


# An endpoint's own wording of a status, where the shared one above does not fit it.
ENDPOINT_STATUS_DESCRIPTIONS: dict[tuple[str, int], str] = {
    ("commission", 404): "No commission of the key's account has this id (unknown, malformed "
    "and other accounts' ids alike).",
    ("payment", 404): "No payment of the key's account has this id (unknown, malformed "
    "and other accounts' ids alike).",
}


def _ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"#/components/{kind}/{name}"}


# --- Schemas ---------------------------------------------------------------------------


def _scalar(type_: str, f: Field) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": type_}
    if f.enum is not None:
        schema["enum"] = list(f.enum)
    if f.format is not None:
        schema["format"] = f.format
    if f.pattern is not None:
        schema["pattern"] = f.pattern
        if f.pattern in CODE_LISTS:
            schema["externalDocs"] = CODE_LISTS[f.pattern]
    if f.max_length is not None:
        schema["maxLength"] = f.max_length
    if f.minimum is not None:
        schema["minimum"] = f.minimum
    if f.maximum is not None:
        schema["maximum"] = f.maximum
    return schema


def field_schema(f: Field) -> dict[str, Any]:
    """The JSON Schema of one resource member (nullable: `type: [T, "null"]`)."""
    if f.any_of is not None:
        schema: dict[str, Any] = {"anyOf": [_ref("schemas", name) for name in f.any_of]}
    elif f.ref is not None:
        schema = _ref("schemas", f.ref)
        if f.nullable:
            schema = {"anyOf": [schema, {"type": "null"}]}
    elif f.type == "array":
        assert f.items is not None
        items = (
            _ref("schemas", f.items)
            if f.items in BY_NAME
            else _scalar(f.items, Field(f.name, f.items, "", enum=f.enum, pattern=f.pattern))
        )
        schema = {"type": ["array", "null"] if f.nullable else "array", "items": items}
    else:
        schema = _scalar(f.type, f)
        if f.nullable:
            schema["type"] = [f.type, "null"]
            if "enum" in schema:
                schema["enum"] = [*schema["enum"], None]
    schema["description"] = f.description
    if f.detail and f in PROGRAM.fields:  # a summary row's details say when they come
        schema["description"] += (
            " On the by-slug answer; in a list only with `include=scoreBreakdown`."
        )
    return schema


# Members whose values are documented but left open: the spec lets a later version add
# values (docs/spec/api-spec.md: error codes may be added), and a generated client that
# read them as a closed enum would fail on the first new one.
OPEN_ENUMS: frozenset[tuple[str, str]] = frozenset({("Error", "code")})


def known_codes_text(codes: list[str]) -> str:
    """The error codes as a sentence of Markdown, each with its HTTP status."""
    return ", ".join(f"`{code}` ({v.ERROR_CODES[code]})" for code in codes)


def open_field_schema(f: Field) -> dict[str, Any]:
    """A string member whose known values are listed in its description, not enforced."""
    assert f.enum is not None
    schema = field_schema(dataclasses.replace(f, enum=None))
    if f.enum == tuple(v.ERROR_CODES):
        known = known_codes_text(list(f.enum))
    else:
        known = ", ".join(f"`{value}`" for value in f.enum)
    schema["description"] = (
        f"{f.description} Known values: {known}. More may be added: a client treats an "
        "unknown value by the HTTP status."
    )
    return schema


def resource_schema(resource: Resource) -> dict[str, Any]:
    """An object whose members are required but those omitted when empty and the details
    a list leaves out (the spec's fields are always present)."""
    return {
        "type": "object",
        "description": resource.description,
        "properties": {
            f.name: open_field_schema(f)
            if (resource.name, f.name) in OPEN_ENUMS
            else field_schema(f)
            for f in resource.fields
        },
        "required": list(resource.always),
        # Open: a member added in a later version must not break a client's generated
        # models. The tests still refuse any member the spec does not list.
    }


def envelope_name(endpoint: Endpoint) -> str:
    if endpoint.complete_list:
        return f"{endpoint.resource}s"
    return f"{endpoint.resource}List" if endpoint.is_list else f"{endpoint.resource}Response"


def envelope_schema(endpoint: Endpoint) -> dict[str, Any]:
    """`{data}` for one resource, `{data: [...], page}` for a list."""
    item = _ref("schemas", endpoint.resource)
    if endpoint.is_list:
        return {
            "type": "object",
            "description": f"A page of {endpoint.resource} items and where the page stands.",
            "properties": {
                "data": {"type": "array", "items": item, "maxItems": v.LIMIT_MAX},
                "page": _ref("schemas", "PageInfo"),
            },
            "required": ["data", "page"],
        }
    if endpoint.complete_list and endpoint.paged_sometimes:
        return {
            "type": "object",
            "description": f"Every {endpoint.resource} of the answer in one; or, for a "
            "grouping by program or subId, a page of them and where the page stands.",
            "properties": {
                "data": {"type": "array", "items": item},
                "page": _ref("schemas", "PageInfo"),
            },
            "required": ["data"],
        }
    if endpoint.complete_list:
        return {
            "type": "object",
            "description": f"Every {endpoint.resource} of the answer, in one (no page).",
            "properties": {"data": {"type": "array", "items": item}},
            "required": ["data"],
        }
    return {
        "type": "object",
        "description": f"One {endpoint.resource}.",
        "properties": {"data": item},
        "required": ["data"],
    }


# --- Parameters ------------------------------------------------------------------------


def param_schema(p: Param) -> dict[str, Any]:
    """The JSON Schema of a query parameter, as strict as `edge.request.query` is."""
    if p.kind == "enum":
        assert p.enum is not None
        enum_schema: dict[str, Any] = {"type": "string", "enum": list(p.enum)}
        if p.default is not None:
            enum_schema["default"] = p.default
        return enum_schema
    if p.kind == "integer":
        schema: dict[str, Any] = {"type": "integer"}
        if p.minimum is not None:
            schema["minimum"] = p.minimum
        if p.maximum is not None:
            schema["maximum"] = p.maximum
        if p.default is not None:
            schema["default"] = p.default
        return schema
    if p.kind == "boolean":
        return {"type": "boolean"}
    if p.kind == "market":
        # The shape only: the 249 assigned codes in either case, spelt out, make a pattern
        # of 2 KB nobody can read. The list is referenced; the edge still refuses any other
        # code with 400 invalid_parameter.
        return {
            "type": "string",
            "pattern": MARKET_QUERY_PATTERN,
            "description": "An officially assigned ISO 3166-1 alpha-2 code, any case.",
            "externalDocs": COUNTRY_CODES_DOCS,
        }
    if p.kind == "date":
        return {"type": "string", "format": "date", "pattern": DATE_PATTERN}
    if p.kind == "instant":
        return {"type": "string", "format": "date-time", "pattern": v.INSTANT_PATTERN}
    if p.kind in ("string", "search"):
        return {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_STRING,
            "pattern": PRINTABLE_PATTERN,
        }
    if p.kind == "slug":
        return {
            "type": "string",
            "minLength": 1,
            "maxLength": v.SLUG_MAX_LENGTH,
            "pattern": v.SLUG_PATTERN,
        }
    if p.kind in ("groups", "include"):
        # Sent comma-separated (the parameter's style form, explode false).
        assert p.enum is not None
        return {
            "type": "array",
            "items": {"type": "string", "enum": list(p.enum)},
            "minItems": 1,
            "maxItems": len(p.enum),
            "uniqueItems": True,
        }
    if p.kind == "cursor":
        return {
            "type": "string",
            "description": "Opaque: page.nextCursor of the previous page, passed back as is.",
            "minLength": CURSOR_MIN,
            "maxLength": MAX_CURSOR,
            "pattern": CURSOR_PATTERN,
        }
    raise ValueError(f"no schema for parameter kind {p.kind!r}")


def query_parameter(p: Param) -> dict[str, Any]:
    parameter = {
        "name": p.name,
        "in": "query",
        "required": False,
        "description": p.description,
        "schema": param_schema(p),
    }
    if p.kind in ("groups", "include"):
        # Its values comma-separated (`groupBy=month,network`); the edge also takes the
        # parameter repeated (`groupBy=month&groupBy=network`), the exploded form that
        # clients generated from this document may send whatever `explode` says.
        parameter.update(style="form", explode=False)
        parameter["description"] = (
            f"{p.description} The parameter may also be repeated, one value each "
            f"({p.name}=a&{p.name}=b); the values are then taken in the order given."
        )
    if p.example is not None:
        parameter["example"] = p.example
    return parameter


PATH_PARAMETERS: dict[str, dict[str, Any]] = {
    "slug": {
        "name": "slug",
        "in": "path",
        "required": True,
        "description": "Programme slug, as returned by the list endpoint.",
        "example": "academie-du-code",
        "schema": {
            "type": "string",
            "pattern": v.SLUG_PATTERN,
            "minLength": 1,
            "maxLength": v.SLUG_MAX_LENGTH,
        },
    },
    "id": {
        "name": "id",
        "in": "path",
        "required": True,
        "description": "Commission id, as returned by /v1/commissions. Any other value "
        "answers 404.",
        "example": "com_8f3a61c2d94e07b5",
        "schema": {"type": "string", "pattern": COMMISSION_ID_PATTERN},
    },
}


# /v1/payments/{id}: its `id` is a payment's.
PAYMENT_ID_PARAMETER: dict[str, Any] = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "Payment id, as returned by /v1/payments. Any other value answers 404.",
    "example": "pay_3c81e0f5a27d9b46",
    "schema": {"type": "string", "pattern": PAYMENT_ID_PATTERN},
}


def path_parameters(path: str) -> list[dict[str, Any]]:
    if path.startswith("/v1/payments/"):
        return [PAYMENT_ID_PARAMETER]
    return [PATH_PARAMETERS[name] for name in re.findall(r"{(\w+)}", path)]


# Declared where a 304 is possible, so that generated clients can revalidate.
IF_NONE_MATCH: dict[str, Any] = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "The `ETag` of the copy the client holds: the answer is then 304 Not "
    "Modified, with no body, while it is still current.",
    "schema": {"type": "string"},
}


def header_parameters(name: str) -> list[dict[str, Any]]:
    return [IF_NONE_MATCH] if name in CONDITIONAL else []


# --- Responses -------------------------------------------------------------------------


def _header(name: str, required: bool = False) -> dict[str, Any]:
    header = dict(HEADERS[name])
    header["required"] = required
    return header


HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-Id": {
        "description": "Identifier of this request; equals `requestId` in error bodies. "
        "Not on a public answer (a directory 200 or 304 without a key).",
        "schema": {"type": "string", "pattern": REQUEST_ID_PATTERN},
    },
    rl.LIMIT: {
        "description": "Requests allowed per window for the key's plan.",
        "schema": {"type": "integer", "minimum": 1},
    },
    rl.REMAINING: {
        "description": "Requests the key can still make right now, this one counted "
        "(a 304 Not Modified is not counted).",
        "schema": {"type": "integer", "minimum": 0},
    },
    rl.RESET: {
        "description": "Seconds until the key's quota is whole again if it makes no request.",
        "schema": {"type": "integer", "minimum": 0},
    },
    rl.POLICY: {
        "description": "The key's quota as draft-ietf-httpapi-ratelimit-headers writes it: "
        '`"default";q=<RateLimit-Limit>;w=<window seconds>`.',
        "schema": {"type": "string", "pattern": rl.POLICY_PATTERN},
    },
    rl.RATELIMIT: {
        "description": "The quota left, as draft-ietf-httpapi-ratelimit-headers writes it: "
        '`"default";r=<RateLimit-Remaining>;t=<RateLimit-Reset>`.',
        "schema": {"type": "string", "pattern": rl.RATELIMIT_PATTERN},
    },
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer", "minimum": 1},
    },
    "ETag": {
        "description": "Validator of the representation; send it back in If-None-Match.",
        "schema": {"type": "string"},
    },
    "Cache-Control": {
        "description": "How long shared and private caches may keep the answer.",
        "schema": {"type": "string"},
    },
    "Link": {
        "description": 'The next page\'s URL, as `<URL>; rel="next"`, when there is one: '
        "absolute under the server's public URL when it has one, else relative to the "
        "request's URL.",
        "schema": {"type": "string"},
    },
    "Content-Disposition": {
        "description": 'An export\'s file name, as `attachment; filename="commissions.csv"`.',
        "schema": {"type": "string"},
    },
    "WWW-Authenticate": {
        "description": "The authentication scheme to use: Bearer.",
        "schema": {"type": "string", "pattern": "^Bearer"},
    },
}

RATE_HEADERS = rl.NAMES
# Statuses whose answer has always been through the rate limiter (see edge.http.ratelimit): the
# others can also be answered before it (a 404 by routing, a 503 by authentication).
RATE_COUNTED = frozenset({200, 304, 400, 403, 429})


def error_codes(endpoint: Endpoint, status: int) -> list[str]:
    """The `code` values one endpoint can answer with `status`."""
    codes = [code for code, s in v.ERROR_CODES.items() if s == status]
    if status == 400:
        names = {p.name for p in endpoint.params}
        if "cursor" not in names:
            codes.remove("invalid_cursor")
        if not {"from", "to"} <= names:
            codes.remove("invalid_date_range")
    return codes


def _headers(endpoint: Endpoint, status: int) -> dict[str, Any]:
    # A public answer (a 200 or 304 of the directory without a key, of this document) is
    # replayed by shared caches to everyone: it carries neither the request id nor the
    # limits (edge.http.publiccache).
    per_client = not ((endpoint.anonymous or endpoint.public) and status in (200, 304))
    headers = {"X-Request-Id": _header("X-Request-Id", required=per_client)}
    if not endpoint.public and status != 401:
        for name in RATE_HEADERS:
            headers[name] = _header(name, required=per_client and status in RATE_COUNTED)
    if status in (429, 503):
        headers["Retry-After"] = _header("Retry-After", required=True)
    if status == 401:
        headers["WWW-Authenticate"] = _header("WWW-Authenticate", required=True)
        # Sent when the key could not be checked because the account store is down.
        headers["Retry-After"] = _header("Retry-After")
    if status in (200, 304) and endpoint.name in CONDITIONAL:
        headers["ETag"] = _header("ETag", required=True)
    if status == 200:
        headers["Cache-Control"] = _header("Cache-Control")
        if endpoint.is_list or endpoint.paged_sometimes:
            headers["Link"] = _header("Link")
        if endpoint.exports:
            headers["Content-Disposition"] = _header("Content-Disposition")
    return headers


def error_response(endpoint: Endpoint, status: int) -> dict[str, Any]:
    """The shared `Error` body; the codes this operation answers with `status` listed in the
    description and in `x-error-codes`, not enforced (more may be added)."""
    codes = error_codes(endpoint, status)
    return {
        "description": (
            f"{ENDPOINT_STATUS_DESCRIPTIONS.get((endpoint.name, status), STATUS_DESCRIPTIONS[status])}"
            f" `code`: {known_codes_text(codes)}."
        ),
        "x-error-codes": codes,
        "headers": _headers(endpoint, status),
        "content": {JSON: {"schema": _ref("schemas", "Error")}},
    }


def _links(endpoint: Endpoint) -> dict[str, Any]:
    """Where a 200 answer leads: the next page, and a listed programme by its slug."""
    if not (endpoint.is_list or endpoint.paged_sometimes):
        return {}
    # Only what every answer holds: a `$request.query.<filter>` expression names nothing
    # when the request had no such filter. The filters go along as the request had them.
    links: dict[str, Any] = {
        "nextPage": {
            "operationId": OPERATION_IDS[endpoint.name],
            "description": "The next page, while page.hasMore: page.nextCursor as cursor, "
            "with the same filters as this request (a cursor is bound to them; the `Link` "
            "header holds the whole URL).",
            "parameters": {"cursor": "$response.body#/page/nextCursor"},
        }
    }
    if endpoint.resource == "Program":
        links["programBySlug"] = {
            "operationId": OPERATION_IDS["program"],
            "description": "The first programme of the page, by its slug.",
            "parameters": {"slug": "$response.body#/data/0/slug"},
        }
    return links


ANONYMOUS_DESCRIPTION = (
    "Readable without a key: a request with no `Authorization` header gets the same rows, "
    "with `Cache-Control: public` so that shared caches (a CDN) may keep them, under a rate "
    "limit per client address. A request with an `Authorization` header is authenticated: a "
    "missing, malformed, unknown or revoked key is a 401, never an anonymous answer."
)


def with_examples(
    responses: dict[str, Any], operation_id: str, examples: recorded.Examples
) -> dict[str, Any]:
    """`responses` with each one's recorded answer (contract/examples.json) as its example."""
    for status, example in examples.get(operation_id, {}).items():
        content = responses.get(status, {}).get("content", {}).get(JSON)
        body = example["response"].get("body")
        if content is not None and body is not None:
            content["examples"] = {
                f"{operation_id}{status}": {
                    "summary": example["title"],
                    "value": recorded.plain(body),
                }
            }
    return responses


def export_content(endpoint: Endpoint) -> dict[str, Any]:
    """The export media types of a 200 (contract.exports): streamed text, every row."""
    return {
        exports.CSV: {
            "schema": {
                "type": "string",
                "description": f"RFC 4180 CSV (format=csv, or Accept: {exports.CSV}): a header "
                f"row of the {endpoint.resource} members, then one row each, every matching "
                "row; null is an empty cell, amounts as stored. dialect=excel-eu: `;` "
                "between cells, a decimal comma, a UTF-8 byte order mark first.",
            }
        },
        exports.NDJSON: {
            "schema": {
                "type": "string",
                "description": f"One {endpoint.resource} JSON object a line (format=ndjson, "
                f"or Accept: {exports.NDJSON}), every matching row.",
            }
        },
    }


def operation(endpoint: Endpoint, examples: recorded.Examples | None = None) -> dict[str, Any]:
    ok: dict[str, Any] = {
        "description": endpoint.summary,
        "headers": _headers(endpoint, 200),
        "content": {JSON: {"schema": _ref("schemas", envelope_name(endpoint))}},
    }
    if endpoint.exports:
        ok["content"].update(export_content(endpoint))
    links = _links(endpoint)
    if links:
        ok["links"] = links
    responses: dict[str, Any] = {"200": ok}
    if endpoint.name in CONDITIONAL:
        responses["304"] = {
            "description": STATUS_DESCRIPTIONS[304],
            "headers": _headers(endpoint, 304),
        }
    for status in endpoint.statuses:
        responses[str(status)] = error_response(endpoint, status)
    with_examples(responses, OPERATION_IDS[endpoint.name], examples or {})
    described = {
        "operationId": OPERATION_IDS[endpoint.name],
        "tags": [TAGS[endpoint.name]],
        "summary": endpoint.summary,
        "parameters": path_parameters(endpoint.path)
        + [query_parameter(p) for p in endpoint.params]
        + header_parameters(endpoint.name),
        "responses": responses,
    }
    if endpoint.anonymous:
        # Either no credentials (the public rows, cacheable by shared caches, under the
        # per-address anonymous limit) or a key, checked as everywhere.
        described["security"] = [{}, {SECURITY_SCHEME: []}]
        described["description"] = ANONYMOUS_DESCRIPTION
    return described


def openapi_operation() -> dict[str, Any]:
    """`GET /openapi.json`: this document, outside /v1 and readable without a key."""
    endpoint = Endpoint(
        name="openapi",
        path=PATH,
        summary="This OpenAPI document.",
        params=(),
        statuses=(),
        resource="",
        public=True,
    )
    return {
        "operationId": OPERATION_IDS["openapi"],
        "tags": [TAGS["openapi"]],
        "summary": endpoint.summary,
        "description": "The API's own description, readable without a key.",
        "security": [],
        "parameters": header_parameters("openapi"),
        "responses": {
            "200": {
                "description": "The OpenAPI 3.1 document of /v1.",
                "headers": _headers(endpoint, 200),
                "content": {JSON: {"schema": {"type": "object", "required": ["openapi"]}}},
            },
            "304": {"description": STATUS_DESCRIPTIONS[304], "headers": _headers(endpoint, 304)},
        },
    }


# --- The document ----------------------------------------------------------------------

DESCRIPTION = """\
A read-only JSON API over a directory of published affiliate programmes and over the
calling account's commissions. Every request is a GET; every `/v1` path but this document
needs `Authorization: Bearer <API key>`.

Errors share one body (`Error`); branch on `code`, never on `message`. Every response
carries `X-Request-Id`. Authenticated responses carry `RateLimit-Limit`,
`RateLimit-Remaining` and `RateLimit-Reset`, and the same numbers as `RateLimit-Policy` and
`RateLimit` (draft-ietf-httpapi-ratelimit-headers); 429 and 503 also carry `Retry-After`.
A 304 Not Modified is not counted against the rate limit.
Unknown query parameters, empty or repeated ones are refused with 400 on the endpoints that
take parameters. Guides (a first request, pagination, rate limits, caching, errors) and this
document as a page to read: [/docs/](/docs/)."""


WEBHOOKS_DESCRIPTION = (
    "Each event of an account, as GET /v1/events lists it, is also POSTed to the account's "
    "webhook endpoints (registered by the operator), signed by the Standard Webhooks "
    "specification: verify `webhook-signature` with the endpoint's `whsec_` secret before "
    "trusting the body, and de-duplicate by `webhook-id`: an event is delivered at least "
    "once, in no guaranteed order. Answer 2xx within "
    f"{wh.REQUEST_TIMEOUT:g} s to acknowledge it (the body of the answer is ignored). Any "
    "other answer, a redirect (never followed) or none is a failure: the event is sent "
    "again with the same `webhook-id`, after waits growing from "
    f"{wh.RETRY_DELAYS[0]:g} s to {wh.RETRY_DELAYS[-1] / 3600:g} h (with jitter), for "
    f"{wh.GIVE_UP_HOURS} hours; then the endpoint is disabled. 410 Gone disables it at once."
)


def webhook_operation(event_type: str) -> dict[str, Any]:
    """The POST an endpoint receives for one event type: an Event whose `type` is it."""
    body: dict[str, Any]
    if event_type == wh.TEST_EVENT:
        # Not an Event of the feed: its id is its own (`test_...`), never an event's.
        body = {
            "type": "object",
            "required": ["id", "type", "occurredAt", "data"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "pattern": wh.TEST_ID_PATTERN},
                "type": {"const": event_type},
                "occurredAt": {"type": "string", "format": "date-time"},
                "data": {
                    "type": "object",
                    "required": ["endpoint"],
                    "additionalProperties": False,
                    "properties": {
                        "endpoint": {"type": "string", "pattern": wh.ENDPOINT_ID_PATTERN}
                    },
                },
            },
        }
        summary = "A test event, sent on the operator's demand (`affdir-admin webhook test`)."
    else:
        data = _ref("schemas", EVENT_DATA[event_type])
        body = {
            "allOf": [
                _ref("schemas", EVENT.name),
                {"type": "object", "properties": {"type": {"const": event_type}, "data": data}},
            ]
        }
        summary = f"A `{event_type}` event of the account."
    return {
        "operationId": "receive" + "".join(p.capitalize() for p in re.split(r"[._]", event_type)),
        "tags": ["webhooks"],
        "summary": summary,
        "description": WEBHOOKS_DESCRIPTION,
        "security": [],
        "parameters": [
            {
                "name": name,
                "in": "header",
                "required": True,
                "description": description,
                "schema": {"type": "string", "pattern": pattern},
            }
            for name, description, pattern in wh.HEADERS
        ],
        "requestBody": {"required": True, "content": {JSON: {"schema": body}}},
        "responses": {
            "2XX": {"description": "Delivered: the event is not sent again."},
            "410": {"description": "Gone: the endpoint is disabled; nothing more is sent."},
            "default": {
                "description": "A failure (so is a redirect): sent again later, the same "
                "`webhook-id`."
            },
        },
    }


def webhooks() -> dict[str, Any]:
    """OpenAPI 3.1 `webhooks`: one POST per event type, and the test event."""
    return {name: {"post": webhook_operation(name)} for name in (*v.EVENT_TYPES, wh.TEST_EVENT)}


def document() -> dict[str, Any]:
    """The whole OpenAPI 3.1 document, as plain data."""
    schemas = {r.name: resource_schema(r) for r in RESOURCES}
    for endpoint in ENDPOINTS:
        schemas[envelope_name(endpoint)] = envelope_schema(endpoint)
    examples = recorded.load()
    paths: dict[str, Any] = {e.path: {"get": operation(e, examples)} for e in ENDPOINTS}
    paths[PATH] = {"get": openapi_operation()}
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Affiliate programme directory and commission reporting API",
            "version": DOCUMENT_VERSION,
            "description": DESCRIPTION,
        },
        "tags": [
            {
                "name": "directory",
                "description": "Published programmes; the same rows for every key.",
            },
            {"name": "account", "description": "The calling account and its commissions."},
            {"name": "meta", "description": "The API's own description."},
            {
                "name": "webhooks",
                "description": "What the service POSTs to an account's webhook endpoints.",
            },
        ],
        "externalDocs": {"description": "Guides and the API reference", "url": DOCS_URL},
        "servers": SERVERS,
        "security": [{SECURITY_SCHEME: []}],
        "paths": paths,
        "webhooks": webhooks(),
        "components": {
            "securitySchemes": {
                SECURITY_SCHEME: {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "API key",
                    "description": "An API key, sent as `Authorization: Bearer <API key>`.",
                }
            },
            "schemas": schemas,
        },
    }


def render() -> bytes:
    """The document as deterministic JSON bytes (sorted keys, 2-space indent, final newline)."""
    return orjson.dumps(document(), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
