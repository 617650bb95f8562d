"""`python3 dev.py test ARGS`: the pytest arguments it runs (the tiers, the workers)."""

from __future__ import annotations

import importlib.util
import os
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
# One worker more than the cores; an idle one takes queued tests from a busy one.
PARALLEL = ("-n", str((os.cpu_count() or 1) + 1), "--dist", "worksteal")
FAST = "not slow and not postgresql and not redis and not process and not browser"


def dev_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("given", "run"),
    [
        ([], [*PARALLEL]),
        (["tests/edge", "-q"], [*PARALLEL, "tests/edge", "-q"]),
        (["--fast"], [*PARALLEL, "-m", FAST]),
        (["--fast", "tests/sync", "-x"], [*PARALLEL, "-m", FAST, "tests/sync", "-x"]),
        (["-m", "not slow", "--fast"], [*PARALLEL, "-m", f"(not slow) and {FAST}"]),
        (["-n", "0", "tests/admin"], ["-n", "0", "tests/admin"]),
        (["-n4"], ["-n4"]),
        (["-p", "no:xdist"], ["-p", "no:xdist"]),
        (["--pdb", "tests/x.py"], ["--pdb", "tests/x.py"]),
    ],
)
def test_the_test_command_runs_these_pytest_arguments(given: list[str], run: list[str]) -> None:
    assert dev_module().pytest_args(given) == run


def test_fast_leaves_out_every_tier_pytest_knows() -> None:
    # A tier named in dev.py but not registered would select nothing under --strict-markers.
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.split(":", 1)[0] for line in ini["markers"]}
    assert set(dev_module().SLOW_TIERS) <= registered


def test_the_suite_writes_bytecode_even_where_the_environment_says_not_to() -> None:
    env = {"PYTHONDONTWRITEBYTECODE": "1", "HOME": "/root"}
    dev_module().keep_bytecode(env)
    assert env == {"HOME": "/root"}
