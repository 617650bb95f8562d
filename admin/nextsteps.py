"""Every refusal of the admin CLI ends with the command to type next; here is each one's
hint, once (`no account acc_x; list them with: affdir-admin account list`).

A refusal a command raises itself names its `Next` (CommandError(message, next)); a refusal
of the store names what it is about (`StoreError.about`), and `ABOUT` gives its hint; any
other failure gets the command's `retry` (declared with the command) or, failing that, its
`--help`. Each hint is a command of the table: tests/admin/test_conventions.py parses them.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from accounts.backup import BackupExists
from admin.commands import CommandError, Next
from store import About, StoreError, StoreUnavailable

LIST_ACCOUNTS = Next("list them with", "account list")
LIST_KEYS = Next("list the keys with", "key list --account {account}")
REVOKE_FROM_STDIN = Next("pipe the whole key with", "key revoke -")
LIST_CONNECTIONS = Next("list the account's connections with", "network list --account {account}")
CONNECT_FOR_IMPORTS = Next(
    "connect it for file imports with",
    "network connect --account {account} --network {network} --import-only",
)
CONNECT_WITH_CREDENTIALS = Next(
    "connect it with",
    "network connect --account {account} --network {network} --credentials-file FILE",
)
GIVE_CURRENCY = Next(
    "give the account's currency with",
    "network connect --account {account} --network {network} --credentials-file FILE "
    "--currency USD",
)
DISCONNECT_FIRST = Next(
    "disconnect it first with", "network disconnect --account {account} --network {network}"
)
SHOW_CONNECTION = Next("see its state with", "network show --account {account} --network {network}")
IMPORT_INSTEAD = Next(
    "import its commissions with",
    "commissions import --account {account} --network {network} FILE",
)
IMPORT_AGAIN = Next(
    "check the file, then import it with",
    "commissions import --account {account} --network {network} {file}",
)
NAME_FORMAT = Next(
    "name its format with",
    "commissions import --account {account} --network {network} --format csv {file}",
)
LIST_WEBHOOKS = Next("list them with", "webhook list")
ADD_LOOPBACK = Next(
    "for a receiver on this machine, add it with",
    "webhook add --account {account} --allow-loopback URL",
)
TEST_LOOPBACK = Next(
    "for a receiver on this machine, send it with", "webhook test {id} --allow-loopback"
)
MAKE_BACKUP = Next("make one with", "backup FILE")
REPLACE_BACKUP = Next("choose another FILE, or replace it with", "backup {file} --force")
SCHEMA_STATUS = Next("see the schema versions with", "migrate --status")
CHECK_STORE = Next("check --database (EDGE_DATABASE), and the store with", "migrate --status")
HELP = Next("see what it takes with", "{words} --help")

# The hint of each kind of store refusal.
ABOUT: Mapping[About, Next] = {
    About.ACCOUNT: LIST_ACCOUNTS,
    About.KEY: LIST_KEYS,
    About.CONNECTION: LIST_CONNECTIONS,
    About.CREDENTIALS: CONNECT_WITH_CREDENTIALS,
    About.WEBHOOK: LIST_WEBHOOKS,
}


def no_account(uid: str) -> CommandError:
    """The account `uid` does not exist."""
    return CommandError(f"no account {uid}", LIST_ACCOUNTS)


def next_for(exc: BaseException, args: argparse.Namespace) -> Next:
    """What to type after `exc` ended the command `args`."""
    if isinstance(exc, CommandError) and exc.next is not None:
        return exc.next
    if isinstance(exc, BackupExists):
        return REPLACE_BACKUP
    if isinstance(exc, StoreError) and exc.about is not None:
        return ABOUT[exc.about]
    if isinstance(exc, StoreUnavailable):
        return CHECK_STORE
    if isinstance(exc, StoreError):
        return SCHEMA_STATUS
    retry = getattr(args, "retry", None)
    return retry if isinstance(retry, Next) else HELP


def known(args: argparse.Namespace) -> dict[str, Any]:
    """What a hint may take from the command that was refused."""
    values = dict(vars(args))
    values["words"] = " ".join(w for w in (args.group, getattr(args, "action", None)) if w)
    values.setdefault("id", None)
    return values


def refusal(exc: BaseException, args: argparse.Namespace) -> str:
    """The refusal's message and, after it, the command to type next."""
    return f"{exc}; {next_for(exc, args).text(known(args))}"
