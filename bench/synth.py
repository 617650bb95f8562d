"""A synthetic catalogue of programme submissions, for benchmarks (the build's and the edge's).

    generate(20_000, seed=1, out_dir=Path("bench/out/synth"))  # writes out_dir/programs/*.yaml

Deterministic for a given (n, seed). Realistic in the ways that cost something: 1 to 6
markets each (mostly French-speaking Europe, a long tail over all 249 codes), pitches of a
few hundred characters with accents, optional fields left out now and then, folded block
scalars, about 15% of submissions unpublished or rejected.
"""

from __future__ import annotations

import itertools
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from contract import vocabulary as v  # noqa: E402
from contract.countries import COUNTRIES  # noqa: E402

# Market weights: a French-language directory, as the verticals suggest.
MARKET_WEIGHTS: dict[str, float] = {
    "FR": 40, "BE": 15, "CH": 12, "CA": 10, "LU": 6, "MC": 2, "DE": 6, "ES": 6, "IT": 6,
    "GB": 6, "US": 6, "NL": 4, "PT": 4, "AT": 3, "IE": 2, "SE": 2, "NO": 2, "DK": 2, "FI": 2,
    "PL": 2, "MA": 3, "SN": 2, "CI": 2, "TN": 2, "DZ": 1, "RE": 1, "GP": 1, "MQ": 1, "GF": 1,
    "NC": 1, "PF": 1,
}  # fmt: skip
TAIL_WEIGHT = 0.02  # every other assigned code: rare, but each shows up now and then
STATUS_WEIGHTS = {"published": 85, "unpublished": 10, "rejected": 5}
MODEL_WEIGHTS = {"cps": 40, "cpa": 20, "cpl": 12, "recurring": 18, "hybrid": 10}
PAYOUT_WEIGHTS = {"weekly": 5, "biweekly": 10, "monthly": 55, "net30": 20, "net60": 10}
COOKIE_DAYS = (0, 1, 7, 14, 30, 30, 30, 45, 60, 90, 90, 120, 180, 365)
MIN_PAYOUTS = (0, 10, 20, 25, 50, 50, 50, 100, 100, 150, 250, 500, 49.99)
# The currency a programme pays in, by its first market (the euro elsewhere: the directory's
# programmes are mostly French-speaking advertisers).
PAYOUT_CURRENCIES = {"CH": "CHF", "CA": "CAD", "GB": "GBP", "US": "USD", "SE": "SEK", "NO": "NOK",
                     "DK": "DKK", "PL": "PLN", "MA": "MAD", "SN": "XOF", "CI": "XOF", "TN": "TND",
                     "DZ": "DZD", "NC": "XPF", "PF": "XPF"}  # fmt: skip
PLATFORMS = (
    "Awin", "Affilae", "Kwanko", "CJ Affiliate", "Rakuten Advertising", "Impact",
    "Tradedoubler", "Effiliation", "PartnerStack", "ShareASale", "Timeone", "Daisycon",
)  # fmt: skip
TLDS = ("fr", "fr", "fr", "com", "com", "io", "be", "ch", "de", "eu", "net", "co")
FIRST = (
    "Atelier", "Maison", "Studio", "Cloud", "Verde", "Nova", "Cap", "Petit", "Grand",
    "Alpha", "Lumi", "Kiwi", "Opti", "Terra", "Mare", "Sol", "Boréal", "Zen", "Hexa", "Ori",
    "Velo", "Pixel", "Data", "Gusto", "Épi", "Ciel", "Flex", "Moka", "Nid", "Arbor",
)  # fmt: skip
SECOND = (
    "Shop", "Lab", "Box", "Market", "Club", "Pro", "Factory", "Hub", "Nature", "Voyage",
    "Santé", "Finance", "Mode", "Déco", "Jeux", "Services", "Immo", "Formation", "Bio", "Tech",
)  # fmt: skip
WORDS = (
    "affiliés", "commission", "produits", "clients", "qualité", "livraison", "rapide",
    "offre", "unique", "abonnement", "gratuit", "essai", "tableau", "de", "bord", "suivi",
    "en", "temps", "réel", "bannières", "liens", "profonds", "marques", "créateurs",
    "communauté", "conversion", "élevée", "panier", "moyen", "fidélité", "équipe", "dédiée",
    "support", "réactif", "paiement", "mensuel", "partenaires", "exclusif", "catalogue",
    "français", "européen", "durable", "innovant", "et", "pour", "avec", "nos", "vos", "les",
)  # fmt: skip
EPOCH = datetime(2019, 1, 1, tzinfo=UTC)
SPAN_SECONDS = int((datetime(2025, 6, 30, tzinfo=UTC) - EPOCH).total_seconds())


def generate(n: int, seed: int, out_dir: Path) -> None:
    """Write n synthetic submissions to out_dir/programs/<slug>.yaml."""
    rng = random.Random(seed)
    programs = Path(out_dir) / "programs"
    programs.mkdir(parents=True, exist_ok=True)
    markets, weights = _market_table()
    for i in range(n):
        slug, text = _submission(rng, i, markets, weights)
        (programs / f"{slug}.yaml").write_text(text, encoding="utf-8")


def _market_table() -> tuple[list[str], list[float]]:
    """Codes and their cumulative weights (what random.choices wants for speed)."""
    codes = sorted(COUNTRIES)
    return codes, list(itertools.accumulate(MARKET_WEIGHTS.get(c, TAIL_WEIGHT) for c in codes))


