"""The MCP server: lists the tools of `agents.tools` and answers each call through the API.

A call's answer is the API's own: on success its JSON body (`data`, and `page` for lists) as
structured content and, byte for byte, as text; on failure a tool error (`isError`) whose
content is the API's error body (`code`, `message`, `status`, `param`, `requestId`), or the
same shape made here when the call was refused before any request or the API could not be
read. Nothing raised inside a call reaches the client as a stack trace.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import mcp_types as types
import orjson
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from agents.apiclient import Answer, ApiClient, ApiError
from agents.httpauth import KeyChecker, RequireKey, allowed, bearer_key
from agents.tools import (
    TOOLS,
    Failure,
    ToolSpec,
    check_arguments,
    input_schema,
    local_failure,
    output_schema,
    to_request,
)

log = logging.getLogger("agents")

NAME = "affdir"


def instructions(tools: Sequence[ToolSpec] = TOOLS) -> str:
    """What the server tells an agent first: every tool by name, which need a key, and the
    rules of the answers."""
    public = ", ".join(spec.name for spec in tools if not spec.reads_account)
    account = ", ".join(spec.name for spec in tools if spec.reads_account)
    return (
        f"Tools over the affdir API: a directory of affiliate programmes ({public}) and, "
        f"with an API key, the calling account, its commissions, their totals and its events "
        f"({account}). Answers are the API's JSON, as each tool's output schema says. Lists "
        "are paged: pass page.nextCursor back as `cursor` with the same filters. A failed "
        "call answers the API's error: branch on its `code`. Commission amounts are in their "
        "own currency: never add amounts of different currencies."
    )


@dataclass(frozen=True)
class Success:
    """The API's answer to a successful call: parsed, and the bytes it sent."""

    document: dict[str, Any]
    body: bytes


def version() -> str:
    try:
        return metadata.version("affdir")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0"


def describe(spec: ToolSpec) -> types.Tool:
    """The tool as `tools/list` shows it."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=input_schema(spec),
        output_schema=output_schema(spec),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


def _is_error_body(document: Any) -> bool:
    return isinstance(document, dict) and all(
        isinstance(document.get(name), str) for name in ("code", "message", "requestId")
    )


def interpret(answer: Answer) -> Success | Failure:
    """The tool's outcome for an API answer: its body on 200, its error otherwise."""
    document = answer.document
    if answer.status == 200 and isinstance(document, dict) and "data" in document:
        return Success(document, answer.body)
    if answer.status >= 400 and _is_error_body(document):
        param = document.get("param")
        return Failure(
            code=document["code"],
            message=document["message"],
            status=answer.status,
            param=param if isinstance(param, str) else None,
            request_id=document["requestId"],
            retry_after=answer.retry_after,
        )
    return Failure(
        "api_answer_invalid",
        f"the API answered {answer.status} with a body that is neither a result nor an error",
        None,
    )


async def call(
    api: ApiClient, spec: ToolSpec, arguments: Mapping[str, Any], key: str | None = None
) -> Success | Failure:
    """Check the arguments, refuse an account tool without a key, else ask the API with
    `key` (the HTTP client's own), else the server's key if it has one."""
    failure = check_arguments(spec, arguments)
    if failure is not None:
        return failure
    if spec.reads_account and key is None and not api.has_key:
        message = (
            f"{spec.name} reads your account, which needs an API key: start the MCP server "
            "with the key in AFFDIR_API_KEY or in a file named by --key-file"
        )
        return local_failure("missing_api_key", message)
    path, query = to_request(spec, arguments)
    try:
        answer = await api.get(path, query, key=key)
    except ApiError as exc:
        return Failure(exc.code, exc.message, None)
    return interpret(answer)


def result(outcome: Success | Failure) -> types.CallToolResult:
    """The MCP result of a call: structured content, and the same as JSON text."""
    if isinstance(outcome, Failure):
        error = outcome.body()
        return types.CallToolResult(
            content=[types.TextContent(text=orjson.dumps(error).decode())],
            structured_content=error,
            is_error=True,
        )
    # The API's bytes as they came (orjson has checked they are UTF-8): amounts keep every
    # digit the network reported.
    return types.CallToolResult(
        content=[types.TextContent(text=outcome.body.decode())],
        structured_content=outcome.document,
    )


def build_server(api: ApiClient, tools: Sequence[ToolSpec] = TOOLS) -> Server[Any]:
    """An MCP server whose tools call the API through `api`."""
    by_name = {spec.name: spec for spec in tools}
    listed = [describe(spec) for spec in tools]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            # Not a tool error: the spec answers an unknown tool with a protocol error.
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}")
        # Over HTTP, the key the request carried (RequireKey let only accepted ones in).
        request = ctx.request
        headers = getattr(request, "headers", None)
        key = bearer_key(headers.get("authorization")) if headers is not None else None
        try:
            outcome = await call(api, spec, params.arguments or {}, key)
        except Exception:
            log.exception("tool %s failed", spec.name)
            outcome = Failure("internal_error", f"{spec.name} failed inside the MCP server", None)
        return result(outcome)

    def tool_schema(name: str) -> Mapping[str, Any] | None:
        spec = by_name.get(name)
        return None if spec is None else input_schema(spec)

    return Server(
        NAME,
        version=version(),
        title="affdir affiliate programme directory",
        instructions=instructions(tools),
        get_tool_input_schema=tool_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(api: ApiClient) -> None:
    """Serve one client over this process's stdin and stdout until stdin closes."""
    server = build_server(api)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(
    api: ApiClient, host: str, port: int, path: str, allowed_hosts: Sequence[str]
) -> None:
    """Serve streamable HTTP at http://HOST:PORT/PATH until interrupted (SIGINT, SIGTERM):
    only to requests with an API key the edge accepts, whose Host (and Origin, if any)
    names one of `allowed_hosts` (DNS rebinding)."""
    server = build_server(api)
    host_values, origins = allowed(allowed_hosts)
    guard = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=host_values, allowed_origins=origins
    )
    app = RequireKey(
        server.streamable_http_app(streamable_http_path=path, transport_security=guard),
        KeyChecker(api),
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    await uvicorn.Server(config).serve()
