"""Command tables (contract.commandline): what a table declares is the command line argparse
parses, in the declared order; every admin command of every table answers --help."""

from __future__ import annotations

import argparse

import pytest

from admin.cli import TABLES, build_parser
from contract.commandline import Commands, add_arguments, add_commands, arg, number


async def _show(args: argparse.Namespace) -> str:
    return f"show {args.name}"


async def _stop(args: argparse.Namespace) -> str:
    return "stop"


def _table() -> Commands:
    table = Commands()
    table.group("thing", "things")
    table.command("thing show", "show a thing", arg("name"), arg("--all", action="store_true"))(
        _show
    )
    table.command("stop", "stop", arg("--now", action="store_true"), when="later")(_stop)
    return table


def _parser(*tables: Commands) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="prog")
    add_commands(parser, tables, defaults={"when": "never", "kind": "plain"})
    return parser


def test_a_command_parses_its_arguments_and_carries_its_handler():
    args = _parser(_table()).parse_args(["thing", "show", "x", "--all"])
    assert (args.group, args.action, args.name, args.all) == ("thing", "show", "x", True)
    assert args.run is _show


def test_a_command_s_own_defaults_override_the_program_s():
    args = _parser(_table()).parse_args(["stop"])
    assert (args.run, args.when, args.kind, args.now) == (_stop, "later", "plain", False)


def test_help_lists_groups_and_commands_in_declared_order(capsys):
    first = Commands()
    first.command("zeta", "last letter")(_stop)
    first.group("alpha", "first letter")
    first.command("alpha one", "one")(_show)
    second = Commands()
    second.command("beta", "second letter")(_stop)
    with pytest.raises(SystemExit):
        _parser(first, second).parse_args(["--help"])
    out = capsys.readouterr().out
    assert out.index("zeta") < out.index("alpha") < out.index("beta")


@pytest.mark.parametrize(
    "argv", [[], ["thing"], ["thing", "nope"], ["nope"], ["thing", "show"], ["stop", "--later"]]
)
def test_an_incomplete_or_unknown_command_line_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        _parser(_table()).parse_args(argv)
    assert exit_.value.code == 2
    assert "usage: prog" in capsys.readouterr().err


def test_a_word_taken_twice_is_refused():
    table = _table()
    with pytest.raises(ValueError, match="declared twice"):
        table.group("stop", "again")
    with pytest.raises(ValueError, match="declared by two tables"):
        _parser(_table(), _table())


@pytest.mark.parametrize("words", ["undeclared show", "thing show more", ""])
def test_a_command_needs_a_declared_group_or_one_word(words):
    with pytest.raises(ValueError, match="a command is one word"):
        _table().command(words, "help")


def test_arguments_are_added_in_order():
    parser = argparse.ArgumentParser()
    add_arguments(parser, (arg("--a", type=int, default=1), arg("b")))
    assert vars(parser.parse_args(["x", "--a", "2"])) == {"a": 2, "b": "x"}


def _every_admin_command() -> list[tuple[str, ...]]:
    return [command.words for table in TABLES for command in table.commands]


@pytest.mark.parametrize("words", _every_admin_command(), ids=" ".join)
def test_every_admin_command_of_every_table_answers_help(words, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*words, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: affdir-admin {' '.join(words)} ")


@pytest.mark.parametrize(
    ("convert", "low", "high", "above", "text", "outcome"),
    [
        (int, 1, 10, False, "1", 1),
        (int, 1, 10, False, "10", 10),
        (int, 1, 10, False, "0", "must be from 1 to 10"),
        (int, 1, 10, False, "11", "must be from 1 to 10"),
        (int, 1, 10, False, "2.5", "must be a whole number"),
        (float, 0, 60, True, "0.5", 0.5),
        (float, 0, 60, True, "0", "must be more than 0 and at most 60"),
        (float, 0, 60, True, "nan", "must be more than 0 and at most 60"),
        (float, 0, 60, True, "inf", "must be more than 0 and at most 60"),
        (float, 0, 60, True, "soon", "must be a number"),
    ],
)
def test_a_number_type_takes_its_range_and_says_it(convert, low, high, above, text, outcome):
    parse = number(convert, low, high, above=above)
    if isinstance(outcome, str):
        with pytest.raises(argparse.ArgumentTypeError, match=outcome):
            parse(text)
    else:
        assert parse(text) == outcome