def _pick(rng: random.Random, weighted: dict[str, float]) -> str:
    return rng.choices(list(weighted), weights=list(weighted.values()))[0]


def _wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap (textwrap is slow); folding the lines back gives the text again."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


def _ascii(word: str) -> str:
    table = str.maketrans("éèêàâîïôûüçÉ", "eeeaaiiouucE")
    return word.translate(table).lower()


def _submission(
    rng: random.Random, i: int, codes: list[str], weights: list[float]
) -> tuple[str, str]:
    first, second = rng.choice(FIRST), rng.choice(SECOND)
    name = f"{first} {second} {i}"
    slug = f"{_ascii(first)}-{_ascii(second)}-{i}"
    host = f"{_ascii(first)}{_ascii(second)}{i}.{rng.choice(TLDS)}"
    site = f"https://{'www.' if rng.random() < 0.5 else ''}{host}/"
    model = _pick(rng, MODEL_WEIGHTS)
    recurring = model == "recurring" or (model == "hybrid" and rng.random() < 0.5)
    k = rng.randint(1, 6)
    chosen: list[str] = []
    while len(chosen) < k:
        code = rng.choices(codes, cum_weights=weights)[0]
        if code not in chosen:
            chosen.append(code)
    rate = rng.choice((5, 8, 10, 12, 15, 20, 25, 30, 40, 50))
    commission = {
        "cps": f"{rate}% par vente",
        "cpa": f"{rate * 2} € par client validé",
        "cpl": f"{rate // 2 + 1} € par lead qualifié",
        "recurring": f"{rate}% récurrent pendant 12 mois",
        "hybrid": f"{rate} € + {rate // 2}% par vente",
    }[model]
    pitch = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 90)))
    pitch = f"{name} : {pitch}."
    created = EPOCH + timedelta(seconds=rng.randrange(SPAN_SECONDS))
    offset = rng.choice(("Z", "+01:00", "+02:00"))
    lines = [
        f"# Synthetic submission {i} (bench/synth.py)",
        f"status: {_pick(rng, STATUS_WEIGHTS)}",
        f"name: {json.dumps(name, ensure_ascii=False)}",
        f"host: {host}",
        f"site: {site}",
        "pitch: >-",
        *("  " + line for line in _wrap(pitch, 76)),
        f"vertical: {rng.choice(v.VERTICALS)}",
        f"model: {model}",
        f"commission: {json.dumps(commission, ensure_ascii=False)}",
        *_terms(model, rate),
        f"recurring: {'true' if recurring else 'false'}",
        f"cookieDays: {rng.choice(COOKIE_DAYS)}",
        f"payout: {_pick(rng, PAYOUT_WEIGHTS)}",
        f"minPayout: {rng.choice(MIN_PAYOUTS)}",
        f"currency: {PAYOUT_CURRENCIES.get(chosen[0], 'EUR')}",
    ]
    quoted = [f'"{c}"' if c == "NO" else c for c in chosen]  # unquoted NO is false in YAML 1.1
    if rng.random() < 0.7:
        lines.append(f"markets: [{', '.join(quoted)}]")
    else:
        lines += ["markets:", *(f"  - {c}" for c in quoted)]
    if rng.random() < 0.6:
        platform = rng.choice(PLATFORMS)
        lines.append(f"platform: {platform}")
        lines.append(f"signupUrl: https://{_ascii(platform).replace(' ', '')}.example/join/{slug}")
    else:
        lines.append(f"signupUrl: {site}affiliation")
    if rng.random() < 0.7:
        lines.append(f"image: https://cdn.{host}/affiliates/banner-{i}.jpg")
    stamp = created.strftime("%Y-%m-%dT%H:%M:%S")
    lines.append(f'createdAt: "{stamp}{offset}"')
    if rng.random() < 0.4:
        lines.append(f"holdbackDays: {rng.choice((0, 14, 30, 60))}")
    lines.append(f"evidence: {site}affiliation/conditions")
    # Verified after publication, within about two years: some of them are stale.
    verified = created + timedelta(seconds=rng.randrange(2 * 365 * 86400))
    lines.append(f'lastVerifiedAt: "{verified.strftime("%Y-%m-%dT%H:%M:%S")}Z"')
    return slug, "\n".join(lines) + "\n"


def _terms(model: str, rate: int) -> list[str]:
    """The typed terms of the commission wording `_submission` writes for this model."""
    body = {
        "cps": [f"  value: {rate}", "  unit: percent"],
        "cpa": [f"  value: {rate * 2}", "  unit: EUR"],
        "cpl": [f"  value: {rate // 2 + 1}", "  unit: EUR"],
        "recurring": [f"  value: {rate}", "  unit: percent", "  durationMonths: 12"],
        "hybrid": [
            "  parts:",
            f"    - {{value: {rate}, unit: EUR}}",
            f"    - {{value: {rate // 2}, unit: percent}}",
        ],
    }[model]
    mode = {"cps": "percentage", "cpa": "flat", "cpl": "flat", "recurring": "percentage"}
    return ["commissionTerms:", f"  mode: {mode.get(model, 'hybrid')}", *body]


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args()
    generate(args.n, args.seed, args.out_dir)
