"""The partition stage: each submission is published, unpublished, rejected or invalid."""

from __future__ import annotations

import pytest
from buildkit import VALID, Content, submission

from catalog import incremental, loading
from catalog.cache import Records, code_version
from catalog.errors import BuildError
from catalog.partition import partition


def test_every_submission_lands_in_exactly_one_group(content: Content) -> None:
    content.add("good", VALID)
    content.add("draft", "status: unpublished\n")
    content.add("no", "status: rejected\nname: [anything goes here\n")
    content.add("bad", submission(payout="daily"))
    content.add("nostatus", "name: Acme\n")
    sources, _ = loading.discover(content.content)
    checked, _ = incremental.validate(sources, Records(code_version()))
    parts = partition(checked)
    stems = {
        group: [item.source.stem for item in getattr(parts, group)]
        for group in ("published", "unpublished", "rejected", "invalid")
    }
    assert stems == {
        "published": ["good"],
        "unpublished": ["draft"],
        "rejected": ["no"],
        "invalid": ["bad", "nostatus"],
    }
    assert parts.counts == {"submissions": 5, "published": 1, "unpublished": 1, "rejected": 1}
    assert {d.severity for d in parts.problems if "no.yaml" in d.path} == {"warning"}


def test_a_file_claiming_a_slug_of_the_content_is_invalid(content: Content) -> None:
    """`--check FILE`: a file outside the content named like one of its submissions."""
    content.add("acme", VALID)
    outside = Content(content.root / "elsewhere").add("acme", VALID)
    sources, _ = loading.discover(content.content)
    checked, _ = incremental.validate(loading.sources_of([outside]), Records(code_version()))
    parts = partition(checked, sources)
    assert [item.source.stem for item in parts.invalid] == ["acme"] and not parts.published
    assert any("also the slug of" in d.problem.message for d in parts.problems)


def test_a_failed_build_remembers_only_what_it_can_reuse(content: Content) -> None:
    """Outcomes are saved when the build stops on errors, except those of published files
    it never scored (their listing is unknown): the fixed rebuild scores them then."""
    content.add("good", VALID)
    content.add("bad", submission(payout="daily"))
    with pytest.raises(BuildError):
        content.build(site=False)
    content.add("bad", submission(payout="weekly"))
    assert content.build(site=False).counts["published"] == 2
    fresh = Content(content.root / "cold")
    fresh.add("good", VALID)
    fresh.add("bad", submission(payout="weekly"))
    fresh.build(site=False, cache=False)
    assert (content.out / "api" / "rows.jsonl").read_bytes() == (
        fresh.out / "api" / "rows.jsonl"
    ).read_bytes()
