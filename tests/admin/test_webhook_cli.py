"""`affdir-admin webhook ...`: endpoints added, listed, shown, disabled, rotated, tested and
replayed; secrets printed once and never again; bad input refused with a clear message."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.adminrun import run_admin as admin_in_process
from support.receiver import Receiver

from admin.cli import main

SECRET = "webhook-cli-secret-" + "w" * 40


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> dict[str, str]:
    values = {
        "EDGE_DATABASE": database,
        "EDGE_SECRET_KEY": SECRET,
        "EDGE_SECRET_FILE": str(tmp_path / "secret.key"),
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def account(capsys: pytest.CaptureFixture[str]) -> str:
    status, out, _ = cli(capsys, "account", "create", "--plan", "pro")
    assert status == 0
    return out.strip()


def add(capsys: pytest.CaptureFixture[str], uid: str, url: str, *extra: str) -> dict:
    status, out, err = cli(capsys, "webhook", "add", "--account", uid, url, "--json", *extra)
    assert status == 0, err
    return json.loads(out)


def test_the_secret_is_shown_once_and_stored_encrypted(env, capsys, stored_bytes):
    uid = account(capsys)
    status, out, _ = cli(
        capsys, "webhook", "add", "--account", uid, "https://hooks.example.com/affdir"
    )
    assert status == 0
    endpoint, secret, note = out.strip().split("\n")
    assert secret.startswith("whsec_") and "shown once" in note
    endpoint_id = endpoint.split()[0]
    assert endpoint_id.startswith("whk_")
    for args in (
        ("list",),
        ("list", "--account", uid),
        ("show", endpoint_id),
        ("show", endpoint_id, "--json"),
    ):
        status, out, err = cli(capsys, "webhook", *args)
        assert status == 0, err
        assert endpoint_id in out and secret not in out and secret[6:] not in out
    assert secret.encode() not in stored_bytes() and secret[6:].encode() not in stored_bytes()
    shown = json.loads(cli(capsys, "webhook", "show", endpoint_id, "--json")[1])
    assert shown["state"] == "enabled" and shown["url"] == "https://hooks.example.com/affdir"
    assert shown["recentDeliveries"] == [] and "secret" not in shown


@pytest.mark.parametrize(
    ("url", "extra", "message"),
    [
        ("http://hooks.example.com/x", (), "only https:// URLs are allowed"),
        ("https://10.0.0.7/x", (), "10.0.0.7 is a private address"),
        ("https://127.0.0.1/x", (), "127.0.0.1 is a loopback address"),
        ("https://[::1]:8443/x", (), "::1 is a loopback address"),
        ("https://169.254.169.254/latest", ("--allow-loopback",), "is a link-local address"),
        ("https://user:pw@hooks.example.com/x", (), "carries credentials"),
        ("ftp://hooks.example.com/x", ("--allow-loopback",), "only https:// and http://"),
        ("https:///x", (), "names no host"),
        ("https://hooks.example.com:99999/x", (), "not a URL"),
    ],
)
def test_add_refuses_urls_it_would_never_deliver_to(env, capsys, url, extra, message):
    uid = account(capsys)
    status, out, err = cli(capsys, "webhook", "add", "--account", uid, url, *extra)
    assert status == 1 and message in err, err
    assert out == ""
    assert cli(capsys, "webhook", "list", "--account", uid)[1].strip() == "(no webhook endpoints)"


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (("add", "--account", "acc_nobody0000000000", "https://h.example.com/"), 1, "no account"),
        (("show", "whk_0000000000000000"), 1, "no webhook endpoint whk_0000000000000000"),
        (("show", "key_123"), 1, "is not a webhook endpoint id (whk_...)"),
        (("disable", "whk_0000000000000000"), 1, "no webhook endpoint"),
        (("rotate", "whk_0000000000000000"), 1, "no webhook endpoint"),
        (("rotate", "whk_0000000000000000", "--overlap", "-1"), 2, "from 0 to 720 hours"),
        (("rotate", "whk_0000000000000000", "--overlap", "soon"), 2, "number of hours"),
        (("replay", "whk_0000000000000000"), 2, "--since"),
        (("replay", "whk_0000000000000000", "--since", "yesterday"), 2, "must be an instant"),
        (("replay", "whk_0000000000000000", "--since", "2026-03-01T00:00:00"), 2, "an offset"),
        (("test", "whk_0000000000000000"), 1, "no webhook endpoint"),
        (("list", "--account", "acc_nobody0000000000"), 1, "no account"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(env, capsys, args, status, message):
    if status == 2:
        with pytest.raises(SystemExit) as exited:
            main(["webhook", *args])
        assert exited.value.code == 2
        assert message in capsys.readouterr().err
        return
    got, _, err = cli(capsys, "webhook", *args)
    assert got == status and message in err, err


def test_disable_enable_and_rotate(env, capsys):
    uid = account(capsys)
    first = add(capsys, uid, "https://hooks.example.com/a")
    status, out, _ = cli(capsys, "webhook", "disable", first["id"], "--reason", "moving hosts")
    assert status == 0 and "disabled (moving hosts)" in out
    shown = json.loads(cli(capsys, "webhook", "show", first["id"], "--json")[1])
    assert (shown["state"], shown["disabledReason"]) == ("disabled", "moving hosts")
    assert "enabled" in cli(capsys, "webhook", "enable", first["id"])[1]

    status, out, _ = cli(capsys, "webhook", "rotate", first["id"], "--json")
    rotated = json.loads(out)
    assert status == 0 and rotated["secret"].startswith("whsec_")
    assert rotated["secret"] != first["secret"]
    assert rotated["previousSecretExpiresAt"] is not None  # 24 hours from now
    status, out, _ = cli(capsys, "webhook", "rotate", first["id"], "--overlap", "0")
    assert status == 0 and "signs no more" in out
    shown = json.loads(cli(capsys, "webhook", "show", first["id"], "--json")[1])
    assert shown["previousSecretExpiresAt"] is None
    assert rotated["secret"] not in json.dumps(shown)


def test_replay_counts_the_events_it_enqueues_again(env, capsys):
    uid = account(capsys)
    endpoint = add(capsys, uid, "https://hooks.example.com/a")
    status, out, err = cli(
        capsys, "webhook", "replay", endpoint["id"], "--since", "2026-01-01T00:00:00+01:00"
    )
    assert status == 0, err
    assert f"{endpoint['id']}: 0 events since 2025-12-31T23:00:00Z enqueued again" in out


async def run_admin(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """The command in process, in a thread: the test's loop meanwhile serves the receiver
    the command sends to."""
    done = await asyncio.to_thread(admin_in_process, env, *args)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_test_sends_a_signed_event_and_prints_the_outcome(env):
    receiver = Receiver("", answer=lambda n: (204 if n == 1 else 500, 0.0))
    runner = await receiver.start()
    try:
        status, out, err = await run_admin(env, "account", "create", "--plan", "pro")
        uid = out.strip()
        status, out, err = await run_admin(
            env, "webhook", "add", "--account", uid, receiver.url, "--allow-loopback", "--json"
        )
        assert status == 0, err
        endpoint = json.loads(out)
        receiver.secret = endpoint["secret"]

        status, out, err = await run_admin(
            env, "webhook", "test", endpoint["id"], "--allow-loopback"
        )
        assert status == 0, err
        assert "delivered, HTTP 204" in out
        (got,) = receiver.received
        assert got.verified and got.body["type"] == "webhook.test"
        assert got.body["data"] == {"endpoint": endpoint["id"]}

        status, out, err = await run_admin(
            env, "webhook", "test", endpoint["id"], "--allow-loopback"
        )
        assert status == 1 and "not delivered, HTTP 500" in out
        # Without the loopback setting the endpoint is refused before any connection.
        status, out, err = await run_admin(env, "webhook", "test", endpoint["id"])
        assert status == 1 and "only https:// URLs are allowed" in err
        assert len(receiver.received) == 2
    finally:
        await runner.cleanup()
