"""The GitHub workflows and the Dependabot configuration: valid against GitHub's schemas
(vendored, offline) and clean under actionlint where it is installed (tests/ops/schemas/README.md),
every action pinned to a commit with its version beside it, a lint job of its own, the test
workflow runs CI's own entry point on every supported Python, the container workflow builds
the image and runs the compose smoke test, Dependabot keeps every pin current, and the
content check runs whenever what decides a submission's verdict changes. Also the editor's
recommended extensions."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest
from opskit import ROOT, load_yaml, run_tool, schema_errors, tool

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
# The majors that run on Node 24 (older ones run on Node 20, which GitHub retires).
MAJORS = {"actions/checkout": {5, 6}, "actions/setup-python": {6}}
PIN = re.compile(
    r"(?P<action>[\w.-]+/[\w./-]+)@(?P<sha>[0-9a-f]{40}) # v(?P<major>\d+)(\.\d+){0,2}"
)


def test_there_are_the_four_workflows() -> None:
    assert {p.name for p in WORKFLOWS} >= {"tests.yml", "content.yml", "container.yml", "links.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflow_matches_githubs_schema(path: Path) -> None:
    assert schema_errors(load_yaml(path), "github-workflows.json") == []


def test_workflows_pass_actionlint() -> None:
    # actionlint runs shellcheck on the `run:` scripts too when it finds it on PATH.
    done = run_tool([tool("actionlint"), "-no-color", "-oneline"])
    assert done.returncode == 0, done.stdout + done.stderr


def test_dependabot_matches_its_schema_and_watches_every_pin() -> None:
    config = load_yaml(ROOT / ".github" / "dependabot.yml")
    assert schema_errors(config, "dependabot.json") == []
    ecosystems = {u["package-ecosystem"]: u["directory"] for u in config["updates"]}
    # The Dockerfile's base images and compose.yaml's images are pinned by digest: Dependabot
    # is what moves those pins.
    assert {"pip", "github-actions", "docker", "docker-compose"} <= set(ecosystems)
    assert (ROOT / ecosystems["docker"].strip("/") / "Dockerfile").is_file()
    assert (ROOT / ecosystems["docker-compose"].strip("/") / "compose.yaml").is_file()


def _uses_lines() -> list[tuple[str, str]]:
    """(workflow, the text after `uses:`, comment included) of every step using an action."""
    found = []
    for path in WORKFLOWS:
        for line in path.read_text(encoding="utf-8").splitlines():
            match = re.match(r"\s*(?:-\s+)?uses:\s*(.+?)\s*$", line)
            if match:
                found.append((path.name, match.group(1)))
    return found


def test_every_action_is_pinned_to_a_commit_of_a_current_major() -> None:
    uses = _uses_lines()
    assert uses
    for workflow, text in uses:
        pin = PIN.fullmatch(text)
        assert pin, f"{workflow}: {text!r}: pin a 40-digit commit SHA with `# vX.Y.Z` after it"
        allowed = MAJORS.get(pin["action"])
        assert allowed is not None, f"{workflow}: {pin['action']}: add its current majors to MAJORS"
        assert int(pin["major"]) in allowed, f"{workflow}: {text}"


def test_the_same_action_version_is_pinned_to_the_same_commit_everywhere() -> None:
    seen: dict[str, str] = {}
    for _, text in _uses_lines():
        action, _, rest = text.partition("@")
        sha, _, version = rest.partition(" # ")
        assert seen.setdefault(f"{action} {version}", sha) == sha, text


def _steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def test_tests_workflow_runs_ci_entry_point_on_push_and_pull_request() -> None:
    workflow = load_yaml(ROOT / ".github" / "workflows" / "tests.yml")
    assert {"push", "pull_request"} <= set(workflow["on"])
    job = workflow["jobs"]["test"]
    runs = [step for step in job["steps"] if "run" in step]
    (ci,) = [step for step in runs if shlex.split(step["run"]) == ["bash", ".ci/run"]]
    assert ci["env"]["CI"] == "true"
    # What .ci/run and the site's tests install with apt-get, as CI's machine does: Debian 12.
    assert job["container"]["image"] == "python:${{ matrix.python }}-bookworm"
    for script in (".ci/run", "scripts/ensure-services.sh", "scripts/ensure-chromium.sh"):
        assert (ROOT / script).is_file(), script
    assert job["timeout-minutes"] <= 90


SUPPORTED = ["3.11", "3.12", "3.13"]


def test_the_tests_run_on_every_supported_python() -> None:
    job = load_yaml(ROOT / ".github" / "workflows" / "tests.yml")["jobs"]["test"]
    assert job["strategy"]["matrix"]["python"] == SUPPORTED
    assert job["strategy"]["fail-fast"] is False  # one Python's failure hides no other's
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == f">={SUPPORTED[0]}"


def test_lint_is_a_job_of_its_own_on_the_oldest_python() -> None:
    job = load_yaml(ROOT / ".github" / "workflows" / "tests.yml")["jobs"]["lint"]
    commands = [shlex.split(step["run"]) for step in job["steps"] if "run" in step]
    assert ["ruff", "check", "--output-format=github", "."] in commands
    assert ["ruff", "format", "--check", "."] in commands
    assert ["mypy"] in commands  # pyproject's [tool.mypy] files: the packages
    (python,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/setup-")]
    assert python["with"]["python-version"] == SUPPORTED[0]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert config["mypy"]["python_version"] == SUPPORTED[0]
    assert config["ruff"]["target-version"] == "py" + SUPPORTED[0].replace(".", "")


def test_the_container_workflow_builds_the_image_and_runs_the_smoke_test() -> None:
    workflow = load_yaml(ROOT / ".github" / "workflows" / "container.yml")
    assert {"push", "pull_request"} <= set(workflow["on"])
    assert "paths" not in (
        workflow["on"]["pull_request"] or {}
    )  # every change: the image holds all
    (job,) = workflow["jobs"].values()
    assert "container" not in job  # docker runs on the runner itself
    runs = [shlex.split(step["run"]) for step in job["steps"] if "run" in step]
    assert ["bash", "scripts/compose-smoke.sh"] in runs
    assert (ROOT / "scripts" / "compose-smoke.sh").is_file()
    assert job["timeout-minutes"] <= 30


CHECKED = ["content/**", "catalog/**", "contract/**", "build.py", "templates/**", "pyproject.toml"]


@pytest.mark.parametrize("event", ["pull_request", "push"])
def test_content_check_runs_when_the_verdict_can_change(event: str) -> None:
    workflow = load_yaml(ROOT / ".github" / "workflows" / "content.yml")
    paths = workflow["on"][event]["paths"]
    assert set(CHECKED) <= set(paths)
    for path in CHECKED:  # each names something that exists
        assert list(ROOT.glob(path.removesuffix("/**"))), path
    (check,) = [s for s in _steps(workflow) if "build.py" in s.get("run", "")]
    assert shlex.split(check["run"]) == ["python", "build.py", "--check"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflows_read_only_and_never_pull_request_target(path: Path) -> None:
    workflow = load_yaml(path)
    assert "pull_request_target" not in workflow["on"]
    assert workflow["permissions"] == {"contents": "read"}
    for step in _steps(workflow):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


def test_link_check_runs_weekly_and_only_reports() -> None:
    workflow = load_yaml(ROOT / ".github" / "workflows" / "links.yml")
    assert set(workflow["on"]) == {"schedule", "workflow_dispatch"}
    (cron,) = [entry["cron"] for entry in workflow["on"]["schedule"]]
    assert cron.split()[2:4] == ["*", "*"]  # any day of the month: a weekday rule
    (verify,) = [s for s in _steps(workflow) if "affdir-verify" in s.get("run", "")]
    command = shlex.split(verify["run"])
    assert command[0] in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "--markdown" in command
    # Nothing that could open an issue or a pull request, or write anywhere.
    assert all("gh " not in s.get("run", "") for s in _steps(workflow))


# --- the editor --------------------------------------------------------------------------------


def test_vscode_recommends_the_extensions_of_the_projects_tools() -> None:
    text = (ROOT / ".vscode" / "extensions.json").read_text(encoding="utf-8")
    recommended = json.loads(text)["recommendations"]
    assert {
        "ms-python.python",
        "charliermarsh.ruff",
        "ms-python.mypy-type-checker",
        # The content files' `yaml-language-server: $schema=` modelines and settings.json's
        # yaml.schemas are read by this one.
        "redhat.vscode-yaml",
    } <= set(recommended)
    settings = json.loads((ROOT / ".vscode" / "settings.json").read_text(encoding="utf-8"))
    assert "yaml.schemas" in settings
