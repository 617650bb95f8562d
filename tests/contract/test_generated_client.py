"""A client generated from the live edge's /openapi.json calls every endpoint.

`openapi-python-client` generates a Python package from the document the edge serves; the
test imports it and calls each operation against the live edge with the demo key: every
answer parses into the generated models, error answers included (each is declared), and an
error code the client was not generated with still parses (codes may be added). Amounts
are decimals in JSON: read with `parse_float=Decimal` they reach the generated models as
Decimal, exactly as written, never as floats.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from contract_support import LiveEdge, live_edge

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "affdir_generated_client"
# A JSON number member named *Amount or minPayout, with its text as sent.
AMOUNT_RE = re.compile(rb'"(saleAmount|commissionAmount|minPayout)":(-?[0-9][0-9.eE+-]*)')


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveEdge]:
    with live_edge(tmp_path_factory.mktemp("client-edge")) as edge:
        yield edge


@pytest.fixture(scope="module")
def generated(live: LiveEdge, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    if not GENERATOR.exists():
        pytest.fail("openapi-python-client is not installed (the `test` extra lists it)")
    root = tmp_path_factory.mktemp("client")
    run = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--url",
            f"{live.base_url}/openapi.json",
            "--output-path",
            str(root / PACKAGE),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    # Every response of the document made it into the client: none omitted.
    assert "Cannot parse" not in output and "WARNING" not in output, output
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def module(package: ModuleType, name: str) -> Any:
    return importlib.import_module(f"{package.__name__}.{name}")


def decimals(content: bytes) -> Any:
    return json.loads(content, parse_float=Decimal)


@pytest.fixture
def api(generated: ModuleType, live: LiveEdge) -> Iterator[Any]:
    """The generated client with the demo key; closed after the test."""
    with module(generated, "client").AuthenticatedClient(
        base_url=live.base_url, token=live.key, raise_on_unexpected_status=True
    ) as authenticated:
        yield authenticated


def test_the_directory_endpoints(generated: ModuleType, api: Any):
    models = module(generated, "models")
    listing = module(generated, "api.directory.list_programs").sync_detailed(client=api, limit=3)
    assert listing.status_code == 200
    assert isinstance(listing.parsed, models.ProgramList)
    assert len(listing.parsed.data) == 3 and listing.parsed.page.has_more
    assert listing.headers["RateLimit"].startswith('"default";r=')
    following = module(generated, "api.directory.list_programs").sync_detailed(
        client=api, limit=3, cursor=listing.parsed.page.next_cursor
    )
    assert following.status_code == 200
    assert following.parsed.data[0].slug not in {p.slug for p in listing.parsed.data}
    slug = listing.parsed.data[0].slug
    one = module(generated, "api.directory.get_program").sync_detailed(slug=slug, client=api)
    assert one.status_code == 200 and isinstance(one.parsed, models.ProgramResponse)
    assert one.parsed.data.slug == slug
    exact = models.ProgramResponse.from_dict(decimals(one.content))
    assert not isinstance(exact.data.min_payout, float)
    missing = module(generated, "api.directory.get_program").sync_detailed(
        slug="no-such-programme", client=api
    )
    assert missing.status_code == 404 and missing.parsed.code == "not_found"


def test_the_account_endpoints(generated: ModuleType, api: Any):
    models = module(generated, "models")
    me = module(generated, "api.account.get_me").sync_detailed(client=api)
    assert me.status_code == 200 and isinstance(me.parsed, models.AccountResponse)
    assert me.parsed.data.key.label == "demo"
    page = module(generated, "api.account.list_commissions").sync_detailed(client=api, limit=50)
    assert page.status_code == 200 and isinstance(page.parsed, models.CommissionList)
    assert page.parsed.data and page.parsed.page.has_more
    nxt = module(generated, "api.account.list_commissions").sync_detailed(
        client=api, limit=50, cursor=page.parsed.page.next_cursor
    )
    assert nxt.status_code == 200
    assert not {c.id for c in nxt.parsed.data} & {c.id for c in page.parsed.data}
    bad = module(generated, "api.account.list_commissions").sync_detailed(
        client=api, cursor="A" * 52 + "." + "B" * 16
    )
    assert bad.status_code == 400 and bad.parsed.code == "invalid_cursor"


def test_the_summary_with_a_list_of_groups(generated: ModuleType, api: Any):
    """The generated client sends `group_by` as the parameter repeated (its form for an
    array): the edge answers it as the comma-separated list."""
    models = module(generated, "models")
    item = module(generated, "models.summarize_commissions_group_by_item")
    wanted = [item.SummarizeCommissionsGroupByItem(name) for name in ("month", "network")]
    totals = module(generated, "api.account.summarize_commissions").sync_detailed(
        client=api, group_by=wanted
    )
    assert totals.status_code == 200, totals.content
    assert isinstance(totals.parsed, models.CommissionTotals)
    rows = decimals(totals.content)["data"]
    assert rows and all(r["month"] and r["network"] and r["status"] is None for r in rows)


def test_amounts_stay_decimal(generated: ModuleType, api: Any):
    models = module(generated, "models")
    page = module(generated, "api.account.list_commissions").sync_detailed(client=api, limit=100)
    sent = [m[2].decode() for m in AMOUNT_RE.finditer(page.content)]
    assert sent, "the demo account has commissions with amounts"
    exact = models.CommissionList.from_dict(decimals(page.content))
    read = []
    for item in exact.data:
        for value in (item.sale_amount, item.commission_amount):
            if value is not None:
                # A whole amount (no point) is an int, as exact; a float never.
                assert isinstance(value, Decimal | int) and not isinstance(value, bool), value
                read.append(str(value))
    assert read == sent  # digit for digit, as the edge wrote them


def test_the_document_itself(generated: ModuleType, live: LiveEdge):
    with module(generated, "client").Client(base_url=live.base_url) as anonymous:
        resp = module(generated, "api.meta.get_open_api_document").sync_detailed(client=anonymous)
    assert resp.status_code == 200 and json.loads(resp.content)["openapi"] == "3.1.0"


def test_one_error_class_that_reads_a_code_added_later(generated: ModuleType):
    models = module(generated, "models")
    errors = [name for name in dir(models) if "Error" in name]
    assert errors == ["Error"], errors
    later = models.Error.from_dict(
        {
            "code": "a_code_added_later",
            "message": "A reason the client was generated without.",
            "status": 422,
            "param": None,
            "requestId": "req_0123456789abcdef01234567",
        }
    )
    assert later.code == "a_code_added_later" and later.status == 422


def test_revalidates_with_if_none_match(generated: ModuleType, api: Any):
    get_program = module(generated, "api.directory.get_program")
    first = get_program.sync_detailed(slug="academie-du-code", client=api)
    assert first.status_code == 200
    again = get_program.sync_detailed(
        slug="academie-du-code", client=api, if_none_match=first.headers["ETag"]
    )
    assert again.status_code == 304 and again.content == b""
