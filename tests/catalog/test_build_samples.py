"""The sample content in content/programs builds, and the edge can load what it makes."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest
import yaml
from buildkit import ROOT, Content, snapshot

from catalog import submission, validation
from contract import shardformat
from contract import vocabulary as v


def test_every_sample_builds_and_loads(tmp_path: Path) -> None:
    samples = Content(tmp_path)
    result = Content(tmp_path).build(content=ROOT / "content")
    counts = result.counts
    assert counts["published"] >= 60
    assert counts["unpublished"] >= 5 and counts["rejected"] >= 5
    directory = shardformat.load(samples.out)
    assert len(directory.rows) == counts["published"]
    assert directory.shards["any.any.any.any"].tolist() == list(range(counts["published"]))
    scores = [orjson.loads(row)["score"] for row in directory.rows]
    assert all(v.SCORE_MIN <= s <= v.SCORE_MAX for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_no_sample_draft_reaches_dist(tmp_path: Path) -> None:
    samples = Content(tmp_path)
    samples.build(content=ROOT / "content")
    drafts = []
    for path in sorted((ROOT / "content" / "programs").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "\nstatus: published" not in "\n" + text:
            name = next(line for line in text.splitlines() if line.startswith("name:"))
            drafts.append((path.stem, name.split(":", 1)[1].strip().strip('"')))
    assert drafts
    output = snapshot(samples.out)
    for slug, name in drafts:
        for path, data in output.items():
            assert slug.encode() not in data, (slug, path)
            assert name.encode() not in data, (name, path)


SAMPLES = sorted((ROOT / "content" / "programs").glob("*.yaml"))


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", ".")) for n in re.findall(r"\d+(?:[.,]\d+)?", text)}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_has_typed_terms_that_match_its_wording(path: Path) -> None:
    """Drafts included: typed terms and evidence consistent with the free-text commission."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    terms = validation.check_terms(data["commissionTerms"], submission.BY_NAME["commissionTerms"])
    wording = data["commission"]
    said = _numbers(wording)
    rates = [terms] if terms["mode"] in (v.PERCENTAGE, v.FLAT) else terms["parts"]
    rates += [dict(tier, unit=terms["unit"], upTo=None) for tier in terms["tiers"]]
    for rate in rates:
        for bound in (rate["value"], rate["upTo"]):
            assert bound is None or bound in said, (wording, rate)
        sign = "%" if rate["unit"] == v.PERCENT else "€"
        assert sign in wording, (wording, rate)
    if terms["value"] is None and terms["mode"] in (v.PERCENTAGE, v.FLAT):
        assert re.search(r"(?i)jusqu|up to", wording), wording  # the page states a maximum only
    if terms["mode"] == v.HYBRID:
        assert "+" in wording
    if terms["lifetime"]:
        assert re.search(r"lifetime|à vie", wording) and data["recurring"]
    if terms["durationMonths"] is not None:
        assert data["recurring"]
        months = terms["durationMonths"]
        assert f"{months} months" in wording or (months == 12 and "first year" in wording)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_states_its_evidence_and_when_it_was_verified(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    evidence = urlsplit(data["evidence"])
    host = data["host"]
    assert evidence.hostname == host or evidence.hostname.endswith("." + host)
    assert evidence.path.strip("/"), "the evidence is a page, not the home page"
    assert data["evidence"].rstrip("/") != data["site"].rstrip("/")
    spec = submission.BY_NAME["lastVerifiedAt"]
    verified = validation.check_timestamp(data["lastVerifiedAt"], spec)
    assert "2023-01-01" <= verified <= "2026-11-28"
    if "createdAt" in data:
        assert verified >= validation.check_timestamp(data["createdAt"], spec)


def test_the_samples_show_every_kind_of_terms() -> None:
    kinds = set()
    for path in SAMPLES:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        terms = data["commissionTerms"]
        kinds.add(terms["mode"])
        kinds.update(k for k in ("upTo", "lifetime", "durationMonths") if k in terms)
        kinds.update(k for k in ("holdbackDays",) if k in data)
    assert kinds >= {"percentage", "flat", "tiered", "hybrid", "upTo", "lifetime",
                     "durationMonths", "holdbackDays"}  # fmt: skip
