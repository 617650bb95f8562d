"""The three syntax mistakes advertisers make most (a tab, a bad indent, an unclosed quote)
are reported where they are, with what to do, by either parser and by `build.py --check`."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from buildkit import VALID, CliRunner, Content

from catalog import yamlstrict
from catalog.errors import Problem

TAB = "a tab here, where YAML takes spaces only (tabs cannot indent); replace the tab with spaces"
DEEPER = (
    "this line is indented deeper than the field above it; start it in the same column as "
    "the fields it belongs with (top-level fields start in column 1, with spaces)"
)
BETWEEN = (
    "this line is indented by 1 space, a depth no field above it uses; start it in the same "
    "column as the fields it belongs with (top-level fields start in column 1, with spaces)"
)
DOUBLE = (
    'the " opened here is never closed; end the value with a closing " '
    '(and write \\" for a " inside it)'
)
SINGLE = (
    "the ' opened here is never closed; end the value with a closing ' "
    "(and write '' for a ' inside it)"
)


class Case(NamedTuple):
    before: str  # a line of VALID
    after: str  # what it becomes
    line: int
    column: int
    message: str


# VALID's lines: 1 status, 2 name, 3 host, ..., 15 markets, ..., 19 createdAt.
CASES = {
    "tab-indent": Case("host: acme.fr", "\thost: acme.fr", 3, 1, TAB),
    "tab-before-list-item": Case("markets: [FR, BE]", "markets:\n\t- FR", 16, 1, TAB),
    "indent-deeper": Case("host: acme.fr", "  host: acme.fr", 3, 3, DEEPER),
    "indent-between-levels": Case("markets: [FR, BE]", "markets:\n  - FR\n - BE", 17, 2, BETWEEN),
    "quote-to-the-end": Case("createdAt: \"2024-03-01T09:00:00Z\"", 'createdAt: "2024', 19, 12, DOUBLE),
    "quote-closed-by-the-next": Case('name: Acme Store', 'name: "Acme Store', 2, 7, DOUBLE),
    "single-quote": Case('createdAt: "2024-03-01T09:00:00Z"', "createdAt: '2024", 19, 12, SINGLE),
}  # fmt: skip

COMPOSERS = {"python": yamlstrict.PyComposer}
if yamlstrict.CParser is not None:
    COMPOSERS["libyaml"] = yamlstrict.COMPOSER


def text_of(case: Case) -> str:
    assert VALID.count(case.before + "\n") == 1, case.before
    return VALID.replace(case.before + "\n", case.after + "\n")


@pytest.mark.parametrize("parser", COMPOSERS)
@pytest.mark.parametrize("name", CASES)
def test_the_mistake_is_located_and_explained(name: str, parser: str) -> None:
    case = CASES[name]
    doc, problems = yamlstrict.load(text_of(case).encode(), COMPOSERS[parser])
    assert doc is None
    assert problems == [Problem(case.line, case.column, "(yaml)", case.message)]


@pytest.mark.parametrize("name", ["tab-indent", "indent-deeper", "quote-to-the-end"])
def test_check_prints_file_line_column_and_the_hint(
    content: Content, run_cli: CliRunner, name: str
) -> None:
    case = CASES[name]
    path = content.add("acme", text_of(case))
    done = run_cli("--check", str(path), "--content", "content", cwd=content.root)
    assert done.returncode == 1
    assert f"{path}:{case.line}:{case.column}: (yaml): {case.message}" in done.stderr.splitlines()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: Acme: Corp\n", "mapping values are not allowed"),  # a colon in a value
        ("markets: [FR, BE\nhost: x\n", "',' or ']'"),  # an unclosed bracket
    ],
)
def test_other_syntax_errors_keep_the_parser_words(text: str, message: str) -> None:
    _, problems = yamlstrict.load(f"status: published\n{text}".encode())
    (problem,) = problems
    assert message in problem.message and problem.message.endswith("this is not valid YAML")


def test_line_numbers_follow_crlf_files_and_a_byte_order_mark() -> None:
    data = b"\xef\xbb\xbfstatus: published\r\nname: Acme\r\n\thost: x\r\n"
    _, problems = yamlstrict.load(data)
    assert problems == [Problem(3, 1, "(yaml)", TAB)]
