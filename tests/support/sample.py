"""The real build of the sample content, for tests that need a dist/ (one way to make it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_sample(out: Path, *args: str) -> Path:
    """Run build.py over content/ into `out` (extra build.py `args` allowed); return `out`."""
    command = [sys.executable, str(ROOT / "build.py"), "--content", str(ROOT / "content")]
    subprocess.run(
        [*command, "--out", str(out), "--quiet", *args],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out
