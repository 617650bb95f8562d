"""Every submission rule: an invalid file gives `file:line:column: field: message`, exactly there."""

from __future__ import annotations

import math

import pytest
from buildkit import VALID, Content, submission
from hypothesis import given, settings
from hypothesis import strategies as st

import build
from catalog import submission as fields
from catalog import validation
from catalog.errors import BuildError
from catalog.progress import Progress


def problems_of(content: Content) -> list[str]:
    """The printed problems of a check of the whole content (none: an empty list)."""
    try:
        build.check(content.options(), [], Progress(quiet=True))
    except BuildError as exc:
        return [str(d) for d in exc.diagnostics if d.severity == "error"]
    return []


# (case id, file stem, YAML text, [(line, column, field, words the message contains)]).
# Columns count characters from 1: in "markets: [FR, NO]" the NO is at column 15.
# VALID's lines: 1 status, 2 name, 3 host, 4 site, 5-7 pitch, 8 vertical, 9 model,
# 10 commission, 11 recurring, 12 cookieDays, 13 payout, 14 minPayout, 15 markets,
# 16 platform, 17 signupUrl, 18 image, 19 createdAt.
CASES = [
    # --- YAML's surprises -----------------------------------------------------------
    ("market-no-unquoted", "acme", submission(markets="[FR, NO]"), [(15, 15, "markets[1]", 'quote it: "NO"')]),
    ("bool-yes", "acme", submission(recurring="yes"), [(11, 12, "recurring", "write true")]),
    ("bool-off", "acme", submission(recurring="off"), [(11, 12, "recurring", "write false")]),
    ("bool-quoted", "acme", submission(recurring='"true"'), [(11, 12, "recurring", "without quotes")]),
    ("octal", "acme", submission(cookieDays="0755"), [(12, 13, "cookieDays", "octal")]),
    ("hex", "acme", submission(cookieDays="0x1E"), [(12, 13, "cookieDays", "hexadecimal")]),
    ("sexagesimal", "acme", submission(commission="1:30"), [(10, 13, "commission", 'quote it: "1:30"')]),
    ("underscore-number", "acme", submission(minPayout="1_000"), [(14, 12, "minPayout", "underscores")]),
    ("date-in-string", "acme", submission(name="2024-01-01"), [(2, 7, "name", "a date")]),
    ("number-in-string", "acme", submission(commission="30"), [(10, 13, "commission", 'quote it: "30"')]),
    ("bool-in-string", "acme", submission(platform="on"), [(16, 11, "platform", 'quote it: "on"')]),
    ("duplicate-key", "acme", VALID + "name: Other\n", [(23, 1, "name", "duplicate key")]),
    ("duplicate-block-key", "acme", submission(markets="\n  - FR\n  - BE") + "markets: [FR]\n", [(25, 1, "markets", "first set on line 15")]),
    ("alias", "acme", submission(name="&n Acme", platform="*n"), [(2, 7, "name", "anchor &n"), (16, 11, "platform", "alias *n")]),
    ("anchor-alone", "acme", submission(name="&n Acme"), [(2, 7, "name", "anchor &n")]),
    ("anchor-on-a-key", "acme", VALID.replace("platform:", "&p platform:") + "slug: *p\n", [(16, 1, "platform", "anchor &p"), (23, 7, "slug", "alias *p")]),
    ("tag-int", "acme", submission(cookieDays="!!int 31"), [(12, 13, "cookieDays", "tag !!int")]),
    ("tag-non-specific", "acme", submission(cookieDays="! 30"), [(12, 13, "cookieDays", "tag !")]),
    ("tag-on-a-list", "acme", submission(markets="!!python/tuple [FR, BE]"), [(15, 10, "markets", "tag !!python/tuple")]),
    ("tag-on-the-document", "acme", "!!python/object:os.system\n" + VALID, [(1, 1, "(document)", "tag !!python/object")]),
    ("nested-too-deep", "acme", submission(markets="[" * 40 + "FR" + "]" * 40), [(15, 42, "markets", "nested more than 32")]),
    ("number-too-long", "acme", submission(cookieDays="9" * 5000), [(12, 13, "cookieDays", "5000 characters")]),
    ("control-character", "acme", VALID.replace("name: Acme", "name: Acme # \x01"), [(2, 14, "(yaml)", "U+0001")]),
    ("python-tag", "acme", submission(name="!!python/object:os.system x"), [(2, 7, "name", "tag")]),
    ("syntax-error", "acme", submission(name="[Acme"), [(3, 5, "(yaml)", "not valid YAML")]),
    ("not-a-mapping", "acme", "- a\n- b\n", [(1, 1, "(document)", "found a list")]),
    ("empty-file", "acme", "", [(1, 1, "(document)", "empty")]),
    # --- fields and types -----------------------------------------------------------
    ("missing-status", "acme", submission(status=None), [(1, 1, "status", "missing")]),
    ("bad-status", "acme", submission(status="publshed"), [(1, 9, "status", 'did you mean "published"')]),
    ("missing-field", "acme", submission(payout=None), [(1, 1, "payout", "missing required field")]),
    ("unknown-field", "acme", VALID + "cookiedays: 30\n", [(23, 1, "cookiedays", "did you mean cookieDays")]),
    ("score-submitted", "acme", VALID + "score: 99\n", [(23, 1, "score", "computed by the build")]),
    ("name-number", "acme", submission(name="42"), [(2, 7, "name", "must be text")]),
    ("name-empty", "acme", submission(name='""'), [(2, 7, "name", "must not be empty")]),
    ("name-too-long", "acme", submission(name="A" * 121), [(2, 7, "name", "at most 120")]),
    ("name-spaces", "acme", submission(name='" Acme"'), [(2, 7, "name", "remove them")]),
    ("name-two-lines", "acme", submission(name='"Acme\\nStore"'), [(2, 7, "name", "single line")]),
    ("platform-null", "acme", submission(platform=""), [(16, 10, "platform", "leave the field out")]),
    ("pitch-too-long", "acme", submission(pitch="x" * 2001), [(5, 8, "pitch", "at most 2000")]),
    ("vertical-typo", "acme", submission(vertical="ecomerce"), [(8, 11, "vertical", 'did you mean "ecommerce"')]),
    ("model-case", "acme", submission(model="CPS"), [(9, 8, "model", 'exactly "cps"')]),
    ("payout-typo", "acme", submission(payout="montly"), [(13, 9, "payout", 'did you mean "monthly"')]),
    ("cookie-negative", "acme", submission(cookieDays="-1"), [(12, 13, "cookieDays", "from 0 to 3650")]),
    ("cookie-too-big", "acme", submission(cookieDays="4000"), [(12, 13, "cookieDays", "from 0 to 3650")]),
    ("cookie-float", "acme", submission(cookieDays="30.5"), [(12, 13, "cookieDays", "whole number")]),
    ("cookie-string", "acme", submission(cookieDays='"30"'), [(12, 13, "cookieDays", "without quotes")]),
    ("min-payout-negative", "acme", submission(minPayout="-5"), [(14, 12, "minPayout", "from 0 to")]),
    ("min-payout-nan", "acme", submission(minPayout=".nan"), [(14, 12, "minPayout", "from 0 to")]),
    # --- markets --------------------------------------------------------------------
    ("market-lowercase", "acme", submission(markets="[FR, be]"), [(15, 15, "markets[1]", 'in capitals: "BE"')]),
    ("market-uk", "acme", submission(markets="[UK]"), [(15, 11, "markets[0]", "is GB")]),
    ("market-unknown", "acme", submission(markets="[FR, XX]"), [(15, 15, "markets[1]", "not an officially")]),
    ("market-name", "acme", submission(markets="[France]"), [(15, 11, "markets[0]", "code: FR")]),
    ("market-duplicate", "acme", submission(markets="[FR, BE, FR]"), [(15, 19, "markets[2]", "listed twice")]),
    ("markets-empty", "acme", submission(markets="[]"), [(15, 10, "markets", "at least one")]),
    ("markets-string", "acme", submission(markets="FR"), [(15, 10, "markets", "must be a list")]),
    (
        "markets-block-list",
        "acme",
        submission(markets="\n  - FR\n  - Fr"),
        [(17, 5, "markets[1]", 'in capitals: "FR"')],
    ),
    # --- URLs and host --------------------------------------------------------------
    ("site-no-scheme", "acme", submission(site="www.acme.fr"), [(4, 7, "site", "https://")]),
    ("site-ftp", "acme", submission(site="ftp://acme.fr/"), [(4, 7, "site", "https://")]),
    ("site-no-host", "acme", submission(site="https:///path"), [(4, 7, "site", "no valid domain")]),
    ("site-spaces", "acme", submission(site='"https://acme.fr/a b"'), [(4, 7, "site", "spaces")]),
    ("signup-relative", "acme", submission(signupUrl="/affiliation"), [(17, 12, "signupUrl", "absolute URL")]),
    ("image-invalid", "acme", submission(image="banner.png"), [(18, 8, "image", "absolute URL")]),
    ("host-scheme", "acme", submission(host="https://acme.fr"), [(3, 7, "host", 'without the scheme: "acme.fr"')]),
    ("host-path", "acme", submission(host="acme.fr/shop"), [(3, 7, "host", "without a path")]),
    ("host-port", "acme", submission(host="acme.fr:8080"), [(3, 7, "host", "without a port")]),
    ("host-spaces", "acme", submission(host='"acme .fr"'), [(3, 7, "host", "spaces")]),
    ("host-uppercase", "acme", submission(host="Acme.fr"), [(3, 7, "host", "lowercase")]),
    ("host-not-site", "acme", submission(host="other.fr"), [(3, 7, "host", "make host and site agree")]),
    # --- createdAt ------------------------------------------------------------------
    ("created-missing", "acme", submission(createdAt=None), [(1, 1, "createdAt", "missing required")]),
    ("created-no-zone", "acme", submission(createdAt='"2024-03-01T09:00:00"'), [(19, 12, "createdAt", "no time zone")]),
    ("created-date-only", "acme", submission(createdAt="2024-03-01"), [(19, 12, "createdAt", "has no time")]),
    ("created-not-real", "acme", submission(createdAt='"2024-02-30T09:00:00Z"'), [(19, 12, "createdAt", "not a real date")]),
    ("created-number", "acme", submission(createdAt="20240301"), [(19, 12, "createdAt", "must be a date")]),
    ("created-offset-minutes", "acme", submission(createdAt='"2024-03-01T09:00:00+05:99"'), [(19, 12, "createdAt", "expected form")]),
    ("created-overflow", "acme", submission(createdAt='"9999-12-31T23:00:00-05:00"'), [(19, 12, "createdAt", "out of range")]),
    ("created-underflow", "acme", submission(createdAt='"0001-01-01T00:30:00+01:00"'), [(19, 12, "createdAt", "out of range")]),
    ("name-invisible", "acme", submission(name='"Acme\u202eStore"'), [(2, 7, "name", "U+202E")]),
    ("name-arabic-letter-mark", "acme", submission(name='"Acme\u061cStore"'), [(2, 7, "name", "U+061C")]),
    ("name-hangul-filler", "acme", submission(name='"Acme\u3164"'), [(2, 7, "name", "U+3164")]),
    ("name-c1-control", "acme", submission(name='"Acme\\x85Store"'), [(2, 7, "name", "U+0085")]),
    ("name-hidden-tags", "acme", submission(name='"Acme\U000e0069\U000e0067\U000e006eStore"'), [(2, 7, "name", "U+E0069")]),
    ("name-message-in-a-flag", "acme", submission(name='"Acme \U0001f3f4\U000e0049\U000e0047\U000e004e\U000e007f"'), [(2, 7, "name", "U+E0049")]),
    ("name-made-up-region-flag", "acme", submission(name='"Acme \U0001f3f4\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065\U000e007f"'), [(2, 7, "name", "U+E0069")]),
    ("name-tags-after-flag", "acme", submission(name='"\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f\U000e0041"'), [(2, 7, "name", "U+E0041")]),
    ("site-zero-width", "acme", submission(site='"https://acme.fr/\u200b"'), [(4, 7, "site", "spaces")]),
    ("created-no-seconds", "acme", submission(createdAt='"2024-03-01T09:00Z"'), [(19, 12, "createdAt", "expected form")]),
    # --- typed terms: evidence, units, ranges (docs/submissions.md) --------------------------
    ("evidence-missing", "acme", submission(evidence=None), [(1, 1, "evidence", "not the home page")]),
    ("evidence-is-site", "acme", submission(evidence="https://www.acme.fr/"), [(21, 11, "evidence", "is the website itself")]),
    ("evidence-is-site-spelt-otherwise", "acme", submission(evidence="http://WWW.acme.fr#terms"), [(21, 11, "evidence", "is the website itself")]),
    ("evidence-home-page", "acme", submission(evidence="https://acme.fr"), [(21, 11, "evidence", "is a home page")]),
    ("evidence-relative", "acme", submission(evidence="/conditions"), [(21, 11, "evidence", "absolute URL")]),
    ("terms-missing", "acme", submission(commissionTerms=None), [(1, 1, "commissionTerms", "missing required")]),
    ("terms-not-a-mapping", "acme", submission(commissionTerms='"8%"'), [(20, 18, "commissionTerms", "must be a mapping")]),
    ("terms-no-mode", "acme", submission(commissionTerms="{value: 8, unit: percent}"), [(20, 18, "commissionTerms", "has no mode")]),
    ("terms-mode-typo", "acme", submission(commissionTerms="{mode: percent, value: 8, unit: percent}"), [(20, 25, "commissionTerms.mode", 'did you mean "percentage"')]),
    ("terms-unknown-member", "acme", submission(commissionTerms="{mode: percentage, value: 8, unit: percent, rate: 8}"), [(20, 68, "commissionTerms.rate", "is not a member")]),
    ("terms-unitless-percentage", "acme", submission(commissionTerms="{mode: percentage, value: 40}"), [(20, 18, "commissionTerms", "without its unit")]),
    ("terms-unitless-flat", "acme", submission(commissionTerms="{mode: flat, value: 175}"), [(20, 18, "commissionTerms", "without its unit")]),
    ("terms-unitless-tiers", "acme", submission(commissionTerms="{mode: tiered, tiers: [{from: 0, value: 8}, {from: 50, value: 10}]}"), [(20, 18, "commissionTerms", "without its unit")]),
    ("terms-unitless-part", "acme", submission(commissionTerms="{mode: hybrid, parts: [{value: 5, unit: EUR}, {value: 10}]}"), [(20, 64, "commissionTerms.parts[1]", "without its unit")]),
    ("terms-percent-sign", "acme", submission(commissionTerms='{mode: percentage, value: 40, unit: "%"}'), [(20, 54, "commissionTerms.unit", 'write it "percent"')]),
    ("terms-euro-sign", "acme", submission(commissionTerms="{mode: flat, value: 40, unit: €}"), [(20, 48, "commissionTerms.unit", "ISO 4217 code: EUR")]),
    ("terms-currency-lowercase", "acme", submission(commissionTerms="{mode: flat, value: 40, unit: eur}"), [(20, 48, "commissionTerms.unit", 'in capitals: "EUR"')]),
    ("terms-unit-unknown", "acme", submission(commissionTerms="{mode: flat, value: 40, unit: euros}"), [(20, 48, "commissionTerms.unit", "ISO 4217 code of an amount's currency")]),
    ("terms-percentage-in-euros", "acme", submission(commissionTerms="{mode: percentage, value: 40, unit: EUR}"), [(20, 54, "commissionTerms.unit", "write unit: percent")]),
    ("terms-flat-in-percent", "acme", submission(commissionTerms="{mode: flat, value: 40, unit: percent}"), [(20, 48, "commissionTerms.unit", "an amount")]),
    ("terms-percent-over-100", "acme", submission(commissionTerms="{mode: percentage, value: 140, unit: percent}"), [(20, 44, "commissionTerms.value", "from 0 to 100")]),
    ("terms-rate-as-text", "acme", submission(commissionTerms='{mode: percentage, value: "40%", unit: percent}'), [(20, 44, "commissionTerms.value", "must be a number")]),
    ("terms-no-rate", "acme", submission(commissionTerms="{mode: flat, unit: EUR}"), [(20, 18, "commissionTerms", "has no rate")]),
    ("terms-range-inverted", "acme", submission(commissionTerms="{mode: percentage, value: 10, upTo: 7, unit: percent}"), [(20, 54, "commissionTerms.upTo", "is below value")]),
    ("terms-one-tier", "acme", submission(commissionTerms="{mode: tiered, unit: percent, tiers: [{from: 0, value: 8}]}"), [(20, 55, "commissionTerms.tiers", "2 to 10")]),
    ("terms-tiers-descending", "acme", submission(commissionTerms="{mode: tiered, unit: percent, tiers: [{from: 50, value: 8}, {from: 0, value: 10}]}"), [(20, 85, "commissionTerms.tiers[1].from", "ascending")]),
    ("terms-member-of-another-mode", "acme", submission(commissionTerms="{mode: flat, value: 8, unit: EUR, lifetime: false, tiers: []}"), [(20, 76, "commissionTerms.tiers", "does not apply to flat")]),
    ("terms-duration-not-recurring", "acme", submission(commissionTerms="{mode: percentage, value: 8, unit: percent, durationMonths: 12}"), [(20, 78, "commissionTerms.durationMonths", "recurring is false")]),
    ("terms-duration-and-lifetime", "acme", submission(recurring="true", commissionTerms="{mode: percentage, value: 8, unit: percent, durationMonths: 12, lifetime: true}"), [(20, 78, "commissionTerms.durationMonths", "contradict")]),
    ("holdback-negative", "acme", submission(holdbackDays="-1"), [(23, 15, "holdbackDays", "from 0 to 365")]),
    ("currency-symbol", "acme", submission(currency="€"), [(23, 11, "currency", "ISO 4217 code: EUR")]),
    ("currency-lowercase", "acme", submission(currency="eur"), [(23, 11, "currency", 'in capitals: "EUR"')]),
    ("currency-typo", "acme", submission(currency="EUT"), [(23, 11, "currency", "not a current ISO 4217")]),
    ("currency-withdrawn", "acme", submission(currency="FRF"), [(23, 11, "currency", "not a current ISO 4217")]),
    ("currency-not-text", "acme", submission(currency="978"), [(23, 11, "currency", "such as EUR")]),
    ("verified-missing", "acme", submission(lastVerifiedAt=None), [(1, 1, "lastVerifiedAt", "missing required")]),
    ("verified-no-zone", "acme", submission(lastVerifiedAt='"2024-03-01T09:00:00"'), [(22, 17, "lastVerifiedAt", "no time zone")]),
    ("score-version-submitted", "acme", VALID + "scoreVersion: 2\n", [(23, 1, "scoreVersion", "computed by the build")]),
    # --- slug -----------------------------------------------------------------------
    ("slug-field-differs", "acme", VALID + "slug: acme-store\n", [(23, 7, "slug", 'must equal the file name "acme"')]),
    ("slug-file-name", "Acme_Store", VALID, [(1, 1, "slug", "rename the file to acme-store.yaml")]),
    ("slug-too-long", "a" * 65, VALID, [(1, 1, "slug", "1 to 64 characters")]),
    ("slug-double-hyphen", "acme--store", VALID, [(1, 1, "slug", "single")]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("stem", "text", "expected"),
    [pytest.param(stem, text, expected, id=case) for case, stem, text, expected in CASES],
)
def test_invalid_submission_is_reported_at_its_position(
    content: Content, stem: str, text: str, expected: list[tuple[int, int, str, str]]
) -> None:
    path = content.add(stem, text)
    found = problems_of(content)
    assert len(found) == len(expected), found
    for line, (row, column, field, words) in zip(found, expected, strict=True):
        assert line.startswith(f"{path}:{row}:{column}: {field}: "), line
        assert words in line, line


def test_the_valid_base_case_is_valid(content: Content) -> None:
    content.add("acme", VALID)
    assert problems_of(content) == []


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"platform": None, "image": None}, id="optional-fields-omitted"),
        pytest.param({"image": '""'}, id="empty-image"),
        pytest.param({"createdAt": "2024-03-01T09:00:00+01:00"}, id="plain-timestamp-with-zone"),
        pytest.param({"markets": '[FR, "NO", GB]'}, id="quoted-no"),
        pytest.param({"name": "!!str 2024-01-01"}, id="explicit-str-tag"),
        pytest.param({"site": "https://shop.acme.fr/"}, id="site-on-a-subdomain"),
        pytest.param({"minPayout": "49.99"}, id="decimal-min-payout"),
        pytest.param({"cookieDays": "0"}, id="zero-days"),
    ],
)
def test_accepted_variations(content: Content, changes: dict[str, str | None]) -> None:
    content.add("acme", submission(**changes) + "slug: acme\n")
    assert problems_of(content) == []


