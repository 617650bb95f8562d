"""What an admin command is, for every module that declares some (admin.cli's own, and each
module in `admin.cli.TABLES`).

A command is a handler registered in its module's `Commands` table (contract.commandline)
with its words, help and arguments: `async def handler(store, args, config) -> Result`. The
store is open for it (None when it is registered with `needs_store=False`); it returns the
result to print, or raises CommandError to refuse (exit status 1, the message on stderr,
ending with the command to type next: admin.nextsteps).
"""

from __future__ import annotations

import shlex
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PROG = "affdir-admin"
Result = dict[str, Any]
EXIT = "exit"  # a result's exit status when not 0; never printed

# What a hint's fields stand for when the command run does not say (a key revoked by id
# names no account): the metavars the command table shows.
PLACEHOLDERS = {"account": "UID", "network": "ID", "file": "FILE", "id": "ID", "words": "COMMAND"}


@dataclass(frozen=True)
class Next:
    """The command to type after a refusal: `how` ("list them with") and the command after
    the program's name, whose `{account}`, `{network}`, `{file}`, `{id}` and `{words}` are
    filled from the command that was refused (else its placeholder: UID, ID, FILE)."""

    how: str  # ends with "with": the hint reads `... list them with: affdir-admin account list`
    command: str

    def __post_init__(self) -> None:
        if not self.how.endswith(" with"):
            raise ValueError(f"a hint reads `... with: {PROG} COMMAND`, not {self.how!r}")

    def text(self, known: Mapping[str, Any]) -> str:
        """`how: affdir-admin COMMAND`, its fields filled (shell-quoted) from `known`."""
        values = {}
        for _, name, _, _ in string.Formatter().parse(self.command):
            if name is None:
                continue
            given = known.get(name)
            if name == "words":
                values[name] = str(given) if given else PLACEHOLDERS[name]
            else:
                values[name] = shlex.quote(str(given)) if given else PLACEHOLDERS[name]
        return f"{self.how}: {PROG} {self.command.format_map(values)}"


class CommandError(Exception):
    """The command cannot be done as asked (exit status 1); `next` is the command that
    helps, when the refusal has one of its own."""

    def __init__(self, message: str, next: Next | None = None) -> None:
        super().__init__(message)
        self.next = next
