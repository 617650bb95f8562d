"""The publisher dashboard (/app/) in a real headless chromium, against the real edge serving
a real build and the seeded demo account, its access log written and kept for inspection.

What the reader sees must be what the API answers (per currency, exactly as written), the
key must stay in sessionStorage and the Authorization header, and the page must work under
the Content-Security-Policy header the edge sends.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from conftest import EdgeThread
from selenium.webdriver.support.ui import WebDriverWait
from test_site_browser import console_problems, open_page, screenshot

from accounts.demo import seed_demo
from edge.config import Config
from edge.handlers.static import APP_CSP
from edge.serving import make_runner

FROM = "2024-01-01"
PHONE = (360, 780)


class Lines(io.RawIOBase):
    """The edge's access log as it writes it (a byte stream of lines), kept as text lines."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.lines += bytes(data).decode().splitlines()
        return len(data)


class ServedEdge(EdgeThread):
    """EdgeThread with the edge's own runner: its access log, as `serve` writes it, kept."""

    def __init__(self, config: Config, log: Lines) -> None:
        super().__init__(config)
        self.log = log

    async def _start(self) -> None:
        from aiohttp import web

        self.runner = make_runner(self.config)
        if self.runner.access is not None:
            self.runner.access.stream = self.log  # its lines here, not to stderr
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = self.runner.addresses[0][1]


@pytest.fixture(scope="module")
def access_log() -> Lines:
    return Lines()


@pytest.fixture(scope="module")
def demo(
    built_dist: Path, tmp_path_factory: pytest.TempPathFactory, access_log: Lines
) -> Iterator[tuple[str, str]]:
    """(base URL, demo key) of a real edge serving the site and the seeded demo account."""
    state = tmp_path_factory.mktemp("dashboard-edge")
    config = Config(
        dist=built_dist,
        database=str(state / "edge.sqlite3"),
        secret_key="dashboard-tests-" + "x" * 40,
        secret_file=state / "secret.key",
        access_log=True,
        serve_site=True,
        rate_limit_free=(100_000, 60),
        rate_limit_pro=(100_000, 60),
    )
    key = seed_demo(config.database, config.resolved_secret())
    with ServedEdge(config, access_log) as edge:
        yield edge.url, key


