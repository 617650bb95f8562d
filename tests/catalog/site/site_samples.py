"""Programmes for the site's tests: the sample submissions, and synthetic ones in bulk."""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from catalog.model import Program
from contract.vocabulary import MODELS, PAYOUTS, PUBLISHED, SCORE_VERSION, VERTICALS

ROOT = Path(__file__).resolve().parents[3]
CONTENT = ROOT / "content" / "programs"
BASE_URL = "https://affiliates.example"
FIELDS = tuple(f.name for f in dataclasses.fields(Program))
TERMS: dict[str, Any] = {
    "mode": "percentage",
    "value": 10,
    "upTo": None,
    "unit": "percent",
    "durationMonths": None,
    "lifetime": False,
    "tiers": [],
    "parts": [],
}


def stub_score(data: dict[str, Any]) -> int:
    """A deterministic stand-in for the build's score (the site only displays it)."""
    return zlib.crc32(str(data.get("name", "")).encode()) % 101


def program_from(slug: str, data: dict[str, Any]) -> Program:
    values = {name: data.get(name) for name in FIELDS}
    values.update(
        slug=slug,
        platform=data.get("platform") or "",
        image=data.get("image") or "",
        markets=tuple(data.get("markets") or ()),
        createdAt=str(data.get("createdAt", "")),
        score=stub_score(data),
        holdbackDays=data.get("holdbackDays"),
        currency=data.get("currency"),
        lastVerifiedAt=str(data.get("lastVerifiedAt", "")),
        stale=False,
        scoreVersion=SCORE_VERSION,
        scoreBreakdown=[],  # the stub score has no breakdown: pages explain it in words
    )
    return Program(**values)


def directory_order(programs: Iterable[Program]) -> list[Program]:
    return sorted(programs, key=lambda p: p.sort_key)


def sample_programs() -> list[Program]:
    """The published sample submissions, in directory order."""
    programs = []
    for path in sorted(CONTENT.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("status") == PUBLISHED:
            programs.append(program_from(path.stem, data))
    return directory_order(programs)


def synthetic(count: int) -> list[Program]:
    """`count` distinct, valid programmes spread over every enum value, in directory order."""
    markets = ("FR", "BE", "CH", "CA", "DE", "ES", "IT", "GB", "US", "NL", "PT", "LU")
    programs = []
    for i in range(count):
        programs.append(
            Program(
                slug=f"programme-{i:06d}",
                name=f"Programme {i}",
                host=f"p{i}.example",
                site=f"https://p{i}.example/",
                pitch=f"Programme number {i}: a plain pitch of a few words, repeated. " * 3,
                vertical=VERTICALS[i % len(VERTICALS)],
                model=MODELS[i % len(MODELS)],
                commission=f"{i % 50}% per sale",
                recurring=i % 3 == 0,
                cookieDays=i % 90,
                payout=PAYOUTS[i % len(PAYOUTS)],
                minPayout=(i % 10) * 10,
                markets=tuple(markets[(i + k) % len(markets)] for k in range(1 + i % 4)),
                platform="" if i % 2 else "Awin",
                signupUrl=f"https://p{i}.example/partners",
                score=(i * 37) % 101,
                image="",
                createdAt="2024-01-01T00:00:00Z",
                commissionTerms=dict(TERMS, value=i % 50),
                holdbackDays=None if i % 2 else 30,
                currency=None if i % 3 else "EUR",
                evidence=f"https://p{i}.example/partners/terms",
                lastVerifiedAt="2024-06-01T00:00:00Z",
                stale=i % 7 == 0,
                scoreVersion=SCORE_VERSION,
                scoreBreakdown=[],
            )
        )
    return directory_order(programs)