def test_all_errors_of_all_files_in_one_run(content: Content) -> None:
    first = content.add("alpha", submission(cookieDays="-1", payout="daily"))
    second = content.add("beta", submission(markets="[FR, NO]"))
    content.add("gamma", VALID)
    found = problems_of(content)
    assert [line.split(": ")[0] for line in found] == [
        f"{first}:12:13",
        f"{first}:13:9",
        f"{second}:15:15",
    ]


@pytest.mark.parametrize(
    "name",
    ["Famille \U0001f468\u200d\U0001f469\u200d\U0001f467", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
     "Versicherungs\u00advergleich", "Pubs \U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f", "Caf\u00e9 M\u00fcller \u4e2d\u6587 \u0627\u0644\u0639\u0631\u0628\u064a\u0629"],
)  # fmt: skip
def test_real_text_with_joiners_and_soft_hyphens_is_fine(name: str) -> None:
    outcome = validation.check_file("acme", submission(name=f'"{name}"').encode())
    assert outcome.problems == [], outcome.problems


def test_a_negative_zero_is_published_as_zero() -> None:
    outcome = validation.check_file("acme", submission(minPayout="-0.0").encode())
    assert outcome.problems == [] and outcome.record is not None
    assert math.copysign(1, outcome.record["minPayout"]) == 1


