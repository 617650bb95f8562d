"""The project installs as a package: `pip install .` into a fresh virtual environment, then
`affdir-build` builds the sample content, site included, from any directory.

The install takes a minute (it builds the wheel, then installs the dependencies from the
index pip is configured with), so it is marked slow; CI's `.ci/run` runs it with the rest.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from setuptools import find_packages

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# What a source tree needs to build the wheel; copied, so pip's build files stay out of it.
SOURCES = ("pyproject.toml", "README.md", "templates", "accounts", "admin", "catalog")
SOURCES += ("contract", "edge")


def test_every_package_is_listed() -> None:
    """pyproject.toml lists the packages (find cannot add catalog.templates): all of them."""
    setuptools = PYPROJECT["tool"]["setuptools"]
    found = find_packages(str(ROOT), include=["accounts*", "admin*", "catalog*", "contract*"])
    found += find_packages(str(ROOT), include=["edge*"])
    assert sorted(setuptools["packages"]) == sorted([*found, "catalog.templates"])
    assert setuptools["package-dir"] == {"catalog.templates": "templates"}
    assert "py-modules" not in setuptools  # a top-level `build` would shadow PyPA's build
    assert PYPROJECT["project"]["scripts"]["affdir-build"] == "catalog.cli:main"


def _differing(left: Path, right: Path) -> list[str]:
    """Files that differ, or exist on one side only, between two trees."""
    compared = filecmp.dircmp(left, right)
    out = [*compared.left_only, *compared.right_only, *compared.diff_files]
    out += [*compared.funny_files]
    for name in compared.common_dirs:
        out += [f"{name}/{path}" for path in _differing(left / name, right / name)]
    return out


@pytest.mark.slow
def test_a_fresh_install_builds_the_sample_content(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(ROOT / name, source / name)
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, str(source)], check=True, timeout=600)
    shutil.rmtree(source)  # the installed build may rely on nothing of the source tree

    elsewhere = tmp_path / "elsewhere"  # neither the checkout nor the source tree
    elsewhere.mkdir()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITHUB_ACTIONS")}
    content = ["--content", str(ROOT / "content"), "--quiet", "--no-sync"]
    installed, checkout = tmp_path / "installed", tmp_path / "checkout"
    for command in (
        [str(env / "bin" / "affdir-build"), *content, "--out", str(installed)],
        [sys.executable, str(ROOT / "build.py"), *content, "--out", str(checkout)],
    ):
        subprocess.run(command, cwd=elsewhere, env=clean, check=True, timeout=300)
    assert (installed / "index.html").is_file() and (installed / "static").is_dir()
    assert _differing(installed, checkout) == []  # the same site, byte for byte

    shadowed = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('build'))"],
        cwd=elsewhere,
        env=clean,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shadowed.stdout.strip() == "None"  # nothing installed as a top-level `build`
