"""The strict YAML reader: both parsers agree, and plain scalars are typed as documented."""

from __future__ import annotations

from functools import partial

import pytest
from buildkit import VALID
from test_build_rules import CASES

from catalog import validation, yamlstrict
from catalog.errors import Problem
from catalog.yamlstrict import Ambiguous


@pytest.mark.skipif(yamlstrict.CParser is None, reason="PyYAML without libyaml")
def test_pure_python_fallback_gives_the_same_outcomes(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [validation.check_file(stem, text.encode()) for _, stem, text, _ in CASES]
    monkeypatch.setattr(
        validation.yamlstrict,
        "load",
        partial(yamlstrict.load, composer_class=yamlstrict.PyComposer),
    )
    slow = [validation.check_file(stem, text.encode()) for _, stem, text, _ in CASES]
    for (case, *_), a, b in zip(CASES, fast, slow, strict=True):
        if case == "syntax-error":  # the two parsers word syntax errors differently
            assert [p[:3] for p in a.problems] == [p[:3] for p in b.problems]
        else:
            assert a == b, case


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("False", False),
        ("~", None),
        ("null", None),
        ("", None),
        ("42", 42),
        ("-7", -7),
        ("0", 0),
        ("3.5", 3.5),
        (".5", 0.5),
        ("FR", "FR"),
        ("'NO'", "NO"),
        ('"0755"', "0755"),
        ("!!str 0755", "0755"),
        ("Acme, Inc.", "Acme, Inc."),
    ],
)
def test_plain_scalars_follow_yaml_1_2_core(text: str, value: object) -> None:
    doc, problems = yamlstrict.load(f"x: {text}\n".encode())
    assert problems == [] and doc is not None
    assert doc.value == {"x": value}
    assert type(doc.value["x"]) is type(value)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("NO", "bool"),
        ("yes", "bool"),
        ("Off", "bool"),
        ("y", "bool"),
        ("0755", "number"),
        ("0x1F", "number"),
        ("0o17", "number"),
        ("0b101", "number"),
        ("1:30", "number"),
        ("1_000", "number"),
        ("1e3", "number"),
        ("2024-03-01", "timestamp"),
        ("2024-03-01 10:00:00", "timestamp"),
        ("2024-03-01T10:00:00Z", "timestamp"),
    ],
)
def test_yaml_1_1_ambiguities_are_flagged(text: str, kind: str) -> None:
    doc, problems = yamlstrict.load(f"x: {text}\n".encode())
    assert problems == [] and doc is not None
    value = doc.value["x"]
    assert isinstance(value, Ambiguous) and (value.text, value.kind) == (text, kind)


def test_duplicate_keys_anywhere_are_reported() -> None:
    _, problems = yamlstrict.load(b"a: 1\nb:\n  c: 1\n  c: 2\na: 3\n")
    assert [(p.line, p.column, p.field) for p in problems] == [(4, 3, "b.c"), (5, 1, "a")]


def test_non_string_keys_are_reported() -> None:
    _, problems = yamlstrict.load(b"on: 1\n1: 2\n")
    assert [(p.line, p.column, p.field) for p in problems] == [(1, 1, "on"), (2, 1, "1")]


def test_multiple_documents_are_a_syntax_error() -> None:
    doc, problems = yamlstrict.load(VALID.encode() + b"---\nstatus: published\n")
    assert doc is None and problems[0].field == "(yaml)"


def test_not_utf8_is_an_error() -> None:
    doc, problems = yamlstrict.load(b"name: caf\xe9\n")
    assert doc is None and problems == [
        Problem(1, 10, "(file)", "byte 0xE9 is not UTF-8; save the file as UTF-8")
    ]


def test_billion_laughs_is_refused_without_expanding() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]"
              for i in range(8)]  # fmt: skip
    doc, problems = yamlstrict.load("\n".join(lines).encode())
    # Refused from the parser's events, before anything is composed, let alone expanded.
    assert doc is None and len(problems) == 9 + 8 * 9
    assert all("anchor" in p.message or "alias" in p.message for p in problems)


# --- edge cases: inputs that could crash the checks, or slip through them ----------------


def test_a_duplicate_key_past_the_depth_limit_is_reported_not_a_crash() -> None:
    # 32 braces: too few to trigger the event scan, deep enough for the builder's limit.
    data = ("k: " + "{k: " * 31 + "{x: 1, x: 2}" + "}" * 31 + "\n").encode()
    outcome = validation.check_file("acme", data)
    assert outcome.record is None and outcome.problems


@pytest.mark.parametrize("brk", ["\n", "\r", "\r\n", "\x85", "\u2028"])
def test_deep_indentation_is_refused_by_the_pure_python_composer_too(brk: str) -> None:
    # Every line break YAML knows: the pure-Python composer recurses once a level.
    data = ("".join(" " * i + f"k{i}:{brk}" for i in range(600)) + " " * 600 + "x: 1\n").encode()
    assert len(data) < yamlstrict.MAX_BYTES
    for composer in (yamlstrict.PyComposer, yamlstrict.COMPOSER):
        doc, problems = yamlstrict.load(data, composer)
        assert doc is None and "nested more than 32" in problems[0].message


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("name: !!str {b: 1}\n", "tag !!str"),  # !!str names a scalar, not a mapping
        ("name: !<x%1B[31m> 1\n", "\\x1b[31m"),  # a tag's escape sequence is shown escaped
    ],
)
def test_tags_the_scan_refuses(text: str, words: str) -> None:
    doc, problems = yamlstrict.load(text.encode())
    assert doc is None and words in problems[0].message
    assert "\x1b" not in problems[0].message


@pytest.mark.parametrize(
    "innermost",
    ["{}", "{a: x}", "{a: 1}", "[x]", "[1, 2]", "[[1, [x]]]", "{a: {b: [1, 2]}}"],
)
def test_nesting_gets_the_same_verdict_with_or_without_a_scan(innermost: str) -> None:
    # 31 levels of indentation, then the innermost value: accepted or refused alike, with
    # one problem at the same place, whether or not something triggers the event scan.
    nested = "".join(" " * i + "k:\n" for i in range(31)) + " " * 31 + f"k: {innermost}\n"
    verdicts = []
    for extra in ("", "# !\n"):
        _, problems = yamlstrict.load((nested + extra).encode())
        deep = [p for p in problems if "nested more than" in p.message]
        assert len(deep) <= 1, problems
        verdicts.append([(p.line, p.column, p.field) for p in deep])
    assert verdicts[0] == verdicts[1]
