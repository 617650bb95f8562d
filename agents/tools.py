"""The MCP tools: one per /v1 endpoint, their input schemas derived from `contract.endpoints`.

A tool's arguments are the endpoint's query parameters (and path parameters), named and
bounded exactly as the API names and bounds them: a parameter added to the contract's
table is a new argument of its tool with nothing to change here, and a new endpoint is one
more `ToolSpec` line. Arguments are checked against the same schema before any request
leaves, and turned into the query string the API expects.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from jsonschema import Draft202012Validator

from contract import endpoints as e
from contract.endpoints import Endpoint, Param
from contract.openapi import OPERATION_IDS, document, param_schema, path_parameters
from contract.resources import OUTCOMES
from contract.vocabulary import ERROR_CODES


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the endpoint it calls and how it presents itself to an agent."""

    name: str
    title: str
    description: str
    endpoint: Endpoint
    # True: the tool reads the calling account, so without a key it is refused before any
    # request (the directory tools ask the API, which decides what a call without a key gets).
    reads_account: bool
    # Query parameters the tool always sends, as (name, value): not among its arguments.
    # A tool that is one use of its endpoint (realised terms: the summary with outcomes).
    fixed: tuple[tuple[str, str], ...] = ()


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search_programs",
        "Search affiliate programmes",
        "Published affiliate programmes matching the arguments: `q` (words that must begin "
        "words of the name, pitch, site or commission; any case, accents optional) and the "
        "filters, in the order `sort` names (highest score first by default). Answers the "
        "API's page: `data` (the programmes, compact: what lists them, without the score's "
        "breakdown and the terms' evidence, which get_program gives) and `page` (`hasMore`, "
        "`nextCursor`). For the next page, call again with the same filters and `cursor` set "
        "to `page.nextCursor`.",
        e.PROGRAMS,
        reads_account=False,
    ),
    ToolSpec(
        "count_programs",
        "Count affiliate programmes per facet",
        "For the same arguments as search_programs (no sort or paging), how many published "
        "programmes match in total and per value of each facet (vertical, model, market, "
        "recurring, payout, platform, commission mode): to see which filters are worth "
        "trying before listing.",
        e.PROGRAM_FACETS,
        reads_account=False,
    ),
    ToolSpec(
        "get_program",
        "Fetch one affiliate programme",
        "One published programme by its slug (as listed by search_programs): its terms, "
        "markets, score and signup URL, and what explains them: the score's breakdown by "
        "component, the formula's version, the page stating the terms and when they were "
        "last checked. An unknown slug answers the error `not_found`.",
        e.PROGRAM,
        reads_account=False,
    ),
    ToolSpec(
        "get_account",
        "Read the calling account",
        "The account the API key belongs to: plan, capabilities, connected networks and the "
        "outcome of their last sync, the key's prefix, label and scopes, and its rate limit. "
        "Needs the server to have an API key.",
        e.ME,
        reads_account=True,
    ),
    ToolSpec(
        "list_commissions",
        "List the account's commissions",
        "Commissions collected from the account's networks, most recent first, filtered by "
        "the arguments. Amounts are in the network's currency, as reported: never convert "
        "them nor add amounts of different currencies. Answers `data` and `page`; for the "
        "next page, call again with the same filters and `cursor` set to `page.nextCursor`. "
        "Needs the server to have an API key.",
        e.COMMISSIONS,
        reads_account=True,
    ),
    ToolSpec(
        "sum_commissions",
        "Total the account's commissions",
        "Totals of the account's commissions (count, commission, sale) for the same filters "
        "as list_commissions, grouped by `groupBy` (a list among network, status, day, month, "
        "program, subId, programSlug) and always by currency: each row is within one "
        "currency, and rows of different currencies must never be added together. Grouped "
        "by program, subId or programSlug (the directory programme a commission is linked "
        "to, as get_program names it), the rows come by currency, largest commission first, "
        "in pages (`limit`, `cursor`); otherwise every row at once. With groupBy programSlug, "
        '`include: ["terms"]` adds each programme\'s advertised terms (commission, cookie '
        "days, holdback, currency) beside what it paid. "
        '`include: ["outcomes"]` adds each row\'s realised terms (as realised_terms). '
        "Needs the server to have an API key.",
        e.COMMISSION_SUMMARY,
        reads_account=True,
    ),
    ToolSpec(
        "list_payments",
        "List the account's payments",
        "Payments the account's networks made to it, most recent first, filtered by "
        "`network`, `from` and `to` (the payment date). Each is in its network's currency, "
        "as reported: never convert amounts nor add those of different currencies. Answers "
        "`data` and `page`; for the next page, call again with the same filters and `cursor` "
        "set to `page.nextCursor`. get_payment gives one payment's lines. Needs the server "
        "to have an API key.",
        e.PAYMENTS,
        reads_account=True,
    ),
    ToolSpec(
        "get_payment",
        "Get one payment with its lines",
        "One payment by its `id` (from list_payments), with its `lines`: each advertiser's "
        "share or each commission it paid, as the network gives them; per currency they sum "
        "exactly to the payment's amount, any difference being a line of kind unallocated. "
        "Needs the server to have an API key.",
        e.PAYMENT,
        reads_account=True,
    ),
    ToolSpec(
        "realised_terms",
        "What each programme or sub-id really pays",
        "The account's realised terms per group, from its commissions' status histories: for "
        'the same filters and `groupBy` as sum_commissions (`["program"]` for each '
        "advertiser, `[\"subId\"]` for each of the publisher's pages), each row's totals "
        "and `outcomes`: counts and exact sums per present status (`byStatus`), "
        "`approvalRate` (approved and paid among decided), `reversalRate` (declined after an "
        "approval, among those ever approved), `medianDaysToDecision` (from the sale to the "
        "first approval or decline the service recorded), null where nothing was decided. "
        "Every status counts, declined included; amounts are per currency, never added "
        "across currencies. Needs the server to have an API key.",
        e.COMMISSION_SUMMARY,
        reads_account=True,
        fixed=((e.SUMMARY_INCLUDE.name, OUTCOMES),),
    ),
    ToolSpec(
        "list_events",
        "List the account's events",
        "Changes recorded for the account, oldest first: commission.created, "
        "commission.updated (with the replaced status and amounts in `data.previous`), "
        "connection.sync_failed, connection.recovered, connection.disconnected, "
        "payment.created; `type` keeps "
        "only some (a list). "
        "Answers `data` and `page`; `page.nextCursor` is set on the last page too: keep it "
        "and call again later with it as `cursor` to get only what happened since. "
        "Needs the server to have an API key.",
        e.EVENTS,
        reads_account=True,
    ),
)

