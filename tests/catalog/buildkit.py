"""Helpers of the build's tests (a module of its own: test modules must not import conftest,
whose name every test folder shares)."""

from __future__ import annotations

import ast
import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import build
from catalog.progress import Progress

ROOT = Path(__file__).resolve().parents[2]

# A complete, valid published submission; tests replace lines of it.
VALID = """\
status: published
name: Acme Store
host: acme.fr
site: https://www.acme.fr/
pitch: >-
  Acme sells everything a cartoon coyote could need, delivered in
  forty-eight hours anywhere in Europe.
vertical: ecommerce
model: cps
commission: "8% per sale"
recurring: false
cookieDays: 30
payout: monthly
minPayout: 50
markets: [FR, BE]
platform: Awin
signupUrl: https://www.acme.fr/affiliation
image: https://www.acme.fr/banner.png
createdAt: "2024-03-01T09:00:00Z"
commissionTerms: {mode: percentage, value: 8, unit: percent}
evidence: https://www.acme.fr/affiliation/conditions
lastVerifiedAt: "2024-03-01T09:00:00Z"
"""


def submission(base: str = VALID, **changes: str | None) -> str:
    """VALID with fields replaced (`name="X"` gives `name: X`) or removed (None) or added."""
    lines = base.splitlines()
    out: list[str] = []
    seen: set[str] = set()
    skipping = False
    for line in lines:
        key = line.split(":", 1)[0] if line and not line.startswith(" ") else None
        if key is None and skipping:
            continue  # continuation lines of a replaced block scalar
        skipping = False
        if key in changes:
            seen.add(key)
            skipping = True
            if changes[key] is not None:
                out.append(f"{key}: {changes[key]}")
            continue
        out.append(line)
    out += [f"{k}: {value}" for k, value in changes.items() if k not in seen and value is not None]
    return "\n".join(out) + "\n"


@dataclass
class Content:
    """A content directory under tmp_path, and the output directory beside it."""

    root: Path

    @property
    def programs(self) -> Path:
        return self.root / "content" / "programs"

    @property
    def content(self) -> Path:
        return self.root / "content"

    @property
    def out(self) -> Path:
        return self.root / "dist"

    def add(self, slug: str, text: str) -> Path:
        """Write programs/<slug>.yaml (text is dedented)."""
        self.programs.mkdir(parents=True, exist_ok=True)
        path = self.programs / f"{slug}.yaml"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def options(self, **kwargs: object) -> build.Options:
        defaults: dict[str, object] = {"content": self.content, "out": self.out, "sync": False}
        defaults.update(kwargs)
        return build.Options(**defaults)  # type: ignore[arg-type]

    def build(self, **kwargs: object) -> build.Result:
        """Run the pipeline in-process (quiet, no fsync)."""
        return build.build(self.options(**kwargs), Progress(quiet=True))


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root: {relative path: bytes}."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def leftovers(parent: Path) -> list[str]:
    """Staging directories left beside the output directory."""
    return sorted(p.name for p in parent.iterdir() if "-staging-" in p.name)


CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def project_imports(*roots: str) -> set[str]:
    """The project modules (catalog/, contract/) that `roots` import, directly or not,
    themselves included, as paths relative to the repository."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in ast.walk(ast.parse((ROOT / name).read_text())):
            modules: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            for module in modules:
                path = module.replace(".", "/") + ".py"
                if module.split(".")[0] in ("catalog", "contract") and (ROOT / path).exists():
                    todo.append(path)
    return seen
