#!/usr/bin/env python3
"""Set up and run the project with nothing but Python 3.11 installed.

    python3 dev.py serve [edge options]   build the sample content, seed the demo account, serve
    python3 dev.py test [pytest options]  run the whole test suite
    python3 dev.py bench NAME [options]   run bench/NAME.py

Each command first makes `.venv/` and installs the project into it (again only when
pyproject.toml changed), so the same command works on a fresh machine and every day after.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".installed"


def ensure_venv() -> None:
    """Create .venv and install the project with its test and dev extras, once per pyproject."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py is what an old Python runs first
        sys.exit(f"Python 3.11 or newer is needed; this is {sys.version.split()[0]}")
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted and PYTHON.exists():
        return
    if not PYTHON.exists():
        print("dev: creating .venv", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("dev: installing the project and its test tools into .venv", flush=True)
    pip = [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "-e", f"{ROOT}[test,dev]"], check=True)
    STAMP.write_text(wanted)


def run(args: list[str]) -> int:
    return subprocess.run([str(PYTHON), *args], cwd=ROOT).returncode


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"serve", "test", "bench"}:
        print(__doc__.strip())
        return 2
    command, rest = argv[0], argv[1:]
    ensure_venv()
    if command == "test":
        return run(["-m", "pytest", *rest])
    if command == "bench":
        if not rest:
            print("usage: python3 dev.py bench NAME [options]; see bench/README.md")
            return 2
        return run([f"bench/{rest[0]}.py", *rest[1:]])
    return run(["-m", "edge.quickstart", *rest])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
