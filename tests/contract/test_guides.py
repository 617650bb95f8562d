"""Every guide's examples, run against a served edge (the sample build, the demo account).

A guide (docs/guides/*.md) shows a request as a `sh` block holding one `curl` command, and
the answer in the next block: `json` (the body) or `http` (the status line, headers, and
the body if any). Each request is sent as written, with the shell variables the guides use
(`API`, `API_KEY`, and `CURSOR` / `ETAG` from the answer before); the answer must have the
shape the guide shows: every member shown is there with the same JSON type (null standing
for a member that may be null), the `code` and `status` shown are the ones answered, the
status line's status and every header named. Every `python` block runs to exit status 0.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from contract_support import ROOT, LiveEdge, live_edge

GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class Example:
    command: str  # the curl command, continuation lines joined
    answer_kind: str  # json | http
    answer: str


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in FENCE.finditer(text)]


def examples(text: str) -> list[Example]:
    """The (curl, answer) pairs of a guide, in order."""
    found = []
    fences = blocks(text)
    for (kind, code), (next_kind, next_code) in pairwise(fences):
        if kind == "sh" and code.lstrip().startswith("curl "):
            assert next_kind in ("json", "http"), f"no answer shown after: {code}"
            found.append(Example(code.replace("\\\n", " ").strip(), next_kind, next_code))
    return found


def python_blocks(text: str) -> list[str]:
    return [code for kind, code in blocks(text) if kind == "python"]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveEdge]:
    with live_edge(tmp_path_factory.mktemp("guides")) as edge:
        yield edge


def send(command: str, variables: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    # As the shell does: the words first, then the variables in them (a tag keeps its quotes).
    words = [re.sub(r"\$(\w+)", lambda m: variables[m[1]], w) for w in shlex.split(command)]
    assert words[0] == "curl", command
    headers, url = {}, None
    rest = iter(words[1:])
    for word in rest:
        if word == "-H":
            name, _, value = next(rest).partition(":")
            headers[name.strip()] = value.strip()
        elif word in ("-s", "-i"):
            continue
        else:
            assert url is None and word.startswith("http"), f"unknown word {word!r}"
            url = word
    assert url is not None, command
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float | Decimal):
        return "number"
    return type(value).__name__


def same_shape(shown: Any, answered: Any, where: str = "$") -> list[str]:
    """Where the answer's shape differs from what the guide shows (empty: it does not)."""
    if shown is None or answered is None:
        return []  # a member that may be null
    if kind_of(shown) != kind_of(answered):
        return [f"{where}: shown {kind_of(shown)}, answered {kind_of(answered)}"]
    problems = []
    if isinstance(shown, dict):
        for name, value in shown.items():
            if name not in answered:
                problems.append(f"{where}.{name}: not in the answer")
            elif where == "$" and name in ("code", "status") and value != answered[name]:
                problems.append(f"{where}.{name}: shown {value!r}, answered {answered[name]!r}")
            else:
                problems += same_shape(value, answered[name], f"{where}.{name}")
    elif isinstance(shown, list) and answered:
        for i, item in enumerate(shown):
            problems += same_shape(item, answered[min(i, len(answered) - 1)], f"{where}[{i}]")
    return problems


def check(example: Example, status: int, headers: dict[str, str], body: bytes) -> None:
    if example.answer_kind == "json":
        shown = json.loads(example.answer, parse_float=Decimal)
        expected = shown.get("status", 200) if isinstance(shown, dict) else 200
        assert status == expected, (example.command, status)
        answered = json.loads(body, parse_float=Decimal)
        assert same_shape(shown, answered) == [], example.command
        return
    head, _, shown_body = example.answer.partition("\n\n")
    first, *lines = head.strip().splitlines()
    assert status == int(first.split()[1]), (example.command, status)
    for line in lines:
        name = line.partition(":")[0]
        assert name in headers, (example.command, name)
    if shown_body.strip():
        answered = json.loads(body, parse_float=Decimal)
        assert same_shape(json.loads(shown_body, parse_float=Decimal), answered) == []


def test_there_are_guides_with_examples():
    assert {p.stem for p in GUIDES} >= {
        "README",
        "getting-started",
        "pagination",
        "rate-limits",
        "caching",
        "errors",
        "amounts",
    }
    assert sum(len(examples(p.read_text("utf-8"))) for p in GUIDES) >= 10


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.stem)
def test_every_curl_example_answers_as_shown(live: LiveEdge, guide: Path):
    variables = {"API": live.base_url, "API_KEY": live.key}
    for example in examples(guide.read_text("utf-8")):
        status, headers, body = send(example.command, variables)
        check(example, status, headers, body)
        if "ETag" in headers:
            variables["ETAG"] = headers["ETag"]
        if body and status == 200:
            page = json.loads(body).get("page")
            if page and page.get("nextCursor"):
                variables["CURSOR"] = page["nextCursor"]


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.stem)
@pytest.mark.process
def test_every_python_example_runs(live: LiveEdge, guide: Path, tmp_path: Path):
    env = {**os.environ, "API": live.base_url, "API_KEY": live.key}
    for code in python_blocks(guide.read_text("utf-8")):
        run = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout + run.stderr
