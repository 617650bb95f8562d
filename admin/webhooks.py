"""`affdir-admin webhook ...`: an account's webhook endpoints (add, list, show, disable,
enable, rotate, test, replay), their argparse setup and their handlers.

A secret is made here, printed once by `add` and `rotate`, and stored sealed: no command
prints it again. URLs are https:// to a public host; `--allow-loopback` also takes
http:// and loopback addresses (development), as the delivery worker's own flag does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import secrets

import aiohttp

from accounts.crypto import CredentialsError, is_current
from accounts.keyring import Keyring
from accounts.settings import StoreConfig
from admin import nextsteps
from admin.commands import CommandError, Next, Result
from contract.commandline import Commands, arg, number
from contract.webhooks import REQUEST_TIMEOUT
from store import AccountStore
from store.base import format_timestamp, utc_now
from store.core import new_id
from store.webhooks import (
    DeliveryView,
    EndpointView,
    SealedSecrets,
    add_endpoint,
    disable_endpoint,
    enable_endpoint,
    get_endpoint,
    list_endpoints,
    recent_deliveries,
    replace_sealed,
    replay_since,
    rotate_secret,
    sealed_after,
    sealed_secrets,
)
from webhooks import signing
from webhooks.sender import SendSettings, describe, send
from webhooks.targets import Gate, TargetPolicy, url_refusal

# The `webhook` commands, listed in admin.cli.TABLES.
COMMANDS = Commands()
COMMANDS.group(
    "webhook",
    "webhook endpoints: add, list, show, disable, enable, rotate, test, replay, reencrypt",
)
LOOPBACK = arg(
    "--allow-loopback",
    action="store_true",
    help="allow http:// and loopback addresses (development, tests)",
)
ENDPOINT = arg("id", metavar="ID")

ENDPOINT_ID = re.compile(r"whk_[0-9a-z]{16}")
MAX_OVERLAP_HOURS = 24 * 30
SHOWN_DELIVERIES = 20
MAX_TEST_SECONDS = 60
SECRET_NOTE = "(the secret is shown once: only its ciphertext is kept)"


# --- Output -----------------------------------------------------------------------------


def endpoint_json(view: EndpointView) -> Result:
    """An endpoint as the admin prints it: never its secret."""
    return {
        "id": view.id,
        "account": view.account_uid,
        "url": view.url,
        "state": view.state,
        "createdAt": view.created_at,
        "disabledAt": view.disabled_at,
        "disabledReason": view.disabled_reason,
        "previousSecretExpiresAt": view.previous_secret_expires_at,
        "deliveries": {"pending": view.pending, "delivered": view.delivered, "failed": view.failed},
    }


def delivery_json(view: DeliveryView) -> Result:
    return {
        "event": view.event_id,
        "type": view.event_type,
        "state": view.state,
        "attempts": view.attempts,
        "enqueuedAt": view.enqueued_at,
        "lastAttemptAt": view.last_attempt_at,
        "lastStatus": view.last_status,
        "lastReason": view.last_reason,
        "nextAttemptAt": view.next_attempt_at,
        "deliveredAt": view.delivered_at,
        "failedAt": view.failed_at,
    }


def _endpoint_line(view: EndpointView) -> str:
    state = view.state if view.disabled_reason is None else f"disabled ({view.disabled_reason})"
    counts = f"{view.pending} pending, {view.delivered} delivered, {view.failed} failed"
    return f"{view.id}  {view.account_uid}  {view.url}  {state}  {counts}"


def _delivery_line(view: DeliveryView) -> str:
    last = (
        "never attempted"
        if view.last_attempt_at is None
        else f"last {view.last_attempt_at}: "
        + (
            f"HTTP {view.last_status}"
            if view.last_status is not None
            else (view.last_reason or "no answer")
        )
    )
    when = {
        "delivered": f"delivered {view.delivered_at}",
        "failed": f"given up {view.failed_at}",
        "pending": f"next {view.next_attempt_at}",
    }[view.state]
    return f"  {view.event_id}  {view.event_type:<22}  {view.attempts} attempts  {last}  {when}"


# --- Checks -----------------------------------------------------------------------------


def endpoint_id(text: str) -> str:
    """An endpoint id as given, or CommandError before the store is asked."""
    if not ENDPOINT_ID.fullmatch(text):
        raise CommandError(
            f"{text[:40]!r} is not a webhook endpoint id (whk_...)", nextsteps.LIST_WEBHOOKS
        )
    return text


def checked_url(url: str, policy: TargetPolicy, loopback: Next | None = None) -> str:
    """`url` if the policy lets it be reached, else CommandError; `loopback` is the command
    to type when --allow-loopback was not given."""
    refusal = url_refusal(url, policy)
    if refusal is not None:
        hint = "" if policy.allow_loopback else " (--allow-loopback: http:// and loopback too)"
        raise CommandError(
            f"{url[:200]}: {refusal}{hint}", None if policy.allow_loopback else loopback
        )
    return url


def _instant(text: str) -> str:
    """An instant with its offset (or Z), or a date (its UTC midnight), as stored."""
    wanted = "must be an instant like 2026-03-01T12:00:00Z (an offset or Z) or a date"
    try:
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
            moment = dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
        else:
            moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(wanted) from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(wanted)
    return format_timestamp(moment)


# --- Operations (also the tests' way to set endpoints up) ------------------------------


async def register(
    store: AccountStore,
    keyring: Keyring,
    account_uid: str,
    url: str,
    policy: TargetPolicy,
    now: dt.datetime,
) -> tuple[EndpointView, str]:
    """A new endpoint of the account with a new secret: (the endpoint, the secret)."""
    checked_url(url, policy, nextsteps.ADD_LOOPBACK)
    uid = new_id("whk")
    secret = signing.new_secret()
    sealed = signing.seal_secret(keyring, account_uid, uid, secret)
    view = await store.write(add_endpoint, account_uid, uid, url, sealed, format_timestamp(now))
    return view, secret


async def rotate(
    store: AccountStore, keyring: Keyring, uid: str, overlap: dt.timedelta, now: dt.datetime
) -> tuple[EndpointView, str]:
    """A new secret for the endpoint; the old one signs too for `overlap` (none if 0)."""
    current = await get_sealed(store, uid)
    secret = signing.new_secret()
    sealed = signing.seal_secret(keyring, current.account_uid, uid, secret)
    expires = format_timestamp(now + overlap) if overlap > dt.timedelta(0) else None
    view = await store.write(rotate_secret, uid, sealed, expires, format_timestamp(now))
    return view, secret


async def get_sealed(store: AccountStore, uid: str) -> SealedSecrets:
    # A write transaction: read connections never select the secrets.
    return await store.write(sealed_secrets, uid)


# --- Commands ---------------------------------------------------------------------------


@COMMANDS.command(
    "webhook add",
    "add an endpoint to an account; prints its secret once",
    arg("--account", required=True, metavar="UID", help="the account the endpoint receives"),
    arg("url", metavar="URL", help="https:// to a public host"),
    LOOPBACK,
)
async def webhook_add(store: AccountStore, args: argparse.Namespace, config: StoreConfig) -> Result:
    policy = TargetPolicy(allow_loopback=args.allow_loopback)
    view, secret = await register(
        store, config.keyring(create=False), args.account, args.url, policy, utc_now()
    )
    return {
        **endpoint_json(view),
        "secret": secret,
        "text": f"{view.id}  {view.url}\n{secret}\n{SECRET_NOTE}",
    }


@COMMANDS.command(
    "webhook list",
    "list endpoints, every account's or one's",
    arg("--account", metavar="UID", help="only this account's (default: every account's)"),
)
async def webhook_list(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    views = await store.read(list_endpoints, args.account)
    return {
        "endpoints": [endpoint_json(v) for v in views],
        "text": "\n".join(_endpoint_line(v) for v in views) or "(no webhook endpoints)",
    }


@COMMANDS.command(
    "webhook show",
    "an endpoint and its latest deliveries (never the secret)",
    ENDPOINT,
    arg("--limit", type=int, default=SHOWN_DELIVERIES, metavar="N"),
)
async def webhook_show(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    uid = endpoint_id(args.id)
    view = await store.read(get_endpoint, uid)
    deliveries = await store.read(recent_deliveries, uid, args.limit, store.ids)
    lines = [_endpoint_line(view), f"created {view.created_at}"]
    if view.previous_secret_expires_at is not None:
        lines.append(f"the previous secret signs too until {view.previous_secret_expires_at}")
    lines.append(f"latest deliveries ({len(deliveries)}):" if deliveries else "no deliveries yet")
    lines += [_delivery_line(d) for d in deliveries]
    return {
        **endpoint_json(view),
        "recentDeliveries": [delivery_json(d) for d in deliveries],
        "text": "\n".join(lines),
    }


@COMMANDS.command(
    "webhook disable",
    "stop delivering to an endpoint",
    ENDPOINT,
    arg("--reason", default="disabled by an operator", metavar="TEXT"),
)
async def webhook_disable(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    uid = endpoint_id(args.id)
    view = await store.write(disable_endpoint, uid, args.reason, format_timestamp(utc_now()))
    return {**endpoint_json(view), "text": f"{uid}: disabled ({view.disabled_reason})"}


@COMMANDS.command(
    "webhook enable", "deliver to a disabled endpoint again (pending first)", ENDPOINT
)
async def webhook_enable(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    uid = endpoint_id(args.id)
    view = await store.write(enable_endpoint, uid, format_timestamp(utc_now()))
    return {**endpoint_json(view), "text": f"{uid}: enabled; {view.pending} deliveries pending"}


@COMMANDS.command(
    "webhook rotate",
    "give an endpoint a new secret, printed once; the old one signs too during the overlap",
    ENDPOINT,
    arg(
        "--overlap",
        type=number(float, 0, MAX_OVERLAP_HOURS, unit="hours"),
        default=24.0,
        metavar="HOURS",
        help="how long requests carry the old secret's signature too (default 24; 0: none)",
    ),
)
async def webhook_rotate(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    uid = endpoint_id(args.id)
    overlap = dt.timedelta(hours=args.overlap)
    view, secret = await rotate(store, config.keyring(create=False), uid, overlap, utc_now())
    until = (
        f"the previous secret signs too until {view.previous_secret_expires_at}"
        if view.previous_secret_expires_at is not None
        else "the previous secret signs no more"
    )
    return {**endpoint_json(view), "secret": secret, "text": f"{secret}\n{SECRET_NOTE}\n{until}"}


@COMMANDS.command(
    "webhook test",
    "send a signed test event now and print the outcome",
    ENDPOINT,
    LOOPBACK,
    arg(
        "--timeout-seconds",
        type=number(float, 0, MAX_TEST_SECONDS, above=True, unit="seconds"),
        default=REQUEST_TIMEOUT,
        metavar="S",
        help=f"how long to wait for the answer (default {REQUEST_TIMEOUT:g})",
    ),
    not_done="nothing sent",
    maybe_done="the test event may have been sent",
)
async def webhook_test(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    uid = endpoint_id(args.id)
    view = await store.read(get_endpoint, uid)
    policy = TargetPolicy(allow_loopback=args.allow_loopback)
    checked_url(view.url, policy, nextsteps.TEST_LOOPBACK)
    now = utc_now()
    keys = signing.signing_secrets(config.keyring(create=False), await get_sealed(store, uid), now)
    msg_id = f"test_{secrets.token_hex(8)}"
    body = signing.probe_body(msg_id, uid, now)
    gate = Gate(policy)
    async with signing_session(gate) as session:
        attempt = await send(
            session,
            view.url,
            signing.headers(msg_id, body, keys, now),
            body,
            SendSettings(gate, args.timeout_seconds),
        )
    result: Result = {
        "id": uid,
        "webhookId": msg_id,
        "delivered": attempt.delivered,
        "status": attempt.status,
        "reason": attempt.reason,
        "text": f"{uid}: test event {msg_id}: "
        + ("delivered, " if attempt.delivered else "not delivered, ")
        + describe(attempt),
    }
    if not attempt.delivered:
        result["exit"] = 1
    return result


def signing_session(gate: Gate) -> aiohttp.ClientSession:
    """A session whose connector reaches only what `gate` checked, as the worker's does."""
    return aiohttp.ClientSession(connector=gate.connector(), trust_env=False)


