"""docs/agents.md describes the MCP server as it is: one table row per tool, in the server's
order, naming the endpoint it calls, its arguments and whether it needs a key."""

from __future__ import annotations

import re
from pathlib import Path

from agents.tools import TOOLS, path_names, tool_params

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
ROW = re.compile(
    r"^\| `(\w+)` \| `GET ([^`]+)` \| (.*) \| (required|sent when there is one) \|$", re.M
)


def test_the_tool_table_is_the_servers():
    rows = ROW.findall(DOC.read_text("utf-8"))
    assert [name for name, *_ in rows] == [spec.name for spec in TOOLS]
    for (name, path, arguments, key), spec in zip(rows, TOOLS, strict=True):
        assert path == spec.endpoint.path, name
        assert (key == "required") is spec.reads_account, name
        # What a row says a tool does not take, "(no `sort`, ...)", is not an argument.
        # Values in brackets (`["scoreBreakdown"]`) are examples, not arguments.
        kept = re.sub(r"\(no [^)]*\)|`\[[^`]*\]`", "", arguments)
        named = set(re.findall(r"`(\w+)`", kept))
        # Every argument the tool takes is named, or the row says it takes the same as a
        # tool before it (the directory's filters).
        takes = {p.name for p in tool_params(spec)} | set(path_names(spec.endpoint))
        assert named <= takes, (name, named - takes)
        assert takes <= named or "the same" in arguments or not takes, (name, takes - named)
