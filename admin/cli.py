"""`python -m admin` (also `affdir-admin`): accounts, keys, networks, imports, demo.

Works on the configured account store, with the edge's own settings: `--database` /
EDGE_DATABASE, and for the commands that encrypt credentials EDGE_SECRET_KEY,
`--secret-file` / EDGE_SECRET_FILE or `--secret-stdin` (never a secret on the command
line: `ps` and shell history show it). `--json` prints one JSON object
for scripts. Exit status: 0 done, 1 refused or failed (message on stderr), 2 bad usage,
3 `migrate --status` with migrations pending,
130 interrupted (Ctrl-C) and 143 terminated (SIGTERM), the change not made. What is
reported is what the store holds: writes have no deadline, and a stop signal rolls the
write back, or, if it came too late to, is reported as such with the result.
See docs/accounts.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime as dt
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO

import orjson

from accounts import apikeys
from accounts import backup as backup_files
from accounts.crypto import encrypt_credentials
from accounts.demo import DEMO_UID, seed_store
from accounts.importer import FORMATS as IMPORT_FORMATS
from accounts.importer import ExportError, detect_format, read_export, text_lines, zone_named
from accounts.keyring import RefusePasswordURL, RefuseSecret, SecretError, check_secret
from accounts.settings import ConfigError, StoreConfig, store_config_from_env
from accounts.statusmap import load_status_map
from admin import connections, nextsteps, webhooks
from admin.commands import EXIT, PROG, CommandError, Result
from admin.nextsteps import refusal
from contract import vocabulary as v
from contract.commandline import Commands, add_arguments, add_commands, arg
from contract.version import version_line
from store import (
    SCHEMA_VERSION,
    AccountStore,
    OutcomeUnknown,
    StoreError,
    accounts,
    database_path,
    open_store,
    ranks,
)
from store import connections as store_connections
from store.base import AccountView, KeyView, WriteWait, utc_now
from store.events import prune as prune_events
from store.events import retention_horizon
from store.schema.status import Migration, SchemaStatus, schema_status

MAX_CREDENTIALS_BYTES = 64 * 1024
# Seconds to wait for a connection, a lock or a read. Not for a write's work: an import of
# millions of rows takes minutes, and cutting it off at a deadline only loses the work
# (or, before writes reported what they did, had it committed and reported failed).
ADMIN_TIMEOUT = 60.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
MAX_SECRET_LINE = 4096  # bytes of the line `--secret-stdin` reads
SECRET_INSTEAD = (
    "set EDGE_SECRET_KEY, name the secret file with --secret-file, or pipe the secret to "
    "--secret-stdin"
)


class Interrupted(Exception):  # noqa: N818 - reads as the outcome it reports
    """A stop signal ended the command before its change was made (exit status 128 + signal)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Stopper:
    """Turns the first SIGINT (Ctrl-C) or SIGTERM into a cancellation of the running command.

    The store answers a cancelled write by rolling it back, or, when it was committing
    already, by returning its result: either way the report is true. A second signal quits
    at once (os._exit), saying the outcome is unknown.
    """

    def __init__(self, maybe_done: str = "the outcome is unknown") -> None:
        self.maybe_done = maybe_done  # what a second signal leaves untold, said as it quits
        self.signum: int | None = None
        self._task: asyncio.Task[Any] | None = None
        self._previous: dict[int, Any] = {}

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Handle the stop signals while the block runs (only the main thread gets them)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        for signum in STOP_SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        try:
            yield
        finally:
            self._restore()

    def attach(self, task: asyncio.Task[Any]) -> None:
        """Cancel `task` on a stop signal (at once if one came already)."""
        self._task = task
        if self.signum is not None:
            task.cancel()

    def _restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        # Runs in the main thread between two bytecodes, maybe inside the event loop: like
        # asyncio.run's own SIGINT handler, it only cancels the task and wakes the loop.
        self.signum = signum
        for stop in STOP_SIGNALS:
            signal.signal(stop, self._on_second_signal)
        name = signal.Signals(signum).name
        os.write(
            2,
            f"{PROG}: {name}: stopping; a write under way is rolled back unless it is "
            f"committing already (a second {name} quits at once, leaving it untold)\n".encode(),
        )
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(RuntimeError):  # the loop has just closed
                task.get_loop().call_soon_threadsafe(lambda: None)

    def _on_second_signal(self, signum: int, _frame: FrameType | None) -> None:
        # Quit now: a KeyboardInterrupt would wait for asyncio.run to finish the write
        # (which holds back cancellations until it ends) and print a traceback meanwhile.
        name = signal.Signals(signum).name
        os.write(2, f"{PROG}: {name} again: quitting; {self.maybe_done}\n".encode())
        os._exit(128 + signum)


