"""The slow, obvious answers of /v1/programs search, typed filters, sorts and facets, and
catalogues with varied texts to search in (the tests' reference, never the edge's code)."""

from __future__ import annotations

import datetime as dt
import random
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contract import vocabulary as v
from support.distwriter import random_catalogue

Programme = dict[str, Any]

# Words with accents, ligatures and case, French and English, some sharing prefixes.
WORDS = (
    "Académie", "académique", "affiliés", "affiliation", "affiliate", "Boréal", "café",
    "Cafétéria", "CLOUD", "cloudy", "données", "déco", "décoration", "ÉTÉ", "été", "formation",
    "formations", "vidéo", "video", "Straße", "strasse", "œuvre", "Œuf", "naïve", "garçon",
    "travel", "travail", "santé", "sante", "mode", "modem", "x", "42", "l'équipe", "jeux",
)  # fmt: skip
PLATFORMS = ("", "Awin", "awin", "Rakuten", "Affilaé", "AFFILAE", "CJ Affiliate")


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def wordy_catalogue(rng: random.Random, n: int) -> list[Programme]:
    """`random_catalogue` with texts, platforms, dates and freshness that vary."""
    out = []
    for p in random_catalogue(rng, n):
        p["name"] = _text(rng, 1, 3).capitalize()
        p["pitch"] = _text(rng, 3, 20)
        p["commission"] = _text(rng, 0, 3) + f" {rng.randint(1, 50)} %"
        p["host"] = f"{rng.choice(WORDS).lower()}-{p['slug']}.example".replace("'", "")
        p["platform"] = rng.choice(PLATFORMS)
        p["cookieDays"] = rng.choice((0, 1, 7, 30, 30, 60, 90, 365, rng.randint(0, 3650)))
        p["minPayout"] = rng.choice((0, 10, 20, 49.99, 50, 100, rng.randint(0, 10**6)))
        day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 900))
        p["lastVerifiedAt"] = f"{day.isoformat()}T{rng.randint(0, 23):02d}:00:00Z"
        offset = rng.choice(("Z", "+02:00", "-05:00"))
        p["createdAt"] = (
            f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:00:00{offset}"
        )
        out.append(p)
    return out


# --- the reference ---------------------------------------------------------------------


def fold(text: str) -> str:
    """Accents and case away, the documented way (written again here, on purpose)."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return unicodedata.normalize("NFKD", bare.casefold())


def words(text: str) -> list[str]:
    out, current = [], ""
    for c in fold(text):
        if c.isalnum():
            current += c
        elif current:
            out.append(current)
            current = ""
    return [*out, current] if current else out


def query_terms(q: str) -> list[str]:
    return [w for w in dict.fromkeys(words(q)) if len(w) >= 2]


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _sort_key(sort: str, p: Programme) -> tuple[Any, str]:
    if sort == "name":
        return (" ".join(words(p["name"]))[:64], p["slug"])
    if sort == "cookieDays":
        return (-p["cookieDays"], p["slug"])
    if sort == "createdAt":
        return (-_instant(p["createdAt"]).timestamp(), p["slug"])
    return (-p["score"], p["slug"])


def matching(programmes: Sequence[Programme], params: Mapping[str, str]) -> list[Programme]:
    """The programmes a query keeps, in no particular order."""
    reference = max(p["lastVerifiedAt"] for p in programmes)[:10] if programmes else ""
    terms = query_terms(params["q"]) if "q" in params else []

    def keeps(p: Programme) -> bool:
        if "vertical" in params and p["vertical"] != params["vertical"]:
            return False
        if "model" in params and p["model"] != params["model"]:
            return False
        if "market" in params and params["market"].upper() not in {m.upper() for m in p["markets"]}:
            return False
        if "recurring" in params and p["recurring"] != (params["recurring"] == "true"):
            return False
        if "minScore" in params and p["score"] < int(params["minScore"]):
            return False
        if "cookieDaysMin" in params and p["cookieDays"] < int(params["cookieDaysMin"]):
            return False
        if "minPayoutMax" in params and p["minPayout"] > int(params["minPayoutMax"]):
            return False
        if "payout" in params and p["payout"] != params["payout"]:
            return False
        if "platform" in params and fold(p["platform"]) != fold(params["platform"]):
            return False
        if "commissionMode" in params and p["commissionTerms"]["mode"] != params["commissionMode"]:
            return False
        if "verifiedWithinDays" in params:
            age = (
                dt.date.fromisoformat(reference) - dt.date.fromisoformat(p["lastVerifiedAt"][:10])
            ).days
            if age > int(params["verifiedWithinDays"]):
                return False
        texts = words(" ".join((p["name"], p["pitch"], p["host"], p["commission"])))
        return all(any(w.startswith(t) for w in texts) for t in terms)

    return [p for p in programmes if keeps(p)]


def reference(programmes: Sequence[Programme], params: Mapping[str, str]) -> list[str]:
    """The slugs of a query's answer, in its sort's order."""
    sort = params.get("sort", "score")
    kept = matching(programmes, params)
    return [p["slug"] for p in sorted(kept, key=lambda p: _sort_key(sort, p))]


def reference_facets(programmes: Sequence[Programme], params: Mapping[str, str]) -> dict[str, Any]:
    """The ProgramFacets resource /v1/programs/facets answers for these filters."""
    kept = matching(programmes, params)
    closed: dict[str, Iterable[str]] = {
        "vertical": v.VERTICALS,
        "model": v.MODELS,
        "recurring": ("true", "false"),
        "payout": v.PAYOUTS,
        "commissionMode": v.COMMISSION_MODES,
    }
    facets: list[dict[str, Any]] = []
    for name in (
        "vertical",
        "model",
        "market",
        "recurring",
        "payout",
        "platform",
        "commissionMode",
    ):
        if name == "market":
            tally = Counter(m.upper() for p in kept for m in set(p["markets"]))
        elif name == "commissionMode":
            tally = Counter(p["commissionTerms"]["mode"] for p in kept)
        elif name == "recurring":
            tally = Counter("true" if p["recurring"] else "false" for p in kept)
        else:
            tally = Counter(str(p[name]) for p in kept)
        if name in closed:
            counted = [(value, tally.get(value, 0)) for value in closed[name]]
        else:
            counted = sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))
        facets.append({"facet": name, "values": [{"value": k, "count": n} for k, n in counted]})
    return {"total": len(kept), "facets": facets}
