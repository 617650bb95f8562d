"""The operator's commands on network connections: what each one's sync did and why, a
sync on demand, and re-encryption of every stored credential under the current secret."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
from collections.abc import Mapping
from typing import Any

import orjson

from accounts.crypto import CredentialsError, decrypt_credentials, encrypt_credentials, is_current
from accounts.keyring import Keyring
from accounts.statusmap import load_status_map
from admin import nextsteps
from admin.commands import EXIT, CommandError
from store import AccountStore, ConnectionView, NotFound, connections
from sync.connectors import CONNECTORS
from sync.lease import Lease, LeaseLost
from sync.model import Outcome, Position, format_timestamp
from sync.ports import Connection
from sync.runner import SyncSettings, sync_connection, syncing
from sync.spec import CurrencySource
from sync.storage import AccountSyncStore, connection_of, credential_opener, credential_sealer

Result = dict[str, Any]
REENCRYPT_BATCH = 500
# `network sync`'s exit status by the run's outcome: non-zero whenever it did not end ok.
SYNC_EXIT = {Outcome.OK: 0, Outcome.PARTIAL: 2, Outcome.AUTH_FAILED: 1, Outcome.ERROR: 1}


class CommandRefusedError(CommandError):
    """A connection command that cannot be carried out; the message says why, and its
    `next` what to type then."""


def check_network_known(network: str, import_only: bool) -> None:
    """A network to sync must be one with a connector: a name that is none (a typo) is
    refused with the known ones listed. `--import-only` connects any well-formed name."""
    if import_only or network in CONNECTORS:
        return
    raise CommandRefusedError(
        f"no connector for network {network!r}; the known networks are: "
        f"{', '.join(sorted(CONNECTORS))}. A network we cannot sync can be connected for "
        "file imports with --import-only",
        nextsteps.CONNECT_FOR_IMPORTS,
    )


def check_credentials(network: str, plaintext: bytes, currency: str | None) -> None:
    """The credentials a network's connector needs, present and non-blank; its currency
    where its records carry none. Messages name fields, never values."""
    connector = CONNECTORS.get(network)
    if connector is None:
        raise CommandRefusedError(
            f"no connector for network {network!r}", nextsteps.CONNECT_FOR_IMPORTS
        )
    spec = connector.spec
    try:
        values = orjson.loads(plaintext)
    except orjson.JSONDecodeError:
        raise CommandRefusedError(
            f"{network} credentials must be a JSON object with: "
            f"{', '.join(spec.required_credentials)} (docs/sync.md)"
        ) from None
    if not isinstance(values, dict):
        raise CommandRefusedError(f"{network} credentials must be a JSON object")
    missing = [
        name
        for name in spec.required_credentials
        if not isinstance(values.get(name), str) or not values[name].strip()
    ]
    if missing:
        raise CommandRefusedError(
            f"{network} credentials lack {', '.join(missing)} (text fields; docs/sync.md)"
        )
    if spec.currency_source is CurrencySource.CONNECTION and not currency:
        raise CommandRefusedError(
            f"{network} records carry no currency: give the account's with --currency, e.g. USD",
            nextsteps.GIVE_CURRENCY,
        )


def connection_json(view: ConnectionView) -> Result:
    """A connection as the admin prints it: its sync state, never its credentials."""
    return {
        "account": view.account_uid,
        "network": view.network,
        "status": view.status,
        "reasonCode": view.reason_code,
        "reason": view.reason_message,
        "connectedAt": view.connected_at,
        "lastSyncAt": view.last_sync_at,
        "lastAttemptAt": view.last_attempt_at,
        "completeThrough": view.position,
        "nextAttemptAt": view.next_attempt_at,
        "importOnly": view.import_only,
        "lastImportAt": view.last_import_at,
        "currency": view.currency,
        "leasedBy": view.lease_owner,
        "leaseExpiresAt": view.lease_expires_at,
        "accounts": view.accounts,
        "programs": view.programs,
        "transactions": view.transactions,
    }


def _line(view: ConnectionView) -> str:
    why = f" [{view.reason_code}] {view.reason_message}" if view.reason_code else ""
    return (
        f"{view.account_uid} {view.network}: {view.status}, last sync {view.last_sync_at or '-'}"
        f", {view.transactions} transactions{why}"
    )


async def network_connect_import_only(store: AccountStore, args: argparse.Namespace) -> Result:
    """Connect a network for file imports only: no credentials, never synced."""
    if args.credentials_file is not None:
        raise CommandRefusedError(
            "--import-only takes no credentials: nothing is synced", nextsteps.CONNECT_FOR_IMPORTS
        )
    if not await store.write(connections.connect_import_only, args.account, args.network):
        raise CommandRefusedError(
            f"{args.account} has connected {args.network} already; "
            "disconnect it first to keep it for imports only",
            nextsteps.DISCONNECT_FIRST,
        )
    if args.currency is not None:
        await store.write(connections.set_currency, args.account, args.network, args.currency)
    return {
        "account": args.account,
        "network": args.network,
        "importOnly": True,
        "text": f"{args.account}: {args.network} connected for file imports only (never synced)",
    }


async def network_disconnect(store: AccountStore, args: argparse.Namespace, _: Any) -> Result:
    """Disconnect a network: its credentials deleted, its sync stopped, its commissions kept."""
    try:
        await store.write(connections.disconnect, args.account, args.network)
    except NotFound:
        raise CommandRefusedError(
            f"account {args.account} has not connected {args.network}", nextsteps.LIST_CONNECTIONS
        ) from None
    return {
        "account": args.account,
        "network": args.network,
        "text": f"{args.account}: {args.network} disconnected (credentials deleted, "
        "commissions kept, sync stopped)",
    }


async def network_list(store: AccountStore, args: argparse.Namespace, _: Any) -> Result:
    views = await store.read(connections.find_all, args.account)
    shown = [connection_json(v) for v in views]
    lines = [_line(v) + (" (file imports only)" if v.import_only else "") for v in views]
    return {"connections": shown, "text": "\n".join(lines) or "no connections"}


async def network_show(store: AccountStore, args: argparse.Namespace, _: Any) -> Result:
    view = await store.read(connections.find, args.account, args.network)
    if view is None:
        raise CommandRefusedError(
            f"account {args.account} has not connected {args.network}", nextsteps.LIST_CONNECTIONS
        )
    shown = connection_json(view)
    return {**shown, "text": "\n".join(f"{k}: {'-' if v is None else v}" for k, v in shown.items())}


class _From(AccountSyncStore):
    """The store as one on-demand sync sees it: the position is `since` when asked."""

    def __init__(self, store: AccountStore, worker_id: str, since: dt.datetime | None) -> None:
        super().__init__(store, worker_id)
        self.since = since

    async def load_position(self, connection: Connection) -> Position | None:
        if self.since is not None:
            return Position(self.since)
        return await super().load_position(connection)


async def network_sync(
    store: AccountStore, args: argparse.Namespace, keyring: Keyring, base_urls: Mapping[str, str]
) -> Result:
    """Sync one connection now, under a lease like a worker's (refused while one runs it)."""
    view = await store.read(connections.find, args.account, args.network)
    if view is None:
        raise CommandRefusedError(
            f"account {args.account} has not connected {args.network}", nextsteps.LIST_CONNECTIONS
        )
    if args.network not in CONNECTORS:
        raise CommandRefusedError(
            f"no connector for {args.network}: its commissions come by file import",
            nextsteps.IMPORT_INSTEAD,
        )
    worker = f"admin:{socket.gethostname()}:{os.getpid()}"
    since = None
    if args.since is not None:
        since = dt.datetime.combine(args.since, dt.time(), dt.UTC)
    sync_store = _From(store, worker, since)
    connection = connection_of(view)
    lease = 3600.0
    if not await sync_store.claim(connection, worker, lease):
        raise CommandRefusedError(
            f"{args.account}/{args.network} is being synced by {view.lease_owner} now; "
            "try again when it is done",
            nextsteps.SHOW_CONNECTION,
        )
    settings = SyncSettings(base_urls=dict(base_urls))
    try:
        async with syncing(
            sync_store,
            credential_opener(keyring),
            load_status_map().status,
            settings,
            seal=credential_sealer(keyring),
        ) as syncer:
            # As a worker's run: its lease renewed as it goes.
            held = Lease(sync_store, connection, worker, lease, syncer.client.clock)
            report = await sync_connection(syncer, connection, lease=held)
    except LeaseLost:
        raise CommandRefusedError(
            f"{args.account}/{args.network}: another worker took the connection over; "
            "the windows committed before are kept",
            nextsteps.SHOW_CONNECTION,
        ) from None
    finally:
        await sync_store.release(connection, worker)
    counts = report.counts
    why = f" [{report.reason.code}] {report.reason.message}" if report.reason else ""
    resume = f"; resumes after {format_timestamp(report.resume_at)}" if report.resume_at else ""
    return {
        # A run that failed is the command's failure (1); one cut short (partial) is 2.
        EXIT: SYNC_EXIT[report.outcome],
        "resumeAt": None if report.resume_at is None else format_timestamp(report.resume_at),
        "account": args.account,
        "network": args.network,
        "status": report.outcome.value,
        "reasonCode": None if report.reason is None else report.reason.code,
        "reason": None if report.reason is None else report.reason.message,
        "inserted": counts.inserted,
        "updated": counts.updated,
        "unchanged": counts.unchanged,
        "refused": counts.refused,
        "windows": counts.windows_ok,
        "requests": counts.requests,
        "text": f"{args.account} {args.network}: {report.outcome.value}{why}; "
        f"{counts.inserted} new, {counts.updated} updated, {counts.unchanged} unchanged, "
        f"{counts.refused} refused, {counts.windows_ok}/{counts.windows_planned} windows{resume}",
    }