PENDING_STATUS = 3  # `migrate --status`: migrations are pending


# --- Output -----------------------------------------------------------------------------


def key_json(key: KeyView) -> Result:
    return {
        "id": key.id,
        "account": key.account_uid,
        "prefix": key.prefix,
        "label": key.label,
        "scopes": list(key.scopes),
        "createdAt": key.created_at,
        "revokedAt": key.revoked_at,
        "state": key.state,
    }


def account_summary(account: AccountView) -> Result:
    return {
        "uid": account.uid,
        "email": account.email,
        "plan": account.plan,
        "suspended": account.suspended,
        "createdAt": account.created_at,
        "capabilities": {
            name: dataclasses.asdict(state) for name, state in account.capabilities.items()
        },
        "networks": [dataclasses.asdict(n) for n in account.networks],
    }


def human(result: Result) -> str:
    """The text form of a result: its `text` line(s), else `name: value` lines."""
    if "text" in result:
        return str(result["text"])
    return "\n".join(f"{k}: {val}" for k, val in result.items())


# --- Argument types ---------------------------------------------------------------------


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _retention_days(text: str) -> int:
    value = _positive(text)
    if value > v.EVENTS_RETENTION_DAYS_MAX:
        raise argparse.ArgumentTypeError(f"must be at most {v.EVENTS_RETENTION_DAYS_MAX}")
    return value


def _currency(text: str) -> str:
    if not re.fullmatch(v.CURRENCY_PATTERN, text):
        raise argparse.ArgumentTypeError("must be an ISO 4217 code of 3 capital letters, e.g. USD")
    return text


def _date(text: str) -> dt.date:
    wanted = "must be a date written YYYY-MM-DD"
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        raise argparse.ArgumentTypeError(wanted)
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(wanted) from None


# --- Commands ---------------------------------------------------------------------------

# Every command of this module, its arguments beside its handler below; other modules keep
# their own table, and TABLES (at the end) lists them all for the parser.
COMMANDS = Commands()
COMMANDS.group("account", "create and change accounts")
COMMANDS.group("capability", "enable or disable acquisition / monetisation")
COMMANDS.group("key", "issue, list and revoke API keys")
COMMANDS.group("network", "connect networks, record syncs")
COMMANDS.group("commissions", "import commissions")
COMMANDS.group("credentials", "stored network credentials")
COMMANDS.group("events", "the event feed")
# Every command about one account names it the same way.
ACCOUNT = arg("--account", required=True, metavar="UID", help="the account's uid (acc_...)")
NETWORK = arg("--network", required=True, metavar="ID", help="the network's id (awin, cj, ...)")


