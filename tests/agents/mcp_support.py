"""Helpers of the MCP server's tests: the live API they run against, how the mcp client
starts the server, and plain HTTP reads of the API to compare the tools' answers with."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from mcp import StdioServerParameters
from support.edgeprocess import EdgeProcess

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class LiveApi:
    edge: EdgeProcess
    key: str
    # The public id of the demo account's one payment (seeded beside its commissions).
    payment_id: str = ""

    @property
    def base_url(self) -> str:
        return self.edge.base_url


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


async def api_get(live: LiveApi, path: str, query: Mapping[str, str] | None = None) -> HttpAnswer:
    """GET the API as any client would, with the demo key."""
    headers = {"Authorization": f"Bearer {live.key}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(live.base_url + path, params=query or {}, headers=headers) as response,
    ):
        return HttpAnswer(response.status, await response.read())


def mcp_command(*args: str, key: str | None = None) -> StdioServerParameters:
    """`python -m agents ARGS` as the mcp client starts it, the key in its environment."""
    env = {"PYTHONPATH": str(ROOT)}
    if key is not None:
        env["AFFDIR_API_KEY"] = key
    return StdioServerParameters(
        command=sys.executable, args=["-m", "agents", *args], env=env, cwd=str(ROOT)
    )
