"""The HTML directory: renders the static website from templates/ (issue 6: not built yet)."""

from __future__ import annotations

from collections.abc import Sequence

from catalog.model import Program


def render_site(programs: Sequence[Program], base_url: str) -> dict[str, bytes]:
    """Every page of the website, as {path relative to dist/: bytes}, programmes in directory order."""
    return {}
