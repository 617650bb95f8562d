#!/usr/bin/env python3
"""Set up and run the project with nothing but Python 3.11 installed.

    python3 dev.py serve [edge options]   build the sample content, seed the demo account, serve
    python3 dev.py test [pytest options]  run the whole test suite, on every core
    python3 dev.py test --fast [options]  the inner loop: no process, no PostgreSQL/Redis/Chromium
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
from collections.abc import MutableMapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".installed"
# The markers (pyproject.toml) of the tests `--fast` leaves out: whatever starts a process or
# a server, and the long property, load and scale tests.
SLOW_TIERS = ("slow", "postgresql", "redis", "process", "browser")


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


def pytest_args(args: list[str]) -> list[str]:
    """pytest's arguments for `dev.py test ARGS`: `--fast` becomes a marker selection (and
    with one given by -m), and the tests run in parallel workers unless -n or -p no:xdist
    says otherwise. An idle worker takes queued tests over from a busy one (worksteal), so
    the long tests, handed out first, never leave one worker running alone at the end."""
    args = list(args)
    if "--fast" in args:
        args.remove("--fast")
        fast = " and ".join(f"not {tier}" for tier in SLOW_TIERS)
        if "-m" in args[:-1]:
            at = args.index("-m") + 1
            args[at] = f"({args[at]}) and {fast}"
        else:
            args = ["-m", fast, *args]
    # A debugger needs the test in this process: --pdb and --trace run without workers.
    chosen = any(
        arg in {"-n", "--numprocesses", "no:xdist", "--pdb", "--trace"}
        or arg.startswith(("-n", "--numprocesses="))
        for arg in args
    )
    return args if chosen else ["-n", str(workers()), "--dist", "worksteal", *args]


def workers() -> int:
    """One pytest worker more than the cores: much of the suite waits (a process starting, a
    shutdown timeout, a server's answer), and the extra worker fills those waits."""
    return (os.cpu_count() or 1) + 1


def keep_bytecode(env: MutableMapping[str, str]) -> None:
    """Write bytecode even where PYTHONDONTWRITEBYTECODE is set (into `__pycache__/`, which
    git ignores): the suite starts a few hundred Python processes, and each would compile
    the project from source again (0.8 s instead of 0.45 s)."""
    env.pop("PYTHONDONTWRITEBYTECODE", None)


def run(args: list[str]) -> int:
    """The venv's Python on `args`, in the project root: in this process's place where the
    system can, so a supervisor's SIGTERM reaches the server or pytest itself (to a parent
    waiting on a child it would leave the child running), else as a child."""
    os.chdir(ROOT)
    if os.name == "posix":
        os.execv(PYTHON, [str(PYTHON), *args])
    return subprocess.run([str(PYTHON), *args]).returncode


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"serve", "test", "bench"}:
        print(__doc__.strip())
        return 2
    command, rest = argv[0], argv[1:]
    ensure_venv()
    if command == "test":
        keep_bytecode(os.environ)
        return run(["-m", "pytest", *pytest_args(rest)])
    if command == "bench":
        if not rest:
            print("usage: python3 dev.py bench NAME [options]; see bench/README.md")
            return 2
        return run([f"bench/{rest[0]}.py", *rest[1:]])
    return run(["-m", "edge.quickstart", *rest])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
