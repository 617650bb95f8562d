"""A newcomer's first hour, from a fresh clone of the repository in a temporary folder: the
README's two commands as its first screen gives them, then the getting-started guide to its
end (the key, the first directory call, the account, the first commissions, the first
webhook), each step's output held to what the guide shows.

The clone runs on this checkout's virtual environment when it was made by `dev.py` from the
same pyproject.toml (so the clone's `dev.py` installs nothing, and `python -m` imports the
clone's code, the working directory coming first on the path); otherwise it installs its own,
as a newcomer's first run does. That first install is what every CI run is: `.ci/run` starts
from a clean clone with no `.venv/`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from standardwebhooks import Webhook
from support.docexamples import blocks, run_examples
from support.redisserver import free_port

ROOT = Path(__file__).resolve().parent.parent
GUIDE = Path("docs/guides/getting-started.md")
# The address the guide's receiver listens on, replaced by a free port here.
GUIDE_RECEIVER = "http://127.0.0.1:9000/hook"
SERVE_TIMEOUT = 600.0  # a first run may install the virtual environment

pytestmark = [pytest.mark.slow, pytest.mark.process]


def readme_commands(readme: str) -> list[str]:
    """The commands of the README's first screen: its indented code lines before the rule."""
    first_screen = readme.split("\n---\n", 1)[0]
    return [line.strip() for line in first_screen.splitlines() if line.startswith("    ")]


def matches(shown: str, printed: str) -> bool:
    """Whether `printed` is what the guide shows, `...` standing for what varies."""
    pattern = ".*?".join(re.escape(part) for part in shown.strip().split("..."))
    return re.fullmatch(pattern, printed.strip(), re.S) is not None


class Receiver:
    """A webhook endpoint on loopback that answers 204 and keeps what it received."""

    def __init__(self) -> None:
        received = self.received = []  # type: list[tuple[dict[str, str], bytes]]

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A fresh clone of the committed repository, as a newcomer gets it, on this checkout's
    virtual environment where `dev.py` would keep that one as it is."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    target = tmp_path / "affdir"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(target)], check=True)
    venv = ROOT / ".venv"
    stamp = venv / ".installed"
    wanted = hashlib.sha256((target / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text() == wanted:
        (target / ".venv").symlink_to(venv, target_is_directory=True)
    return target


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    endpoint = Receiver()
    yield endpoint
    endpoint.close()


def serve(clone: Path, command: str, port: int) -> tuple[subprocess.Popen[str], str]:
    """Start the README's serve command in the clone (on a free port); return the process
    and what it printed up to the moment it serves."""
    words = [*shlex.split(command), "--port", str(port), "--access-log", "false"]
    # A first run installing .venv: pip leaves the bytecode of its ~4,000 modules to be made
    # on import (a sixth of the install's time); what is installed is the same.
    env = {**os.environ, "PIP_NO_COMPILE": "1"}
    process = subprocess.Popen(
        words, cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + SERVE_TIMEOUT
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        assert line, "the serve command exited early:\n" + "".join(lines)
        lines.append(line)
        if "Running on" in line:
            return process, "".join(lines)
    process.kill()
    raise AssertionError("the serve command did not serve in time:\n" + "".join(lines))


def admin(clone: Path, command: str, receiver: Receiver, endpoint: str | None) -> str:
    """Run one of the guide's admin commands in the clone, its address and id made real."""
    command = command.replace(GUIDE_RECEIVER, receiver.url)
    if endpoint is not None:
        command = command.replace("whk_...", endpoint)
    run = subprocess.run(
        shlex.split(command), cwd=clone, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, (command, run.stdout, run.stderr)
    # What it printed, in the guide's terms: its receiver's address.
    return run.stdout.replace(receiver.url, GUIDE_RECEIVER)


def test_a_fresh_clone_follows_the_readme_then_the_getting_started_guide(
    clone: Path, receiver: Receiver
) -> None:
    run_command, test_command = readme_commands((clone / "README.md").read_text("utf-8"))
    assert (run_command, test_command) == ("python3 dev.py serve", "python3 dev.py test")

    port = free_port()
    process, banner = serve(clone, run_command, port)
    try:
        # The key, and the address it serves, as the banner prints them.
        key = re.search(r"demo key (afk_\S+)", banner)
        assert key is not None, banner
        api = f"http://127.0.0.1:{port}"
        assert f"{api}/v1/programs" in banner

        guide = (clone / GUIDE).read_text("utf-8")
        # Every request of the guide, in order, answers the shape the guide shows.
        assert run_examples(guide, {"API": api, "API_KEY": key[1]}) >= 4

        # The first webhook: the guide's admin commands, each printing what it shows.
        texts = [code for kind, code in blocks(guide) if kind == "text"]
        steps = [i for i, code in enumerate(texts) if code.startswith(".venv/bin/python -m admin")]
        assert len(steps) == 2, texts
        added = admin(clone, texts[steps[0]], receiver, None)
        assert matches(texts[steps[0] + 1], added), added
        endpoint, secret = re.findall(r"\b(whk_\S+|whsec_\S+)", added)[:2]
        tested = admin(clone, texts[steps[1]], receiver, endpoint)
        assert matches(texts[steps[1] + 1], tested), tested
        # It arrived, signed with the endpoint's secret.
        [(headers, body)] = receiver.received
        event = Webhook(secret).verify(body, headers)
        assert event["type"] == "webhook.test"
    finally:
        process.terminate()
        process.wait(timeout=30)
        assert process.stdout is not None
        process.stdout.close()
    # A SIGTERM to the README's command (a supervisor's stop) stops the server itself.
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()

    # The README's test command sets up and runs tests in the clone (a few of them here, in
    # one process: the whole suite, in workers, is what CI runs).
    words = [*shlex.split(test_command), "tests/test_version.py", "-q", "-n", "0"]
    words += ["-p", "no:cacheprovider"]
    run = subprocess.run(words, cwd=clone, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert re.search(r"\d+ passed", run.stdout), run.stdout[-2000:]