# An unknown argument's name is quoted back up to this length (it comes from the client).
MAX_NAME_SHOWN = 64

# The JSON Schema keywords of a parameter's schema that its tool's input schema keeps.
JSON_SCHEMA_KEYWORDS = frozenset(
    (
        "type",
        "enum",
        "minimum",
        "maximum",
        "default",
        "pattern",
        "minLength",
        "maxLength",
        "format",
        # A list parameter (groupBy): its values and how many.
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
    )
)

# What a valid value of each parameter kind looks like, for the message of a refusal.
EXPECTED: dict[str, str] = {
    "integer": "an integer",
    "boolean": "true or false",
    "market": "an ISO 3166-1 alpha-2 country code such as FR",
    "date": "a date written YYYY-MM-DD",
    "instant": "an RFC 3339 instant with its offset, such as 2026-01-31T12:00:00Z",
    "string": "1 to 200 characters without control characters",
    "cursor": "page.nextCursor of the previous page, passed back as is",
    "slug": "a programme slug: lowercase letters, digits and single hyphens, at most 64 characters",
}


@dataclass(frozen=True)
class Failure:
    """An error in the API's one error shape; `requestId` is None when no request was made
    (the tool refused first) and `status` is None when no HTTP answer came."""

    code: str
    message: str
    status: int | None
    param: str | None = None
    request_id: str | None = None
    retry_after: int | None = None

    def body(self) -> dict[str, Any]:
        """The error as the tool answers it: the API's members, plus `retryAfter` when the
        API said when to try again."""
        body: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "status": self.status,
            "param": self.param,
            "requestId": self.request_id,
        }
        if self.retry_after is not None:
            body["retryAfter"] = self.retry_after
        return body


def local_failure(code: str, message: str, param: str | None = None) -> Failure:
    """A refusal made before any request, with the status the API gives that code."""
    return Failure(code, message, ERROR_CODES.get(code), param)


def path_names(endpoint: Endpoint) -> list[str]:
    """The path parameters of `endpoint`, in path order (`{slug}` of /v1/programs/{slug})."""
    return re.findall(r"{(\w+)}", endpoint.path)


