"""The docs' examples as tests read them: a page's fenced blocks, its `curl` requests with
the answers it shows after them, and the check that an answer has the shape shown
(tests/contract/test_guides.py runs every page's; tests/test_first_hour.py one guide's from a
fresh clone); and the admin CLI and dev.py commands a page shows, in its code blocks or its
prose, with the output it shows after them (tests/admin/test_doc_commands.py runs them)."""

from __future__ import annotations

import dataclasses
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


# --- The commands the docs show -------------------------------------------------------

# How the docs call the admin CLI and the project's own runner (longest first: the first
# that matches is the one).
ADMIN_PROGRAMS = (
    ".venv/bin/python -m admin",
    "python3 -m admin",
    "python -m admin",
    "affdir-admin",
)
DEV_PROGRAM = "python3 dev.py"
_PROGRAM = re.compile(
    r"(?<![\w./-])(?P<program>"
    + "|".join(re.escape(p) for p in (*ADMIN_PROGRAMS, DEV_PROGRAM))
    + r")(?=\s|$|\))"
)
_INDENTED = "    "
# A fence as a list item holds it too: indented up to 3 spaces.
_ANY_FENCE = re.compile(r"^( {0,3})```(\w*)\n(.*?)^\1```", re.M | re.S)


@dataclass(frozen=True)
class DocCommand:
    """A command a page shows: in a code block (`block` its number on the page: a block's
    commands run in order, sharing what they make) or inline in the prose (`block` None)."""

    line: int  # the page's line where it starts
    program: str  # "admin" or "dev"
    text: str  # from the program on, as shown: continuations joined, no comment
    args: str  # what follows the program
    block: int | None
    sets: str | None = None  # the shell variable it assigns: uid=$(...)
    stdin: str | None = None  # what `echo '...' |` pipes to it
    stdin_file: str | None = None  # the file `< FILE` gives it
    output: str | None = None  # what the page shows it prints (the block after it)


def _logical_lines(code: str, first: int) -> list[tuple[int, str]]:
    """A block's lines with `\\` and a trailing `|` continued, each with its page line."""
    joined: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for offset, raw in enumerate(code.splitlines()):
        line = raw.strip()
        if pending is not None:
            line = f"{pending[1]} {line}"
            at = pending[0]
        else:
            at = first + offset
        if line.endswith("\\"):
            pending = (at, line[:-1].rstrip())
        elif line.endswith("|"):
            pending = (at, line)
        else:
            pending = None
            joined.append((at, line))
    if pending is not None:
        joined.append(pending)
    return joined


def _without_comment(text: str) -> str:
    """`text` without a shell comment (a `#` after a space, outside quotes)."""
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip()
    return text.rstrip()


def _command(line: str, at: int, block: int | None) -> DocCommand | None:
    line = _without_comment(line)
    found = _PROGRAM.search(line)
    if found is None:
        return None
    before, rest = line[: found.start()], line[found.start() :]
    sets = stdin = stdin_file = None
    assigned = re.search(r"(\w+)=\$\($", before.rstrip())
    if assigned:
        sets = assigned[1]
        rest = rest.removesuffix(")").rstrip()
    piped = re.fullmatch(r"\s*echo\s+(.+?)\s*\|\s*", before)
    if piped:
        stdin = shlex.split(piped[1])[0] + "\n"
    redirected = re.search(r"\s<\s*(\S+)$", rest)
    if redirected:
        stdin_file = redirected[1]
        rest = rest[: redirected.start()].rstrip()
    program = found["program"]
    return DocCommand(
        line=at,
        program="dev" if program == DEV_PROGRAM else "admin",
        text=rest,
        args=rest[len(program) :].strip(),
        block=block,
        sets=sets,
        stdin=stdin,
        stdin_file=stdin_file,
    )


def _code_blocks(text: str) -> list[tuple[int, str, str]]:
    """(first line, kind, code) of every fenced and indented code block; indented ones have
    kind "indented"."""
    found = []
    fenced_lines: set[int] = set()
    for match in _ANY_FENCE.finditer(text):
        first = text.count("\n", 0, match.start(3)) + 1
        found.append((first, match[2] or "text", match[3]))
        fenced_lines.update(range(first - 1, first + match[3].count("\n") + 1))
    lines = text.splitlines()
    run: list[str] = []
    start = 0
    for number, line in enumerate([*lines, ""], start=1):
        indented = line.startswith(_INDENTED) and number not in fenced_lines
        if indented and (run or (number > 1 and not lines[number - 2].strip())):
            if not run:
                start = number
            run.append(line[len(_INDENTED) :])
            continue
        if run:
            found.append((start, "indented", "\n".join(run) + "\n"))
            run = []
    return sorted(found)


def _blanked(text: str, blocks_: list[tuple[int, str, str]]) -> str:
    """`text` with every code block's lines emptied (line numbers kept): its prose."""
    lines = text.splitlines()
    for first, _, code in blocks_:
        for number in range(first - 1, first + code.count("\n") + 1):
            if 0 < number <= len(lines):
                lines[number - 1] = ""
    return "\n".join(lines)


def doc_commands(text: str) -> list[DocCommand]:
    """Every admin and dev.py command of a page, in page order: those of its code blocks,
    with the output shown in the block after a block of one command (when that block is no
    command itself), and those written inline in the prose."""
    found: list[DocCommand] = []
    code_blocks = _code_blocks(text)
    for number, (first, _kind, code) in enumerate(code_blocks):
        commands = [
            command
            for at, line in _logical_lines(code, first)
            if (command := _command(line, at, number)) is not None
        ]
        if len(commands) == 1 and _kind != "indented" and number + 1 < len(code_blocks):
            _, next_kind, next_code = code_blocks[number + 1]
            if next_kind == "text" and _PROGRAM.search(next_code) is None:
                commands = [dataclasses.replace(commands[0], output=next_code)]
        found += commands
    prose = _blanked(text, code_blocks)
    for span in re.finditer(r"`([^`]+)`", prose):
        shown = " ".join(span[1].split())
        if _PROGRAM.match(shown) and _PROGRAM.fullmatch(shown) is None:
            command = _command(shown, prose.count("\n", 0, span.start()) + 1, None)
            if command is not None:
                found.append(command)
    return sorted(found, key=lambda c: c.line)


def shown_output_matches(shown: str, printed: str) -> bool:
    """Whether `printed` is what a page shows, `...` standing for what varies."""
    pattern = ".*?".join(re.escape(part) for part in shown.strip().split(ELIDED))
    return re.fullmatch(pattern, printed.strip(), re.S) is not None