def get(url: str, key: str | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def exact(body: bytes) -> Any:
    """JSON with every number kept as the text the API wrote."""
    return json.loads(body, parse_float=str, parse_int=str)


def summary(base: str, key: str, **params: str) -> list[dict]:
    status, _, body = get(f"{base}/v1/commissions/summary?{urlencode(params)}", key)
    assert status == 200, body
    return exact(body)["data"]


def problems(driver: Any) -> list[dict]:
    """Console problems, but the summary's 400 to a groupBy this API does not have yet: the
    page asks, and says so (chromium logs every 4xx answer to a fetch)."""
    return [
        p
        for p in console_problems(driver)
        if not (
            p["source"] == "network"
            and "status of 400" in p["message"]
            and ("groupBy=program&" in p["message"] or "groupBy=subId&" in p["message"])
        )
    ]


def sign_in(driver: Any, url: str, key: str, size: tuple[int, int] = (1280, 900)) -> None:
    open_page(driver, url, size)
    driver.execute_script("sessionStorage.clear()")  # a key an earlier test left
    driver.refresh()
    driver.find_element("id", "api-key").send_keys(key)
    driver.find_element("css selector", "#key-form button[type=submit]").click()


def rendered(driver: Any) -> None:
    WebDriverWait(driver, 30).until(
        lambda d: (
            d.execute_script("return document.documentElement.dataset.rendered")
            or d.find_element("id", "dash-error").text
        )
    )
    assert driver.find_element("id", "dash-error").text == ""


def shown_totals(driver: Any) -> dict[str, list[str]]:
    """{currency: [earned, count, pending, approved, paid, declined]} of the totals table."""
    rows = driver.execute_script(
        "return Array.from(document.querySelectorAll('#totals tbody tr'),"
        " tr => Array.from(tr.cells, c => c.textContent))"
    )
    return {row[0]: row[1:] for row in rows}


def today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


def test_totals_on_screen_equal_the_summary_per_currency(browser, demo, access_log):
    base, key = demo
    sign_in(browser, f"{base}/app/#from={FROM}&to={today()}", key)
    rendered(browser)
    totals = summary(base, key, **{"from": FROM, "to": today()})
    by_status = summary(base, key, **{"from": FROM, "to": today(), "groupBy": "status"})
    assert len(totals) >= 3  # the demo account earns in several currencies
    expected = {}
    for row in totals:
        cur = row["currency"]
        parts = {r["status"]: r["commission"] for r in by_status if r["currency"] == cur}
        statuses = ("pending", "approved", "paid", "declined")
        expected[cur] = [row["commission"], row["count"], *(parts.get(s, "0") for s in statuses)]
    assert shown_totals(browser) == expected
    # The headline cards say the same, one per currency.
    cards = browser.execute_script(
        "return Array.from(document.querySelectorAll('.total-amount'),"
        " e => [e.dataset.currency, e.textContent])"
    )
    assert dict(cards) == {cur: values[0] for cur, values in expected.items()}
    # One chart per currency, each with its table; no chart mixes currencies.
    charts = browser.find_elements("css selector", "#months figure.chart")
    assert [c.find_element("css selector", "h3").text[-3:] for c in charts] == sorted(expected)
    for chart in charts:
        assert chart.find_element("css selector", "svg").get_attribute("aria-hidden") == "true"
        assert chart.find_elements("css selector", "table tbody tr")
    # Nothing went elsewhere than this origin, nothing broke the CSP.
    entries = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert entries and all(name.startswith(base + "/") for name in entries), entries
    assert problems(browser) == []
    # The key: in sessionStorage, nowhere else the page could leave it.
    assert key not in browser.current_url
    assert all(key not in name for name in entries)
    assert browser.execute_script("return sessionStorage.getItem('affdir.apiKey')") == key
    assert browser.execute_script("return localStorage.length") == 0
    assert browser.get_cookies() == []
    assert browser.execute_script("return document.cookie") == ""
    assert access_log.lines and any("/v1/commissions/summary" in line for line in access_log.lines)
    assert not [line for line in access_log.lines if key in line]


def test_the_view_is_in_the_fragment_and_filters_by_network_and_currency(browser, demo):
    base, key = demo
    sign_in(browser, f"{base}/app/#from={FROM}&to={today()}&network=awin&currency=GBP", key)
    rendered(browser)
    awin = summary(base, key, **{"from": FROM, "to": today(), "network": "awin"})
    gbp = next(r for r in awin if r["currency"] == "GBP")
    assert list(shown_totals(browser)) == ["GBP"]
    assert shown_totals(browser)["GBP"][0] == gbp["commission"]
    assert browser.find_element("id", "view-network").get_attribute("value") == "awin"
    # A change of the form goes into the fragment (never the key) and reloads the view.
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "view-currency")).select_by_value("")
    browser.find_element("css selector", "#view-form button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda d: len(shown_totals(d)) > 1)
    assert "network=awin" in browser.current_url and "currency" not in browser.current_url
    assert key not in browser.current_url


def test_each_connection_is_shown_as_me_tells_it(browser, demo):
    base, key = demo
    sign_in(browser, f"{base}/app/", key)
    rendered(browser)
    _, _, body = get(f"{base}/v1/me", key)
    networks = exact(body)["data"]["networks"]
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('#connections tbody tr'),"
        " tr => Array.from(tr.cells, c => c.textContent))"
    )
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (n["network"], n["status"], n["completeThrough"] or "—", n["reasonCode"] or "—")
        for n in networks
    ]
    # The event feed's connection failure of the demo is among the latest events.
    events = browser.find_element("id", "events").text
    assert "connection.sync_failed" in events and "auth_rejected" in events


