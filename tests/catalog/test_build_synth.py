"""bench/synth.py makes valid, deterministic catalogues (the benchmarks rely on both)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from buildkit import ROOT, Content, snapshot


def synth():  # bench/ is not a package: load the module from its file
    spec = importlib.util.spec_from_file_location("synth", ROOT / "bench" / "synth.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_synthetic_catalogue_is_valid_and_deterministic(tmp_path: Path, no_site: None) -> None:
    generate = synth().generate
    generate(150, 7, tmp_path / "a")
    generate(150, 7, tmp_path / "b")
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    content = Content(tmp_path)
    result = content.build(content=tmp_path / "a")  # raises on any invalid submission
    counts = result.counts
    assert counts["submissions"] == 150
    assert 0.7 < counts["published"] / 150 < 0.95
    assert counts["unpublished"] and counts["rejected"]
