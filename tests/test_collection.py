"""The test command runs every test folder (pytest skips some names unless told)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_test_folder_is_collected_by_the_test_command():
    # pytest's default norecursedirs includes "build": tests/build/ would silently not run.
    folders = sorted(
        p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and any(p.glob("test_*.py"))
    )
    assert "build" in folders
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    collected = {line.split("/")[1] for line in out.splitlines() if line.startswith("tests/")}
    assert set(folders) <= collected, set(folders) - collected