async def credentials_reencrypt(
    store: AccountStore, keyring: Keyring, batch: int = REENCRYPT_BATCH
) -> Result:
    """Seal every stored credential under the current secret, a batch per transaction.

    Resumable: a credential already under the current secret is left alone, so an
    interrupted run loses nothing and the next one carries on. A credential that no
    configured secret opens is counted and left as it is (never dropped)."""
    done = kept = unreadable = 0
    after: tuple[str, str] | None = None
    while True:
        sealed = await store.write(connections.credentials_after, after, batch)
        if not sealed:
            break
        for item in sealed:
            if is_current(keyring, item.ciphertext):
                kept += 1
                continue
            try:
                plain = decrypt_credentials(
                    keyring, item.account_uid, item.network, item.ciphertext
                )
            except CredentialsError:
                unreadable += 1
                continue
            new = encrypt_credentials(keyring, item.account_uid, item.network, plain)
            if await store.write(
                connections.replace_credentials,
                item.account_uid,
                item.network,
                item.ciphertext,
                new,
            ):
                done += 1
            else:
                kept += 1  # reconnected meanwhile: sealed under the current secret already
        after = (sealed[-1].account_uid, sealed[-1].network)
    remaining = unreadable
    return {
        "reencrypted": done,
        "alreadyCurrent": kept,
        "remainingUnderOldSecrets": remaining,
        "text": f"{done} re-encrypted, {kept} already under the current secret, "
        f"{remaining} remaining under a secret no longer configured"
        + (" (reconnect those networks)" if remaining else ""),
    }
