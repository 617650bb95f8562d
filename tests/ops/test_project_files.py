"""LICENSE is the licence pyproject.toml names, and CHANGELOG.md covers the API as the
contract defines it, with its deprecation policy."""

from __future__ import annotations

import re
import tomllib

from opskit import ROOT

from contract.endpoints import ENDPOINTS


def test_license_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_changelog_names_every_endpoint_of_v1() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    for endpoint in ENDPOINTS:
        assert f"`GET {endpoint.path}`" in text, endpoint.path
    assert "`GET /openapi.json`" in text


def test_changelog_states_the_deprecation_headers() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    policy = text[text.index("## Deprecation policy") :]
    assert "RFC 9745" in policy and "RFC 8594" in policy
    assert re.search(r"`Deprecation: @\d+`", policy)  # RFC 9745: a structured-field date
    assert re.search(r"`Sunset: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT`", policy)
    assert 'rel="deprecation"' in policy