def test_a_file_name_ending_in_a_line_break_is_no_slug(content: Content) -> None:
    # A regex's $ matches before a final line break: the slug check must not accept "acme\n".
    content.add("acme\n", VALID)
    (found,) = problems_of(content)
    assert "\n" not in found  # one problem, one line: the break is shown escaped
    assert found.endswith(
        ':1:1: slug: the file name "acme\\n" is not a valid slug: lowercase letters, digits '
        "and single hyphens, 1 to 64 characters; rename the file to acme.yaml"
    )


def test_misnamed_yaml_file_is_reported(content: Content) -> None:
    content.add("acme", VALID)
    (content.programs / "other.yml").write_text(VALID)
    (content.programs / "README.md").write_text("not a submission")
    found = problems_of(content)
    assert found == [f"{content.programs / 'other.yml'}:1:1: (file): submissions end in .yaml; "
                     "rename it other.yaml"]  # fmt: skip


@pytest.mark.parametrize("status", ["unpublished", "rejected"])
def test_drafts_are_not_validated(content: Content, status: str) -> None:
    content.add("draft", f"status: {status}\nname: 42\nmarkets: [NO]\nscore: 12\nwhatever: yes\n")
    assert problems_of(content) == []


def test_draft_with_broken_yaml_is_a_warning(content: Content) -> None:
    path = content.add("draft", "status: unpublished\nname: [broken\n")
    result = build.check(content.options(), [], Progress(quiet=True))
    assert [str(w) for w in result.warnings] == [
        f"{path}:3:1: warning: (yaml): did not find expected ',' or ']'; this is not valid YAML"
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"status: unpublished\r\nname: [broken\r\n",  # CRLF line ends
        b"\xef\xbb\xbfstatus: rejected\nname: [broken\n",  # a UTF-8 byte order mark
        b"status: unpublished\nmarkets: " + b"[" * 100_000 + b"FR" + b"]" * 100_000 + b"\n",
        b"status: unpublished\ncookieDays: " + b"9" * 5000 + b"\n",
        b"status: rejected\nname: !!python/object:os.system x\n",
    ],
    ids=["crlf", "bom", "deep", "long-number", "tag"],
)
def test_a_draft_never_blocks_the_build(content: Content, data: bytes) -> None:
    content.add("draft", "")
    (content.programs / "draft.yaml").write_bytes(data)
    assert problems_of(content) == []


