"""The site in a real headless chromium, served by the real edge (--serve-site true).

Screenshots go to test-artifacts/site/ (their paths are printed) so that people can look.
"""

from __future__ import annotations

import datetime as dt
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

import pytest
from selenium.webdriver.support.ui import WebDriverWait

DESKTOP = (1280, 900)
MOBILE = (390, 844)


def console_problems(driver: Any) -> list[dict]:
    """Console messages of level SEVERE (errors, CSP violations, failed loads) since last read."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def open_page(driver: Any, url: str, size: tuple[int, int] = DESKTOP) -> None:
    driver.set_window_size(*size)
    driver.get_log("browser")  # forget what earlier pages logged
    driver.get(url)
    assert driver.execute_script("return document.readyState") == "complete"


def screenshot(driver: Any, directory: Path, name: str, capsys: Any, full: bool = True) -> Path:
    """A PNG of the page: all of it (the window is made as tall first), or the first screen."""
    if full:
        width = driver.get_window_size()["width"]
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, min(max(height, 600), 8000))
    path = directory / f"{name}.png"
    assert driver.save_screenshot(str(path)), path
    with capsys.disabled():
        print(f"\nsite screenshot: {path}")
    return path


def internal_links(driver: Any, origin: str) -> set[str]:
    hrefs = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href], link[href]'), e => e.href)"
    )
    return {urldefrag(h)[0] for h in hrefs if h.startswith(origin)}


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def check_page(driver: Any, url: str, origin: str) -> None:
    assert console_problems(driver) == [], url
    links = internal_links(driver, origin) - {url}  # `#main` on the page itself
    assert links, url
    broken = {link: code for link in sorted(links) if (code := status_of(link)) != 200}
    assert broken == {}, f"broken links on {url}"


def test_home_page(browser, site_server, artifacts, capsys):
    open_page(browser, site_server + "/")
    assert "Affiliate programmes, ranked" in browser.title
    check_page(browser, site_server + "/", site_server)
    screenshot(browser, artifacts, "home", capsys)


def test_programme_page(browser, site_server, built_dist, artifacts, capsys):
    slug = "academie-du-code"
    assert (built_dist / "programs" / slug / "index.html").exists()
    url = f"{site_server}/programs/{slug}/"
    open_page(browser, url)
    assert browser.find_element("css selector", "h1").text == "Académie du Code"
    # The age of the terms is counted to the reader's today, whenever the page was built.
    verified = browser.find_element("css selector", "time.verified-on").get_attribute("datetime")
    days = (dt.datetime.now(dt.UTC).date() - dt.date.fromisoformat(verified[:10])).days
    age = browser.find_element("css selector", ".verified-age").text
    assert age == {0: "(today)", 1: "(1 day ago)"}.get(days, f"({days} days ago)")
    check_page(browser, url, site_server)
    screenshot(browser, artifacts, "programme", capsys)


def test_listing_page_on_a_phone(browser, site_server, artifacts, capsys):
    url = f"{site_server}/markets/fr/page/2/"
    open_page(browser, url, MOBILE)
    assert console_problems(browser) == []
    # Responsive: nothing wider than the screen.
    overflow = browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    screenshot(browser, artifacts, "listing-mobile", capsys, full=False)


def test_the_404_page(browser, site_server):
    open_page(browser, site_server + "/no/such/page/")
    assert browser.find_element("css selector", "h1").text == "Page not found"
    # The 404 status itself is logged as a failed load; nothing else may be.
    problems = [p for p in console_problems(browser) if "404" not in p["message"]]
    assert problems == []
    check_page(browser, site_server + "/no/such/page/", site_server)


@pytest.mark.parametrize("path", ["/", "/programs/academie-du-code/"])
def test_keyboard_first_tab_is_the_skip_link(browser, site_server, path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    open_page(browser, site_server + path)
    ActionChains(browser).send_keys(Keys.TAB).perform()
    focused = browser.switch_to.active_element
    assert focused.text == "Skip to content"
    assert focused.rect["y"] >= 0 and focused.is_displayed()  # it shows itself when focused
    outline = browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", focused)
    assert outline == "solid"  # a visible focus indicator
    focused.send_keys(Keys.ENTER)
    assert browser.execute_script("return document.activeElement.id") == "main"
    ActionChains(browser).send_keys(Keys.TAB).perform()
    inside = browser.execute_script(
        "return document.getElementById('main').contains(document.activeElement)"
    )
    assert inside, "the next Tab after skipping lands in the main content"


def test_pages_need_no_javascript(browser, site_server):
    # Everything is in the HTML: the same DOM text with scripts off is what a crawler sees.
    open_page(browser, site_server + "/")
    assert browser.execute_script("return document.scripts.length") == 1  # the JSON-LD block
    assert browser.execute_script("return document.scripts[0].type") == "application/ld+json"


@pytest.mark.parametrize(
    ("path", "heading"),
    [
        (
            "/docs/reference/",
            "Affiliate programme directory and commission reporting API: reference",
        ),
        ("/docs/getting-started/", "Getting started"),
    ],
)
def test_the_api_docs(browser, site_server, artifacts, capsys, path, heading):
    url = site_server + path
    open_page(browser, url)
    assert browser.find_element("css selector", "h1").text == heading
    check_page(browser, url, site_server)
    # Every in-page anchor names an element of the page.
    missing = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href^=\"#\"]'), a => a.hash.slice(1))"
        ".filter(id => !document.getElementById(decodeURIComponent(id)))"
    )
    assert missing == []
    screenshot(browser, artifacts, path.strip("/").replace("/", "-"), capsys)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("factur", ["Factureo"]),
        ("ACADEMIE code", ["Académie du Code"]),  # any case, accents optional
        ("zzzz-nothing", []),
    ],
)
def test_search_page(browser, site_server, query, expected):
    url = f"{site_server}/search/?q={query}"
    open_page(browser, url)
    status = browser.find_element("id", "search-status")
    WebDriverWait(browser, 10).until(lambda _: "match" in status.text)
    found = [e.text for e in browser.find_elements("css selector", "#search-results li a")]
    assert [name for name in expected if name in found] == expected
    if not expected:
        assert found == [] and status.text == "0 programmes match."
    assert console_problems(browser) == []
    if found:  # each result leads to its programme's page
        href = browser.find_element("css selector", "#search-results li a").get_attribute("href")
        assert status_of(href) == 200


def test_the_header_search_box_leads_to_the_search_page(browser, site_server):
    open_page(browser, site_server + "/about/")
    box = browser.find_element("css selector", "form.search-box input[name=q]")
    box.send_keys("dormio")
    box.submit()
    WebDriverWait(browser, 10).until(lambda driver: "/search/" in driver.current_url)
    status = browser.find_element("id", "search-status")
    WebDriverWait(browser, 10).until(lambda _: "match" in status.text)
    assert "Dormio" in [e.text for e in browser.find_elements("css selector", "#search-results a")]
    assert console_problems(browser) == []
