"""The test command runs every test folder (pytest skips some names unless told)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.process
@pytest.mark.slow
def test_every_test_folder_is_collected_by_the_test_command():
    # A folder pytest does not recurse into (its norecursedirs: "build", "dist", ...) would
    # silently not run.
    folders = {
        p.parent.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests").rglob("test_*.py")
        if "__pycache__" not in p.parts
    }
    assert "tests/edge/account" in folders
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    collected = {
        Path(line.split("::")[0]).parent.as_posix()
        for line in out.splitlines()
        if line.startswith("tests/")
    }
    assert folders <= collected, folders - collected
