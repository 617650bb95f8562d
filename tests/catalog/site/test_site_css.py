"""templates/static/site.css: small, and readable (WCAG AA contrast) in both colour schemes."""

from __future__ import annotations

import re

import pytest
from site_samples import ROOT

CSS = (ROOT / "templates" / "static" / "site.css").read_text(encoding="utf-8")

# (foreground, background, minimum ratio): every pair the stylesheet puts text or a focus
# ring on. 4.5 for text, 3 for the focus outline (a non-text indicator).
PAIRS = [
    ("text", "bg", 4.5),
    ("text", "surface", 4.5),
    ("muted", "bg", 4.5),
    ("muted", "surface", 4.5),
    ("accent-ink", "bg", 4.5),
    ("accent-ink", "surface", 4.5),
    ("accent-ink", "accent-soft", 4.5),
    ("text", "accent-soft", 4.5),
    ("accent-text", "accent", 4.5),
    ("good", "good-soft", 4.5),
    ("focus", "bg", 3.0),
    ("focus", "surface", 3.0),
]


def palette(block: str) -> dict[str, str]:
    found = re.findall(r"--([a-z-]+):\s*#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b", block)
    # #fff -> #ffffff
    return {name: "#" + (h if len(h) == 6 else "".join(c * 2 for c in h)) for name, h in found}


def schemes() -> dict[str, dict[str, str]]:
    light = palette(CSS.split("@media (prefers-color-scheme: dark)")[0])
    dark_block = re.search(r"prefers-color-scheme: dark\)\s*\{(.*?)\n\}", CSS, re.S).group(1)
    return {"light": light, "dark": {**light, **palette(dark_block)}}


def luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("fg", "bg", "minimum"), PAIRS)
def test_contrast(scheme, fg, bg, minimum):
    colours = schemes()[scheme]
    ratio = contrast(colours[fg], colours[bg])
    assert ratio >= minimum, f"{scheme}: --{fg} on --{bg} is {ratio:.2f}:1"


def test_focus_is_always_visible_and_motion_is_optional():
    assert re.search(r":focus-visible\s*\{[^}]*outline:\s*3px solid", CSS)
    assert "outline: none" not in CSS.replace("main:focus {\n  outline: none;", "")
    assert "prefers-reduced-motion: no-preference" in CSS


def test_small():
    assert len(CSS.encode()) < 10 * 1024
