"""The committed JSON Schema is the generated one, and it agrees with the build's checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from buildkit import ROOT, VALID
from jsonschema import Draft202012Validator
from test_build_rules import CASES

from catalog import schema, submission, yamlstrict
from catalog.yamlstrict import BROKEN, Ambiguous
from contract import vocabulary as v
from contract.countries import COUNTRIES
from contract.networks import NETWORKS
from contract.resources import PROGRAM

COMMITTED = ROOT / "content" / "schema" / "program.schema.json"

# Rules the schema cannot state: they involve the file name, two fields at once, or the
# calendar. The build enforces them; editors cannot.
BUILD_ONLY = {
    "slug-file-name",
    "slug-too-long",
    "slug-double-hyphen",
    "slug-field-differs",
    "host-not-site",
    "created-not-real",
    "created-overflow",
    "created-underflow",
    "evidence-is-site",
    "evidence-is-site-spelt-otherwise",
    "evidence-home-page",
    "terms-range-inverted",
    "terms-tiers-descending",
    "terms-member-of-another-mode",
    "terms-duration-not-recurring",
    "terms-duration-and-lifetime",
    # Tag characters lie outside the Basic Multilingual Plane, which the schema's regex
    # dialect cannot name without flags (see catalog/submission.py, INVISIBLE_CHARS).
    "name-hidden-tags",
    "name-message-in-a-flag",
    "name-made-up-region-flag",
    "name-tags-after-flag",
}


def test_committed_schema_is_the_generated_one() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == schema.render(), (
        "content/schema/program.schema.json is stale: run python build.py --write-schema"
    )


def test_schema_is_valid_2020_12_with_a_description_everywhere() -> None:
    generated = schema.generate()
    Draft202012Validator.check_schema(generated)
    assert generated["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for name, prop in generated["properties"].items():
        assert prop["description"], name


def test_schema_takes_its_vocabulary_from_the_contract() -> None:
    props = schema.generate()["properties"]
    assert props["vertical"]["enum"] == list(v.VERTICALS)
    assert props["model"]["enum"] == list(v.MODELS)
    assert props["payout"]["enum"] == list(v.PAYOUTS)
    assert props["status"]["enum"] == list(v.SUBMISSION_STATUSES)
    assert props["markets"]["items"]["enum"] == sorted(COUNTRIES)
    assert props["slug"]["pattern"] == v.SLUG_PATTERN
    assert props["cookieDays"]["maximum"] == v.COOKIE_DAYS_MAX
    # Every API field but the computed ones is a submission field, plus status.
    computed = {"score", "scoreVersion", "scoreBreakdown", "stale"}
    assert computed == set(submission.COMPUTED)
    # ...and networks, what links commissions to the programme (never served as a member).
    assert set(props) == (set(PROGRAM.names) - computed) | {"status", "networks"}
    link = props["networks"]["items"]["properties"]
    assert link["network"]["enum"] == list(NETWORKS)
    terms = props["commissionTerms"]
    assert terms["properties"]["mode"]["enum"] == list(v.COMMISSION_MODES)
    assert set(terms["properties"]) == set(v.TERMS_MEMBERS)
    assert terms["properties"]["unit"]["pattern"] == v.RATE_UNIT_PATTERN
    assert props["holdbackDays"]["maximum"] == v.HOLDBACK_DAYS_MAX
    assert "score" not in props and schema.generate()["additionalProperties"] is False


def test_there_are_249_assigned_country_codes() -> None:
    assert len(COUNTRIES) == 249
    assert all(len(code) == 2 and code.isupper() for code in COUNTRIES)
    assert {"FR", "NO", "GB", "AX", "SS", "BQ"} <= set(COUNTRIES)
    assert not {"UK", "EU", "XK", "AN", "YU"} & set(COUNTRIES)


def _as_json(text: str) -> Any | None:
    """The submission as the plain data an editor validates; None when YAML-level invalid."""
    doc, problems = yamlstrict.load(text.encode())
    if doc is None or problems:
        return None
    found: list[Any] = []

    def walk(value: Any) -> None:
        # JSON has no such values (nor NaN): no editor ever validates them.
        if isinstance(value, Ambiguous) or value is BROKEN or value != value:
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(doc.value)
    return None if found else doc.value


def test_schema_accepts_the_valid_submission_and_drafts() -> None:
    validator = Draft202012Validator(schema.generate())
    assert list(validator.iter_errors(_as_json(VALID))) == []
    assert list(validator.iter_errors({"status": "unpublished"})) == []


# The invalid cases an editor can see: plain data (no YAML-level fault), no build-only rule.
SCHEMA_CASES = [
    pytest.param(_as_json(text), id=case)
    for case, _, text, _ in CASES
    if case not in BUILD_ONLY and _as_json(text) is not None
]


def test_most_rules_are_visible_to_editors() -> None:
    assert len(SCHEMA_CASES) >= 45


@pytest.mark.parametrize("data", SCHEMA_CASES)
def test_schema_rejects_what_the_build_rejects(data: dict[str, Any]) -> None:
    validator = Draft202012Validator(schema.generate())
    assert list(validator.iter_errors(data))


def test_every_published_sample_passes_the_schema() -> None:
    validator = Draft202012Validator(schema.generate())
    for path in sorted((ROOT / "content" / "programs").glob("*.yaml")):
        data = _as_json(path.read_text(encoding="utf-8"))
        if data is not None and data.get("status") == v.PUBLISHED:
            assert list(validator.iter_errors(data)) == [], path.name


def test_schema_file_works_as_an_editor_schema() -> None:
    """What the yaml-language-server reads: JSON, with $schema and completion data."""
    loaded = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert loaded["properties"]["markets"]["items"]["enum"][0] == "AD"
    assert loaded["properties"]["createdAt"]["examples"] == [submission.TIMESTAMP_EXAMPLE]
    assert Path(schema.SCHEMA_PATH).as_posix() == "schema/program.schema.json"
