"""The tools' definitions: schemas derived from the contract, arguments checked in the API's
order with its codes, and turned into the query string the API reads."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.apiclient import Answer
from agents.server import Success, interpret
from agents.tools import (
    JSON_SCHEMA_KEYWORDS,
    TOOLS,
    Failure,
    ToolSpec,
    check_arguments,
    input_schema,
    to_request,
    tool_params,
)
from contract import endpoints as e
from contract import vocabulary as v
from contract.openapi import param_schema

BY_NAME = {spec.name: spec for spec in TOOLS}
SEARCH = BY_NAME["search_programs"]
PROGRAM = BY_NAME["get_program"]
COMMISSIONS = BY_NAME["list_commissions"]


@pytest.mark.parametrize("spec", TOOLS, ids=lambda spec: spec.name)
def test_each_schema_is_its_endpoints_parameters_as_the_openapi_document_has_them(spec: ToolSpec):
    schema = input_schema(spec)
    path = re.findall(r"{(\w+)}", spec.endpoint.path)
    # Every query parameter but the export's: a tool answers JSON.
    assert list(schema["properties"]) == path + [p.name for p in tool_params(spec)]
    assert not {"format", "dialect"} & set(schema["properties"])
    assert schema["required"] == path
    assert schema["additionalProperties"] is False
    for param in tool_params(spec):
        declared = schema["properties"][param.name]
        contract = {k: w for k, w in param_schema(param).items() if k in JSON_SCHEMA_KEYWORDS}
        assert {k: declared[k] for k in contract} == contract
        assert {"type", "description"} <= set(declared)


def test_the_tools_cover_the_endpoints_and_only_the_account_ones_need_a_key():
    assert [spec.endpoint for spec in TOOLS] == [
        e.PROGRAMS,
        e.PROGRAM_FACETS,
        e.PROGRAM,
        e.ME,
        e.COMMISSIONS,
        e.COMMISSION_SUMMARY,
        e.PAYMENTS,
        e.PAYMENT,
        e.COMMISSION_SUMMARY,
        e.EVENTS,
    ]
    assert [spec.name for spec in TOOLS if spec.reads_account] == [
        "get_account",
        "list_commissions",
        "sum_commissions",
        "list_payments",
        "get_payment",
        "realised_terms",
        "list_events",
    ]


def test_realised_terms_always_asks_for_outcomes_and_takes_the_rest():
    """realised_terms is the summary with include=outcomes: it sends it itself, takes no
    include argument, and takes every other filter and grouping of the summary."""
    spec = BY_NAME["realised_terms"]
    schema = input_schema(spec)
    assert "include" not in schema["properties"]
    assert {"groupBy", "network", "programExternalId", "subId", "limit", "cursor"} <= set(
        schema["properties"]
    )
    failure = check_arguments(spec, {"include": ["outcomes"]})
    assert failure is not None and failure.code == "unknown_parameter"
    path, query = to_request(spec, {"groupBy": ["program"], "limit": 5})
    assert path == "/v1/commissions/summary"
    assert query == [("groupBy", "program"), ("limit", "5"), ("include", "outcomes")]


@pytest.mark.parametrize(
    ("spec", "arguments"),
    [
        (SEARCH, {}),
        (SEARCH, {"vertical": "saas", "model": "cps", "market": "fr", "recurring": False}),
        (SEARCH, {"minScore": 0, "limit": 100, "cursor": None}),
        (SEARCH, {"limit": 10.0}),  # a JSON Schema integer
        (PROGRAM, {"slug": "academie-du-code"}),
        (COMMISSIONS, {"network": "awin", "status": "paid", "from": "2025-01-01"}),
        (COMMISSIONS, {"to": "2025-12-31", "updatedSince": "2026-01-31T13:00:00.5+01:00"}),
        (BY_NAME["get_account"], {}),
    ],
)
def test_valid_arguments_pass(spec: ToolSpec, arguments: dict[str, Any]):
    assert check_arguments(spec, arguments) is None


@pytest.mark.parametrize(
    ("spec", "arguments", "code", "param"),
    [
        (SEARCH, {"minscore": 5}, "unknown_parameter", "minscore"),
        (SEARCH, {"limit": 0, "minscore": 5}, "unknown_parameter", "minscore"),
        # Known parameters in the table's order, as the API reports them.
        (SEARCH, {"limit": 0, "vertical": "nope"}, "invalid_parameter", "vertical"),
        (SEARCH, {"vertical": "SaaS"}, "invalid_parameter", "vertical"),
        (SEARCH, {"market": "f1"}, "invalid_parameter", "market"),
        (SEARCH, {"market": "FRA"}, "invalid_parameter", "market"),
        (SEARCH, {"recurring": "true"}, "invalid_parameter", "recurring"),
        (SEARCH, {"minScore": 101}, "invalid_parameter", "minScore"),
        (SEARCH, {"limit": True}, "invalid_parameter", "limit"),
        (SEARCH, {"limit": "10"}, "invalid_parameter", "limit"),
        (SEARCH, {"limit": 2.5}, "invalid_parameter", "limit"),
        (SEARCH, {"cursor": "short"}, "invalid_parameter", "cursor"),
        (SEARCH, {"cursor": "A" * 300}, "invalid_parameter", "cursor"),
        (PROGRAM, {}, "invalid_parameter", "slug"),
        (PROGRAM, {"slug": "Bad_Slug"}, "invalid_parameter", "slug"),
        (PROGRAM, {"slug": "a" * 65}, "invalid_parameter", "slug"),
        (COMMISSIONS, {"network": ""}, "invalid_parameter", "network"),
        (COMMISSIONS, {"network": "a\nb"}, "invalid_parameter", "network"),
        (COMMISSIONS, {"network": "n" * 201}, "invalid_parameter", "network"),
        (COMMISSIONS, {"from": "2025-1-1"}, "invalid_parameter", "from"),
        (COMMISSIONS, {"updatedSince": "2026-01-31T12:00:00"}, "invalid_parameter", "updatedSince"),
        (BY_NAME["get_account"], {"verbose": True}, "unknown_parameter", "verbose"),
    ],
)
def test_invalid_arguments_are_refused_as_the_api_would(spec, arguments, code, param):
    failure = check_arguments(spec, arguments)
    assert failure is not None
    assert (failure.code, failure.param, failure.status, failure.request_id) == (
        code,
        param,
        400,
        None,
    )
    assert failure.message.startswith(param)
    assert len(failure.message) < 300  # names what is expected, never a whole regex


def test_a_long_unknown_argument_is_quoted_shortened():
    failure = check_arguments(SEARCH, {"x" * 10_000: 1})
    assert failure is not None and failure.code == "unknown_parameter"
    assert failure.param == "x" * 64 + "..." and "x" * 65 not in failure.message


def test_messages_say_what_is_expected():
    vertical = check_arguments(SEARCH, {"vertical": "casino"})
    limit = check_arguments(SEARCH, {"limit": 500})
    assert vertical is not None and limit is not None
    assert vertical.message == "vertical must be one of " + ", ".join(v.VERTICALS)
    assert limit.message == "limit must be an integer from 1 to 100"


@given(st.integers(min_value=-1000, max_value=1000))
def test_limit_is_accepted_exactly_within_the_contracts_bounds(limit: int):
    accepted = check_arguments(SEARCH, {"limit": limit}) is None
    assert accepted == (v.LIMIT_MIN <= limit <= v.LIMIT_MAX)
    if accepted:
        assert to_request(SEARCH, {"limit": limit}) == ("/v1/programs", [("limit", str(limit))])


def test_arguments_become_the_apis_query_in_table_order():
    arguments = {"limit": 10.0, "recurring": True, "vertical": "saas", "minScore": None}
    assert to_request(SEARCH, arguments) == (
        "/v1/programs",
        [("vertical", "saas"), ("recurring", "true"), ("limit", "10")],
    )
    assert to_request(SEARCH, {"recurring": False}) == ("/v1/programs", [("recurring", "false")])
    assert to_request(PROGRAM, {"slug": "factureo"}) == ("/v1/programs/factureo", [])
    path, query = to_request(COMMISSIONS, {"from": "2025-01-01", "to": "2025-02-01"})
    assert (path, query) == ("/v1/commissions", [("from", "2025-01-01"), ("to", "2025-02-01")])


def _answer(status: int, document: Any, retry_after: int | None = None) -> Answer:
    return Answer(status, b"", document, retry_after)


def test_the_apis_answers_become_results_or_its_errors():
    page = {"data": [], "page": {"limit": 25, "hasMore": False, "nextCursor": None}}
    assert interpret(_answer(200, page)) == Success(page, b"")
    error = {
        "code": "rate_limited",
        "message": "slow down",
        "status": 429,
        "param": None,
        "requestId": "req_" + "0" * 24,
    }
    failure = interpret(_answer(429, error, retry_after=3))
    assert isinstance(failure, Failure)
    assert failure.body() == {**error, "retryAfter": 3}
    for status, document in [(200, []), (200, {"nodata": 1}), (500, {"oops": True}), (302, {})]:
        failure = interpret(_answer(status, document))
        assert isinstance(failure, Failure) and failure.code == "api_answer_invalid"
