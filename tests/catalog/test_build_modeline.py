"""Editors find the submission schema: the modeline of every sample file and of the
CONTRIBUTING.md example, and the VS Code workspace settings, all name the real schema, and
the build reads a modeline as the comment it is."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

from buildkit import ROOT, VALID, Content, snapshot
from test_build_rules import problems_of

PROGRAMS = ROOT / "content" / "programs"
SCHEMA = ROOT / "content" / "schema" / "program.schema.json"
MODELINE = "# yaml-language-server: $schema=../schema/program.schema.json"
_MODELINE = re.compile(r"#\s*yaml-language-server:\s*\$schema=(\S+)")


def test_every_sample_starts_with_the_modeline() -> None:
    samples = sorted(PROGRAMS.glob("*.yaml"))
    assert samples
    missing = [p.name for p in samples if p.read_text(encoding="utf-8").splitlines()[0] != MODELINE]
    assert missing == []


def test_the_modeline_points_at_the_schema_from_where_submissions_live() -> None:
    target = _MODELINE.fullmatch(MODELINE)
    assert target is not None
    assert (PROGRAMS / target.group(1)).resolve() == SCHEMA.resolve()
    assert json.loads(SCHEMA.read_text(encoding="utf-8"))["type"] == "object"


def test_the_contributing_example_starts_with_the_modeline() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    heading = text.index("## The example file")
    block = text.index("```yaml\n", heading) + len("```yaml\n")
    assert text[block:].splitlines()[0] == MODELINE


def test_vscode_maps_submissions_to_the_schema() -> None:
    settings = json.loads((ROOT / ".vscode" / "settings.json").read_text(encoding="utf-8"))
    mapped = {
        (ROOT / schema).resolve(): globs for schema, globs in settings["yaml.schemas"].items()
    }
    globs = mapped[SCHEMA.resolve()]
    assert any(fnmatch.fnmatch("content/programs/acme-store.yaml", g) for g in globs)


def test_a_modeline_changes_neither_the_verdict_nor_the_output(tmp_path: Path) -> None:
    plain, with_modeline = Content(tmp_path / "plain"), Content(tmp_path / "modeline")
    plain.add("acme", VALID)
    with_modeline.add("acme", f"{MODELINE}\n{VALID}")
    assert problems_of(plain) == problems_of(with_modeline) == []
    plain.build()
    with_modeline.build()
    assert snapshot(plain.out) == snapshot(with_modeline.out)
