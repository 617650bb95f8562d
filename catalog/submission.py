"""The submission format, field by field: what the validator enforces and the schema states.

`catalog.validation` checks submissions against these specs and `catalog.schema` turns the
same specs into the JSON Schema that editors use, so the two cannot drift apart. Enums and
limits come from `contract.vocabulary`.
"""

from __future__ import annotations

from dataclasses import dataclass

from contract import vocabulary as v
from contract.networks import NETWORKS, PROGRAM_ID_MAX_LENGTH, PROGRAM_NETWORKS_MAX
from contract.resources import PROGRAM

HOST_PATTERN = (
    r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
    r"[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$"
)
# Characters no text of a submission needs, and that hide or disguise what it says: C0
# controls (tabs and line breaks aside) and DEL, then (INVISIBLE_CHARS) C1 controls, the
# zero-width space, word joiners, Hangul blank fillers and the byte order mark, line and
# paragraph separators, and the bidirectional controls that can make text read differently
# from how it is stored ("Trojan Source"), U+061C included. Not the zero-width (non-)joiners
# U+200C/D, which Persian words and emoji sequences need, nor the soft hyphen. All in the
# Basic Multilingual Plane, so that the schema's regex dialect reads the class without flags.
# Regex class contents written with escapes that Python's re and ECMA-262 (the schema's
# regex dialect) read alike: validation and the schema share them.
CONTROL_CHARS = r"\x00-\x08\x0b-\x1f\x7f"
INVISIBLE_CHARS = (
    r"\x80-\x9f\u061c\u115f\u1160\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064"
    r"\u2066-\u2069\u3164\ufeff\uffa0"
)
# No space or control character (listed too: Python's \s and ECMA's differ on \x1c-\x1f).
_NO_URL = rf"\s\x00-\x1f\x7f{INVISIBLE_CHARS}"
URL_PATTERN = rf"^https?://[^/?#@{_NO_URL}]+(?:[/?#][^{_NO_URL}]*)?$"
TIMESTAMP_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)
TIMESTAMP_EXAMPLE = "2024-03-01T09:00:00Z"
PLATFORM_MAX_LENGTH = v.NAME_MAX_LENGTH  # a platform is a name; the vocabulary has no own limit


@dataclass(frozen=True)
class FieldSpec:
    """One field of a submission.

    `kind` picks the check: line (one line of text), text (may span lines), enum, boolean,
    integer, number, markets, currency, url, host, slug, timestamp, terms (the typed
    commission), networks (the programme's ids at networks).
    """

    name: str
    kind: str
    description: str
    required: bool = True
    enum: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    max_length: int | None = None
    empty_allowed: bool = False  # "" is a valid value (optional URL)
    examples: tuple[object, ...] = ()
    hint: str = ""  # said when the field is missing, after the example line


def _api(name: str) -> str:
    return PROGRAM.field(name).description


STATUS = FieldSpec(
    "status",
    "enum",
    "Publication state. published: listed in the directory and the API (the build checks "
    "every other field). unpublished (a draft, or a paused programme) and rejected (refused "
    "by the moderators): kept out of every output and not checked further.",
    enum=v.SUBMISSION_STATUSES,
    examples=(v.PUBLISHED,),
)

