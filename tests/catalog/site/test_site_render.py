"""render_site: the pages, their links, canonical URLs, structured data and determinism."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from site_html import parse, resolve
from site_samples import BASE_URL, ROOT, synthetic

from catalog import docpages, scoring
from catalog.site import meta as site_meta
from catalog.site import pages as site
from catalog.site.plan import IN_HOUSE, PER_PAGE, checked_slug, platform_key
from contract import openapi
from contract.labels import LABELS
from contract.vocabulary import COMMISSION_MODES, MODELS, PAYOUTS, VERTICALS

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def html_pages(files: dict[str, bytes]) -> list[str]:
    return [path for path in files if path.endswith(".html")]


def url_of(path: str) -> str:
    """The canonical URL of a page file."""
    return BASE_URL + "/" + path.removesuffix("index.html")


def text_of(html: bytes) -> str:
    return re.sub(r"\s+", " ", " ".join(parse(html).text))


# --- what is there -------------------------------------------------------------------


def test_every_page_of_the_sample_is_rendered(site_files, programs):
    for path in ("index.html", "404.html", "about/index.html", "sitemap.xml", "robots.txt"):
        assert path in site_files
    for section in (
        "verticals",
        "models",
        "markets",
        "payouts",
        "commission-modes",
        "platforms",
    ):
        assert f"{section}/index.html" in site_files
    # Every vertical and model has a page, even an empty one: the links to them never 404.
    for vertical in VERTICALS:
        assert f"verticals/{vertical}/index.html" in site_files
    for model in MODELS:
        assert f"models/{model}/index.html" in site_files
    for market in {m.lower() for p in programs for m in p.markets}:
        assert f"markets/{market}/index.html" in site_files
    # The API's typed facets: every payout and commission mode, every platform present.
    for payout in PAYOUTS:
        assert f"payouts/{payout}/index.html" in site_files
    for mode in COMMISSION_MODES:
        assert f"commission-modes/{mode}/index.html" in site_files
    for platform in {p.platform for p in programs}:
        assert f"platforms/{platform_key(platform)}/index.html" in site_files
    for program in programs:
        assert f"programs/{program.slug}/index.html" in site_files


def _listed(files: dict[str, bytes], directory: str) -> list[str]:
    """The slugs a listing lists, in order, over all its pages."""
    slugs: list[str] = []
    page, number = directory, 1
    while f"{page}index.html" in files:
        html = files[f"{page}index.html"].decode()
        slugs += re.findall(r'<h3 class="card-title"><a href="(?:\.\./)+programs/([^/]+)/"', html)
        number += 1
        page = f"{directory}page/{number}/"
    return slugs


@pytest.mark.parametrize(
    ("section", "value_of"),
    [
        ("payouts", lambda p: p.payout),
        ("commission-modes", lambda p: p.commissionTerms["mode"]),
        ("platforms", lambda p: platform_key(p.platform)),
    ],
)
def test_a_typed_facet_lists_exactly_its_programmes_in_directory_order(
    site_files, programs, section, value_of
):
    """Each value's static pages hold the programmes the API's facet counts for it, in
    directory order."""
    values = {value_of(p) for p in programs}
    for value in values:
        expected = [p.slug for p in programs if value_of(p) == value]
        assert _listed(site_files, f"{section}/{value}/") == expected, value
    index = parse(site_files[f"{section}/index.html"])
    assert {f"{v}/" for v in values} <= set(index.links)
    home = set(parse(site_files["index.html"]).links)
    assert {f"{section}/{v}/" for v in values} <= home


def test_platform_keys_fold_like_the_api_and_stay_path_safe():
    assert platform_key("Awin") == platform_key("AWIN") == "awin"
    assert platform_key("Rakuten Advertising") == "rakuten-advertising"
    assert platform_key("Éffiliation") == "effiliation"
    assert platform_key("") == IN_HOUSE
    # Letters outside a-z keep names apart: a hash of the folded name.
    assert platform_key("Яндекс") != platform_key("Озон")
    assert platform_key("Awin Яндекс").startswith("awin-")
    assert platform_key("Awin Яндекс") != "awin"
    for name in ("x" * 120, "a b " * 40, "★", "Яндекс", "Impact.com"):
        key = platform_key(name)
        assert checked_slug(key) == key, name


def test_a_programme_page_links_its_typed_facets_and_the_age_of_its_terms(site_files, programs):
    for program in programs:
        html = site_files[f"programs/{program.slug}/index.html"]
        links = parse(html).links
        assert f"../../payouts/{program.payout}/" in links
        assert f"../../commission-modes/{program.commissionTerms['mode']}/" in links
        assert f"../../platforms/{platform_key(program.platform)}/" in links
        # The date, and no age: a count of days is the reader's (static/age.js), a build
        # cannot know how long after it the page is read.
        day = site_meta.human_date(program.lastVerifiedAt)
        assert f"On {day}" in text_of(html), program.slug
        assert f'<time class="verified-on" datetime="{program.lastVerifiedAt}">'.encode() in html
        assert b" ago" not in html and b"static/age.js" in html


def test_the_stylesheet_is_small_fingerprinted_and_self_contained(site_files):
    css = site_files["static/site.css"]
    fingerprinted = [p for p in site_files if re.fullmatch(r"static/site\.[0-9a-f]{10}\.css", p)]
    assert len(fingerprinted) == 1 and site_files[fingerprinted[0]] == css
    assert len(css) < 10 * 1024, f"site.css is {len(css)} bytes"
    # No fonts, images or other sheets fetched from anywhere.
    assert b"url(" not in css and b"@import" not in css
    page = parse(site_files["index.html"])
    assert page.link_rels["stylesheet"] == fingerprinted[0]


def test_pages_load_nothing_from_elsewhere_and_run_no_script(site_files):
    for path in html_pages(site_files):
        page = parse(site_files[path])
        # The search page, the dashboard and the programme pages run a script of the site's
        # own, beside its stylesheet: the search, the dashboard (docs/dashboard.md), and
        # the age of the terms counted to the reader's day.
        own = {
            "search/index.html": ["../static/search.js"],
            "app/index.html": ["../static/dashboard.js"],
        }.get(path, [])
        if path.startswith("programs/"):
            own = ["../../static/age.js"]
        assert page.sources == own, f"{path} loads {page.sources}"
        # Scripts: JSON-LD data, and on the search page its own file (type="": JavaScript).
        allowed = {"application/ld+json", *([""] if own else [])}
        assert set(page.scripts) <= allowed, path
        for rel in ("stylesheet", "icon"):
            assert resolve(path, page.link_rels[rel]) in site_files, (path, rel)
        assert "default-src 'none'" in page.meta["Content-Security-Policy"]
        assert page.lang == "en"


@pytest.mark.slow
def test_every_internal_link_resolves_and_ids_are_unique(site_files):
    # The site links the API's docs, which the build writes beside it (catalog.docpages).
    site_files = {**site_files, **docpages.render_docs(), "openapi.json": openapi.render()}
    for path in html_pages(site_files):
        if path == "404.html":
            continue  # its links are absolute paths: checked in test_not_found_page_links
        page = parse(site_files[path])
        assert len(page.ids) == len(set(page.ids)), f"duplicate ids in {path}"
        for href in page.links:
            target = resolve(path, href)
            if target is None:
                assert href.startswith(("https://", "http://")), (path, href)
                continue
            assert target in site_files, f"{path}: {href} -> {target} does not exist"
            if "#" in href:
                fragment = href.split("#", 1)[1]
                assert fragment in parse(site_files[target]).ids, (path, href)


def test_not_found_page_links(site_files):
    page = parse(site_files["404.html"])
    site_files = {**site_files, **docpages.render_docs()}  # the site links the API's docs
    assert page.meta["robots"] == "noindex"
    assert "canonical" not in page.link_rels
    # Served for any missing path at any depth, so its links are absolute paths.
    for href in page.links:
        if href.startswith("#"):
            continue
        assert href.startswith("/"), href
        assert resolve("404.html", href) in site_files, href


def test_home_links_to_every_vertical_and_model(site_files):
    links = set(parse(site_files["index.html"]).links)
    for vertical in VERTICALS:
        assert f"verticals/{vertical}/" in links
    for model in MODELS:
        assert f"models/{model}/" in links


def test_programmes_keep_directory_order_on_the_home_page(site_files, programs):
    html = site_files["index.html"].decode()
    positions = [html.index(f'href="programs/{p.slug}/"') for p in programs[:12]]
    assert positions == sorted(positions)


# --- a programme's page --------------------------------------------------------------


def test_a_programme_page_shows_every_field(site_files, programs):
    for program in programs:
        html = site_files[f"programs/{program.slug}/index.html"]
        text = text_of(html)
        links = parse(html).links
        for value in (program.name, program.host, program.commission, program.slug):
            assert value in text, (program.slug, value)
        assert re.sub(r"\s+", " ", program.pitch).strip() in text
        assert LABELS["vertical"][program.vertical].en in text
        assert LABELS["model"][program.model].en in text
        assert LABELS["payout"][program.payout].en in text
        assert f"{program.cookieDays} day" in text
        assert site_meta.number(program.minPayout) in text
        assert ("Yes" if program.recurring else "No") in text
        assert (program.platform or "In-house") in text
        assert f"{program.score}/100" in text
        assert site_meta.human_date(program.createdAt) in text
        assert program.signupUrl in links
        for market in program.markets:
            assert f"../../markets/{market.lower()}/" in links
        if program.image:
            assert program.image in links  # a link to it, never an <img>


def test_programme_page_metadata(site_files, programs):
    program = programs[0]
    page = parse(site_files[f"programs/{program.slug}/index.html"])
    canonical = f"{BASE_URL}/programs/{program.slug}/"
    assert page.link_rels["canonical"] == canonical
    assert page.meta["og:url"] == canonical
    assert page.meta["og:title"] == program.name
    assert page.meta["description"]
    offer, crumbs = page.jsonld[0]["@graph"]
    assert offer["@type"] == "Offer"
    assert offer["name"] == f"{program.name} affiliate programme"
    assert offer["url"] == program.signupUrl
    assert offer["offeredBy"] == {
        "@type": "Organization",
        "name": program.name,
        "url": program.site,
    }
    assert [a["identifier"] for a in offer["areaServed"]] == list(program.markets)
    assert crumbs["@type"] == "BreadcrumbList"
    assert crumbs["itemListElement"][-1]["item"] == canonical


def test_score_components_are_shown_when_scoring_has_a_breakdown(programs):
    program = programs[0]

    def breakdown(record):
        return [("Payout model", record["score"] - 7, 20), ("Cookie window", 7, 20)]

    def wrong(record):
        return [("Payout model", 1, 20)]

    renderer = site._Renderer(
        base=BASE_URL,
        env=site.make_environment(site.TEMPLATES_DIR),
        css_path="static/site.css",
        countries={},
        breakdown=breakdown,
    )
    text = text_of(renderer.program_page(program, f"programs/{program.slug}/"))
    assert f"Payout model {program.score - 7} / 20" in text
    assert "Cookie window 7 / 20" in text
    # A breakdown that does not add up to the score is not shown.
    renderer.breakdown = wrong
    assert "Payout model 1 / 20" not in text_of(
        renderer.program_page(program, f"programs/{program.slug}/")
    )


def test_the_page_explains_the_real_score_and_the_age_of_the_terms(programs):
    """With the build's own scoring: each component with what it read and its points, the
    evidence, and when the terms were verified (flagged when stale)."""
    from catalog import rendering, scoring
    from catalog.model import program_from_row

    record = {**dataclasses.asdict(programs[0]), "holdbackDays": 30}
    for computed in ("score", "stale", "scoreVersion", "scoreBreakdown"):
        del record[computed]
    record["lastVerifiedAt"] = "2024-01-10T09:00:00Z"
    record["commissionTerms"] = {
        **dict.fromkeys(("mode", "value", "upTo", "unit", "durationMonths")),
        **{"mode": "flat", "value": 40, "unit": "EUR", "lifetime": False},
        **{"tiers": [], "parts": []},
    }
    program = program_from_row(rendering.listing_of(record, "2025-06-01").row)
    assert program.stale
    renderer = site._Renderer(
        base=BASE_URL,
        env=site.make_environment(site.TEMPLATES_DIR),
        css_path="static/site.css",
        countries={},
        breakdown=scoring.breakdown,
        reference="2025-06-01",
    )
    html = renderer.program_page(program, f"programs/{program.slug}/")
    text = text_of(html)
    for part in program.scoreBreakdown:
        label = scoring.LABELS[part["component"]]
        assert f"{label} {part['input']} {part['points']} / {part['weight']}" in text
    assert "Terms verified 508 days old 2 / 10" in text
    assert "Holdback before payment 30 days" in text
    assert f"Source of these terms {program.evidence}" in text
    assert "Terms verified On 10 January 2024" in text
    assert "(over a year before the directory's newest" in text
    # The date, machine-readable, as the submission states it: the reader's browser counts
    # its age (static/age.js).
    assert (
        b'<time class="verified-on" datetime="2024-01-10T09:00:00Z">10 January 2024</time>' in html
    )


# --- listings and pagination ---------------------------------------------------------


def test_listings_paginate_statically_with_prev_next():
    programs = [dataclasses.replace(p, vertical="saas") for p in synthetic(2 * PER_PAGE + 2)]
    files = site.render_site(programs, BASE_URL)
    base = "verticals/saas/"
    assert f"{base}index.html" in files
    assert f"{base}page/2/index.html" in files and f"{base}page/3/index.html" in files
    assert f"{base}page/1/index.html" not in files and f"{base}page/4/index.html" not in files

    paths = (f"{base}index.html", f"{base}page/2/index.html", f"{base}page/3/index.html")
    first, second, last = (parse(files[p]) for p in paths)

    def target(index: int, rel: str) -> str | None:
        page = (first, second, last)[index]
        return resolve(paths[index], page.link_rels[rel]) if rel in page.link_rels else None

    assert target(0, "prev") is None and target(0, "next") == paths[1]
    assert target(1, "prev") == paths[0] and target(1, "next") == paths[2]
    assert target(2, "prev") == paths[1] and target(2, "next") is None
    assert second.link_rels["canonical"] == f"{BASE_URL}/{base}page/2/"
    assert (
        f'<ol class="cards" start="{PER_PAGE + 1}">' in files[f"{base}page/2/index.html"].decode()
    )
    # Each programme is on exactly one page of the listing, in directory order.
    slugs = [
        m
        for p in paths
        for m in re.findall(r'href="(?:\.\./)+programs/(programme-\d+)/"', files[p].decode())
    ]
    assert slugs == [p.slug for p in programs]
    items = second.jsonld[0]["@graph"][0]["itemListElement"]
    assert items[0]["position"] == PER_PAGE + 1


def test_pager_elides_far_pages():
    assert site.pager(1, 1) == [1]
    assert site.pager(1, 3) == [1, 2, 3]
    assert site.pager(6, 70) == [1, None, 4, 5, 6, 7, 8, None, 70]
    assert site.pager(70, 70) == [1, None, 68, 69, 70]


# --- sitemap, robots, base URL ---------------------------------------------------------


def test_sitemap_lists_every_page_once_and_robots_points_at_it(site_files):
    root = ET.fromstring(site_files["sitemap.xml"])
    urls = [loc.text for loc in root.iter(f"{SITEMAP_NS}loc")]
    assert len(urls) == len(set(urls))
    # The site's pages and the API's docs, which the build writes beside them.
    with_docs = {**site_files, **docpages.render_docs()}
    # Not the 404 page, nor the search page (noindex: a page of results per query), nor the
    # dashboard (noindex: nothing in it but what a reader's key fetches).
    unlisted = {"404.html", "search/index.html", "app/index.html"}
    pages = {url_of(p) for p in html_pages(with_docs) if p not in unlisted}
    assert set(urls) == pages
    assert f"Sitemap: {BASE_URL}/sitemap.xml" in site_files["robots.txt"].decode()


def test_big_sitemaps_are_split_under_an_index(monkeypatch):
    monkeypatch.setattr(site, "sitemap_chunks", lambda urls: [urls[:10], urls[10:]])
    files = site.render_site(synthetic(30), BASE_URL)
    index = ET.fromstring(files["sitemap.xml"])
    assert index.tag == f"{SITEMAP_NS}sitemapindex"
    locs = [loc.text for loc in index.iter(f"{SITEMAP_NS}loc")]
    assert locs == [f"{BASE_URL}/sitemap-1.xml", f"{BASE_URL}/sitemap-2.xml"]
    assert len(list(ET.fromstring(files["sitemap-1.xml"]).iter(f"{SITEMAP_NS}loc"))) == 10


def test_sitemap_chunks_respect_the_protocol_limit():
    urls = [f"u{i}" for i in range(site_meta.SITEMAP_MAX_URLS + 1)]
    assert [len(c) for c in site_meta.sitemap_chunks(urls)] == [site_meta.SITEMAP_MAX_URLS, 1]
    assert site_meta.sitemap_chunks([]) == [[]]


def test_a_base_url_with_a_path(programs):
    files = site.render_site(programs[:3], "https://example.org/affiliates/")
    slug = programs[0].slug
    page = parse(files[f"programs/{slug}/index.html"])
    assert page.link_rels["canonical"] == f"https://example.org/affiliates/programs/{slug}/"
    assert "https://example.org/affiliates/sitemap.xml" in files["robots.txt"].decode()
    assert "/affiliates/verticals/" in parse(files["404.html"]).links


@pytest.mark.parametrize(
    "base_url",
    [
        "",
        "affiliates.example",
        "ftp://affiliates.example",
        "https://",
        "https://a.example/?x=1",
        "https://a.example/ x",
    ],
)
def test_a_bad_base_url_fails_loudly(base_url):
    with pytest.raises(ValueError, match="base URL"):
        site.render_site([], base_url)


@pytest.mark.parametrize(
    ("field", "value"), [("slug", "../escape"), ("slug", "UPPER"), ("markets", ("F/",))]
)
def test_values_that_become_paths_are_checked(programs, field, value):
    bad = dataclasses.replace(programs[0], **{field: value})
    with pytest.raises(ValueError):
        site.render_site([bad], BASE_URL)


def test_an_empty_directory_still_renders(site_files):
    files = site.render_site([], BASE_URL)
    assert "No programme is published yet." in files["index.html"].decode()
    assert "verticals/saas/index.html" in files


# --- determinism -----------------------------------------------------------------------

DIGEST = """
import hashlib, sys
sys.path.insert(0, "tests/catalog/site")
from site_samples import BASE_URL, sample_programs
from catalog.site.pages import render_site
files = render_site(sample_programs(), BASE_URL)
digest = hashlib.sha256()
for path in sorted(files):
    digest.update(path.encode() + b"\\0" + files[path])
print(digest.hexdigest())
"""


@pytest.mark.process
def test_output_is_byte_identical_across_runs_and_hash_seeds(site_files, programs):
    assert site.render_site(programs, BASE_URL) == site_files
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "TZ": "Pacific/Kiritimati", "LC_ALL": "C"}
        out = subprocess.run(
            [sys.executable, "-c", DIGEST],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(out.stdout.strip())
    expected = hashlib.sha256()
    for path in sorted(site_files):
        expected.update(path.encode() + b"\0" + site_files[path])
    assert digests == {expected.hexdigest()}


def test_a_programme_markdown_page_says_how_old_its_terms_are(site_files, programs):
    reference = scoring.reference_day(p.lastVerifiedAt for p in programs)
    for program in programs:
        text = site_files[f"programs/{program.slug}/index.html.md"].decode()
        days = scoring.age_days(program.lastVerifiedAt, reference)
        said = f"{site_meta.plural(days, 'day')} before {site_meta.human_date(reference)}"
        assert said in text, program.slug