@COMMANDS.command(
    "webhook replay",
    "enqueue again the account's events recorded since an instant",
    ENDPOINT,
    arg("--since", required=True, type=_instant, metavar="INSTANT"),
)
async def webhook_replay(store: AccountStore, args: argparse.Namespace, _: StoreConfig) -> Result:
    uid = endpoint_id(args.id)
    count = await store.write(replay_since, uid, args.since, format_timestamp(utc_now()))
    return {
        "id": uid,
        "since": args.since,
        "enqueued": count,
        "text": f"{uid}: {count} events since {args.since} enqueued again",
    }


REENCRYPT_BATCH = 200
REENCRYPT_BATCH_MAX = 10_000


async def reencrypt(store: AccountStore, keyring: Keyring, batch: int = REENCRYPT_BATCH) -> Result:
    """Seal every endpoint's secrets under the current service secret, a batch per
    transaction; resumable, and a secret no configured one opens is counted and kept."""
    done = kept = unreadable = 0
    after = 0
    while True:
        rows = await store.write(sealed_after, after, batch)
        if not rows:
            break
        for item in rows:
            sealed = item.secrets
            blobs = [b for b in (sealed.ciphertext, sealed.previous_ciphertext) if b is not None]
            if all(is_current(keyring, blob) for blob in blobs):
                kept += 1
                continue
            uid, account = sealed.endpoint_uid, sealed.account_uid
            try:
                opened = [signing.open_secret(keyring, account, uid, blob) for blob in blobs]
            except CredentialsError:
                unreadable += 1
                continue
            resealed = [signing.seal_secret(keyring, account, uid, text) for text in opened]
            previous = resealed[1] if len(resealed) > 1 else None
            now = format_timestamp(utc_now())
            if await store.write(replace_sealed, item.row, sealed, resealed[0], previous, now):
                done += 1
            else:
                kept += 1  # rotated meanwhile: sealed under the current secret already
        after = rows[-1].row
    return {
        "reencrypted": done,
        "alreadyCurrent": kept,
        "remainingUnderOldSecrets": unreadable,
        "text": f"{done} endpoints' secrets re-encrypted, {kept} already under the current "
        f"secret, {unreadable} remaining under a secret no longer configured"
        + (" (rotate those endpoints' secrets)" if unreadable else ""),
    }


@COMMANDS.command(
    "webhook reencrypt",
    "seal every endpoint's secrets under the current service secret (after a rotation)",
    arg("--batch", type=number(int, 1, REENCRYPT_BATCH_MAX), default=REENCRYPT_BATCH, metavar="N"),
    not_done="nothing re-encrypted",
    maybe_done="some endpoints are re-encrypted; run it again to finish (safe)",
)
async def webhook_reencrypt(
    store: AccountStore, args: argparse.Namespace, config: StoreConfig
) -> Result:
    return await reencrypt(store, config.keyring(create=False), args.batch)
