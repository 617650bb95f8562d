"""The sample content in content/programs builds, and the edge can load what it makes."""

from __future__ import annotations

from pathlib import Path

import orjson
from buildkit import ROOT, Content, snapshot

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
