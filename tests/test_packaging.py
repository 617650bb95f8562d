"""The project installs as a package: `pip install .` into a fresh virtual environment, then
`affdir-build` builds the sample content, site included, and `affdir-edge` serves it with a
demo account `affdir-admin` seeded, from any directory.

The install takes a minute (it builds the wheel, then installs the dependencies from the
index pip is configured with), so it is marked slow; CI's `.ci/run` runs it with the rest.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
import venv
from pathlib import Path

import pytest
from setuptools import find_packages

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGES = PYPROJECT["tool"]["setuptools"]["packages"]
# What a source tree needs to build the wheel; copied, so pip's build files stay out of it.
SOURCES = ("pyproject.toml", "README.md", "templates", "docs/guides")
SOURCES += tuple(sorted({name.split(".")[0] for name in PACKAGES} - {"catalog"}))
SOURCES += ("catalog",)
SECRET = "packaging-test-secret-0123456789abcdef"


def test_every_package_is_listed() -> None:
    """pyproject.toml lists the packages (find cannot add the data packages): all of them."""
    setuptools = PYPROJECT["tool"]["setuptools"]
    found = find_packages(str(ROOT), exclude=["tests", "tests.*"])
    data = {"catalog.templates": "templates", "catalog.guides_md": "docs/guides"}
    assert sorted(setuptools["packages"]) == sorted([*found, *data])
    assert setuptools["package-dir"] == data
    assert "py-modules" not in setuptools  # a top-level `build` would shadow PyPA's build
    assert PYPROJECT["project"]["scripts"]["affdir-build"] == "catalog.cli:main"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, key: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _serve_and_read(bin_dir: Path, dist: Path, workdir: Path, env: dict[str, str]) -> None:
    """Seed the demo account with the installed admin, serve `dist` with the installed edge,
    and read the directory, a programme and the account through HTTP."""
    database = str(workdir / "accounts.sqlite")
    settings = ["--database", database]
    env = {**env, "EDGE_SECRET_KEY": SECRET}
    seeded = subprocess.run(
        [str(bin_dir / "affdir-admin"), *settings, "--json", "demo"],
        cwd=workdir, env=env, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    key = json.loads(seeded.stdout)["key"]
    port = _free_port()
    log = workdir / "edge.log"
    with log.open("wb") as stderr:
        edge = subprocess.Popen(
            [str(bin_dir / "affdir-edge"), *settings, "--dist", str(dist), "--port", str(port)],
            cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if _get(f"{base}/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert edge.poll() is None, log.read_text()
            time.sleep(0.1)
        status, body = _get(f"{base}/v1/programs?limit=2", key)
        assert status == 200, body
        programs = json.loads(body)["data"]
        assert len(programs) == 2
        status, body = _get(f"{base}/v1/programs/{programs[0]['slug']}", key)
        assert (status, json.loads(body)["data"]["slug"]) == (200, programs[0]["slug"])
        status, body = _get(f"{base}/v1/commissions?limit=1", key)
        assert status == 200 and json.loads(body)["data"], body
        assert _get(f"{base}/v1/me")[0] == 401
    finally:
        edge.terminate()
        edge.wait(timeout=30)


def _differing(left: Path, right: Path) -> list[str]:
    """Files that differ, or exist on one side only, between two trees."""
    compared = filecmp.dircmp(left, right)
    out = [*compared.left_only, *compared.right_only, *compared.diff_files]
    out += [*compared.funny_files]
    for name in compared.common_dirs:
        out += [f"{name}/{path}" for path in _differing(left / name, right / name)]
    return out


@pytest.mark.slow
@pytest.mark.process
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
    _serve_and_read(env / "bin", installed, elsewhere, clean)

    shadowed = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('build'))"],
        cwd=elsewhere,
        env=clean,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shadowed.stdout.strip() == "None"  # nothing installed as a top-level `build`
