"""Record the API's examples from a real served edge: one request and its answer per
operation and documented status, written to `contract/examples.json`.

The OpenAPI document (`contract.openapi`) and the reference pages (`catalog.apireference`)
read that one file, so every example a reader sees is an answer the edge really gave. What
changes from run to run is replaced by fixed values (`redact`): the key by `<API key>`,
request ids, and instants the store takes from the wall clock. The demo account's data is
seeded on a fixed day, and the rate limiter runs on a fake clock, so the rest is stable.

A new operation gets its examples by adding its cases to CASES; nothing else changes.
Refresh the file after a change of the API:

    REFRESH_EXAMPLES=1 .venv/bin/python -m pytest tests/contract/test_examples.py -q
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from contract_support import use_id_key

from accounts import apikeys
from accounts.demo import DEMO_UID, seed_store
from contract import examples as examples_file
from contract.payment import NewPayment, NewPaymentLine
from store import accounts, open_store, payments
from store.publicids import PublicIds

EXAMPLES = examples_file.PATH
REFRESH_ENV = "REFRESH_EXAMPLES"

# The day the demo account's commissions are seeded around: the examples do not move with it.
DEMO_DAY = dt.datetime(2025, 6, 30, 12, 0, tzinfo=dt.UTC)
DEMO_COMMISSIONS = 60
# A fixed, well-formed key for the demo account, so that its prefix does not change.
EXAMPLE_RANDOM = "Example0Demo0Key0Documentation00"
EXAMPLE_KEY = apikeys.MARKER + EXAMPLE_RANDOM + apikeys.checksum(EXAMPLE_RANDOM)
KEY_PLACEHOLDER = "<API key>"
# A fixed id key (store.publicids) for the recording's store, so that its public ids do not
# change from run to run; a real store makes a random one.
EXAMPLE_ID_KEY = bytes.fromhex("6578616d706c652069642b6b6579206f6620746865207265636f7264696e6721")
COMMISSION_ONE = PublicIds.from_key(EXAMPLE_ID_KEY).commission(1)
PAYMENT_ONE = PublicIds.from_key(EXAMPLE_ID_KEY).payment(1)
# An Awin payment of the demo account: three advertisers' shares, 2.50 left unaccounted for.
DEMO_PAYMENT = NewPayment(
    "9876543",
    "142.50",
    "EUR",
    "2025-06-15T00:00:00Z",
    (
        NewPaymentLine("advertiser", "85.20", "EUR", "11111", "Matelas Nuage"),
        NewPaymentLine("advertiser", "42.30", "EUR", "22222", "Vélo Léger"),
        NewPaymentLine("advertiser", "12.50", "EUR", "33333", "Thé Vert"),
    ),
    method="BACS",
)
DOCUMENT_ETAG = '"5f0c6b2a9d3e4f718a2b3c4d5e6f7a8b"'
REQUEST_ID = "req_5f0c6b2a9d3e4f718a2b3c4d"
# The test server's origin (its port changes) as the examples show it.
ORIGIN = examples_file.ORIGIN
LOOPBACK_ORIGIN = re.compile(r"http://127\.0\.0\.1:[0-9]+")
# Instants the store stamps with the wall clock while the recording runs (any member, a
# member added later too): within a day of now, far from DEMO_DAY, shown as this one.
WALL_CLOCK = "2025-06-30T12:00:00Z"
WALL_CLOCK_NEAR = dt.timedelta(days=1)
INSTANT = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")
# Headers an example shows: what a client reads (the document's own and the body's type).
SHOWN_HEADERS = (
    "Content-Type",
    "Content-Encoding",
    "Cache-Control",
    "ETag",
    "Link",
    "Vary",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "RateLimit-Policy",
    "RateLimit",
    "Retry-After",
    "WWW-Authenticate",
    "X-Request-Id",
)

# Which key a case sends: the demo account's, a free account's, a suspended one's, a key
# that does not exist, or none.
KEYS = ("demo", "free", "suspended", "unknown", "none")
# The state of the edge a case needs: as deployed; its free plan's only request of the
# window already spent; its account store gone; no build loaded.
STATES = ("served", "limited", "store_down", "no_build")


@dataclass(frozen=True)
class Case:
    """One example: `operation` (its operationId) answering `status` to a GET of `target`."""

    operation: str
    status: int
    target: str  # path and query, as sent
    title: str
    key: str = "demo"
    state: str = "served"
    revalidate: bool = False  # send the ETag of the operation's recorded 200
    # The answer holds these examples (the OpenAPI document): shown abridged, its ETag as
    # DOCUMENT_ETAG, or each refresh would change what it records.
    self_describing: bool = False


CASES: tuple[Case, ...] = (
    Case("listPrograms", 200, "/v1/programs?limit=2", "The first page, two programmes"),
    Case("listPrograms", 304, "/v1/programs?limit=2", "Revalidated: unchanged", revalidate=True),
    Case("listPrograms", 400, "/v1/programs?limit=0", "A limit out of range"),
    Case("listPrograms", 401, "/v1/programs", "An unknown key", key="unknown"),
    Case("listPrograms", 429, "/v1/programs", "Over the rate limit", key="free", state="limited"),
    Case("listPrograms", 503, "/v1/programs", "No build loaded yet", state="no_build"),
    Case(
        "getProgramFacets",
        200,
        "/v1/programs/facets?market=FR&commissionMode=percentage",
        "Counts per facet value for French programmes paying a percentage",
    ),
    Case(
        "getProgramFacets",
        304,
        "/v1/programs/facets?market=FR&commissionMode=percentage",
        "Revalidated: unchanged",
        revalidate=True,
    ),
    Case("getProgramFacets", 400, "/v1/programs/facets?sort=name", "A parameter it does not take"),
    Case("getProgramFacets", 401, "/v1/programs/facets", "An unknown key", key="unknown"),
    Case(
        "getProgramFacets",
        429,
        "/v1/programs/facets",
        "Over the rate limit",
        key="free",
        state="limited",
    ),
    Case("getProgramFacets", 503, "/v1/programs/facets", "No build loaded yet", state="no_build"),
    Case("getProgram", 200, "/v1/programs/academie-du-code", "One programme"),
    Case(
        "getProgram",
        304,
        "/v1/programs/academie-du-code",
        "Revalidated: unchanged",
        revalidate=True,
    ),
    Case("getProgram", 401, "/v1/programs/academie-du-code", "An unknown key", key="unknown"),
    Case("getProgram", 404, "/v1/programs/no-such-programme", "No such programme"),
    Case(
        "getProgram",
        429,
        "/v1/programs/academie-du-code",
        "Over the rate limit",
        key="free",
        state="limited",
    ),
    Case("getMe", 200, "/v1/me", "The calling account"),
    Case("getMe", 401, "/v1/me", "No key", key="none"),
    Case("getMe", 403, "/v1/me", "A suspended account", key="suspended"),
    Case("getMe", 429, "/v1/me", "Over the rate limit", key="free", state="limited"),
    Case("listCommissions", 200, "/v1/commissions?limit=2", "The two most recent commissions"),
    Case(
        "listCommissions",
        400,
        "/v1/commissions?from=2026-02-01&to=2026-01-01",
        "A date range that ends before it starts",
    ),
    Case("listCommissions", 401, "/v1/commissions", "No key", key="none"),
    Case(
        "listCommissions",
        429,
        "/v1/commissions",
        "Over the rate limit",
        key="free",
        state="limited",
    ),
    Case(
        "listCommissions",
        503,
        "/v1/commissions?limit=2",
        "The account store cannot be read",
        state="store_down",
    ),
    Case(
        "summarizeCommissions",
        200,
        "/v1/commissions/summary?groupBy=network&from=2025-04-01&to=2025-06-30",
        "A quarter's totals by network, one row per currency",
    ),
    Case(
        "summarizeCommissions",
        400,
        "/v1/commissions/summary?groupBy=currency",
        "A grouping the endpoint does not offer (currency is always a key)",
    ),
    Case("summarizeCommissions", 401, "/v1/commissions/summary", "No key", key="none"),
    Case(
        "summarizeCommissions",
        429,
        "/v1/commissions/summary",
        "Over the rate limit",
        key="free",
        state="limited",
    ),
    Case(
        "summarizeCommissions",
        503,
        "/v1/commissions/summary?groupBy=status",
        "The account store cannot be read",
        state="store_down",
    ),
    Case("getCommission", 200, f"/v1/commissions/{COMMISSION_ONE}", "One commission"),
    Case("getCommission", 401, f"/v1/commissions/{COMMISSION_ONE}", "No key", key="none"),
    Case(
        "getCommission",
        404,
        "/v1/commissions/com_7fffffffffffffff",
        "No such commission in the key's account",
    ),
    Case(
        "getCommission",
        429,
        f"/v1/commissions/{COMMISSION_ONE}",
        "Over the rate limit",
        key="free",
        state="limited",
    ),
    Case(
        "getCommission",
        503,
        f"/v1/commissions/{COMMISSION_ONE}",
        "The account store cannot be read",
        state="store_down",
    ),
    Case("listPayments", 200, "/v1/payments?network=awin", "The account's Awin payments"),
    Case(
        "listPayments",
        400,
        "/v1/payments?from=2026-02-01&to=2026-01-01",
        "A date range that ends before it starts",
    ),
    Case("listPayments", 401, "/v1/payments", "No key", key="none"),
    Case("listPayments", 429, "/v1/payments", "Over the rate limit", key="free", state="limited"),
    Case(
        "listPayments",
        503,
        "/v1/payments",
        "The account store cannot be read",
        state="store_down",
    ),
    Case("getPayment", 200, f"/v1/payments/{PAYMENT_ONE}", "One payment with its lines"),
    Case("getPayment", 401, f"/v1/payments/{PAYMENT_ONE}", "No key", key="none"),
    Case("getPayment", 404, "/v1/payments/pay_7fffffffffffffff", "No such payment in the account"),
    Case(
        "getPayment",
        429,
        f"/v1/payments/{PAYMENT_ONE}",
        "Over the rate limit",
        key="free",
        state="limited",
    ),
    Case(
        "getPayment",
        503,
        f"/v1/payments/{PAYMENT_ONE}",
        "The account store cannot be read",
        state="store_down",
    ),
    Case("listEvents", 200, "/v1/events?limit=2", "The two oldest events of the feed"),
    Case(
        "listEvents",
        400,
        "/v1/events?type=commission.deleted",
        "A type the feed does not have",
    ),
    Case("listEvents", 401, "/v1/events", "No key", key="none"),
    Case("listEvents", 429, "/v1/events", "Over the rate limit", key="free", state="limited"),
    Case(
        "listEvents",
        503,
        "/v1/events?limit=2",
        "The account store cannot be read",
        state="store_down",
    ),
    Case(
        "getOpenApiDocument",
        200,
        "/openapi.json",
        "The document",
        key="none",
        self_describing=True,
    ),
    Case(
        "getOpenApiDocument",
        304,
        "/openapi.json",
        "Revalidated: unchanged",
        key="none",
        revalidate=True,
        self_describing=True,
    ),
)


async def seed(database: str, secret: bytes) -> None:
    """The demo account, seeded on DEMO_DAY, with EXAMPLE_KEY as one of its keys; the
    store's id key is EXAMPLE_ID_KEY (read by every store opened afterwards)."""
    await use_id_key(database, EXAMPLE_ID_KEY)
    store = await open_store(database, writable=True, readers=1)
    try:
        await seed_store(store, secret, DEMO_COMMISSIONS, now=DEMO_DAY)
        await store.write(payments.write, DEMO_UID, "awin", DEMO_PAYMENT)
        await store.write(
            accounts.create_key,
            DEMO_UID,
            apikeys.key_hash(EXAMPLE_KEY),
            apikeys.prefix_of(EXAMPLE_KEY),
            "example",
            ("read",),
        )
    finally:
        await store.close()


