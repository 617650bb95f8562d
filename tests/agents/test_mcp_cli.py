"""`affdir-mcp`'s settings: the key from the environment or a file (never argv), the API's
URL, the transport; and what the command says when one cannot be used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from yarl import URL

from agents.cli import (
    DEFAULT_API_URL,
    KEY_VARIABLE,
    UsageError,
    is_loopback,
    load_settings,
    parse_api_url,
)

ROOT = Path(__file__).resolve().parents[2]
KEY = "afk_" + "Q" * 38


def test_defaults_are_stdio_to_the_local_edge_without_a_key():
    settings = load_settings([], {})
    assert (settings.api_url, settings.key, settings.transport) == (
        URL(DEFAULT_API_URL),
        None,
        "stdio",
    )
    assert settings.host == "127.0.0.1"


def test_the_key_comes_from_the_environment_or_a_file_which_wins(tmp_path):
    assert load_settings([], {KEY_VARIABLE: KEY}).key == KEY
    assert load_settings([], {KEY_VARIABLE: "  "}).key is None
    key_file = tmp_path / "key"
    other = "afk_" + "F" * 38
    key_file.write_text(f"{other}\n")
    key_file.chmod(0o600)
    assert load_settings(["--key-file", str(key_file)], {KEY_VARIABLE: KEY}).key == other


@pytest.mark.parametrize(
    "content",
    [b"", b"   \n", b"afk_with space", b"afk_\xc3\xa9t\xc3\xa9", b"k" * 5000, b"k" * 300],
    ids=["empty", "blank", "space", "not-ascii", "huge", "too-long"],
)
def test_an_unusable_key_file_is_refused_without_quoting_it(tmp_path, content):
    key_file = tmp_path / "key"
    key_file.write_bytes(content)
    key_file.chmod(0o600)
    with pytest.raises(UsageError) as caught:
        load_settings(["--key-file", str(key_file)], {})
    assert str(key_file) in str(caught.value)
    if content.strip():
        assert content.decode(errors="replace")[:20] not in str(caught.value)


def test_a_missing_key_file_is_refused(tmp_path):
    with pytest.raises(UsageError, match="cannot read --key-file"):
        load_settings(["--key-file", str(tmp_path / "absent")], {})


def test_there_is_no_flag_for_the_key_itself(capsys):
    with pytest.raises(SystemExit) as caught:
        load_settings(["--key", KEY], {})  # not an abbreviation of --key-file
    assert caught.value.code == 2
    error = capsys.readouterr().err
    assert "unrecognized arguments: --key afk_..." in error and KEY not in error


def test_a_key_given_as_the_key_file_is_not_quoted():
    with pytest.raises(UsageError) as caught:
        load_settings(["--key-file", KEY], {})
    assert KEY not in str(caught.value) and "not the key" in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/",
        "127.0.0.1:8080",
        "http://",
        "http://user:secret@127.0.0.1:8080",
        "http://127.0.0.1:8080/?x=1",
        "http://127.0.0.1:8080/#top",
    ],
)
def test_unusable_api_urls_are_refused(url):
    with pytest.raises(UsageError):
        parse_api_url(url)


def test_an_api_under_a_path_prefix_is_accepted():
    assert parse_api_url("https://api.example/affdir/").path == "/affdir/"


@pytest.mark.parametrize(
    ("flags", "wrong"),
    [
        (["--transport", "sse"], "--transport"),
        (["--port", "0"], "--port"),
        (["--timeout", "0"], "--timeout"),
        (["--timeout", "nan"], "--timeout"),
    ],
)
def test_bad_flags_exit_2(flags, wrong, capsys):
    with pytest.raises(SystemExit) as caught:
        load_settings(flags, {})
    assert caught.value.code == 2
    assert wrong in capsys.readouterr().err


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("example", False),
    ],
)
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


@pytest.mark.process
def test_the_command_says_what_is_wrong_and_exits_2():
    run = subprocess.run(
        [sys.executable, "-m", "agents", "--api-url", "nowhere"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 2
    assert run.stderr.startswith("affdir-mcp: --api-url 'nowhere'") and run.stdout == ""


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_key_file_others_may_open_is_refused_with_its_fix(tmp_path, mode):
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    key_file.chmod(mode)
    with pytest.raises(UsageError) as caught:
        load_settings(["--key-file", str(key_file)], {})
    assert f"chmod 600 {key_file}" in str(caught.value) and KEY not in str(caught.value)


def test_over_http_the_server_holds_no_key_of_its_own(tmp_path):
    with pytest.raises(UsageError, match="each client's own key"):
        load_settings(["--transport", "http"], {KEY_VARIABLE: KEY})
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    key_file.chmod(0o600)
    with pytest.raises(UsageError, match="each client's own key") as caught:
        load_settings(["--transport", "http", "--key-file", str(key_file)], {})
    assert KEY not in str(caught.value)
    # stdio keeps its key (one local client, the process that started it) or none.
    assert load_settings([], {KEY_VARIABLE: KEY}).key == KEY


@pytest.mark.parametrize(
    ("flags", "environ", "hosts"),
    [
        ([], {}, ("127.0.0.1", "localhost", "[::1]")),
        (["--host", "::1"], {}, ("127.0.0.1", "localhost", "[::1]")),
        (["--host", "192.0.2.5"], {}, ("192.0.2.5",)),
        (["--host", "2001:db8::5"], {}, ("[2001:db8::5]",)),
        (["--host", "mcp.internal"], {}, ("mcp.internal",)),
        (["--allowed-hosts", "MCP.example.com, mcp.example.com:8443"], {},
         ("mcp.example.com", "mcp.example.com:8443")),
        (["--host", "0.0.0.0"], {"AFFDIR_MCP_ALLOWED_HOSTS": "a.example,[2001:db8::1]"},
         ("a.example", "[2001:db8::1]")),
    ],
)  # fmt: skip
def test_the_allowed_hosts(flags, environ, hosts):
    assert load_settings(["--transport", "http", *flags], environ).allowed_hosts == hosts


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--host", "0.0.0.0"], "name the hosts"),
        (["--host", "::"], "name the hosts"),
        (["--allowed-hosts", "a.example/x"], "not a host name"),
        (["--allowed-hosts", "2001:db8::1"], "in brackets"),
    ],
)
def test_allowed_hosts_that_cannot_be_used(flags, message):
    with pytest.raises(UsageError, match=message):
        load_settings(["--transport", "http", *flags], {})
