"""Every admin command follows the same conventions, found by walking the command table
(a command added later is held to them too): an account is named by `--account UID`, never
by position; `--json` prints one JSON object; `--help` exits 0, a usage error exits 2, a
refusal exits 1 with the reason on stderr."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import orjson
import pytest

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
    assert "no account acc_nobody00000000000" in err and "account create" in err


def test_json_output_is_one_object(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EDGE_DATABASE", str(tmp_path / "edge.sqlite3"))
    monkeypatch.setenv("EDGE_SECRET_KEY", "conventions-secret-" + "c" * 40)
    assert main(["account", "create", "--plan", "free", "--json"]) == 0
    uid = orjson.loads(capsys.readouterr().out)["uid"]
    assert main(["account", "show", "--account", uid, "--json"]) == 0
    shown = orjson.loads(capsys.readouterr().out)
    assert shown["uid"] == uid and "text" not in shown
