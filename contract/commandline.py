"""Command lines as tables: each command's arguments are declared beside the code that reads
them, and argparse is built from the table.

A program with subcommands keeps a `Commands` table; each handler is registered with the
table's `command` decorator, which names the command's words (`"key revoke"`), its help and
its arguments (`arg(...)`: the very parameters of `ArgumentParser.add_argument`).
`add_commands` turns one or more tables into argparse subparsers, in the order the groups
and commands were declared, so help, usage, errors and exit statuses are argparse's own.
A program without subcommands lists its `arg(...)`s and hands them to `add_arguments`.

Nothing here knows a program: the admin CLI, the sync worker, the edge, the build and the
MCP server each keep their own table.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

Handler = TypeVar("Handler", bound=Callable[..., Any])


@dataclass(frozen=True)
class Arg:
    """One argument: what `ArgumentParser.add_argument(*flags, **options)` is given."""

    flags: tuple[str, ...]
    options: Mapping[str, Any]


def arg(*flags: str, **options: Any) -> Arg:
    """An argument, declared with `add_argument`'s own parameters."""
    return Arg(flags, options)


def number(
    convert: Callable[[str], float],
    low: float,
    high: float,
    *,
    above: bool = False,
    unit: str = "",
) -> Callable[[str], Any]:
    """An argparse `type`: a number (`int` or `float`) from `low` to `high`, or above `low`
    with `above`, in `unit` ("hours"), refused with the range it must be in."""
    kind = "a whole number" if convert is int else "a number"
    of_unit = f" of {unit}" if unit else ""
    in_unit = f" {unit}" if unit else ""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {kind}{of_unit}") from None
        # Written so that NaN, which compares false with everything, is refused too.
        if not ((low < value if above else low <= value) and value <= high):
            wanted = f"more than {low:g} and at most" if above else f"from {low:g} to"
            raise argparse.ArgumentTypeError(f"must be {wanted} {high:g}{in_unit}")
        return value

    return parse


def add_arguments(parser: argparse.ArgumentParser, args: Iterable[Arg]) -> None:
    """Add `args` to `parser`, in order."""
    for argument in args:
        parser.add_argument(*argument.flags, **argument.options)


@dataclass(frozen=True)
class Command:
    """One command: its words (a group's name and the action, or one word), the handler the
    parsed namespace carries as `run`, its help (also its description), its arguments and
    the namespace values it sets besides (`set_defaults`)."""

    words: tuple[str, ...]
    run: Callable[..., Any]
    help: str
    args: tuple[Arg, ...]
    defaults: Mapping[str, Any]


@dataclass
class Commands:
    """A program's commands and command groups, in the order they are declared."""

    groups: dict[str, str] = field(default_factory=dict)  # a group's word -> its help
    commands: list[Command] = field(default_factory=list)
    # The first words (the groups and the lone commands), in the order help lists them.
    words: list[str] = field(default_factory=list)

    def group(self, word: str, help: str) -> None:
        """Declare a group of commands (`key` for `key create`, `key list`...)."""
        self._claim(word)
        self.groups[word] = help

    def _claim(self, word: str) -> None:
        if word in self.words:
            raise ValueError(f"{word!r} is declared twice")
        self.words.append(word)

    def command(
        self, words: str, help: str, *args: Arg, **defaults: Any
    ) -> Callable[[Handler], Handler]:
        """Register the decorated handler as the command `words` ("key revoke", or "demo"
        for a command outside any group), described by `help` and taking `args`;
        `defaults` are set on its namespace besides `run`. The handler is returned as it
        is."""
        split = tuple(words.split())
        if not 1 <= len(split) <= 2 or (len(split) == 2 and split[0] not in self.groups):
            raise ValueError(f"{words!r}: a command is one word, or a declared group and one")

        def register(handler: Handler) -> Handler:
            if len(split) == 1:
                self._claim(split[0])
            self.commands.append(Command(split, handler, help, args, defaults))
            return handler

        return register


def add_commands(
    parser: argparse.ArgumentParser,
    tables: Sequence[Commands],
    *,
    parents: Sequence[argparse.ArgumentParser] = (),
    defaults: Mapping[str, Any] | None = None,
    dests: tuple[str, str] = ("group", "action"),
    metavars: tuple[str, str] = ("COMMAND", "ACTION"),
) -> None:
    """Add every command of `tables` to `parser` as required subcommands, in declaration
    order: a group's commands under the group's own subparsers.

    Each command's parser gets `parents` and sets `run` and `defaults` (its own defaults
    override them); the words land in `dests` (the group or the lone command, then the
    action)."""
    top = parser.add_subparsers(dest=dests[0], required=True, metavar=metavars[0])

    def add(where: Any, command: Command) -> None:
        sub = where.add_parser(
            command.words[-1],
            parents=list(parents),
            help=command.help,
            description=command.help,
        )
        sub.set_defaults(run=command.run, **(defaults or {}))
        sub.set_defaults(**command.defaults)
        add_arguments(sub, command.args)

    placed: set[str] = set()
    for table in tables:
        if placed & set(table.words):
            raise ValueError(f"{sorted(placed & set(table.words))} declared by two tables")
        placed.update(table.words)
        lone = {c.words[0]: c for c in table.commands if len(c.words) == 1}
        groups: dict[str, Any] = {}  # a group's word -> its subparsers
        for word in table.words:
            if word in lone:
                add(top, lone[word])
            else:
                group = top.add_parser(word, help=table.groups[word])
                groups[word] = group.add_subparsers(
                    dest=dests[1], required=True, metavar=metavars[1]
                )
        for command in table.commands:
            if len(command.words) == 2:
                add(groups[command.words[0]], command)
