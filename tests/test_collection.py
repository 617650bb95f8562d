"""The test command runs every test folder (pytest skips some names unless told)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.collected import COLLECTED_FOLDERS

ROOT = Path(__file__).resolve().parent.parent


def collected_by_the_test_command(config: pytest.Config) -> set[str]:
    """The folders of the test modules `pytest` collects with no path given: the running
    pytest's own collection when it is that command (every xdist worker collects it all), else a
    `pytest --collect-only` of its own."""
    whole = config.args_source is pytest.Config.ArgsSource.TESTPATHS and not (
        config.getoption("ignore") or config.getoption("ignore_glob")
    )
    if whole and COLLECTED_FOLDERS in config.stash:
        return set(config.stash[COLLECTED_FOLDERS])
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return {
        Path(line.split("::")[0]).parent.as_posix()
        for line in out.splitlines()
        if line.startswith("tests/")
    }


@pytest.mark.process
def test_every_test_folder_is_collected_by_the_test_command(request: pytest.FixtureRequest):
    # A folder pytest does not recurse into (its norecursedirs: "build", "dist", ...) would
    # silently not run.
    folders = {
        p.parent.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests").rglob("test_*.py")
        if "__pycache__" not in p.parts
    }
    assert "tests/edge/account" in folders
    collected = collected_by_the_test_command(request.config)
    assert folders <= collected, folders - collected
