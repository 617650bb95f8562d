"""contract/examples.json is what a served edge answers today (a golden file).

Every example request of the OpenAPI document and of the reference pages is in that file,
recorded from a real edge over the sample build and the demo account
(`examples_recorder`). This test records them again and fails when they differ; it writes
the file instead when REFRESH_EXAMPLES=1 is set:

    REFRESH_EXAMPLES=1 .venv/bin/python -m pytest tests/contract/test_examples.py -q
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import difflib
import io
import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from contract_support import FREE_KEY, SUSPENDED_KEY, LiveEdge, live_edge, make_accounts
from examples_recorder import (
    CASES,
    DEMO_PAYMENT,
    EXAMPLE_ID_KEY,
    EXAMPLE_KEY,
    EXAMPLES,
    REFRESH_ENV,
    STATES,
    Case,
    record,
    render,
    seed,
)
from support import sample
from test_documented_answers import check_documented

from accounts import apikeys
from accounts.demo import DEMO_UID
from catalog import apireference
from contract import commission, openapi
from contract import examples as recorded
from contract.resources import COMMISSION, COMMISSION_DETAIL, COMMISSION_RECORD, COMMISSION_UPDATE
from edge import appkeys
from edge.config import Config
from store import open_store, payments

UNKNOWN_RANDOM = "ExampleUnknownKey000000000000000"
UNKNOWN_KEY = apikeys.MARKER + UNKNOWN_RANDOM + apikeys.checksum(UNKNOWN_RANDOM)
KEYS = {"demo": EXAMPLE_KEY, "free": FREE_KEY, "suspended": SUSPENDED_KEY, "unknown": UNKNOWN_KEY}


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample build and an account store with the test keys and the demo account."""
    root = tmp_path_factory.mktemp("examples")
    dist = sample.build_sample(root / "dist")
    database = root / "edge.sqlite3"
    secret = Config(dist=dist, database=str(database), secret_key="x" * 40).resolved_secret()
    asyncio.run(make_accounts(database))
    asyncio.run(seed(str(database), secret))
    return dist, database


async def record_all(edge_client: Any, clock: Any, dist: Path, database: Path) -> dict:
    served = await edge_client(
        dist=dist, database=str(database), secret_key="x" * 40, rate_limit_free=(1, 60)
    )
    no_build = await edge_client(
        dist=dist.parent / "no-build", database=str(database), secret_key="x" * 40
    )
    examples: dict[str, dict[str, dict]] = {}

    def fetcher(client: Any) -> Any:
        async def fetch(target: str, headers: dict[str, str]) -> tuple[int, Any, bytes]:
            resp = await client.get(target, headers=headers)
            return resp.status, resp.headers, await resp.read()

        return fetch

    async def enter(state: str) -> Any:
        if state == "limited":  # the free account's only request of the window
            assert (
                await served.get("/v1/me", headers={"Authorization": f"Bearer {FREE_KEY}"})
            ).status == 200
        if state == "store_down":
            await served.app[appkeys.STORE].close()
            clock.advance(60)  # the demo key's cached entry is stale: the store is asked
        return no_build if state == "no_build" else served

    etags: dict[str, str] = {}
    for state in STATES:
        client = await enter(state)
        for case in [c for c in CASES if c.state == state]:
            example = await record(case, fetcher(client), KEYS, etags)
            examples.setdefault(case.operation, {})[str(case.status)] = example
    return examples


async def test_the_examples_file_is_what_the_edge_answers(edge_client, clock, recording):
    examples = await record_all(edge_client, clock, *recording)
    fresh = render(examples)
    if os.environ.get(REFRESH_ENV) == "1":
        EXAMPLES.write_bytes(fresh)
    kept = EXAMPLES.read_bytes() if EXAMPLES.exists() else b""
    if kept != fresh:
        diff = "".join(
            difflib.unified_diff(
                kept.decode().splitlines(True), fresh.decode().splitlines(True), "kept", "fresh"
            )
        )
        pytest.fail(
            f"{EXAMPLES} is not what the edge answers; refresh it with\n"
            f"  {REFRESH_ENV}=1 .venv/bin/python -m pytest tests/contract/test_examples.py -q\n"
            + diff[:6000]
        )