def _json_schema(description: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema`'s validation keywords (OpenAPI's own, such as `externalDocs`, are left out:
    some clients refuse what they do not know), described by the parameter's description."""
    kept = {key: value for key, value in schema.items() if key in JSON_SCHEMA_KEYWORDS}
    return {"description": description, **kept}


# What a tool answers is the API's JSON: the export formats (whole files, streamed) are for
# downloads, not for an agent's context.
EXPORT_PARAMS = frozenset((e.FORMAT.name, e.DIALECT.name))


def tool_params(spec: ToolSpec) -> tuple[Param, ...]:
    """The endpoint's query parameters a tool takes: all but the export's and those it
    always sends itself (`fixed`)."""
    fixed = {name for name, _ in spec.fixed}
    return tuple(
        p for p in spec.endpoint.params if p.name not in EXPORT_PARAMS and p.name not in fixed
    )


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    """The tool's JSON Schema: path parameters (required) then the query parameters in the
    endpoint's validation order, each as strict as the API, and nothing else."""
    properties: dict[str, Any] = {}
    for declared in path_parameters(spec.endpoint.path):
        properties[declared["name"]] = _json_schema(declared["description"], declared["schema"])
    for param in tool_params(spec):
        properties[param.name] = _json_schema(param.description, param_schema(param))
    return {
        "type": "object",
        "properties": properties,
        "required": path_names(spec.endpoint),
        "additionalProperties": False,
    }


_SCHEMAS = "#/components/schemas/"


def _refs(node: Any) -> set[str]:
    """The component schemas `node` names with `$ref`, directly."""
    if isinstance(node, dict):
        found = (
            {node["$ref"][len(_SCHEMAS) :]}
            if str(node.get("$ref", "")).startswith(_SCHEMAS)
            else set()
        )
        for value in node.values():
            found |= _refs(value)
        return found
    if isinstance(node, list):
        return set().union(*(_refs(item) for item in node)) if node else set()
    return set()


def _as_defs(node: Any) -> Any:
    """`node` with its component references made local (`#/$defs/Name`)."""
    if isinstance(node, dict):
        return {
            key: "#/$defs/" + value[len(_SCHEMAS) :]
            if key == "$ref" and isinstance(value, str) and value.startswith(_SCHEMAS)
            else _as_defs(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_as_defs(item) for item in node]
    return node


def output_schema(spec: ToolSpec, api: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of the tool's result: its endpoint's 200 answer as the OpenAPI
    document declares it, self-contained (the schemas it refers to under `$defs`)."""
    api = api or document()
    operation = api["paths"][spec.endpoint.path]["get"]
    assert operation["operationId"] == OPERATION_IDS[spec.endpoint.name]
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    schemas = api["components"]["schemas"]
    wanted, todo = set(), _refs(answer)
    while todo:
        name = todo.pop()
        wanted.add(name)
        todo |= _refs(schemas[name]) - wanted
    return {
        "type": "object",
        **_as_defs(answer),
        "$defs": {name: _as_defs(schemas[name]) for name in sorted(wanted)},
    }


def _expected(name: str, param: Param | None, schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(schema["enum"])
    if "minimum" in schema and "maximum" in schema:
        return f"an integer from {schema['minimum']} to {schema['maximum']}"
    kind = param.kind if param is not None else name
    return EXPECTED.get(kind, str(schema.get("description", "a valid value")))


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any]) -> Failure | None:
    """The first fault of `arguments` in the API's order (an unknown argument, then each
    parameter in turn), as the API would name it; None when they are valid. A null value
    counts as not given."""
    schema = input_schema(spec)
    properties: dict[str, Any] = schema["properties"]
    given = {name: value for name, value in arguments.items() if value is not None}
    for name in given:
        if name not in properties:
            shown = name if len(name) <= MAX_NAME_SHOWN else name[:MAX_NAME_SHOWN] + "..."
            return local_failure(
                "unknown_parameter",
                f"{shown} is not an argument of {spec.name}; it takes: {', '.join(properties)}",
                shown,
            )
    params = {p.name: p for p in tool_params(spec)}
    for name, declared in properties.items():
        if name not in given:
            if name in schema["required"]:
                return local_failure("invalid_parameter", f"{name} is required", name)
            continue
        if any(Draft202012Validator(declared).iter_errors(given[name])):
            expected = _expected(name, params.get(name), declared)
            return local_failure("invalid_parameter", f"{name} must be {expected}", name)
    return None


def _query_value(param: Param, value: Any) -> str:
    if param.kind == "boolean":
        return "true" if value else "false"
    if param.kind == "integer":
        return str(int(value))  # 10.0 is a valid JSON Schema integer; the API wants 10
    if param.kind in ("groups", "include"):
        return ",".join(value)  # a JSON list; the API reads the values comma-separated
    return str(value)


def to_request(spec: ToolSpec, arguments: Mapping[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """The path and query of the API request for valid `arguments` (see check_arguments)."""
    path = spec.endpoint.path
    for name in path_names(spec.endpoint):
        path = path.replace("{" + name + "}", quote(str(arguments[name]), safe=""))
    query = [
        (param.name, _query_value(param, arguments[param.name]))
        for param in tool_params(spec)
        if arguments.get(param.name) is not None
    ]
    return path, [*query, *spec.fixed]
