"""The docs' examples as tests read them: a page's fenced blocks, its `curl` requests with
the answers it shows after them, and the check that an answer has the shape shown
(tests/contract/test_guides.py runs every page's; tests/test_first_hour.py one guide's from a
fresh clone)."""

from __future__ import annotations

import json
import re
import shlex
import urllib.error
import urllib.request
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from typing import Any

from contract.endpoints import JSON

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class Example:
    command: str  # the curl command, continuation lines joined
    answer_kind: str  # json | http
    answer: str


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in FENCE.finditer(text)]


def examples(text: str) -> list[Example]:
    """The (curl, answer) pairs of a page, in order: a block of several curl commands, one a
    line, shows one answer that each of them must have the shape of."""
    found = []
    fences = blocks(text)
    for (kind, code), (next_kind, next_code) in pairwise(fences):
        if kind == "sh" and code.lstrip().startswith("curl "):
            assert next_kind in ("json", "http"), f"no answer shown after: {code}"
            lines = code.replace("\\\n", " ").strip().splitlines()
            found += [Example(line.strip(), next_kind, next_code) for line in lines]
    return found


def python_blocks(text: str) -> list[str]:
    return [code for kind, code in blocks(text) if kind == "python"]


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
        elif word in ("-s", "-i", "-si"):
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


ELIDED = "..."


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float | Decimal):
        return "number"
    return type(value).__name__


def same_shape(shown: Any, answered: Any, where: str = "$") -> list[str]:
    """Where the answer's shape differs from what the guide shows (empty: it does not).
    `"..."` stands for what a page shortened: any value, `{"...": "..."}` any object, and as
    a list's item, any further items."""
    if shown is None or answered is None or shown == ELIDED:
        return []  # a member that may be null, or a shortened value
    if shown == {ELIDED: ELIDED}:
        return [] if isinstance(answered, dict) else [f"{where}: shown object"]
    if isinstance(shown, list):
        shown = [item for item in shown if item != ELIDED]
    if kind_of(shown) != kind_of(answered):
        return [f"{where}: shown {kind_of(shown)}, answered {kind_of(answered)}"]
    problems = []
    if isinstance(shown, dict):
        for name, value in shown.items():
            if name == ELIDED:
                continue  # more members, left out of the page
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


def run_examples(text: str, variables: dict[str, str]) -> int:
    """Send every curl example of a page in order and check each answer's shape; what an
    answer gives the next request (an `ETag`, a `nextCursor`, a commission's id) is kept in
    `variables` as ETAG, CURSOR and COMMISSION_ID. Returns how many were sent."""
    sent = 0
    for example in examples(text):
        status, headers, body = send(example.command, variables)
        check(example, status, headers, body)
        sent += 1
        if "ETag" in headers:
            variables["ETAG"] = headers["ETag"]
        # An export (CSV, NDJSON) carries no cursor nor id to take along.
        if body and status == 200 and headers.get("Content-Type", "").startswith(JSON):
            answer = json.loads(body)
            page = answer.get("page")
            if page and page.get("nextCursor"):
                variables["CURSOR"] = page["nextCursor"]
            listed = answer.get("data")
            if isinstance(listed, list) and listed and str(listed[0].get("id")).startswith("com_"):
                variables["COMMISSION_ID"] = listed[0]["id"]
    return sent