FIELDS: tuple[FieldSpec, ...] = (
    STATUS,
    FieldSpec(
        "slug",
        "slug",
        "Optional: the slug is the file name without .yaml. If written here it must equal it. "
        f"Lowercase letters, digits and single hyphens, 1 to {v.SLUG_MAX_LENGTH} characters.",
        required=False,
        max_length=v.SLUG_MAX_LENGTH,
        examples=("acme-store",),
    ),
    FieldSpec(
        "name",
        "line",
        f"{_api('name')} One line, at most {v.NAME_MAX_LENGTH} characters.",
        max_length=v.NAME_MAX_LENGTH,
        examples=("Acme Store",),
    ),
    FieldSpec(
        "host",
        "host",
        f"{_api('host')} Lowercase, no path or port, internationalised names in punycode "
        "(xn--...). The website's host must be this domain or one of its subdomains.",
        examples=("acme.fr",),
    ),
    FieldSpec(
        "site",
        "url",
        f"{_api('site')} An absolute http(s) URL on the host above.",
        max_length=v.URL_MAX_LENGTH,
        examples=("https://www.acme.fr/",),
    ),
    FieldSpec(
        "pitch",
        "text",
        f"{_api('pitch')} At most {v.PITCH_MAX_LENGTH} characters; a folded block (pitch: >-) "
        "keeps long text readable.",
        max_length=v.PITCH_MAX_LENGTH,
    ),
    FieldSpec("vertical", "enum", _api("vertical"), enum=v.VERTICALS),
    FieldSpec("model", "enum", _api("model"), enum=v.MODELS),
    FieldSpec(
        "commission",
        "line",
        f"{_api('commission')} One line, at most {v.COMMISSION_MAX_LENGTH} characters; quote it "
        'when it starts with a digit, e.g. "30% per sale".',
        max_length=v.COMMISSION_MAX_LENGTH,
        examples=("30% per sale",),
    ),
    FieldSpec(
        "recurring",
        "boolean",
        f"{_api('recurring')} Exactly true or false (not yes/no).",
    ),
    FieldSpec(
        "cookieDays",
        "integer",
        f"{_api('cookieDays')} A whole number from 0 to {v.COOKIE_DAYS_MAX}.",
        minimum=0,
        maximum=v.COOKIE_DAYS_MAX,
        examples=(30,),
    ),
    FieldSpec("payout", "enum", _api("payout"), enum=v.PAYOUTS),
    FieldSpec(
        "minPayout",
        "number",
        f"{_api('minPayout')} From 0 to {v.MIN_PAYOUT_MAX}.",
        minimum=0,
        maximum=v.MIN_PAYOUT_MAX,
        examples=(50,),
    ),
    FieldSpec(
        "currency",
        "currency",
        f"{_api('currency')} Optional: leave it out when the programme's public page does "
        "not say. A current ISO 4217 code, in capitals.",
        required=False,
        examples=("EUR",),
    ),
    FieldSpec(
        "markets",
        "markets",
        f"{_api('markets')} Officially assigned codes, in capitals, each once, at least one and "
        f'at most {v.MARKETS_MAX}. Quote "NO" (Norway): unquoted, YAML 1.1 reads it as false.',
        examples=(["FR", "BE"],),
    ),
    FieldSpec(
        "platform",
        "line",
        f"{_api('platform')} Optional: leave it out for an in-house programme. At most "
        f"{PLATFORM_MAX_LENGTH} characters.",
        required=False,
        max_length=PLATFORM_MAX_LENGTH,
        empty_allowed=True,
    ),
    FieldSpec(
        "networks",
        "networks",
        "Optional: where the programme runs, so that publishers' commissions from these "
        "networks are linked to it. A list of mappings, each network (one of "
        f"{', '.join(NETWORKS)}) and programId (the programme's id at that network, as text, "
        f"at most {PROGRAM_ID_MAX_LENGTH} characters); each pair once, and claimed by no "
        f"other programme; at most {PROGRAM_NETWORKS_MAX} entries.",
        required=False,
        examples=([{"network": "awin", "programId": "1234"}],),
    ),
    FieldSpec(
        "signupUrl",
        "url",
        f"{_api('signupUrl')} An absolute http(s) URL.",
        max_length=v.URL_MAX_LENGTH,
        examples=("https://www.acme.fr/affiliation",),
    ),
    FieldSpec(
        "image",
        "url",
        f"{_api('image')} Optional: an absolute http(s) URL, or leave it out.",
        required=False,
        max_length=v.URL_MAX_LENGTH,
        empty_allowed=True,
    ),
    FieldSpec(
        "commissionTerms",
        "terms",
        f"{_api('commissionTerms')} mode: {', '.join(v.COMMISSION_MODES)}. percentage and flat: "
        "value (the lower bound of a range), upTo (its upper bound, or the only number of an "
        '"up to" offer) and unit. tiered: unit and tiers (from, value), ascending. hybrid: '
        "parts (value, upTo, unit). unit is percent or the ISO 4217 code of the currency "
        "(EUR): a rate without its unit is refused. A recurring programme may add "
        "durationMonths or lifetime: true.",
        examples=({"mode": v.PERCENTAGE, "value": 30, "unit": v.PERCENT},),
    ),
    FieldSpec(
        "holdbackDays",
        "integer",
        f"{_api('holdbackDays')} Optional: leave it out when the programme does not publish "
        f"one. A whole number from 0 to {v.HOLDBACK_DAYS_MAX}.",
        required=False,
        minimum=0,
        maximum=v.HOLDBACK_DAYS_MAX,
        examples=(30,),
    ),
    FieldSpec(
        "evidence",
        "url",
        f"{_api('evidence')} An absolute http(s) URL of the page stating the terms (the "
        "affiliation or partner page), not the website's home page.",
        max_length=v.URL_MAX_LENGTH,
        examples=("https://www.acme.fr/affiliation/conditions",),
        hint="give the public page where the advertiser states these terms (not the home "
        "page), so that readers and reviewers can check them",
    ),
    FieldSpec(
        "lastVerifiedAt",
        "timestamp",
        f"{_api('lastVerifiedAt')} When someone last checked the terms above against the "
        f'evidence page: an RFC 3339 date and time with its time zone, e.g. "{TIMESTAMP_EXAMPLE}".',
        examples=(TIMESTAMP_EXAMPLE,),
    ),
    FieldSpec(
        "createdAt",
        "timestamp",
        f"{_api('createdAt')} Required when status is published: an RFC 3339 date and time "
        f'with its time zone (Z or an offset), e.g. "{TIMESTAMP_EXAMPLE}". The API shows it '
        "in UTC.",
        examples=(TIMESTAMP_EXAMPLE,),
    ),
)

BY_NAME: dict[str, FieldSpec] = {f.name: f for f in FIELDS}
_BY_THE_BUILD = "is computed by the build from the programme's terms (docs/scoring.md); "
COMPUTED: dict[str, str] = {
    "score": _BY_THE_BUILD + "remove this line",
    "scoreVersion": _BY_THE_BUILD + "remove this line",
    "scoreBreakdown": _BY_THE_BUILD + "remove these lines",
    "stale": "is computed by the build from lastVerifiedAt (docs/scoring.md); remove this line",
}
