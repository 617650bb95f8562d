"""Every example of the docs, run against a served edge (the sample build, the demo account):
the guides (docs/guides/*.md), the reference and operators' pages (docs/*.md) and the README.

A page shows a request as a `sh` block holding `curl` commands (one a line), and the answer
in the next block: `json` (the body) or `http` (the status line, headers, and the body if
any); `"..."` marks what a page shortened. Each request is sent as written, with the shell variables the guides use
(`API`, `API_KEY`, and `CURSOR` / `ETAG` from the answer before); the answer must have the
shape the guide shows: every member shown is there with the same JSON type (null standing
for a member that may be null), the `code` and `status` shown are the ones answered, the
status line's status and every header named. Every `python` block runs to exit status 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_support import ROOT, LiveEdge, live_edge
from support.docexamples import examples, python_blocks, run_examples

GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))
# Every other page with requests, answers or programs: the reference and the operators'
# pages, and the README, run by the same rules as the guides.
DOCS = [*GUIDES, *sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveEdge]:
    with live_edge(tmp_path_factory.mktemp("guides")) as edge:
        yield edge


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


@pytest.mark.parametrize("guide", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_curl_example_answers_as_shown(live: LiveEdge, guide: Path):
    # The guides call the key API_KEY; the reference pages, KEY.
    variables = {"API": live.base_url, "API_KEY": live.key, "KEY": live.key}
    run_examples(guide.read_text("utf-8"), variables)


@pytest.mark.parametrize("guide", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
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
