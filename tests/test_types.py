"""The packages type-check: mypy over what `[tool.mypy]` in pyproject.toml names, as part of
the test command CI runs (dev.py installs mypy with the dev extra)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.process
def test_mypy_finds_no_type_error(tmp_path: Path) -> None:
    try:
        import mypy  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("mypy is not installed (python3 dev.py test installs it)")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout
