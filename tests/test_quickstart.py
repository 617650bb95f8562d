"""The README's run command, end to end: build, seed, serve, and the printed key works."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from edge.config import Config
from edge.quickstart import site_url

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str, key: str) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


@pytest.mark.parametrize(
    ("host", "public_url", "expected"),
    [
        ("127.0.0.1", None, "http://127.0.0.1:9000"),
        ("0.0.0.0", None, "http://127.0.0.1:9000"),
        ("::", None, "http://[::1]:9000"),
        ("::1", None, "http://[::1]:9000"),
        ("dev.example", None, "http://dev.example:9000"),
        ("0.0.0.0", "https://api.example.com", "https://api.example.com"),
    ],
)
def test_the_sample_site_is_built_for_the_address_it_is_served_at(
    host: str, public_url: str | None, expected: str
) -> None:
    config = Config(host=host, port=9000, public_url=public_url)
    assert site_url(config) == expected


@pytest.mark.process
def test_quickstart_serves_the_sample_and_the_demo_account(tmp_path):
    port = free_port()
    command = [sys.executable, "-m", "edge.quickstart", "--port", str(port)]
    command += ["--dist", str(tmp_path / "dist"), "--database", str(tmp_path / "edge.sqlite3")]
    command += ["--secret-file", str(tmp_path / "secret.key"), "--access-log", "false"]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            assert line, "quickstart exited early:\n" + "".join(lines)
            lines.append(line)
            if "Running on" in line:
                break
        output = "".join(lines)
        key = re.search(r"demo key (afk_\S+)", output).group(1)
        assert f'curl -s -H "Authorization: Bearer {key}"' in output
        base = f"http://127.0.0.1:{port}"
        status, programs = get(f"{base}/v1/programs?limit=3", key)
        assert status == 200 and len(programs["data"]) == 3
        status, commissions = get(f"{base}/v1/commissions?limit=5", key)
        assert status == 200 and len(commissions["data"]) == 5
        with urllib.request.urlopen(f"{base}/", timeout=10) as home:
            assert home.status == 200 and b"<html" in home.read()
        # The dashboard's address is printed beside the demo key, and served.
        assert f"app      {base}/app/" in output
        with urllib.request.urlopen(f"{base}/app/", timeout=10) as app:
            assert (
                app.status == 200 and "default-src 'none'" in app.headers["Content-Security-Policy"]
            )
        # The site names the address it is served at, not the build's default.
        for path in ("/llms.txt", "/sitemap.xml"):
            with urllib.request.urlopen(f"{base}{path}", timeout=10) as answer:
                text = answer.read().decode()
            assert f"{base}/" in text and "127.0.0.1:8080" not in text, path
    finally:
        process.terminate()
        process.wait(timeout=15)
        process.stdout.close()
