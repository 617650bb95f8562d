"""Every relative link in the repository's Markdown resolves in a fresh clone.

For each Markdown file (tracked, or new and not ignored): inline links and images
`[text](target)`, reference definitions `[label]: target` and HTML `href`/`src` attributes.
A relative target must name an existing file or directory (relative to the linking file, or
to the repository's root when it starts with `/`); its `#anchor`, if any, must be a heading
of the target file under GitHub's slug rules, or an explicit `id`/`name` in it. External
links (any URL scheme) are not fetched. Code (fenced blocks, indented blocks, inline code
spans) is not read for links.
"""

from __future__ import annotations

import os
import re
import subprocess
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_DIRS = {".git", ".venv", "venv", "dist", "node_modules", ".build-cache", "out"}


def markdown_files() -> list[str]:
    """Repository-relative paths of the Markdown files a clone holds (or will hold)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.md"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk the tree
        listed = []
        for directory, dirs, files in os.walk(ROOT):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".dist"))
            base = Path(directory).relative_to(ROOT)
            listed += [(base / name).as_posix() for name in files if name.endswith(".md")]
    return sorted({path for path in listed if (ROOT / path).is_file()})


FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) and ![alt](target); target may be <in angle brackets>, then an optional title.
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
)
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_LINK = re.compile(r"""<[a-zA-Z][^>]*?\s(?:href|src)\s*=\s*["']([^"']*)["']""")
HTML_ID = re.compile(r"""<[a-zA-Z][^>]*?\s(?:id|name)\s*=\s*["']([^"']+)["']""")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the text outside fenced and indented code blocks."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    previous_blank, indented = True, False
    for number, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        blank = not line.strip()
        # An indented code block starts after a blank line and runs over blank lines.
        indented = (line.startswith(("    ", "\t")) and (previous_blank or indented)) or (
            indented and blank
        )
        previous_blank = blank
        if not indented:
            lines.append((number, line))
    return lines


def without_code_spans(line: str) -> str:
    return INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link in the Markdown `text`."""
    found: list[tuple[int, str]] = []
    for number, line in prose_lines(text):
        line = without_code_spans(line)
        targets = [m.group(1) for m in INLINE_LINK.finditer(line)]
        targets += [m.group(1) for m in REFERENCE_DEF.finditer(line)]
        targets += [m.group(1) for m in HTML_LINK.finditer(line)]
        for target in targets:
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            found.append((number, target.strip()))
    return found


def heading_text(raw: str) -> str:
    """A heading's text as GitHub renders it: links by their text, no emphasis or HTML."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)  # [text](url) -> text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    return text


def github_slug(text: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters, digits, `_`
    and `-` kept), each space a hyphen."""
    text = heading_text(text).strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "_- " or ch.isspace())
    return re.sub(r"\s", "-", text)


@cache
def anchors(path: Path) -> frozenset[str]:
    """The anchors a Markdown file offers: its headings' slugs (a repeated slug gets -1,
    -2, ... as on GitHub) and explicit HTML ids and names."""
    text = path.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    result: set[str] = set()
    lines = prose_lines(text)
    for index, (number, line) in enumerate(lines):
        heading = None
        atx = ATX_HEADING.match(line)
        if atx:
            heading = atx.group(2) or ""
        elif index + 1 < len(lines) and line.strip() and not line.startswith(("|", "-", "*")):
            following_number, following = lines[index + 1]
            if following_number == number + 1 and SETEXT_UNDERLINE.match(following):
                heading = line.strip()
        if heading is not None:
            slug = github_slug(heading)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            result.add(slug if count == 0 else f"{slug}-{count}")
        result.update(m.group(1) for m in HTML_ID.finditer(line))
    return frozenset(result)


def broken_links(relative: str) -> list[str]:
    """What is wrong with the links of the Markdown file at `relative` (repository path)."""
    source = ROOT / relative
    problems = []
    for number, target in links(source.read_text(encoding="utf-8")):
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue  # external (http, https, mailto, ...) or empty: not checked
        path_part, _, anchor = target.partition("#")
        path_part = unquote(path_part.split("?", 1)[0])
        if path_part.startswith("/"):
            resolved = ROOT / path_part.lstrip("/")
        elif path_part:
            resolved = source.parent / path_part
        else:
            resolved = source
        where = f"{relative}:{number}: {target}"
        if not resolved.exists():
            problems.append(f"{where}: no such file")
            continue
        if not resolved.resolve().is_relative_to(ROOT):
            problems.append(f"{where}: outside the repository")
            continue
        if anchor:
            if resolved.is_dir() or resolved.suffix.lower() != ".md":
                continue  # GitHub's anchors into code files (#L10) are not headings
            if unquote(anchor).lower() not in anchors(resolved):
                problems.append(f"{where}: no heading #{anchor} in {resolved.name}")
    return problems


MARKDOWN_FILES = markdown_files()


def test_markdown_files_are_found():
    assert "README.md" in MARKDOWN_FILES
    assert "docs/spec/api-spec.md" in MARKDOWN_FILES


@pytest.mark.parametrize("relative", MARKDOWN_FILES)
def test_relative_links_resolve(relative: str):
    assert broken_links(relative) == []


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Directory (`bench_directory`)", "directory-bench_directory"),
        (
            "Cost of serving through aiohttp's public API",
            "cost-of-serving-through-aiohttps-public-api",
        ),
        ("Middleware stack, in process", "middleware-stack-in-process"),
        ("A.B: c -- d", "ab-c----d"),
        ("See [the spec](docs/spec/api-spec.md)", "see-the-spec"),
        ("Données à l'été", "données-à-lété"),
    ],
)
def test_github_slug(heading: str, slug: str):
    assert github_slug(heading) == slug


def test_links_skip_code_and_read_every_form():
    text = (
        "A [link](a.md#x) and `[not](b.md)` and ![img](c.png 'title').\n"
        "\n"
        "```\n[fenced](d.md)\n```\n"
        "\n"
        "    [indented](e.md)\n"
        "\n"
        "[ref]: f.md#y\n"
        '<a href="g.md">g</a> [angle](<h i.md>)\n'
    )
    assert [target for _, target in links(text)] == [
        "a.md#x",
        "c.png",
        "f.md#y",
        "h i.md",
        "g.md",
    ]