@COMMANDS.command(
    "account create",
    "create an account; prints its uid",
    arg("--email", default=None, help="e-mail address (optional)"),
    arg("--plan", required=True, choices=v.PLANS),
)
async def account_create(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    uid = await store.write(accounts.create, args.email, args.plan)
    return {"uid": uid, "email": args.email, "plan": args.plan, "text": uid}


@COMMANDS.command(
    "account set-plan",
    "change an account's plan",
    ACCOUNT,
    arg("--plan", required=True, choices=v.PLANS, help="the new plan"),
)
async def account_set_plan(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    await store.write(accounts.set_plan, args.account, args.plan)
    return {"uid": args.account, "plan": args.plan, "text": f"{args.account}: plan {args.plan}"}


@COMMANDS.command(
    "account suspend",
    "suspend an account: /v1/me answers 403, every other endpoint 401",
    ACCOUNT,
)
async def account_suspend(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    await store.write(accounts.set_suspended, args.account, True)
    return {"uid": args.account, "suspended": True, "text": f"{args.account}: suspended"}


@COMMANDS.command("account unsuspend", "lift a suspension", ACCOUNT)
async def account_unsuspend(
    store: AccountStore, args: argparse.Namespace, _: StoreConfig
) -> Result:
    await store.write(accounts.set_suspended, args.account, False)
    return {"uid": args.account, "suspended": False, "text": f"{args.account}: active"}


@COMMANDS.command("account show", "show an account (never credentials)", ACCOUNT)
async def account_show(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    account = await store.read(accounts.find, args.account)
    if account is None:
        raise nextsteps.no_account(args.account)
    summary = account_summary(account)
    return {**summary, "text": orjson.dumps(summary, option=orjson.OPT_INDENT_2).decode()}


@COMMANDS.command("account list", "list every account: uid, plan, state, e-mail")
async def account_list(store: AccountStore, _args: argparse.Namespace, _: StoreConfig) -> Result:
    rows = await store.read(accounts.list_uids)
    listed = [
        {"uid": uid, "plan": plan, "suspended": suspended, "email": email}
        for uid, plan, suspended, email in rows
    ]
    lines = [
        f"{a['uid']}  {a['plan']:<4}  {'suspended' if a['suspended'] else 'active':<9}  "
        f"{a['email'] or '-'}"
        for a in listed
    ]
    return {"accounts": listed, "text": "\n".join(lines) or "(no accounts)"}


# Decorators apply from the nearest up: `enable` is registered, and listed, first.
@COMMANDS.command(
    "capability disable",
    "disable a capability",
    ACCOUNT,
    arg("capability", choices=v.CAPABILITIES),
)
@COMMANDS.command(
    "capability enable",
    "enable a capability (sets enabledAt to now and configured to true)",
    ACCOUNT,
    arg("capability", choices=v.CAPABILITIES),
)
async def capability_set(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    enabled = args.action == "enable"
    state = await store.write(accounts.set_capability, args.account, args.capability, enabled)
    return {
        "account": args.account,
        "capability": args.capability,
        **dataclasses.asdict(state),
        "text": f"{args.account}: {args.capability} {'enabled' if enabled else 'disabled'}",
    }


@COMMANDS.command(
    "key create",
    "issue a read key for an account; prints the key once (only its hash is kept), then its id",
    ACCOUNT,
    arg(
        "--label",
        required=True,
        help="what the key is for, 1 to 100 printable characters (shown in key list)",
    ),
)
async def key_create(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    issued = apikeys.generate_key()
    key = await store.write(
        accounts.create_key, args.account, issued.key_hash, issued.prefix, args.label, ("read",)
    )
    return {
        **key_json(key),
        "key": issued.key,
        "text": f"{issued.key}\n(shown once: only its hash is kept; id {key.id})",
    }


@COMMANDS.command("key list", "list an account's keys (prefix, label, scopes, state)", ACCOUNT)
async def key_list(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    keys = await store.read(accounts.list_keys, args.account)
    rows = [
        f"{k.id}  {k.prefix}  {k.state:<7}  {k.created_at}  {' '.join(k.scopes)}  {k.label}"
        for k in keys
    ]
    return {"keys": [key_json(k) for k in keys], "text": "\n".join(rows) or "(no keys)"}


# A whole key inside what was pasted, not glued to other letters or digits.
_WHOLE_KEY = re.compile(rf"(?<![0-9A-Za-z_]){apikeys.KEY_PATTERN}(?![0-9A-Za-z])")
# What the store may be asked for as it is: a key id, or anything no longer than a prefix.
_ID_OR_PREFIX = re.compile(rf"key_[0-9a-z]{{1,32}}|.{{1,{apikeys.PREFIX_LENGTH}}}")


MAX_KEY_INPUT = 4096  # bytes of standard input `key revoke -` reads: a key, maybe pasted


def _read_key_input() -> str:
    data = sys.stdin.buffer.read(MAX_KEY_INPUT + 1)
    if len(data) > MAX_KEY_INPUT:
        raise CommandError(f"standard input holds more than {MAX_KEY_INPUT} bytes, not one key")
    return data.decode("utf-8", errors="replace")


@COMMANDS.command(
    "key revoke",
    "revoke a key by its id or prefix (as `key list` shows them), or a whole key read "
    "from stdin with `-` (effective within the edge's key cache)",
    arg("prefix_or_id", metavar="ID_OR_PREFIX|-"),
)
async def key_revoke(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    from_stdin = args.prefix_or_id == "-"
    given = (await asyncio.to_thread(_read_key_input) if from_stdin else args.prefix_or_id).strip()
    if apikeys.is_well_formed(apikeys.MARKER + given):
        given = apikeys.MARKER + given  # a whole key pasted without its marker
    wholes = list(dict.fromkeys(_WHOLE_KEY.findall(given)))  # the same key twice is one
    if wholes and not from_stdin:
        # A whole key on the command line shows in `ps` and shell history: refused, and
        # never written back out (not even its prefix: the message is safe to paste).
        raise CommandError(
            "a whole key is refused on the command line (ps and shell history show it): "
            "revoke it by its id or prefix (`key list` shows both), or the whole key from "
            "standard input",
            nextsteps.REVOKE_FROM_STDIN,
        )
    if len(wholes) > 1:
        raise CommandError("give one key to revoke, not several")
    if wholes:
        # A whole key (a leaked one, from a secret scanner, say; pasted as it came, with
        # "Bearer " or spaces): found by its hash, never written back out, not in an error.
        shown = apikeys.prefix_of(wholes[0]) + "..."
        record = await store.read(accounts.lookup_key, apikeys.key_hash(wholes[0]))
        if record is None:
            raise CommandError(
                f"no active key is {shown} (unknown, or revoked already)", nextsteps.LIST_KEYS
            )
        given = record.key.id
    elif not _ID_OR_PREFIX.fullmatch(given):
        # Neither a key id nor a prefix: maybe part of a secret (a key without its marker),
        # so never echoed past a prefix's length.
        # A prefix's length of it at most, and without the marker only what a prefix shows
        # after it: the rest of a key is its secret.
        shown = given[
            : apikeys.PREFIX_LENGTH - (0 if apikeys.MARKER in given else len(apikeys.MARKER))
        ]
        raise CommandError(
            f"{shown}... is not a key id (key_...) or a prefix "
            f"({apikeys.PREFIX_LENGTH} characters)"
            + (" nor a whole key" if from_stdin else "; a whole key goes to `key revoke -`"),
            nextsteps.LIST_KEYS,
        )
    key = await store.write(accounts.revoke_key, given)
    return {
        **key_json(key),
        # The edge's own --key-cache-seconds bounds it; this process cannot know that value.
        "text": f"{key.id} ({key.prefix}) revoked at {key.revoked_at}; each edge refuses it "
        "within its --key-cache-seconds (5 s unless set otherwise)",
    }


def read_credentials(source: str) -> bytes:
    """Credentials from a file or stdin (`-`); never from the command line."""
    data = (
        sys.stdin.buffer.read(MAX_CREDENTIALS_BYTES + 1)
        if source == "-"
        else Path(source).read_bytes()
    )
    if not data.strip():
        raise CommandError("the credentials are empty")
    if len(data) > MAX_CREDENTIALS_BYTES:
        raise CommandError(f"the credentials are larger than {MAX_CREDENTIALS_BYTES} bytes")
    return data


@COMMANDS.command(
    "network connect",
    "connect a network; credentials are read from a file or stdin (-), never argv, "
    "and stored encrypted",
    ACCOUNT,
    NETWORK,
    arg("--credentials-file", metavar="FILE|-", help="required unless --import-only"),
    arg(
        "--currency",
        type=_currency,
        help="the account's currency at the network, for networks whose records carry none (cj)",
    ),
    arg(
        "--import-only",
        action="store_true",
        help="a network without a connector: its commissions come by file import, never synced",
    ),
    retry=nextsteps.CONNECT_WITH_CREDENTIALS,
)
async def network_connect(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    connections.check_network_known(args.network, args.import_only)
    if args.import_only:
        return await connections.network_connect_import_only(store, args)
    if args.credentials_file is None:
        raise CommandError("--credentials-file is required", nextsteps.CONNECT_WITH_CREDENTIALS)
    plaintext = await asyncio.to_thread(read_credentials, args.credentials_file)
    connections.check_credentials(args.network, plaintext, args.currency)
    # Never a new secret here: one made up by a typo in the path or another working
    # directory would encrypt credentials the edge cannot open.
    sealed = encrypt_credentials(
        config.keyring(create=False), args.account, args.network, plaintext
    )
    await store.write(store_connections.connect, args.account, args.network, sealed)
    if args.currency is not None:
        await store.write(store_connections.set_currency, args.account, args.network, args.currency)
    return {
        "account": args.account,
        "network": args.network,
        "text": f"{args.account}: {args.network} connected (credentials encrypted)",
    }


@COMMANDS.command(
    "network list",
    "list connections and how their last sync ended",
    arg("--account", metavar="UID", help="one account's only"),
)
async def network_list(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    return await connections.network_list(store, args, config)


@COMMANDS.command(
    "network disconnect",
    "disconnect a network: its credentials deleted and its sync stopped; its commissions "
    "stay (a connection.disconnected event)",
    ACCOUNT,
    NETWORK,
)
async def network_disconnect(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    return await connections.network_disconnect(store, args, config)


@COMMANDS.command(
    "network show",
    "a connection's sync state, reason and counts (never credentials)",
    ACCOUNT,
    NETWORK,
)
async def network_show(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    return await connections.network_show(store, args, config)


@COMMANDS.command(
    "network sync",
    "sync a connection now (refused while a worker holds it); the outcome is recorded",
    ACCOUNT,
    NETWORK,
    arg(
        "--since",
        type=_date,
        metavar="YYYY-MM-DD",
        help="re-read the network from this date (default: from the committed position)",
    ),
    arg(
        "--base-url",
        action="append",
        default=[],
        metavar="NETWORK=URL",
        help="the network's API base URL (a proxy, a sandbox)",
    ),
    not_done="nothing synced",
    maybe_done="windows committed before the stop are kept; run it again to finish (safe)",
)
async def network_sync(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    urls = {}
    for pair in args.base_url:
        network, sep, url = pair.partition("=")
        if not sep or not url.startswith(("http://", "https://")):
            raise CommandError(f"--base-url expects NETWORK=URL, not {pair!r}")
        urls[network] = url
    return await connections.network_sync(store, args, config.keyring(create=False), urls)


@COMMANDS.command(
    "network record-sync",
    "record a synchronisation outcome",
    ACCOUNT,
    NETWORK,
    arg("--status", required=True, choices=[s for s in v.NETWORK_SYNC_STATUSES if s != "never"]),
    *(
        arg(f"--{name}", required=True, type=_count, metavar="N")
        for name in ("accounts", "programs", "transactions")
    ),
)
async def network_record_sync(
    store: AccountStore, args: argparse.Namespace, _: StoreConfig
) -> Result:
    await store.write(
        store_connections.record_sync,
        args.account,
        args.network,
        args.status,
        accounts=args.accounts,
        programs=args.programs,
        transactions=args.transactions,
    )
    return {
        "account": args.account,
        "network": args.network,
        "status": args.status,
        "text": f"{args.account}: {args.network} last sync {args.status}",
    }


@COMMANDS.command(
    "credentials reencrypt",
    "seal every stored credential under the current secret (resumable; after a rotation)",
    arg("--batch", type=_positive, default=connections.REENCRYPT_BATCH, metavar="N"),
    not_done="nothing re-encrypted",
    maybe_done="some batches are re-encrypted; run it again to finish (safe)",
)
async def credentials_reencrypt(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    return await connections.credentials_reencrypt(store, config.keyring(create=False), args.batch)


@COMMANDS.command(
    "commissions import",
    "import a CSV or JSON Lines export, or Amazon Associates' earnings report (all rows or "
    "none; re-importing updates rows)",
    ACCOUNT,
    NETWORK,
    arg("--format", choices=IMPORT_FORMATS, help="default: from the file name"),
    arg(
        "--timezone",
        metavar="ZONE",
        help="IANA zone of timestamps without a UTC offset (default: refuse them)",
    ),
    arg("file", metavar="FILE|-"),
    not_done="nothing imported",
    maybe_done="the import may or may not have been applied; running it again is safe "
    "(rows are upserted by externalId)",
    retry=nextsteps.IMPORT_AGAIN,
)
async def commissions_import(
    store: AccountStore, args: argparse.Namespace, _: StoreConfig
) -> Result:
    source = "<stdin>" if args.file == "-" else args.file
    try:
        fmt = args.format or detect_format(args.file)
    except ValueError as exc:
        raise CommandError(str(exc), nextsteps.NAME_FORMAT) from None
    with contextlib.ExitStack() as files:
        if args.file == "-":
            stream: BinaryIO = sys.stdin.buffer
        else:
            stream = files.enter_context(await asyncio.to_thread(Path(args.file).open, "rb"))
        zone = zone_named(args.timezone)
        account = await store.read(accounts.find, args.account)
        if account is None:
            raise nextsteps.no_account(args.account)
        if args.network not in {n.network for n in account.networks}:
            # Commissions come from the networks an account connected (docs/spec/api-spec.md);
            # a typo in --network would otherwise make a network of its own that /v1/me
            # never lists.
            raise CommandError(
                f"{args.account} has not connected {args.network}: connect it first "
                "(network connect), or check --network",
                nextsteps.LIST_CONNECTIONS,
            )
        # A report whose rows name no currency takes the connection's.
        connection = await store.read(store_connections.find, args.account, args.network)
        currency = None if connection is None else connection.currency
        # Read, checked and written a chunk at a time inside the store's one transaction:
        # a problem anywhere (ExportError once the file is read) rolls it all back.
        chunks = read_export(
            text_lines(stream, fmt),
            fmt,
            args.network,
            load_status_map(),
            zone,
            currency=currency,
        )
        result = await store.write(
            store_connections.import_commissions, args.account, args.network, chunks
        )
    # The imported months' rankings, so that their summaries read them at once; a failure
    # here leaves them to the sync worker, and the summaries exact meanwhile.
    with contextlib.suppress(StoreError):
        await ranks.refresh(store, account_uid=args.account)
    rows = result.inserted + result.updated + result.unchanged
    return {
        "file": source,
        "rows": rows,
        **dataclasses.asdict(result),
        "text": f"{source}: {rows} rows: {result.inserted} new, {result.updated} updated, "
        f"{result.unchanged} unchanged",
    }


# A batch a transaction: a stop leaves some deleted either way, and running it again is safe.
EVENTS_PARTLY = "some events may be deleted; run it again to finish (safe)"


@COMMANDS.command(
    "events prune",
    "delete the events older than the retention (what the sync worker does every hour)",
    arg(
        "--retention-days",
        type=_retention_days,
        metavar="DAYS",
        help="default: --events-retention-days of the edge (EDGE_EVENTS_RETENTION_DAYS)",
    ),
    not_done=EVENTS_PARTLY,
    maybe_done=EVENTS_PARTLY,
)
async def events_prune(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    days = args.retention_days or config.events_retention_days
    horizon = retention_horizon(utc_now(), days)
    deleted = await prune_events(store, horizon)
    return {
        "deleted": deleted,
        "before": horizon,
        "text": f"{deleted} events older than {days} days (before {horizon}) deleted",
    }


# Several transactions: a stop leaves it partly done either way.
DEMO_PARTLY = "the demo account may be partly seeded; run demo again"


@COMMANDS.command(
    "demo",
    "seed the demo account and print a new key for it",
    arg("--commissions", type=_count, default=5000, metavar="N"),
    not_done=DEMO_PARTLY,
    maybe_done=DEMO_PARTLY,
)
async def demo(store: AccountStore, args: argparse.Namespace, config: StoreConfig) -> Result:
    key = await seed_store(store, config.resolved_secret(create=False), args.commissions)
    return {
        "uid": DEMO_UID,
        "commissions": args.commissions,
        "key": key,
        # Re-seeding adds and updates rows, never deletes: a larger earlier seed stays.
        "text": f"demo account {DEMO_UID} ready: {args.commissions} commissions written\n{key}",
    }


def _sqlite_file(config: StoreConfig, command: str) -> Path:
    """The SQLite file of the configured store; PostgreSQL has its own tools for this."""
    if "://" in config.database and not config.database.startswith("sqlite:"):
        raise CommandError(
            f"{command} handles the embedded SQLite store; for PostgreSQL use pg_dump -Fc and "
            "pg_restore (docs/deploy.md, 'Backing up and restoring the account store')"
        )
    return database_path(config.database)


def _backup_result(info: backup_files.BackupInfo, verb: str) -> Result:
    return {
        "file": str(info.path),
        "schemaVersion": info.schema_version,
        "accounts": info.accounts,
        "commissions": info.commissions,
        "bytes": info.bytes,
        "text": f"{verb} {info.path}: schema {info.schema_version}, {info.accounts} accounts, "
        f"{info.commissions} commissions",
    }


@COMMANDS.command(
    "backup",
    "copy the SQLite account store to FILE while it is in use (SQLite's online backup)",
    arg("file", metavar="FILE"),
    arg("--force", action="store_true", help="replace FILE if it exists"),
    needs_store=False,
    not_done="no backup written",
    maybe_done="no backup written",
    retry=nextsteps.CHECK_STORE,
)
async def backup(_: AccountStore | None, args: argparse.Namespace, config: StoreConfig) -> Result:
    database = _sqlite_file(config, "backup")
    target = Path(args.file)
    info = await asyncio.to_thread(backup_files.backup, database, target, overwrite=args.force)
    return _backup_result(info, "backed up to")


@COMMANDS.command(
    "restore",
    "replace the SQLite account store's contents with a backup FILE, in one step",
    arg("file", metavar="FILE"),
    needs_store=False,
    not_done="nothing restored",
    maybe_done="the restore is all or nothing: check with `account show`",
    retry=nextsteps.MAKE_BACKUP,
)
async def restore(_: AccountStore | None, args: argparse.Namespace, config: StoreConfig) -> Result:
    database = _sqlite_file(config, "restore")
    info = await asyncio.to_thread(
        backup_files.restore, Path(args.file), database, latest_schema=SCHEMA_VERSION
    )
    # Opening the store brings an older backup's schema up to date.
    store = await open_store(config.database, writable=True, readers=1, timeout=ADMIN_TIMEOUT)
    await store.close()
    return _backup_result(info, "restored from")


# --- Parser -----------------------------------------------------------------------------


def _migration(m: Migration) -> dict[str, Any]:
    return {"version": m.version, "summary": m.summary}


def _schema_text(status: SchemaStatus, verb: str, migrations: Sequence[Migration]) -> str:
    lines = [f"schema version {status.current}, latest {status.latest}"]
    lines += [f"{verb} {m.version}: {m.summary}" for m in migrations]
    return "\n".join(lines)


@COMMANDS.command(
    "migrate",
    "apply the account store's pending schema migrations, printing each one applied",
    arg(
        "--status",
        action="store_true",
        help="apply nothing: print the current and latest version and each pending "
        f"migration; exit status {PENDING_STATUS} when any is pending",
    ),
    needs_store=False,
    not_done="no migration applied",
    maybe_done="each migration is applied whole or not at all: check with `migrate --status`",
)
async def migrate(_: AccountStore | None, args: argparse.Namespace, config: StoreConfig) -> Result:
    """Apply the pending schema migrations and say which; `--status`: only say which are
    pending (exit status PENDING_STATUS when any is)."""
    timeout = max(config.store_timeout, ADMIN_TIMEOUT)
    before = await schema_status(config.database, timeout=timeout)
    if before.newer_than_code:
        raise CommandError(
            f"the database schema is version {before.current}, newer than this code "
            f"({before.latest}); run a newer affdir-admin",
            nextsteps.SCHEMA_STATUS,
        )
    if args.status:
        pending = before.pending
        result: Result = {
            "version": before.current,
            "latest": before.latest,
            "pending": [_migration(m) for m in pending],
            "text": _schema_text(before, "pending", pending),
        }
        if pending:
            result[EXIT] = PENDING_STATUS
        return result
    if before.pending:
        # Opening the store writable applies the missing migrations, each in one
        # transaction with its version row (and, on PostgreSQL, under the migration lock).
        store = await open_store(config.database, writable=True, readers=1, timeout=timeout)
        try:
            # A step may leave months to rank (store.ranks): done here, not by the first
            # summaries.
            await ranks.refresh(store)
        finally:
            await store.close()
    after = await schema_status(config.database, timeout=timeout)
    applied = before.migrations[before.current : after.current]
    return {
        "version": after.current,
        "latest": after.latest,
        "applied": [_migration(m) for m in applied],
        "text": _schema_text(after, "applied", applied),
    }


# Accepted before or after the command; SUPPRESS keeps a later default from erasing an
# earlier value.
COMMON_OPTIONS = (
    arg(
        "--database",
        action=RefusePasswordURL,
        env="EDGE_DATABASE",
        default=argparse.SUPPRESS,
        help="account store (EDGE_DATABASE; a URL with a password: there only)",
    ),
    arg("--secret-key", action=RefuseSecret, instead=SECRET_INSTEAD),
    arg("--secret-file", default=argparse.SUPPRESS, help="secret file (EDGE_SECRET_FILE)"),
    arg(
        "--secret-stdin",
        action="store_true",
        default=argparse.SUPPRESS,
        help="read the secret from the first line of standard input (EDGE_SECRET_KEY)",
    ),
    arg("--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object"),
)
# Every module's table of commands, in the order help lists them.
TABLES: tuple[Commands, ...] = (COMMANDS, webhooks.COMMANDS)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    add_arguments(common, COMMON_OPTIONS)
    parser = argparse.ArgumentParser(
        prog=PROG,
        parents=[common],
        description="Administer the account store: accounts, API keys, networks, commissions.",
        epilog="Settings come from EDGE_* variables like the edge's; flags override them.",
    )
    parser.add_argument("--version", action="version", version=version_line(PROG))
    # What is true of a stopped command unless it says otherwise (each makes its change in
    # one transaction).
    add_commands(
        parser,
        TABLES,
        parents=[common],
        defaults={
            "not_done": "nothing changed",
            "maybe_done": "the change may or may not have been made; check before running it again",
        },
    )
    return parser


def _reads_stdin(args: argparse.Namespace) -> bool:
    """Whether the command itself reads standard input (a file or key given as `-`)."""
    return "-" in (
        getattr(args, "file", None),
        getattr(args, "credentials_file", None),
        getattr(args, "prefix_or_id", None),
    )


def read_secret_stdin() -> str:
    """The secret on the first line of standard input (`--secret-stdin`), never quoted."""
    line = sys.stdin.buffer.readline(MAX_SECRET_LINE + 1)
    if len(line) > MAX_SECRET_LINE:
        raise CommandError(f"--secret-stdin: the first line is longer than {MAX_SECRET_LINE} bytes")
    try:
        secret = line.decode("utf-8").strip()
        check_secret(secret, "--secret-stdin: the secret")
    except UnicodeDecodeError:
        raise CommandError("--secret-stdin: the secret is not UTF-8 text") from None
    except SecretError as exc:
        raise CommandError(str(exc)) from None
    return secret


def load_config(args: argparse.Namespace, environ: dict[str, str] | None = None) -> StoreConfig:
    config = store_config_from_env(os.environ if environ is None else environ)
    changes: dict[str, Any] = {}
    if getattr(args, "database", None):
        changes["database"] = args.database
    if getattr(args, "secret_file", None):
        changes["secret_file"] = Path(args.secret_file)
    if getattr(args, "secret_stdin", False):
        if _reads_stdin(args):
            raise CommandError(
                "--secret-stdin and a `-` argument both want standard input: give the secret "
                "with EDGE_SECRET_KEY or --secret-file instead"
            )
        changes["secret_key"] = read_secret_stdin()
    return dataclasses.replace(config, **changes)


async def run(
    args: argparse.Namespace, config: StoreConfig, stopper: Stopper | None = None
) -> Result:
    """Run the command on the store; Interrupted when a stop signal came before its change."""
    task = asyncio.current_task()
    assert task is not None
    if stopper is not None:
        stopper.attach(task)
    try:
        if not getattr(args, "needs_store", True):
            return await args.run(None, args, config)
        # No write_timeout: a write runs until it commits or fails (see ADMIN_TIMEOUT).
        store = await open_store(
            config.database,
            writable=True,
            readers=1,
            timeout=max(config.store_timeout, ADMIN_TIMEOUT),
        )
        try:
            result = await args.run(store, args, config)
        except BaseException:
            await store.close()
            raise
        await close_keeping_result(store)
        return result
    except asyncio.CancelledError:
        if stopper is None or stopper.signum is None:
            raise
        task.uncancel()
        raise Interrupted(stopper.signum) from None


async def close_keeping_result(store: AccountStore) -> None:
    """Close the store after the command is done: a stop signal now comes too late to undo
    anything, so it must not turn the report into a failure."""
    wait = WriteWait(None)
    closing = asyncio.ensure_future(store.close())
    await wait.outlast(closing)
    wait.withdraw_cancellations()
    if not closing.cancelled() and closing.exception() is not None:
        print(f"{PROG}: warning: closing the store: {closing.exception()}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    as_json = getattr(args, "json", False)
    stopper = Stopper(getattr(args, "maybe_done", "the outcome is unknown"))
    try:
        with stopper.installed():
            config = load_config(args)
            result = asyncio.run(run(args, config, stopper))
    except Interrupted as stopped:
        print(f"{PROG}: interrupted; {args.not_done}", file=sys.stderr)
        return 128 + stopped.signum
    except KeyboardInterrupt:  # a second Ctrl-C: quit without waiting for the store
        print(f"{PROG}: interrupted; {args.maybe_done}", file=sys.stderr)
        return 128 + signal.SIGINT
    except ExportError as failed:
        source = "<stdin>" if args.file == "-" else args.file
        for line in failed.render(source):
            print(line, file=sys.stderr)
        print(f"{PROG}: {refusal(CommandError('nothing imported'), args)}", file=sys.stderr)
        return 1
    except OutcomeUnknown as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        print(f"{PROG}: {args.maybe_done}", file=sys.stderr)
        return 1
    except (
        CommandError,
        StoreError,
        ConfigError,
        backup_files.BackupError,
        ValueError,
        OSError,
    ) as exc:
        if args.run is commissions_import:  # a failed import never leaves part of the file
            print(f"{PROG}: {exc}", file=sys.stderr)
            exc = CommandError(args.not_done, nextsteps.next_for(exc, args))
        print(f"{PROG}: {refusal(exc, args)}", file=sys.stderr)
        return 1
    if stopper.signum is not None:
        name = signal.Signals(stopper.signum).name
        print(f"{PROG}: the {name} came too late to stop it: done", file=sys.stderr)
    status = int(result.pop(EXIT, 0))
    if as_json:
        print(orjson.dumps({k: val for k, val in result.items() if k != "text"}).decode())
    else:
        print(human(result))
    return status


if __name__ == "__main__":
    sys.exit(main())