def test_every_operation_has_an_example_for_every_documented_status():
    kept = recorded.load()
    for path, item in openapi.document()["paths"].items():
        op = item["get"]
        statuses = set(op["responses"])
        assert set(kept.get(op["operationId"], {})) == statuses, path


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.operation}-{c.status}")
def test_every_example_answer_is_documented(case: Case):
    example = recorded.load()[case.operation][str(case.status)]
    response = example["response"]
    path = next(
        p
        for p, item in openapi.document()["paths"].items()
        if item["get"]["operationId"] == case.operation
    )
    if case.operation == "getOpenApiDocument":
        return  # shown abridged
    body = orjson.dumps(recorded.plain(response["body"])) if "body" in response else b""
    check_documented(path, case.status, response["headers"], body)


def test_cases_are_unique():
    keys = [(c.operation, c.status) for c in CASES]
    assert len(keys) == len(set(keys))
    assert all(dataclasses.fields(c) for c in CASES)


def commissions_in(value: Any) -> Iterator[dict[str, Any]]:
    """Every object of `value` with a commission's id, however deep."""
    if isinstance(value, list):
        for item in value:
            yield from commissions_in(item)
    elif isinstance(value, dict):
        if str(value.get("id", "")).startswith("com_"):
            yield value
        for item in value.values():
            yield from commissions_in(item)


COMMISSION_RESOURCES = (COMMISSION_RECORD, COMMISSION, COMMISSION_DETAIL, COMMISSION_UPDATE)


def test_every_commission_example_reads_whole_as_its_resource():
    """Read from the file, each commission has its resource's members in order, the field
    table's null ones included; in the file, none of those is null (they are left out)."""
    shown = list(commissions_in(recorded.load()))
    assert len(shown) >= 5  # one commission, a page of two, two events
    for item in shown:
        assert tuple(item) in {r.names for r in COMMISSION_RESOURCES}, tuple(item)
    kept = list(commissions_in(orjson.loads(EXAMPLES.read_bytes())))
    assert len(kept) == len(shown)
    for item in kept:
        assert not [m for m in commission.MEMBERS if m in item and item[m] is None], item["id"]


@pytest.mark.parametrize("member", [f.member for f in commission.FIELDS if f.nullable])
def test_a_commission_kept_without_a_null_member_reads_with_it(member: str):
    """What a field added to the table meets: an answer that has the member (null) is kept
    as the file held it before, and the file read gives it back at its place."""
    for item in commissions_in(recorded.load()):
        answered = {**item, member: None}
        kept = recorded.compact(answered)
        assert member not in kept
        restored = recorded.expand(kept)
        assert list(restored) == list(item) and restored == answered


# --- The reference's snippets, made from these examples, run as they are shown ------------


async def seed_payment(database: str) -> None:
    """The examples' Awin payment of the demo account (its id is PAYMENT_ONE)."""
    store = await open_store(database, writable=True, readers=1)
    try:
        await store.write(payments.write, DEMO_UID, "awin", DEMO_PAYMENT)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveEdge]:
    with live_edge(
        tmp_path_factory.mktemp("snippets"), id_key=EXAMPLE_ID_KEY, seed=seed_payment
    ) as edge:
        yield edge


# What a plain served edge answers again: the demo key or none, nothing provoked, and no
# revalidation (its tag is the one the recording's client got: httpx, which asks for gzip,
# gets the gzip representation's).
REPLAYABLE = [
    c
    for c in CASES
    if c.state == "served" and c.key in ("demo", "none") and not (c.self_describing or c.revalidate)
]


@pytest.mark.parametrize("case", REPLAYABLE, ids=lambda c: f"{c.operation}-{c.status}")
@pytest.mark.process
def test_the_references_snippets_answer_as_recorded(
    live: LiveEdge, case: Case, monkeypatch: pytest.MonkeyPatch
):
    example = recorded.load()[case.operation][str(case.status)]
    code = apireference.python(example).replace(recorded.ORIGIN, live.base_url)
    # Run as a script of its own is run: in a namespace of its own, the key in the
    # environment, what it prints kept (in this interpreter: ~25 interpreter starts less).
    monkeypatch.setenv(apireference.KEY_VARIABLE, live.key)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "<snippet>", "exec"), {"__name__": "__main__"})
    stdout = printed.getvalue()
    assert stdout.split()[0] == str(case.status), stdout[:300]
    words = shlex.split(apireference.curl(example).replace("\\\n", " "))
    assert words[:3] == ["curl", "-s", "-i"] and words[3] == recorded.ORIGIN + case.target
    sent = dict(w.split(": ", 1) for w in words[5::2])
    assert sent == {
        k: v.replace("<API key>", f"${apireference.KEY_VARIABLE}")
        for k, v in example["request"]["headers"].items()
    }