def ranked_rows(base: str, key: str, group_by: str, include: str = "outcomes") -> list[dict]:
    """Every row of a ranked summary (by programme, sub-id or directory programme), page
    after page, with what `include` adds."""
    rows: list[dict] = []
    params = {"groupBy": group_by, "include": include, "limit": "100", "from": FROM, "to": today()}
    while True:
        status, _, body = get(f"{base}/v1/commissions/summary?{urlencode(params)}", key)
        assert status == 200, body
        answer = exact(body)
        rows += answer["data"]
        if not answer["page"]["hasMore"]:
            return rows
        params["cursor"] = answer["page"]["nextCursor"]


def rate(value: str | None, of: str) -> str:
    """A realised rate as the page writes it: whole percent, halves up, with its count."""
    if value is None:
        return "—"
    percent = (decimal.Decimal(value) * 100).quantize(decimal.Decimal(1), decimal.ROUND_HALF_UP)
    return f"{percent} % of {of}"


def cells_of(driver: Any, target: str) -> list[list[str]]:
    return driver.execute_script(
        "return Array.from(arguments[0].querySelectorAll('tbody tr'),"
        " tr => Array.from(tr.cells, c => c.textContent))",
        driver.find_element("id", target),
    )


def test_top_programmes_and_sub_ids_are_the_apis_per_currency(browser, demo):
    base, key = demo
    sign_in(browser, f"{base}/app/#from={FROM}&to={today()}", key)
    rendered(browser)
    for kind, target in (("program", "programs"), ("subId", "subids")):
        status, _, body = get(f"{base}/v1/commissions/summary?groupBy={kind}", key)
        text = browser.find_element("id", target).text
        if status == 400 and exact(body)["param"] == "groupBy":  # an API without them
            assert "Not available from this API" in text
            continue
        rows = ranked_rows(base, key, kind)
        shown = cells_of(browser, target)
        expected = []
        for currency in sorted({r["currency"] for r in rows}):
            top = [r for r in rows if r["currency"] == currency][:10]
            expected += [
                [
                    r["commission"],
                    r["count"],
                    rate(r["outcomes"]["approvalRate"], r["outcomes"]["decided"]),
                ]
                for r in top
            ]
        assert [row[1:] for row in shown] == expected
        # The demo's commissions are decided often enough to give a rate somewhere.
        assert any(row[3] != "—" for row in shown)
        if kind == "subId":
            names = [r["subId"] or "(no sub-id)" for r in rows if r["currency"] == "EUR"][:10]
            tables = browser.find_elements("css selector", f"#{target} table")
            eur = next(t for t in tables if t.get_attribute("data-csv").endswith("EUR"))
            cells = eur.find_elements("css selector", "tbody th")
            assert [c.get_attribute("textContent") for c in cells] == names


def test_directory_programmes_show_advertised_terms_beside_realised_outcomes(browser, demo):
    base, key = demo
    sign_in(browser, f"{base}/app/#from={FROM}&to={today()}", key)
    rendered(browser)
    rows = [r for r in ranked_rows(base, key, "programSlug", "outcomes,terms") if r["programSlug"]]
    slugs = sorted({r["programSlug"] for r in rows})
    assert len(slugs) == 6  # the demo's commissions are linked to six sample programmes
    shown = cells_of(browser, "directory")
    expected = []
    for r in rows:
        terms, outcomes = r["terms"], r["outcomes"]
        days = [terms["cookieDays"], terms["holdbackDays"], outcomes["medianDaysToDecision"]]
        cookie, holdback, median = ("—" if d is None else d for d in days)
        expected.append(
            [
                terms["name"],
                r["currency"],
                terms["commission"],
                cookie,
                holdback,
                rate(outcomes["approvalRate"], outcomes["decided"]),
                rate(outcomes["reversalRate"], outcomes["everApproved"]),
                median,
                r["commission"],
            ]
        )
    assert shown == expected
    # The advertised wording is the directory's own, and each name links to its page there.
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('#directory tbody th a'), a => a.href)"
    )
    for slug in slugs:
        status, _, body = get(f"{base}/v1/programs/{slug}")
        assert status == 200, body
        advertised = exact(body)["data"]["commission"]
        assert {row[2] for row in shown if row[0] == exact(body)["data"]["name"]} == {advertised}
        assert f"{base}/programs/{slug}/" in links
    for link in set(links):
        assert get(link)[0] == 200, link
    assert problems(browser) == []


