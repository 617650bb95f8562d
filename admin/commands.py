"""What an admin command is, for every module that declares some (admin.cli's own, and each
module in `admin.cli.TABLES`).

A command is a handler registered in its module's `Commands` table (contract.commandline)
with its words, help and arguments: `async def handler(store, args, config) -> Result`. The
store is open for it (None when it is registered with `needs_store=False`); it returns the
result to print, or raises CommandError to refuse (exit status 1, the message on stderr).
"""

from __future__ import annotations

from typing import Any

Result = dict[str, Any]
EXIT = "exit"  # a result's exit status when not 0; never printed


class CommandError(Exception):
    """The command cannot be done as asked (exit status 1)."""