@pytest.mark.parametrize(
    "text",
    [
        "status: unpublished\n" + VALID,  # stated twice, readable: a duplicate key
        "status: published\nname: [broken\nstatus: unpublished\n",  # twice, unreadable
    ],
    ids=["readable", "unreadable"],
)
def test_a_status_stated_twice_is_an_error_not_a_draft(content: Content, text: str) -> None:
    path = content.add("acme", text)
    found = problems_of(content)
    assert found and all(line.startswith(f"{path}:") for line in found)


def test_a_file_that_is_not_utf8_is_reported_where_the_byte_is(content: Content) -> None:
    content.add("acme", "")
    path = content.programs / "acme.yaml"
    path.write_bytes(VALID.replace("name: Acme Store", "name: Caf\xe9").encode("latin-1"))
    assert problems_of(content) == [
        f"{path}:2:10: (file): byte 0xE9 is not UTF-8; save the file as UTF-8"
    ]


def test_a_huge_file_is_refused_before_it_is_parsed(content: Content) -> None:
    path = content.add("acme", VALID + "# " + "x" * 300_000 + "\n")
    (found,) = problems_of(content)
    assert found.startswith(f"{path}:1:1: (file): is 300,") and "at most 256 KiB" in found


def test_broken_yaml_without_a_draft_status_is_an_error(content: Content) -> None:
    path = content.add("broken", "name: [broken\nstatus: published\n")
    assert problems_of(content) == [
        f"{path}:2:7: (yaml): did not find expected ',' or ']'; this is not valid YAML"
    ]


