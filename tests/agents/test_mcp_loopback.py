"""The MCP server end to end: `python -m agents` started by the mcp client over stdio (and
once over streamable HTTP), against a real edge on loopback with the sample build and the
demo account. Every tool answers what the HTTP API answers for the same query, and every
failure ends as a tool error carrying the API's code."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import orjson
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, MCPError
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp_support import ROOT, LiveApi, api_get, mcp_command
from mcp_types import CallToolResult, TextContent
from support.redisserver import free_port
from yarl import URL

from agents.server import instructions
from agents.tools import TOOLS, input_schema, output_schema
from contract import endpoints as e

REQUEST_ID = re.compile(r"req_[0-9a-f]{24}")


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def answer(result: CallToolResult) -> Any:
    """The structured answer of a successful call (its text says the same)."""
    assert not result.is_error, text_of(result)
    assert orjson.loads(text_of(result)) == result.structured_content
    return result.structured_content


def failure(result: CallToolResult) -> dict[str, Any]:
    """The error body of a failed call (its text says the same)."""
    assert result.is_error, text_of(result)
    error = result.structured_content
    assert isinstance(error, dict)
    assert orjson.loads(text_of(result)) == error
    assert {"code", "message", "status", "param", "requestId"} <= set(error)
    return error


async def test_lists_the_tools_with_the_contracts_parameters(live_api: LiveApi):
    async with Client(mcp_command("--api-url", live_api.base_url, key=live_api.key)) as client:
        listed = (await client.list_tools()).tools
        # Calling a tool that does not exist is a protocol error, not a tool's answer.
        with pytest.raises(MCPError, match="unknown tool 'get_programme'"):
            await client.call_tool("get_programme", {"slug": "factureo"})
    assert [tool.name for tool in listed] == [spec.name for spec in TOOLS]
    by_name = {tool.name: tool for tool in listed}
    for spec in TOOLS:
        tool = by_name[spec.name]
        assert tool.input_schema == input_schema(spec)
        assert tool.output_schema == output_schema(spec)
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    search = by_name["search_programs"].input_schema
    assert list(search["properties"]) == [p.name for p in e.PROGRAMS.params]
    assert search["properties"]["limit"]["maximum"] == 100
    assert search["additionalProperties"] is False
    assert by_name["get_program"].input_schema["required"] == ["slug"]


async def test_every_tool_answers_what_the_api_answers(live_api: LiveApi):
    async with Client(mcp_command("--api-url", live_api.base_url, key=live_api.key)) as client:
        # search_programs: a filtered first page, then the next one by its cursor.
        first = answer(await client.call_tool("search_programs", {"recurring": True, "limit": 3}))
        http = await api_get(live_api, "/v1/programs", {"recurring": "true", "limit": "3"})
        assert http.status == 200 and first == http.json()
        assert len(first["data"]) == 3 and first["page"]["hasMore"] is True
        cursor = first["page"]["nextCursor"]
        second = answer(
            await client.call_tool(
                "search_programs", {"recurring": True, "limit": 3, "cursor": cursor}
            )
        )
        http = await api_get(
            live_api, "/v1/programs", {"recurring": "true", "limit": "3", "cursor": cursor}
        )
        assert second == http.json()
        assert {p["slug"] for p in second["data"]}.isdisjoint(p["slug"] for p in first["data"])

        # Every filter of the contract, in one call, as the API reads it.
        filters = {"vertical": "saas", "model": "recurring", "market": "fr", "minScore": 10}
        page = answer(await client.call_tool("search_programs", filters))
        http = await api_get(live_api, "/v1/programs", {k: str(v) for k, v in filters.items()})
        assert page == http.json() and page["data"]

        # count_programs: the API's facet counts for the same filters.
        counted = answer(await client.call_tool("count_programs", {"recurring": True}))
        http = await api_get(live_api, "/v1/programs/facets", {"recurring": "true"})
        assert http.status == 200 and counted == http.json() and counted["data"]["total"] > 0
        # get_program: byte for byte the API's body.
        slug = first["data"][0]["slug"]
        result = await client.call_tool("get_program", {"slug": slug})
        http = await api_get(live_api, f"/v1/programs/{slug}")
        assert answer(result) == http.json()
        assert text_of(result).encode() == http.body

        # get_account: the demo account, as /v1/me shows it to the same key.
        account = answer(await client.call_tool("get_account", {}))
        http = await api_get(live_api, "/v1/me")
        assert account == http.json()
        assert account["data"]["key"]["prefix"] == live_api.key[:12]

        # list_commissions: filters, then the next page.
        query = {"status": "approved", "from": "2020-01-01", "limit": 5}
        commissions = answer(await client.call_tool("list_commissions", query))
        http = await api_get(live_api, "/v1/commissions", {k: str(v) for k, v in query.items()})
        assert commissions == http.json()
        assert len(commissions["data"]) == 5
        assert all(row["status"] == "approved" for row in commissions["data"])
        cursor = commissions["page"]["nextCursor"]
        following = answer(await client.call_tool("list_commissions", {**query, "cursor": cursor}))
        http = await api_get(
            live_api, "/v1/commissions", {**{k: str(v) for k, v in query.items()}, "cursor": cursor}
        )
        assert following == http.json()

        # sum_commissions: the API's totals, never across currencies.
        grouped = {"groupBy": ["network", "month"], "from": "2020-01-01"}
        totals = answer(await client.call_tool("sum_commissions", grouped))
        query = {"groupBy": "network,month", "from": "2020-01-01"}
        http = await api_get(live_api, "/v1/commissions/summary", query)
        assert http.status == 200 and totals == http.json() and totals["data"]
        assert all(row["currency"] for row in totals["data"])

        # realised_terms: the summary with outcomes, asked for by the tool itself.
        terms = answer(await client.call_tool("realised_terms", {"groupBy": ["network"]}))
        query = {"groupBy": "network", "include": "outcomes"}
        http = await api_get(live_api, "/v1/commissions/summary", query)
        assert http.status == 200 and terms == http.json() and terms["data"]
        assert all("approvalRate" in row["outcomes"] for row in terms["data"])

        # list_events: a type filter as a list, the API's page.
        chosen = {"type": ["commission.created"], "limit": 3}
        events = answer(await client.call_tool("list_events", chosen))
        http = await api_get(live_api, "/v1/events", {"type": "commission.created", "limit": "3"})
        assert http.status == 200 and events == http.json() and len(events["data"]) == 3
        assert {event["type"] for event in events["data"]} == {"commission.created"}


# One call of each tool whose answer has every kind of member its schema declares.
SAMPLE_CALLS = {
    "search_programs": {"limit": 5},
    "count_programs": {},
    "get_program": {"slug": "factureo"},
    "get_account": {},
    "list_commissions": {"limit": 50},
    "sum_commissions": {"groupBy": ["network", "status", "month"]},
    "realised_terms": {"groupBy": ["program"], "limit": 100},
    "list_events": {"limit": 20},
    "list_payments": {"network": "awin"},
    "get_payment": {},  # the live API's payment: its id is known once it is seeded
}


async def test_every_answer_is_valid_against_its_tools_output_schema(live_api: LiveApi):
    """What an agent is told a tool answers (its outputSchema) is what it answers."""
    assert set(SAMPLE_CALLS) == {spec.name for spec in TOOLS}
    async with Client(mcp_command("--api-url", live_api.base_url, key=live_api.key)) as client:
        for spec in TOOLS:
            arguments = SAMPLE_CALLS[spec.name]
            if spec.name == "get_payment":
                arguments = {"id": live_api.payment_id}
            result = await client.call_tool(spec.name, arguments)
            assert not result.is_error, text_of(result)
            schema = output_schema(spec)
            Draft202012Validator.check_schema(schema)
            problems = [e.message for e in Draft202012Validator(schema).iter_errors(answer(result))]
            assert problems == [], spec.name


def test_the_instructions_name_every_tool():
    told = instructions()
    assert all(re.search(rf"\b{spec.name}\b", told) for spec in TOOLS), told


async def test_the_apis_errors_are_tool_errors(live_api: LiveApi):
    cases = [
        # Refused by the API itself: its code, message and request id come through.
        ("get_program", {"slug": "no-such-programme"}, "not_found", 404, None),
        (
            "list_commissions",
            {"from": "2025-06-01", "to": "2025-01-01"},
            "invalid_date_range",
            400,
            None,
        ),
        ("list_commissions", {"from": "2023-02-29"}, "invalid_parameter", 400, "from"),
        ("search_programs", {"cursor": "A" * 40 + "." + "B" * 16}, "invalid_cursor", 400, "cursor"),
    ]
    async with Client(mcp_command("--api-url", live_api.base_url, key=live_api.key)) as client:
        for tool, arguments, code, status, param in cases:
            error = failure(await client.call_tool(tool, arguments))
            assert (error["code"], error["status"], error["param"]) == (code, status, param)
            assert REQUEST_ID.fullmatch(error["requestId"])
            assert error["message"] and "Traceback" not in error["message"]


async def test_arguments_out_of_the_contract_are_refused_before_any_request(live_api):
    async with Client(mcp_command("--api-url", live_api.base_url, key=live_api.key)) as client:
        cases = [
            ("search_programs", {"limit": 0}, "invalid_parameter", "limit"),
            ("search_programs", {"limit": 101}, "invalid_parameter", "limit"),
            ("search_programs", {"vertical": "casino"}, "invalid_parameter", "vertical"),
            ("search_programs", {"minscore": 10}, "unknown_parameter", "minscore"),
            ("get_program", {}, "invalid_parameter", "slug"),
            ("get_program", {"slug": "../me"}, "invalid_parameter", "slug"),
            ("list_commissions", {"status": "lost"}, "invalid_parameter", "status"),
        ]
        for tool, arguments, code, param in cases:
            error = failure(await client.call_tool(tool, arguments))
            assert (error["code"], error["param"]) == (code, param), (tool, arguments, error)
            assert error["status"] == 400 and error["requestId"] is None


async def test_without_a_key_the_account_tools_say_a_key_is_needed(live_api):
    async with Client(mcp_command("--api-url", live_api.base_url)) as client:
        for tool in (
            "get_account",
            "list_commissions",
            "sum_commissions",
            "realised_terms",
            "list_events",
        ):
            error = failure(await client.call_tool(tool, {}))
            assert error["code"] == "missing_api_key" and error["status"] == 401
            assert "AFFDIR_API_KEY" in error["message"]
            assert error["requestId"] is None  # refused before any request
        # The directory tools ask the API, which answers the public without a key.
        public = answer(await client.call_tool("search_programs", {"limit": 2}))
        assert len(public["data"]) == 2


async def test_a_key_from_a_file_and_a_wrong_one(live_api, tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text(live_api.key + "\n")
    key_file.chmod(0o600)
    command = mcp_command("--api-url", live_api.base_url, "--key-file", str(key_file))
    async with Client(command) as client:
        answer(await client.call_tool("get_account", {}))
    wrong = live_api.key[:-1] + ("A" if live_api.key[-1] != "A" else "B")
    async with Client(mcp_command("--api-url", live_api.base_url, key=wrong)) as client:
        result = await client.call_tool("get_account", {})
    error = failure(result)
    assert error["code"] == "invalid_api_key"
    assert wrong not in text_of(result) and live_api.key not in text_of(result)


async def test_an_unreachable_api_is_a_tool_error(live_api):
    closed = f"http://127.0.0.1:{free_port()}"
    async with Client(mcp_command("--api-url", closed, key=live_api.key)) as client:
        result = await client.call_tool("get_program", {"slug": "factureo"})
    error = failure(result)
    assert error["code"] == "api_unreachable" and error["status"] is None
    assert closed in error["message"] and live_api.key not in text_of(result)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert process.poll() is None, "affdir-mcp exited before it listened"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"affdir-mcp not listening on {port} after {within} s")


def serve_mcp_over_http(live_api: LiveApi, *extra: str) -> tuple[subprocess.Popen[bytes], int]:
    """`python -m agents --transport http` on a free loopback port, holding no key."""
    port = free_port()
    command = [sys.executable, "-m", "agents", "--transport", "http", "--port", str(port)]
    command += ["--api-url", live_api.base_url, *extra]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _wait_for_port(port, process)
    return process, port


@contextlib.contextmanager
def served_mcp(live_api: LiveApi, *extra: str) -> Iterator[str]:
    """The server's MCP URL; it must stop cleanly on SIGTERM, having written neither a
    traceback nor a key."""
    process, port = serve_mcp_over_http(live_api, *extra)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=20)
    # uvicorn shuts down gracefully, then ends by the signal it caught, as the default would.
    assert process.returncode == -signal.SIGTERM, stderr.decode(errors="replace")
    assert b"Traceback" not in stderr and live_api.key.encode() not in stderr


@pytest.fixture(scope="module")
def mcp_over_http(live_api: LiveApi) -> Iterator[str]:
    """One server for the module's tests (it holds no state between requests): its clean
    stop, with nothing on stderr of any of their requests, is checked when the module ends."""
    with served_mcp(live_api) as url:
        yield url


@contextlib.asynccontextmanager
async def keyed(url: str, key: str) -> AsyncIterator[Any]:
    """An MCP client transport to `url` sending `key` as its Bearer token."""
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http_client,
        streamable_http_client(url, http_client=http_client) as streams,
    ):
        yield streams


LISTING = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def test_streamable_http_serves_the_same_tools(live_api: LiveApi, mcp_over_http: str):
    async with Client(keyed(mcp_over_http, live_api.key)) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("get_program", {"slug": "factureo"})
        account = answer(await client.call_tool("get_account", {}))
    assert names == [spec.name for spec in TOOLS]
    http = await api_get(live_api, "/v1/programs/factureo")
    assert answer(result) == http.json()
    # The account of the key the client sent: the server holds none of its own.
    assert account == (await api_get(live_api, "/v1/me")).json()


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer", "Bearer afk_" + "Z" * 38, "Basic dXNlcjpwYXNz", "bearer  "],
    ids=["none", "empty", "unknown-key", "basic", "blank"],
)
async def test_over_http_a_request_without_an_accepted_key_is_refused(
    live_api: LiveApi, mcp_over_http: str, authorization: str | None
):
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    async with (
        aiohttp.ClientSession() as session,
        session.post(mcp_over_http, json=LISTING, headers=headers) as response,
    ):
        body = await response.json()
        assert response.status == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert body["code"] in ("missing_api_key", "invalid_api_key")
    with pytest.raises(Exception):  # noqa: B017 - the client's own error, whatever it is
        async with Client(keyed(mcp_over_http, "afk_" + "Z" * 38)) as client:
            await client.list_tools()


async def test_over_http_a_foreign_host_or_origin_is_refused(live_api: LiveApi, mcp_over_http: str):
    """A web page reaching the loopback port through DNS rebinding gets nothing, even
    with a key."""
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {live_api.key}"}
    async with aiohttp.ClientSession() as session:
        for extra, status in [
            ({"Host": "evil.example"}, 421),
            ({"Origin": "http://evil.example"}, 403),
        ]:
            async with session.post(
                mcp_over_http, json=LISTING, headers={**headers, **extra}
            ) as response:
                assert response.status == status


async def test_over_http_the_allowed_hosts_are_configurable(live_api: LiveApi):
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {live_api.key}"}
    with served_mcp(live_api, "--allowed-hosts", "mcp.example.test,other.test:443") as url:
        port = URL(url).port
        async with aiohttp.ClientSession() as session:
            for host, passes in [
                (f"mcp.example.test:{port}", True),
                ("mcp.example.test", True),
                ("other.test:443", True),
                ("other.test:444", False),
                (f"127.0.0.1:{port}", False),  # no longer allowed once hosts are named
            ]:
                async with session.post(
                    url, json=LISTING, headers={**headers, "Host": host}
                ) as response:
                    # Past the guard, a listing before `initialize` is the protocol's 400.
                    assert response.status == (400 if passes else 421), host
