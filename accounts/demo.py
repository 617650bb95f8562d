"""The demo account: a pro account, a few connected networks in different sync states and
about 5,000 commissions over the last 18 months in several currencies.

The demo connections can never reach a network: their stored credentials are a JSON object
holding only `DEMO_CREDENTIAL`, a member no connector asks for, so a sync worker pointed at
the demo database records each one `auth_failed` (its credentials lack what the network
needs) without sending a request.

Each network's state is written the way a sync run writes it (a lease, its rows with the
position they complete, the outcome with its reason, the lease given back), so `/v1/me`
shows what a real connection in that state shows: `completeThrough`, and a `reasonCode`
for every outcome but `ok`. Every commission lies in the past: the history ends at the
start of the seeding day.

Re-running is safe: the account, its networks and its commissions are upserted (the same
day gives the same rows; another day shifts them with the clock), and every run issues a
new key labelled `demo` and revokes the demo keys issued before (keys are stored as hashes
only, so an old one cannot be shown again).

    seed_demo(database, secret, n=5000) -> key                       (sync; opens the store)
    await seed_store(store, secret, n=5000) -> key                   (async; your store)
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import random
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import orjson

from accounts import apikeys
from accounts.crypto import encrypt_credentials
from accounts.statusmap import load_status_map
from store import AccountStore, accounts, connections, open_store, ranks
from store.base import NewCommission, format_timestamp, utc_now

DEMO_UID = "acc_demo000000000000"
DEMO_EMAIL = "demo@example.com"
DEMO_KEY_LABEL = "demo"
# (network, outcome of its last sync); commissions come from the ones that synced.
DEMO_NETWORKS: tuple[tuple[str, str], ...] = (
    ("awin", "ok"),
    ("cj", "partial"),
    ("effiliation", "auth_failed"),
    ("impact", "ok"),
    ("kwanko", "never"),
)
# What a run with each outcome reports: (reason code, message) and how many days before the
# seeding day its sync is complete through (the days a real run of that outcome leaves behind).
DEMO_OUTCOMES: dict[str, tuple[tuple[str, str] | None, int]] = {
    "ok": (None, 0),
    "partial": (("rate_limited", "the network's rate limit cut the run short"), 3),
    "auth_failed": (("auth_rejected", "the network refused the stored credentials"), 40),
}
DEMO_WORKER = "demo-seeder"
# (currency, weight, decimals)
CURRENCIES: tuple[tuple[str, int, int], ...] = (
    ("EUR", 45, 2),
    ("GBP", 20, 2),
    ("USD", 20, 2),
    ("CHF", 8, 2),
    ("SEK", 5, 2),
    ("JPY", 2, 0),
)
PROGRAMS: tuple[str, ...] = (
    "Matelas Nuage",
    "Factureo",
    "Optique Nova",
    "Rail Europa Pass",
    "Kasa Streetwear",
    "Lumio Analytics",
    "Potager Urbain",
    "Stuga Interiors",
)
# The one member of a demo connection's credentials (see the module's docstring).
DEMO_CREDENTIAL = "demo"
HISTORY_DAYS = 548  # about 18 months
# Words no status table knows: they show `unknown` with the raw wording kept.
ODD_WORDS: tuple[str, ...] = ("On hold", "En litige", "Adjusted")


def demo_commissions(
    network: str, count: int, rng: random.Random, now: dt.datetime
) -> list[NewCommission]:
    """`count` plausible commissions of one network (pure given `rng` and `now`)."""
    statuses = load_status_map()
    table = statuses.tables.get(network, {})
    words = [w.title() if len(w) > 1 else w.upper() for w in table] or ["pending"]
    names = [c for c, _, _ in CURRENCIES]
    weights = [w for _, w, _ in CURRENCIES]
    decimals = {c: d for c, _, d in CURRENCIES}
    rows = []
    for index in range(count):
        currency = rng.choices(names, weights)[0]
        exponent = Decimal(1).scaleb(-decimals[currency])
        sale = Decimal(rng.randint(500, 90_000)) / 100 * (100 if currency == "JPY" else 1)
        rate = Decimal(rng.choice((3, 5, 8, 10, 12, 15, 20, 30))) / 100
        transacted = now - dt.timedelta(seconds=rng.randrange(HISTORY_DAYS * 86_400))
        clicked = transacted - dt.timedelta(seconds=rng.randrange(30 * 86_400))
        raw = rng.choice(ODD_WORDS) if rng.random() < 0.03 else rng.choice(words)
        status, raw_status = statuses.normalise(network, raw)
        program = rng.randrange(len(PROGRAMS))
        rows.append(
            NewCommission(
                external_id=f"{network}-{index:06d}",
                status=status,
                raw_status=raw_status,
                commission_amount=str((sale * rate).quantize(exponent)),
                currency=currency,
                transacted_at=format_timestamp(transacted),
                program_name=None if rng.random() < 0.05 else PROGRAMS[program],
                program_external_id=None if rng.random() < 0.05 else f"{network}-prog-{program}",
                sale_amount=None if rng.random() < 0.1 else str(sale.quantize(exponent)),
                clicked_at=None if rng.random() < 0.15 else format_timestamp(clicked),
                sub_id=None if rng.random() < 0.4 else f"sub-{rng.randrange(40)}",
            )
        )
    return rows


def _split(total: int, parts: Sequence[str]) -> dict[str, int]:
    share, rest = divmod(total, len(parts))
    return {p: share + (1 if i < rest else 0) for i, p in enumerate(parts)}


async def seed_store(
    store: AccountStore,
    secret: bytes,
    n: int = 5000,
    *,
    seed: int = 2026,
    now: dt.datetime | None = None,
) -> str:
    """Create or refresh the demo account in `store`; return a new key for it."""
    # The start of the day: the same rows all day long, and none of them in the future.
    moment = (now or utc_now()).replace(hour=0, minute=0, second=0, microsecond=0)
    if await store.read(accounts.find, DEMO_UID) is None:
        await store.write(accounts.create, DEMO_EMAIL, "pro", uid=DEMO_UID)
    await store.write(
        accounts.set_capability, DEMO_UID, "acquisition", True
    )  # monetisation: never enabled
    synced = [name for name, status in DEMO_NETWORKS if status != "never"]
    counts = _split(n, synced)
    rng = random.Random(seed)
    for network, status in DEMO_NETWORKS:
        # Nothing a connector could send: no member it requires, so no request is made.
        credentials = orjson.dumps(
            {DEMO_CREDENTIAL: f"demo connection {rng.getrandbits(64):016x}: no network access"}
        )
        await store.write(
            connections.connect,
            DEMO_UID,
            network,
            encrypt_credentials(secret, DEMO_UID, network, credentials),
        )
        if status == "never":
            continue
        rows = demo_commissions(network, counts[network], rng, moment)
        reason, days_behind = DEMO_OUTCOMES[status]
        position = format_timestamp(moment - dt.timedelta(days=days_behind))
        await store.write(connections.claim, DEMO_UID, network, DEMO_WORKER, 600.0)
        try:
            await store.write(
                connections.write_window, DEMO_UID, network, rows, position, DEMO_WORKER
            )
            await store.write(connections.record_outcome, DEMO_UID, network, status, reason)
        finally:
            await store.write(connections.release, DEMO_UID, network, DEMO_WORKER)
    await ranks.refresh(store, account_uid=DEMO_UID)
    for key in await store.read(accounts.list_keys, DEMO_UID):
        if key.label == DEMO_KEY_LABEL and key.revoked_at is None:
            await store.write(accounts.revoke_key, key.id)
    issued = apikeys.generate_key()
    await store.write(
        accounts.create_key, DEMO_UID, issued.key_hash, issued.prefix, DEMO_KEY_LABEL, ("read",)
    )
    return issued.key


def seed_demo(database: str | os.PathLike[str], secret: bytes, n: int = 5000) -> str:
    """Seed the demo account into a database (a path or a database URL); return a new key.
    Synchronous: call it before the server starts, not from a running loop."""
    database = str(Path(database)) if isinstance(database, os.PathLike) else database

    async def run() -> str:
        store = await open_store(database, writable=True, readers=1, timeout=60.0)
        try:
            return await seed_store(store, secret, n)
        finally:
            await store.close()

    return asyncio.run(run())