# --- URLs: the fast path for the usual shape agrees with the general checks -----------------

SITE = next(spec for spec in fields.FIELDS if spec.name == "site")

_URL_PARTS = st.sampled_from(
    ["https://", "http://", "HTTPS://", "ftp://", "https:/", "//", "https://user@", "https://a:b@"]
)
_HOSTS = st.sampled_from(
    ["acme.fr", "www.acme.fr", "ACME.fr", "acme", "-acme.fr", "acme.fr:8080", "acme.fr:x",
     "[::1]", "[acme.fr", "acme.fr]", "xn--e1afmkfd.xn--p1ai", "a_b.fr", "acme..fr", "",
     "acme.fr\\evil.com", "é.fr", "1.2.3.4", "acme.fr.", "a" * 70 + ".fr"]
)  # fmt: skip
_TAILS = st.sampled_from(["", "/", "/path/x?y=1#z", "?q", "#f", "/a b", "/%20", "/a@b", "/:"])


@settings(max_examples=400, deadline=None)
@given(_URL_PARTS, _HOSTS, _TAILS)
def test_the_fast_url_path_accepts_only_what_the_general_checks_accept(scheme, host, tail):
    url = scheme + host + tail
    if validation._SPACE_OR_CONTROL_RE.search(url):
        return  # refused before either path is taken
    simple = validation._SIMPLE_URL_RE.fullmatch(url)
    if simple is None or not validation.HOST_RE.match(simple.group(1)):
        return  # not the fast path's: the general checks alone decide
    assert validation._general_url(url, "expected") == url
    assert validation.check_url(url, SITE) == url


@pytest.mark.parametrize(
    "url", ["https://www.acme.fr/", "http://acme.fr", "https://acme.fr/a?b=c#d", "https://a.fr?x"]
)
def test_usual_urls_take_the_fast_path(url: str) -> None:
    simple = validation._SIMPLE_URL_RE.fullmatch(url)
    assert simple is not None and validation.HOST_RE.match(simple.group(1))
    assert validation.check_url(url, SITE) == url
