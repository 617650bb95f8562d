"""One version everywhere: contract/version.py's number is the package's, and every console
script's `--version` prints `<prog> <version>`, installed or run from a plain checkout."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from contract.version import VERSION

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
SCRIPTS = sorted(PYPROJECT["project"]["scripts"])
BIN = Path(sys.executable).parent


def run(*argv: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_commands_are_the_scripts() -> None:
    assert SCRIPTS == [
        "affdir-admin",
        "affdir-build",
        "affdir-edge",
        "affdir-mcp",
        "affdir-sync",
        "affdir-verify",
        "affdir-webhooks",
    ]


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.process
def test_every_console_script_prints_its_name_and_version(script: str, tmp_path: Path) -> None:
    done = run(BIN / script, "--version", cwd=tmp_path)  # from anywhere, not the checkout
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{script} {VERSION}\n", "")


def test_the_package_takes_its_version_from_the_source() -> None:
    assert "version" not in PYPROJECT["project"]
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    source = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert source == {"attr": "contract.version.VERSION"}
    assert importlib.metadata.version("affdir") == VERSION  # as installed in .venv


@pytest.mark.process
def test_a_plain_checkout_reports_the_same_version() -> None:
    # -S: no site-packages, so no installed metadata to read; the source alone answers.
    done = run(sys.executable, "-S", "-c", "from contract.version import VERSION; print(VERSION)")
    assert (done.returncode, done.stdout) == (0, f"{VERSION}\n"), done.stderr
    for argv, prog in [
        (["build.py"], "build.py"),
        (["-m", "edge"], "affdir-edge"),
        (["-m", "sync"], "affdir-sync"),
        (["-m", "admin"], "affdir-admin"),
        (["-m", "catalog.linkcheck"], "affdir-verify"),
        (["-m", "agents"], "affdir-mcp"),
        (["-m", "webhooks"], "affdir-webhooks"),
    ]:
        done = run(sys.executable, *argv, "--version")
        assert (done.returncode, done.stdout) == (0, f"{prog} {VERSION}\n"), done.stderr


@pytest.mark.process
def test_the_edge_calls_itself_affdir_edge() -> None:
    done = run(BIN / "affdir-edge", "--help")
    assert done.returncode == 0
    assert done.stdout.startswith("usage: affdir-edge ")
    assert "python -m edge" not in done.stdout
