"""contract/examples.json is what a served edge answers today (a golden file).

Every example request of the OpenAPI document and of the reference pages is in that file,
recorded from a real edge over the sample build and the demo account
(`examples_recorder`). This test records them again and fails when they differ; it writes
the file instead when REFRESH_EXAMPLES=1 is set:

    REFRESH_EXAMPLES=1 .venv/bin/python -m pytest tests/contract/test_examples.py -q
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from contract_support import FREE_KEY, SUSPENDED_KEY, make_accounts
from examples_recorder import (
    CASES,
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
from contract import openapi
from edge import appkeys
from edge.config import Config

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
    kept = orjson.loads(EXAMPLES.read_bytes())
    for path, item in openapi.document()["paths"].items():
        op = item["get"]
        statuses = set(op["responses"])
        assert set(kept.get(op["operationId"], {})) == statuses, path


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.operation}-{c.status}")
def test_every_example_answer_is_documented(case: Case):
    example = orjson.loads(EXAMPLES.read_bytes())[case.operation][str(case.status)]
    response = example["response"]
    path = next(
        p
        for p, item in openapi.document()["paths"].items()
        if item["get"]["operationId"] == case.operation
    )
    if case.operation == "getOpenApiDocument":
        return  # shown abridged
    body = orjson.dumps(response["body"]) if "body" in response else b""
    check_documented(path, case.status, response["headers"], body)


def test_cases_are_unique():
    keys = [(c.operation, c.status) for c in CASES]
    assert len(keys) == len(set(keys))
    assert all(dataclasses.fields(c) for c in CASES)
