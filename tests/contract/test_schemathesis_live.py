"""Contract testing against a live edge: schemathesis over the generated OpenAPI document.

One real server (a thread, a real port) on a real build of content/ and the demo account;
schemathesis runs every phase (examples, coverage, fuzzing, stateful links) with every
check against it, in a subprocess, exactly as `st run` would. Zero failures allowed.

Reproduce by hand against `python3 dev.py serve`:

    SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH=tests/contract \\
    CONTRACT_CURSOR_SECRET=<the edge's secret> \\
    .venv/bin/st run dist/openapi.json --url http://127.0.0.1:8080 \\
        -H "Authorization: Bearer <demo key>" --checks all --max-examples 40
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_support import LIVE_SECRET, LiveEdge, live_edge

from contract import openapi

HERE = Path(__file__).resolve().parent
MAX_EXAMPLES = 40
SEED = 20_260_501  # a fixed seed: the same run every time, failures reproducible


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveEdge]:
    with live_edge(tmp_path_factory.mktemp("live")) as edge:
        yield edge


def fetch(live: LiveEdge, path: str, key: str | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(live.base_url + path)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(request, timeout=10) as resp:
        return resp.status, dict(resp.headers), resp.read()


def test_the_live_edge_is_ready(live: LiveEdge):
    assert live.built, "build.py did not build content/"
    status, _, body = fetch(live, "/v1/programs?limit=1", live.key)
    assert status == 200 and json.loads(body)["data"], "the sample build is not served"
    status, headers, body = fetch(live, "/v1/me", live.key)
    account = json.loads(body)["data"]
    assert status == 200 and account["key"]["label"] == "demo"
    # /v1/me and the headers tell the same limit: the demo account's plan, as configured.
    limit, window = live.config.rate_limit(account["plan"])
    assert account["rateLimit"] == {"limit": limit, "windowSeconds": window}
    assert int(headers["RateLimit-Limit"]) == limit
    assert int(headers["RateLimit-Remaining"]) < limit


def test_the_served_document_is_the_generated_one(live: LiveEdge):
    status, headers, body = fetch(live, "/openapi.json")
    assert status == 200 and body == openapi.render()
    assert headers["Content-Type"] == "application/json"


def test_the_builds_copy_is_the_same_document(live: LiveEdge):
    copies = [p for p in (live.config.dist / "openapi.json",) if p.exists()]
    if not copies:
        pytest.skip("build.py does not write dist/openapi.json yet")
    for copy in copies:
        assert copy.read_bytes() == openapi.render()


@pytest.mark.process
@pytest.mark.slow
def test_schemathesis_finds_no_failure(live: LiveEdge, tmp_path: Path):
    schema = tmp_path / "openapi.json"
    schema.write_bytes(openapi.render())
    report = tmp_path / "report.json"
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        str(schema),
        "--url",
        live.base_url,
        "--header",
        f"Authorization: Bearer {live.key}",
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--workers",
        "1",
        "--generation-database",
        "none",
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
    ]
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "CONTRACT_CURSOR_SECRET": LIVE_SECRET,
    }
    run = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    summary = json.loads(report.read_text())
    assert summary["operations"]["tested"] == len(openapi.document()["paths"]), output
    assert summary["failures"] == [] and summary["errors"] == [], output
    assert all(p["status"] == "success" for p in summary["phases"].values()), output
    print(
        f"schemathesis: {summary['operations']['tested']} operations, "
        f"{summary['test_cases']['generated']} test cases, "
        f"{len(summary['failures'])} failures"
    )
