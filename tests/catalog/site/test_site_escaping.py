"""Submissions are text, never markup: in elements, attributes, JSON-LD and the sitemap."""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET

import pytest
from site_html import parse
from site_samples import BASE_URL, synthetic

from catalog.site import meta as site_meta
from catalog.site.pages import render_site

NAME = "<script>alert(1)</script> & Co"
PITCH = 'Great <img src=x onerror="alert(2)"> pitch </script><!-- \u2028 end'
COMMISSION = '50% "best" & <b>more</b>'
PLATFORM = "<iframe src=//evil.example></iframe>"
HOSTILE = {
    "name": NAME,
    "pitch": PITCH,
    "commission": COMMISSION,
    "platform": PLATFORM,
    "host": 'evil.example"><svg onload=alert(3)>',
    "site": "javascript:alert(4)",
    "signupUrl": 'https://evil.example/join?a=1&b="><script>alert(5)</script>',
    "image": 'https://evil.example/i.png" onerror="alert(6)',
    "createdAt": "<time>",
}


@pytest.fixture(scope="module")
def hostile_site() -> tuple[dict[str, bytes], str]:
    programs = synthetic(3)
    evil = dataclasses.replace(programs[0], **HOSTILE)
    return render_site([evil, *programs[1:]], BASE_URL), evil.slug


def own_scripts(path: str) -> list[str]:
    """The script files a page loads by its template: the search page's, the dashboard's,
    and a programme page's age of its terms."""
    if path == "search/index.html":
        return ["../static/search.js"]
    if path == "app/index.html":
        return ["../static/dashboard.js"]
    if re.fullmatch(r"programs/[^/]+/index\.html", path):
        return ["../../static/age.js"]
    return []


def test_no_page_gains_an_element_or_attribute_from_a_submission(hostile_site):
    files, _ = hostile_site
    for path, data in files.items():
        if not path.endswith(".html"):
            continue
        page = parse(data)
        html = data.decode()
        # The pages' own scripts are the templates', whatever the submissions say.
        own = own_scripts(path)
        assert set(page.scripts) <= {"application/ld+json", *([""] if own else [])}, path
        assert page.sources == own, path  # no <img>...
        assert not page.tags & {"img", "iframe", "svg", "b"}, path
        assert not {a for a in page.attributes if a.startswith("on")}, path
        assert "<script>alert" not in html, path
        assert "javascript:" not in " ".join(page.links), path


def test_the_programme_page_shows_the_submission_as_text(hostile_site):
    files, slug = hostile_site
    data = files[f"programs/{slug}/index.html"]
    page = parse(data)
    text = re.sub(r"\s+", " ", "".join(page.text))
    for value in (NAME, COMMISSION, PLATFORM, HOSTILE["host"]):
        assert value in text, value
    assert 'Great <img src=x onerror="alert(2)"> pitch </script><!--' in text
    # In attributes: escaped, and read back unchanged.
    assert page.meta["og:title"] == NAME
    assert COMMISSION in page.meta["description"]
    html = data.decode()
    assert "&#34;best&#34; &amp; &lt;b&gt;" in html or "&quot;best&quot; &amp; &lt;b&gt;" in html
    # Neither unsafe URL became a link: the javascript: one is not a URL, the other has quotes.
    assert HOSTILE["site"] in text and HOSTILE["site"] not in page.links
    assert not any("evil.example/join" in href for href in page.links)


def test_json_ld_cannot_close_its_script_and_round_trips(hostile_site):
    files, slug = hostile_site
    html = files[f"programs/{slug}/index.html"].decode()
    blocks = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    assert len(blocks) == 1  # the submission's </script> did not end the block early
    block = blocks[0]
    assert "<" not in block and ">" not in block and "&" not in block and "\u2028" not in block
    offer = json.loads(block)["@graph"][0]
    assert offer["name"] == f"{NAME} affiliate programme"
    assert offer["description"] == PITCH
    assert "url" not in offer and "url" not in offer["offeredBy"]  # unsafe URLs left out


def test_listing_cards_and_home_escape_too(hostile_site):
    files, _ = hostile_site
    home = files["index.html"].decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co" in home
    items = parse(files["index.html"]).jsonld[0]["@graph"][1]["itemListElement"]
    assert NAME in [item["name"] for item in items]


def test_xml_and_text_outputs_stay_well_formed(hostile_site):
    files, _ = hostile_site
    ET.fromstring(files["sitemap.xml"])  # raises if anything broke the XML
    assert "<script" not in files["sitemap.xml"].decode()


def test_json_ld_escaping_is_lossless():
    data = {"a": "</script><!--&\u2028\u2029>"}
    encoded = str(site_meta.json_ld(data))
    assert not set("<>&\u2028\u2029") & set(encoded)
    assert json.loads(encoded) == data


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://a.example/x?y=1&z=2", True),
        ("http://a.example", True),
        ("javascript:alert(1)", False),
        ("JAVASCRIPT://a.example/%0aalert(1)", False),
        ("data:text/html,<script>", False),
        ("//a.example/x", False),
        ('https://a.example/"onmouseover=x', False),
        ("https://a.example/ x", False),
        ("", False),
    ],
)
def test_safe_url(url, safe):
    assert (site_meta.safe_url(url) == url) is safe
