"""Fixtures of the build's tests: content directories in tmp_path, in-process and CLI builds.

No __init__.py here on purpose: a package named `build` would shadow build.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from buildkit import ROOT, CliRunner, Content

from catalog.site import pages as site


@pytest.fixture
def content(tmp_path: Path) -> Content:
    """An empty content directory with its programs/ folder."""
    c = Content(tmp_path)
    c.programs.mkdir(parents=True)
    return c


@pytest.fixture
def no_site() -> Iterator[None]:
    """Skip the HTML site (its own tests cover it) where only the API files matter."""
    with mock.patch.object(site, "render_site", lambda programs, base_url, reuse=None: {}):
        yield


@pytest.fixture
def run_cli() -> CliRunner:
    """Run build.py as a subprocess; returns the CompletedProcess (text)."""

    def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
        environment = {k: val for k, val in os.environ.items() if k != "GITHUB_ACTIONS"}
        environment.update(env or {})
        return subprocess.run(
            [sys.executable, str(ROOT / "build.py"), *args],
            cwd=cwd or ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run
