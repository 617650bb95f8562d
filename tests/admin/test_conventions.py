"""Every admin command follows the same conventions, found by walking the command table
(a command added later is held to them too): an account is named by `--account UID`, never
by position; `--json` prints one JSON object; `--help` exits 0, a usage error exits 2, a
refusal exits 1 with the reason on stderr, ending with the command to type next
(`...; list them with: affdir-admin account list`), itself a command of the table."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from support.adminrun import run_admin

from accounts.apikeys import generate_key
from admin.cli import build_parser, main

# What names an account, whatever a handler calls it.
ACCOUNT_DESTS = {"account", "uid", "account_uid"}


def commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(words, parser) of every command, by walking the subparsers."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        yield words, parser
        return
    for name, sub in subparsers[0].choices.items():
        yield from commands(sub, (*words, name))


COMMANDS = dict(commands(build_parser()))


def test_the_table_is_walked():
    assert ("webhook", "add") in COMMANDS and ("account", "show") in COMMANDS
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_an_account_is_named_by_the_account_option(words):
    for action in COMMANDS[words]._actions:
        if action.dest in ACCOUNT_DESTS:
            assert action.option_strings == ["--account"], (words, action.dest)
            assert action.metavar == "UID", words


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_every_command_takes_json_and_help(words, capsys):
    options = {o for a in COMMANDS[words]._actions for o in a.option_strings}
    assert {"--json", "--help", "--database"} <= options, words
    with pytest.raises(SystemExit) as exit_:
        main([*words, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("usage:")


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_a_usage_error_exits_2_and_says_so(words, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*words, "--no-such-option"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: affdir-admin") and "error:" in err


def test_a_refusal_exits_1_with_what_to_do_next(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EDGE_DATABASE", str(tmp_path / "edge.sqlite3"))
    monkeypatch.setenv("EDGE_SECRET_KEY", "conventions-secret-" + "c" * 40)
    status = main(["account", "show", "--account", "acc_nobody00000000000", "--json"])
    out, err = capsys.readouterr()
    assert status == 1 and out == ""
    assert err == (
        "affdir-admin: no account acc_nobody00000000000; "
        "list them with: affdir-admin account list\n"
    )


UNKNOWN_ACCOUNT = ("--account", "acc_nobody00000000000")
UNKNOWN_ENDPOINT = "whk_0000000000000000"
# Every command's arguments for the refusals below: well-formed, naming what the empty
# store does not hold (an account, a key, a connection, an endpoint, a file).
ARGS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("account", "create"): ("--plan", "free", "--email", "not an address"),
    ("account", "list"): (),
    ("account", "set-plan"): (*UNKNOWN_ACCOUNT, "--plan", "pro"),
    ("account", "suspend"): UNKNOWN_ACCOUNT,
    ("account", "unsuspend"): UNKNOWN_ACCOUNT,
    ("account", "show"): UNKNOWN_ACCOUNT,
    ("capability", "enable"): (*UNKNOWN_ACCOUNT, "acquisition"),
    ("capability", "disable"): (*UNKNOWN_ACCOUNT, "acquisition"),
    ("key", "create"): (*UNKNOWN_ACCOUNT, "--label", "script"),
    ("key", "list"): UNKNOWN_ACCOUNT,
    ("key", "revoke"): ("key_nosuchkey",),
    ("network", "connect"): (*UNKNOWN_ACCOUNT, "--network", "nosuch", "--credentials-file", "c"),
    ("network", "list"): (),
    ("network", "disconnect"): (*UNKNOWN_ACCOUNT, "--network", "awin"),
    ("network", "show"): (*UNKNOWN_ACCOUNT, "--network", "awin"),
    ("network", "sync"): (*UNKNOWN_ACCOUNT, "--network", "awin"),
    ("network", "record-sync"): (
        *UNKNOWN_ACCOUNT,
        *("--network", "awin", "--status", "ok"),
        *("--accounts", "1", "--programs", "1", "--transactions", "1"),
    ),
    ("credentials", "reencrypt"): (),
    ("commissions", "import"): (*UNKNOWN_ACCOUNT, "--network", "awin", "export.csv"),
    ("events", "prune"): (),
    ("demo",): ("--commissions", "1"),
    ("backup",): ("store-copy.sqlite3",),
    ("restore",): ("no-such-backup.sqlite3",),
    ("migrate",): (),
    ("webhook", "add"): (*UNKNOWN_ACCOUNT, "https://hooks.example.com/affdir"),
    ("webhook", "list"): UNKNOWN_ACCOUNT,
    ("webhook", "show"): (UNKNOWN_ENDPOINT,),
    ("webhook", "disable"): (UNKNOWN_ENDPOINT,),
    ("webhook", "enable"): (UNKNOWN_ENDPOINT,),
    ("webhook", "rotate"): (UNKNOWN_ENDPOINT,),
    ("webhook", "test"): (UNKNOWN_ENDPOINT,),
    ("webhook", "replay"): (UNKNOWN_ENDPOINT, "--since", "2026-01-01"),
    ("webhook", "reencrypt"): (),
}
# What each refusal on the empty store says to type next (its first words); the commands
# left out do their work there, and are refused only by the store or the settings below.
NEXT_ON_AN_EMPTY_STORE = {
    ("account", "create"): "account create --help",
    ("account", "set-plan"): "account list",
    ("account", "suspend"): "account list",
    ("account", "unsuspend"): "account list",
    ("account", "show"): "account list",
    ("capability", "enable"): "account list",
    ("capability", "disable"): "account list",
    ("key", "create"): "account list",
    ("key", "list"): "account list",
    ("key", "revoke"): "key list",
    ("network", "connect"): "network connect",
    ("network", "disconnect"): "network list",
    ("network", "show"): "network list",
    ("network", "sync"): "network list",
    ("network", "record-sync"): "account list",
    ("commissions", "import"): "commissions import",
    ("backup",): "migrate --status",
    ("restore",): "backup",
    ("webhook", "add"): "account list",
    ("webhook", "list"): "account list",
    ("webhook", "show"): "webhook list",
    ("webhook", "disable"): "webhook list",
    ("webhook", "enable"): "webhook list",
    ("webhook", "rotate"): "webhook list",
    ("webhook", "test"): "webhook list",
    ("webhook", "replay"): "webhook list",
}
HINT = re.compile(r"with: affdir-admin (?P<command>.+)$")
SECRET = "conventions-secret-" + "c" * 40


def next_command(stderr: bytes) -> list[str]:
    """The command a refusal's last line says to type next, checked to be one of the table:
    it parses (or is a `--help`, which exits 0)."""
    err = stderr.decode()
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith("affdir-admin: "), err
    hint = HINT.search(last)
    assert hint is not None, f"no `with: affdir-admin ...` at the end of: {last}"
    words = shlex.split(hint["command"])
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            build_parser().parse_args(words)
        except SystemExit as exit_:
            assert exit_.code == 0, f"the hint is no command of the table: {hint['command']}"
    return words


def test_every_command_has_refusal_arguments():
    assert set(ARGS) == set(COMMANDS)
    assert set(NEXT_ON_AN_EMPTY_STORE) <= set(ARGS)


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_a_refusal_on_an_empty_store_says_what_to_type_next(words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"EDGE_DATABASE": str(tmp_path / "edge.sqlite3"), "EDGE_SECRET_KEY": SECRET}
    run = run_admin(env, *words, *ARGS[words])
    if words not in NEXT_ON_AN_EMPTY_STORE:
        assert run.returncode == 0, run.stderr
        return
    assert run.returncode == 1 and run.stdout == b"", run
    typed = next_command(run.stderr)
    wanted = NEXT_ON_AN_EMPTY_STORE[words].split()
    assert typed[: len(wanted)] == wanted, run.stderr


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_a_store_that_cannot_be_opened_says_what_to_type_next(words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("not a folder")
    env = {"EDGE_DATABASE": str(tmp_path / "a-file" / "edge.sqlite3"), "EDGE_SECRET_KEY": SECRET}
    run = run_admin(env, *words, *ARGS[words])
    assert run.returncode == 1, run
    next_command(run.stderr)


# The commands that read the service's secret, refused without one.
NEED_THE_SECRET = [
    ("demo",),
    ("credentials", "reencrypt"),
    ("webhook", "reencrypt"),
]


@pytest.mark.parametrize("words", NEED_THE_SECRET, ids=" ".join)
def test_no_secret_says_what_to_type_next(words, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {
        "EDGE_DATABASE": str(tmp_path / "edge.sqlite3"),
        "EDGE_SECRET_KEY": "",
        "EDGE_SECRET_FILE": str(tmp_path / "no-such-secret.key"),
    }
    run = run_admin(env, *words, *ARGS[words])
    assert run.returncode == 1, run
    assert next_command(run.stderr) == [*words, "--help"]


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (
            (
                "network",
                "connect",
                *UNKNOWN_ACCOUNT,
                "--network",
                "nosuch",
                "--credentials-file",
                "c",
            ),
            "network connect --account acc_nobody00000000000 --network nosuch --import-only",
        ),
        (("key", "revoke", generate_key().key), "key revoke -"),
        (
            ("commissions", "import", *UNKNOWN_ACCOUNT, "--network", "awin", "export.xyz"),
            "commissions import --account acc_nobody00000000000 --network awin --format csv "
            "export.xyz",
        ),
        (
            (
                "commissions",
                "import",
                *UNKNOWN_ACCOUNT,
                "--network",
                "awin",
                "--format",
                "csv",
                "missing.csv",
            ),
            "commissions import --account acc_nobody00000000000 --network awin missing.csv",
        ),
        (("webhook", "show", "not-an-id"), "webhook list"),
    ],
)
def test_a_hint_names_what_was_typed(args, wanted, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"EDGE_DATABASE": str(tmp_path / "edge.sqlite3"), "EDGE_SECRET_KEY": SECRET}
    run = run_admin(env, *args)
    assert run.returncode == 1
    assert next_command(run.stderr) == shlex.split(wanted), run.stderr


def test_a_backup_that_exists_says_how_to_replace_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"EDGE_DATABASE": str(tmp_path / "edge.sqlite3"), "EDGE_SECRET_KEY": SECRET}
    assert run_admin(env, "account", "list").returncode == 0
    assert run_admin(env, "backup", "copy.sqlite3").returncode == 0
    run = run_admin(env, "backup", "copy.sqlite3")
    assert next_command(run.stderr) == ["backup", "copy.sqlite3", "--force"]


def test_json_output_is_one_object(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EDGE_DATABASE", str(tmp_path / "edge.sqlite3"))
    monkeypatch.setenv("EDGE_SECRET_KEY", "conventions-secret-" + "c" * 40)
    assert main(["account", "create", "--plan", "free", "--json"]) == 0
    uid = orjson.loads(capsys.readouterr().out)["uid"]
    assert main(["account", "show", "--account", uid, "--json"]) == 0
    shown = orjson.loads(capsys.readouterr().out)
    assert shown["uid"] == uid and "text" not in shown
