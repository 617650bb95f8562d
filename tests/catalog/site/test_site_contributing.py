"""The advertisers' submission workflow: CONTRIBUTING.md, the content check, the PR template."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml
from site_contributing import CONTRIBUTING, current_block, generated_block

from catalog.submission import FIELDS
from contract import vocabulary as v

ROOT = CONTRIBUTING.parent
WORKFLOW = ROOT / ".github" / "workflows" / "content.yml"
PR_TEMPLATE = ROOT / ".github" / "pull_request_template.md"


@pytest.fixture(scope="module")
def guide() -> str:
    return CONTRIBUTING.read_text(encoding="utf-8")


def example_yaml(guide: str) -> str:
    """The fully commented example: the yaml block under '## The example file'."""
    section = guide.split("## The example file", 1)[1]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def test_the_field_reference_is_generated_from_the_schema(guide):
    assert current_block(guide) == generated_block(), (
        "CONTRIBUTING.md's field reference is out of date: run "
        ".venv/bin/python tests/catalog/site/site_contributing.py"
    )


@pytest.mark.parametrize(
    "value",
    [*v.VERTICALS, *v.MODELS, *v.PAYOUTS, *v.SUBMISSION_STATUSES],
)
def test_every_vocabulary_value_is_mentioned(guide, value):
    assert f"`{value}`" in guide


@pytest.mark.process
def test_the_example_uses_every_field_and_passes_the_check(guide, tmp_path):
    text = example_yaml(guide)
    data = yaml.safe_load(text)
    optional = {"slug"}  # the file name is the slug; the example shows that instead
    assert set(data) == {spec.name for spec in FIELDS} - optional
    for spec in FIELDS:
        if spec.name not in optional:
            assert re.search(rf"#.*\n{spec.name}:", text), f"{spec.name} has no comment above it"
    content = tmp_path / "content"
    (content / "programs").mkdir(parents=True)
    target = content / "programs" / "acme-store.yaml"
    target.write_text(text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "build.py", "--content", str(content), "--check", str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_guide_shows_the_local_check_command(guide):
    assert "python build.py --check content/programs/acme-store.yaml" in guide
    assert "content/programs/<slug>.yaml" in guide


def test_relative_links_of_the_guide_exist(guide):
    for target in re.findall(r"\]\(([^)#]+)\)", guide):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_the_workflow_runs_the_check_on_content_pull_requests():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request_target" not in triggers  # never run a fork's code with secrets
    # Submissions, and everything that decides whether one is valid.
    paths = triggers["pull_request"]["paths"]
    assert {"content/**", "catalog/**", "contract/**", "build.py"} <= set(paths)
    assert workflow["permissions"] == {"contents": "read"}
    (job,) = workflow["jobs"].values()
    steps = job["steps"]
    python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python"))
    assert python["with"]["python-version"] == "3.11"
    runs = [s.get("run", "") for s in steps]
    assert any("pip install" in r and r.rstrip().endswith(" .") for r in runs)
    assert "python build.py --check" in runs


def test_the_pr_template_asks_for_what_reviewers_check():
    text = PR_TEMPLATE.read_text(encoding="utf-8").lower()
    for topic in (
        "domain",
        "public page",
        "sign-up",
        "misleading",
        "build.py --check",
        "content check",
        "status",
    ):
        assert topic in text, topic
