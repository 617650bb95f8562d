"""Commissions linked to the directory's programmes through a real build: a programme file's
`networks` decides each commission's programSlug when it is read, so a change of the file
and a rebuild relink past commissions, with nothing rewritten in the store."""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path
from typing import Any

from support.accountkit import check_resource, new_account
from support.programkit import wait_for_build

import build
from catalog.progress import Progress
from contract.resources import COMMISSION, COMMISSION_DETAIL
from store import commissions
from store.base import NewCommission

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ("factureo", "lumio-analytics")
NETWORKS_BLOCK = re.compile(r"^networks:\n(?:  .*\n)*", re.M)


def write_content(content: Path, links: dict[str, list[tuple[str, str]]]) -> None:
    """The sample programmes in `content`, each with exactly the networks given."""
    programs = content / "programs"
    programs.mkdir(parents=True, exist_ok=True)
    for slug in SAMPLES:
        text = NETWORKS_BLOCK.sub("", (ROOT / "content" / "programs" / f"{slug}.yaml").read_text())
        pairs = links.get(slug, [])
        if pairs:
            text += "networks:\n" + "".join(
                f'  - network: {network}\n    programId: "{program_id}"\n'
                for network, program_id in pairs
            )
        (programs / f"{slug}.yaml").write_text(text)


def rebuild(content: Path, dist: Path) -> str:
    options = build.Options(content=content, out=dist, sync=False, site=False)
    return build.build(options, Progress(quiet=True)).build_id


def row(external_id: str, program_id: str | None, amount: str) -> NewCommission:
    return NewCommission(
        external_id,
        "approved",
        None,
        amount,
        "EUR",
        "2026-01-05T10:00:00Z",
        program_external_id=program_id,
        sale_amount="100",
    )


async def slugs(client: Any, auth: dict[str, str]) -> dict[str, str | None]:
    """externalId -> programSlug of every commission /v1/commissions lists."""
    resp = await client.get("/v1/commissions", params={"limit": "100"}, headers=auth)
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    for item in body["data"]:
        check_resource(item, COMMISSION)
    return {item["externalId"]: item["programSlug"] for item in body["data"]}


async def totals(client: Any, auth: dict[str, str]) -> dict[str | None, str]:
    resp = await client.get(
        "/v1/commissions/summary", params={"groupBy": "programSlug"}, headers=auth
    )
    assert resp.status == 200, await resp.text()
    return {item["programSlug"]: str(item["commission"]) for item in (await resp.json())["data"]}


async def test_a_changed_programme_file_and_a_rebuild_relink_past_commissions(
    edge_client, admin_store, account_config, tmp_path
):
    content, dist = tmp_path / "content", Path(account_config.dist)
    shutil.rmtree(dist, ignore_errors=True)
    write_content(content, {"factureo": [("awin", "p1")]})
    first = rebuild(content, dist)
    owner = await new_account(admin_store)
    await admin_store.write(
        commissions.upsert,
        owner.uid,
        "awin",
        [row("a1", "p1", "10"), row("a2", "p1", "5.5"), row("a3", "p2", "7"), row("a4", None, "1")],
    )
    await admin_store.write(commissions.upsert, owner.uid, "cj", [row("c1", "p1", "3")])
    client = await edge_client()
    await wait_for_build(client, first)
    assert await slugs(client, owner.auth) == {
        "a1": "factureo",
        "a2": "factureo",
        "a3": None,
        "a4": None,
        "c1": None,  # the same programme id at another network is another programme
    }
    assert await totals(client, owner.auth) == {"factureo": "15.5", None: "11"}

    # The file moves awin p1 to another programme and claims awin p2 and cj p1 instead.
    write_content(
        content,
        {"factureo": [("awin", "p2"), ("cj", "p1")], "lumio-analytics": [("awin", "p1")]},
    )
    second = rebuild(content, dist)
    assert second != first
    await wait_for_build(client, second)
    assert await slugs(client, owner.auth) == {
        "a1": "lumio-analytics",
        "a2": "lumio-analytics",
        "a3": "factureo",
        "a4": None,
        "c1": "factureo",
    }
    assert await totals(client, owner.auth) == {
        "lumio-analytics": "15.5",
        "factureo": "10",
        None: "1",
    }
    resp = await client.get(
        "/v1/commissions", params={"programSlug": "factureo", "format": "csv"}, headers=owner.auth
    )
    assert resp.status == 200
    exported = list(csv.DictReader(io.StringIO(await resp.text())))
    assert sorted((r["externalId"], r["programSlug"]) for r in exported) == [
        ("a3", "factureo"),
        ("c1", "factureo"),
    ]

    # Unpublished: its commissions are linked to nothing, at once with the build.
    text = (content / "programs" / "factureo.yaml").read_text()
    (content / "programs" / "factureo.yaml").write_text(
        text.replace("status: published", "status: unpublished")
    )
    third = rebuild(content, dist)
    await wait_for_build(client, third)
    linked = await slugs(client, owner.auth)
    assert linked["a3"] is None and linked["c1"] is None and linked["a1"] == "lumio-analytics"
    resp = await client.get(
        "/v1/commissions", params={"programSlug": "factureo"}, headers=owner.auth
    )
    assert (await resp.json())["data"] == []


async def test_the_commission_detail_carries_its_programme(
    edge_client, admin_store, account_config, tmp_path
):
    content, dist = tmp_path / "content", Path(account_config.dist)
    write_content(content, {"factureo": [("awin", "p1")]})
    built = rebuild(content, dist)
    owner = await new_account(admin_store)
    await admin_store.write(commissions.upsert, owner.uid, "awin", [row("a1", "p1", "10")])
    client = await edge_client()
    await wait_for_build(client, built)
    listed = await (await client.get("/v1/commissions", headers=owner.auth)).json()
    one = listed["data"][0]
    detail = await (await client.get(f"/v1/commissions/{one['id']}", headers=owner.auth)).json()
    check_resource(detail["data"], COMMISSION_DETAIL)
    assert detail["data"]["programSlug"] == "factureo"