def redact(value: Any, key: str) -> Any:
    """A JSON value with what changes between runs replaced by fixed values."""
    if isinstance(value, dict):
        return {name: redact(item, key) for name, item in value.items()}
    if isinstance(value, list):
        return [redact(item, key) for item in value]
    if isinstance(value, str) and INSTANT.match(value):
        instant = dt.datetime.fromisoformat(value)
        return WALL_CLOCK if abs(instant - dt.datetime.now(dt.UTC)) < WALL_CLOCK_NEAR else value
    if isinstance(value, str):
        if key:
            value = value.replace(key, KEY_PLACEHOLDER)
        value = LOOPBACK_ORIGIN.sub(ORIGIN, value)
        return re.sub(r"req_[0-9a-f]{24}", REQUEST_ID, value)
    return value


def shown_headers(headers: Any, key: str) -> dict[str, str]:
    shown = {name: headers[name] for name in SHOWN_HEADERS if name in headers}
    return {name: redact(value, key) for name, value in shown.items()}


# A GET as the recorder sends it: (target, headers) -> (status, headers, body).
Fetch = Callable[[str, dict[str, str]], Awaitable[tuple[int, Any, bytes]]]


async def record(case: Case, fetch: Fetch, keys: dict[str, str], etags: dict[str, str]) -> dict:
    """Send one case and return its example: the request and the answer, redacted.

    `etags`: operation -> the ETag of its recorded 200, as sent (revalidating cases send it).
    """
    etag = etags.get(case.operation)
    key = keys.get(case.key, "")
    request: dict[str, str] = {"Accept-Encoding": "identity"}
    shown_request: dict[str, str] = {}
    if case.key != "none":
        request["Authorization"] = shown_request["Authorization"] = f"Bearer {key}"
    if case.revalidate:
        assert etag is not None, f"{case.operation} {case.status}: record its 200 first"
        request["If-None-Match"] = shown_request["If-None-Match"] = etag
    status, headers, body = await fetch(case.target, request)
    assert status == case.status, f"{case.operation} {case.target}: {status}, not {case.status}"
    if status == 200 and "ETag" in headers:
        etags[case.operation] = headers["ETag"]
    url = urlsplit(case.target)
    answer: dict[str, Any] = {"status": status, "headers": shown_headers(headers, key)}
    if case.self_describing:
        answer["headers"]["ETag"] = DOCUMENT_ETAG
        if "If-None-Match" in shown_request:
            shown_request["If-None-Match"] = DOCUMENT_ETAG
    if body:
        document = json.loads(body, parse_float=Decimal)
        if case.self_describing:
            document = {
                "openapi": document["openapi"],
                "info": {"title": document["info"]["title"]},
            }
        answer["body"] = redact(document, key)
    return {
        "title": case.title,
        "request": {
            "method": "GET",
            "path": url.path,
            "query": url.query,
            "headers": {name: redact(value, key) for name, value in shown_request.items()},
        },
        "response": answer,
    }


def render(examples: dict[str, dict[str, dict]]) -> bytes:
    """The examples file's bytes: sorted, indented, numbers as sent, final newline; each
    commission without its null members of the field table (`examples_file.compact`),
    which reading the file gives back exactly, member order included."""
    ordered = {op: dict(sorted(by.items())) for op, by in sorted(examples.items())}
    kept = examples_file.compact(ordered)
    restored = examples_file.expand(kept)
    assert examples_file.dumps(restored) == examples_file.dumps(ordered), (
        "a commission the file cannot give back as answered: its members are not its "
        "resource's, in order"
    )
    return (examples_file.dumps(kept) + "\n").encode("utf-8")