def test_a_wrong_key_shows_the_apis_message_and_keeps_nothing(browser, demo):
    base, key = demo
    wrong = key[:-6] + ("A" if key[-6] != "A" else "B") + key[-5:]
    sign_in(browser, f"{base}/app/", wrong)
    error = browser.find_element("id", "key-error")
    WebDriverWait(browser, 10).until(lambda _: error.text)
    _, _, body = get(f"{base}/v1/me", wrong)
    assert error.text == json.loads(body)["message"]
    assert browser.execute_script("return sessionStorage.length") == 0
    assert browser.find_element("id", "api-key").get_attribute("value") == ""
    assert not browser.find_element("id", "dashboard").is_displayed()
    assert wrong not in browser.current_url
    # The 401 itself is logged by the browser as a failed load; nothing else may be.
    assert [p for p in problems(browser) if "401" not in p["message"]] == []


def test_forget_key_clears_it(browser, demo):
    base, key = demo
    sign_in(browser, f"{base}/app/", key)
    rendered(browser)
    browser.find_element("id", "forget-key").click()
    assert browser.execute_script("return sessionStorage.length") == 0
    assert browser.find_element("id", "key-panel").is_displayed()
    assert browser.find_elements("css selector", "#dashboard table") == []
    browser.refresh()
    assert browser.find_element("id", "key-panel").is_displayed()


def test_csv_download_holds_the_tables_on_screen(browser, demo, tmp_path):
    base, key = demo
    sign_in(browser, f"{base}/app/#from={FROM}&to={today()}", key)
    rendered(browser)
    browser.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)}
    )
    browser.find_element("id", "download-csv").click()
    name = f"commissions-{FROM}-{today()}.csv"
    deadline = time.monotonic() + 10
    while not (tmp_path / name).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    text = (tmp_path / name).read_bytes().decode("utf-8")  # CRLF kept (RFC 4180)
    assert text.startswith("Totals per currency\r\nCurrency,Earned,Commissions,")
    for currency, values in shown_totals(browser).items():
        assert ",".join([currency, *values]) + "\r\n" in text
    assert key not in text
    assert problems(browser) == []


def test_the_csp_header_is_sent_for_the_dashboard(demo):
    base, _ = demo
    status, headers, body = get(f"{base}/app/")
    assert status == 200 and b"Publisher dashboard" in body
    assert headers["Content-Security-Policy"] == APP_CSP
    assert headers["Referrer-Policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in APP_CSP and "'unsafe-inline'" not in APP_CSP
    # The rest of the site keeps its own policy (the pages' meta tag).
    _, headers, _ = get(f"{base}/")
    assert "Content-Security-Policy" not in headers


def test_usable_on_a_360_px_screen(browser, demo, artifacts, capsys):
    base, key = demo
    sign_in(browser, f"{base}/app/", key, PHONE)
    rendered(browser)
    overflow = browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    screenshot(browser, artifacts, "dashboard-phone", capsys, full=False)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violation(browser, demo, scheme):
    base, key = demo
    axe = files("selenium_axe_python").joinpath("axe-core/axe.min.js").read_text()
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    )
    try:
        for signed_in in (False, True):
            if signed_in:
                sign_in(browser, f"{base}/app/#from={FROM}&to={today()}", key)
                rendered(browser)
            else:
                open_page(browser, f"{base}/app/")
                browser.execute_script("sessionStorage.clear()")
                browser.refresh()
            # Injected as the driver's own script: the page's CSP rules the page's scripts.
            browser.execute_script(axe)
            result = browser.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "axe.run(document).then(r => done(r.violations.map("
                "v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.html)}))));"
            )
            serious = [v for v in result if v["impact"] in {"serious", "critical"}]
            assert serious == [], (scheme, signed_in, serious)
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
