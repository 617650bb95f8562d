"""Schemathesis as anyone runs it: `schemathesis run URL/openapi.json --checks all`.

No schema file of ours, no hooks variable: the document is read from the live edge's
/openapi.json, every phase runs (examples, coverage, fuzzing, stateful links) and every
check. Only the key and the bounds a test needs are added on the command line; what JSON
Schema cannot say comes from the repository's schemathesis.toml, found as schemathesis
finds it (the working directory is the repository's root).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_support import LIVE_SECRET, ROOT, LiveEdge, live_edge

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
MAX_EXAMPLES = 25
SEED = 20_261_126  # a fixed seed: the same run every time, failures reproducible


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveEdge]:
    with live_edge(tmp_path_factory.mktemp("plain")) as edge:
        yield edge


@pytest.mark.process
@pytest.mark.slow
def test_schemathesis_run_checks_all_exits_0(live: LiveEdge):
    assert (ROOT / "schemathesis.toml").is_file()
    command = [
        str(SCHEMATHESIS),
        "run",
        f"{live.base_url}/openapi.json",
        "--checks",
        "all",
        "-H",
        f"Authorization: Bearer {live.key}",
        # Bounds: a fixed number of cases, one worker, no example database between runs.
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--workers",
        "1",
        "--generation-database",
        "none",
        "--no-color",
    ]
    # The edge's cursor secret lets the hooks keep the cursors this edge issued.
    env = {**os.environ, "CONTRACT_CURSOR_SECRET": LIVE_SECRET}
    env.pop("SCHEMATHESIS_HOOKS", None)
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    for phase in ("Examples", "Coverage", "Fuzzing", "Stateful"):
        assert f"✅  {phase}" in output, output
    # Every operation it found was run, with the project's configuration.
    selected = re.search(r"Operations:\s+(\d+) selected / (\d+) total", output)
    assert selected is not None and selected[1] == selected[2], output
    assert f"Configuration:    {ROOT / 'schemathesis.toml'}" in output, output


# Outside the repository there is no schemathesis.toml and no hooks: the one check that
# needs rules the document does not state (a cursor only as issued, `from` not after `to`,
# an assigned market) is left out; every other check runs. docs/api.md gives this command.
OUTSIDE_EXCLUDED = "positive_data_acceptance"


@pytest.mark.process
@pytest.mark.slow
def test_schemathesis_from_outside_the_repository(live: LiveEdge, tmp_path: Path):
    command = [
        str(SCHEMATHESIS),
        "run",
        f"{live.base_url}/openapi.json",
        "--checks",
        "all",
        "--exclude-checks",
        OUTSIDE_EXCLUDED,
        "-H",
        f"Authorization: Bearer {live.key}",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--workers",
        "1",
        "--generation-database",
        "none",
        "--no-color",
    ]
    env = {
        k: val for k, val in os.environ.items() if not k.startswith(("SCHEMATHESIS", "CONTRACT"))
    }
    run = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "schemathesis.toml" not in output, output  # nothing of the repository was read
    for phase in ("Examples", "Coverage", "Fuzzing", "Stateful"):
        assert f"✅  {phase}" in output, output
