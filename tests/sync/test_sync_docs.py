"""docs/sync.md's tables of networks are the connectors' specs: credential fields, windows,
re-scans and rates. A spec that changes without the page fails here, with the table to
paste between the page's markers."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from sync.connectors import CONNECTORS
from sync.health import Progress
from sync.metrics import SyncMetrics
from sync.spec import ConnectorSpec

DOC = Path(__file__).resolve().parents[2] / "docs" / "sync.md"


def _span(delta: dt.timedelta) -> str:
    if not delta:
        return "none"
    if delta % dt.timedelta(days=1) == dt.timedelta(0):
        return f"{delta.days} days"
    if delta % dt.timedelta(hours=1) == dt.timedelta(0):
        return f"{delta // dt.timedelta(hours=1)} hours"
    return f"{delta.total_seconds():g} s"


def _granularity(delta: dt.timedelta) -> str:
    return "whole days" if delta == dt.timedelta(days=1) else f"{delta.total_seconds():g} s"


def _rate(spec: ConnectorSpec) -> str:
    return f"{spec.rate.requests} per {spec.rate.seconds:g} s"


def credentials_table() -> str:
    lines = ["| network | credential JSON members | presented as |", "|---|---|---|"]
    for network, connector in sorted(CONNECTORS.items()):
        spec = connector.spec
        fields = "<br>".join(f"`{f.name}`: {f.description}" for f in spec.credential_fields)
        lines.append(f"| `{network}` | {fields} | `{spec.auth}` |")
    return "\n".join(lines)


def windows_table() -> str:
    lines = [
        "| network | window at most | boundaries | pages | page size | re-scan | horizon "
        "| rate per credential | currency from | late changes caught |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for network, connector in sorted(CONNECTORS.items()):
        s = connector.spec
        lines.append(
            f"| `{network}` | {_span(s.max_window)} | {_granularity(s.granularity)} "
            f"| {s.pagination.value} | {s.page_size or '-'} | {_span(s.rescan)} "
            f"| {_span(s.horizon)} | {_rate(s)} | {s.currency_source.value} "
            f"| {s.late_changes_caught()} |"
        )
    return "\n".join(lines)


def section(name: str) -> str:
    text = DOC.read_text("utf-8")
    found = re.search(
        rf"<!-- {name}: generated.*?-->\n(.*?)\n<!-- end {name} -->", text, flags=re.DOTALL
    )
    assert found, f"docs/sync.md lacks the {name} markers"
    return found.group(1).strip()


@pytest.mark.parametrize(
    ("name", "render"), [("credentials", credentials_table), ("windows", windows_table)]
)
def test_docs_tables_match_the_specs(name: str, render) -> None:
    expected = render()
    assert section(name) == expected, (
        f"docs/sync.md's {name} table differs from the connectors' specs; it should read:\n"
        f"{expected}"
    )


def test_every_connector_is_in_the_docs() -> None:
    text = DOC.read_text("utf-8")
    missing = [n for n in CONNECTORS if f"`{n}`" not in text]
    assert not missing


def test_every_metric_of_the_worker_is_in_the_docs_and_no_other() -> None:
    metrics = SyncMetrics(Progress(60.0))
    exported = {
        family.name + ("_total" if family.type == "counter" else "")
        for family in metrics.registry.collect()
        if not family.name.startswith(("process_", "python_"))
    }
    text = DOC.read_text("utf-8")
    documented = set(re.findall(r"`(affdir_\w+)", text))
    assert exported == documented, (exported - documented, documented - exported)


def test_docs_networks_md_is_what_the_specs_declare():
    """docs/networks.md is generated: a spec that changed without it fails here."""
    from sync.networkdoc import render

    page = DOC.parent / "networks.md"
    assert page.read_text("utf-8") == render(), (
        "docs/networks.md is stale: run `python -m sync.networkdoc > docs/networks.md`"
    )


def test_every_unconfirmed_fact_of_a_spec_is_on_the_networks_page():
    from sync.networkdoc import render

    page = render()
    for connector in CONNECTORS.values():
        for note in connector.spec.notes:
            if "[U]" in note:
                assert note in page
