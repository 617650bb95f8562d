"""The real build of the sample content, for tests that need a dist/ (one way to make it)."""

from __future__ import annotations

from pathlib import Path

from catalog.cli import parse_args
from catalog.pipeline import Options, build
from catalog.progress import Progress

ROOT = Path(__file__).resolve().parents[2]


def build_sample(out: Path, *args: str) -> Path:
    """Build content/ into `out` as `build.py --content content --out OUT ARGS` does, in this
    process (the command line itself is tested in tests/catalog/test_build_cli.py); `out`."""
    parsed = parse_args(["--content", str(ROOT / "content"), "--out", str(out), *args], None)
    options = Options(
        content=parsed.content,
        out=parsed.out,
        base_url=parsed.base_url,
        cache=not parsed.no_cache,
        sync=not parsed.no_sync,
        site=not parsed.no_site,
    )
    build(options, Progress(quiet=True))
    return out
