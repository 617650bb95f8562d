"""The link check (`affdir-verify`) against a real site on loopback: each outcome, redirect
chains, HEAD refused, time-outs, per-host politeness and the report the command writes."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from buildkit import ROOT, Content, submission
from support.clock import FakeClock
from yarl import URL

from catalog import linkcheck
from catalog.linkcheck import HostPacer, Limits, Outcome, Target

FAST = Limits(timeout_seconds=0.5, max_redirects=3, per_host_seconds=0.0, concurrency=4)


def site_app() -> web.Application:
    """Pages that answer the ways real advertisers' sites do."""

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="terms")

    async def missing(request: web.Request) -> web.Response:
        raise web.HTTPNotFound()

    async def head_refused(request: web.Request) -> web.Response:
        if request.method == "HEAD":
            raise web.HTTPMethodNotAllowed("HEAD", ["GET"])
        return web.Response(text="terms")

    async def chain(request: web.Request) -> web.Response:
        left = int(request.match_info["n"])
        if left == 0:
            return web.Response(text="end")
        raise web.HTTPFound(f"/chain/{left - 1}")

    def redirect(to: str | None) -> Any:
        async def handler(request: web.Request) -> web.Response:
            if to is None:
                return web.Response(status=302)
            raise web.HTTPFound(to)

        return handler

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.Response(text="late")

    app = web.Application()
    app.router.add_get("/", ok)
    app.router.add_get("/affiliation", ok)
    app.router.add_get("/missing", missing)
    app.router.add_route("*", "/head-refused", head_refused)
    app.router.add_get("/chain/{n}", chain)
    app.router.add_get("/loop-a", redirect("/loop-b"))
    app.router.add_get("/loop-b", redirect("/loop-a"))
    app.router.add_get("/to-home", redirect("/"))
    app.router.add_get("/to-ftp", redirect("ftp://example.invalid/terms"))
    app.router.add_get("/no-location", redirect(None))
    app.router.add_get("/slow", slow)
    return app


@pytest.fixture
async def site(aiohttp_server: Any) -> URL:
    server = await aiohttp_server(site_app(), access_log=None)
    return URL(str(server.make_url("/")))


@pytest.mark.parametrize(
    ("path", "outcome", "redirects", "method"),
    [
        ("/affiliation", Outcome.OK, 0, "HEAD"),
        ("/missing", Outcome.HTTP_ERROR, 0, "GET"),
        ("/head-refused", Outcome.OK, 0, "GET"),
        ("/chain/3", Outcome.OK, 3, "HEAD"),
        ("/chain/4", Outcome.TOO_MANY_REDIRECTS, 3, "HEAD"),
        ("/loop-a", Outcome.REDIRECT_LOOP, 2, "HEAD"),
        ("/to-home", Outcome.HOMEPAGE, 1, "HEAD"),
        ("/", Outcome.HOMEPAGE, 0, "HEAD"),
        ("/to-ftp", Outcome.BAD_REDIRECT, 0, "HEAD"),
        ("/no-location", Outcome.BAD_REDIRECT, 0, "HEAD"),
        ("/slow", Outcome.TIMEOUT, 0, "HEAD"),
    ],
)
async def test_each_answer_has_its_outcome(
    site: URL, path: str, outcome: Outcome, redirects: int, method: str
) -> None:
    target = Target("acme", "signupUrl", str(site.with_path(path)), str(site))
    [result] = await linkcheck.check_all([target], FAST)
    assert (result.outcome, result.redirects, result.method) == (outcome, redirects, method)
    if outcome is Outcome.OK:
        assert 200 <= (result.status or 0) < 300
    if outcome is Outcome.HTTP_ERROR:
        assert result.status == 404
        assert result.reason == "HTTP 404"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "outcome"),
    [
        (f"http://127.0.0.1:{_closed_port()}/terms", Outcome.UNREACHABLE),
        ("ftp://acme.example/terms", Outcome.INVALID_URL),
        ("not a url at all", Outcome.INVALID_URL),
    ],
    # Named, not by the URL: the closed port differs in each parallel worker's collection.
    ids=["closed-port", "ftp", "not-a-url"],
)
async def test_links_that_cannot_be_requested(url: str, outcome: Outcome) -> None:
    [result] = await linkcheck.check_all([Target("acme", "evidence", url, "")], FAST)
    assert result.outcome is outcome


async def test_results_keep_the_targets_order_across_hosts(site: URL) -> None:
    other = URL(str(site).replace("127.0.0.1", "localhost"))
    found = [
        Target("a", "signupUrl", str(site.with_path("/missing")), ""),
        Target("b", "signupUrl", str(other.with_path("/affiliation")), ""),
        Target("c", "signupUrl", str(site.with_path("/affiliation")), ""),
    ]
    results = await linkcheck.check_all(found, FAST)
    assert [(r.slug, r.outcome) for r in results] == [
        ("a", Outcome.HTTP_ERROR),
        ("b", Outcome.OK),
        ("c", Outcome.OK),
    ]


async def test_one_host_is_asked_one_request_at_a_time_with_a_pause() -> None:
    clock = FakeClock()
    pacer = HostPacer(2.0, clock=clock, sleep=clock.sleep)
    sent: list[tuple[str, float]] = []
    in_flight: dict[str, int] = {}
    most: dict[str, int] = {}

    def request(host: str) -> Any:
        async def send() -> None:
            in_flight[host] = in_flight.get(host, 0) + 1
            most[host] = max(most.get(host, 0), in_flight[host])
            sent.append((host, clock()))
            await clock.sleep(0.5)  # the request itself takes time
            in_flight[host] -= 1

        return pacer.request(host, send)

    await asyncio.gather(*(request(h) for h in ["a", "a", "b", "a"]))
    times = [t for host, t in sent if host == "a"]
    assert most == {"a": 1, "b": 1}
    # Each request to "a" starts at least 2 s after the previous one ended.
    assert all(later - earlier >= 2.5 for earlier, later in itertools.pairwise(times))
    assert len(times) == 3


@pytest.mark.parametrize(
    ("url", "site", "homepage"),
    [
        ("https://www.acme.fr/", "https://www.acme.fr/", True),
        ("https://acme.fr", "https://www.acme.fr/", True),
        ("https://ACME.fr/", "https://www.acme.fr/", True),
        ("https://www.acme.fr/?ref=1", "https://www.acme.fr/", False),
        ("https://www.acme.fr/affiliation", "https://www.acme.fr/", False),
        ("https://partners.acme.fr/", "https://www.acme.fr/", False),
        ("https://www.acme.fr/", "", False),
    ],
)
def test_homepage_is_the_sites_root(url: str, site: str, homepage: bool) -> None:
    assert linkcheck.is_homepage(URL(url), site) is homepage


def test_targets_are_the_published_links_in_order() -> None:
    records = [
        {"slug": "b", "site": "https://b.example/", "signupUrl": "https://b.example/join"},
        {
            "slug": "a",
            "site": "https://a.example/",
            "signupUrl": "https://a.example/join",
            "evidence": "https://a.example/terms",
        },
        {"slug": "c", "site": "https://c.example/"},
    ]
    assert [(t.slug, t.field, t.url) for t in linkcheck.targets(records)] == [
        ("a", "signupUrl", "https://a.example/join"),
        ("a", "evidence", "https://a.example/terms"),
        ("b", "signupUrl", "https://b.example/join"),
    ]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog.linkcheck", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.process
async def test_the_command_writes_a_report_and_fails_on_a_broken_link(
    site: URL, content: Content, tmp_path: Path
) -> None:
    # The submissions name a real-looking host, pinned to the loopback site by --resolve.
    base = site.with_host("www.acme.fr")
    signup, broken = base.with_path("/affiliation"), base.with_path("/missing")
    content.add("good", submission(site=str(base), signupUrl=str(signup), evidence=str(signup)))
    content.add("broken", submission(site=str(base), signupUrl=str(broken), evidence=str(signup)))
    content.add("draft", submission(status="unpublished", signupUrl="http://unused.invalid/"))
    report, summary = tmp_path / "out" / "report.json", tmp_path / "summary.md"
    args = [
        *("--content", str(content.content), "--report", str(report)),
        *("--markdown", str(summary), "--resolve", "www.acme.fr=127.0.0.1"),
    ]
    done = await asyncio.to_thread(_run, *args, "--per-host-seconds", "0.01", "--timeout", "5")
    assert done.returncode == 1, done.stderr
    assert "broken: signupUrl" in done.stdout and "http_error" in done.stdout
    written = json.loads(report.read_text())
    assert written["summary"]["ok"] == 3 and written["summary"]["http_error"] == 1
    assert {r["slug"] for r in written["results"]} == {"good", "broken"}  # never the draft
    assert "| broken | signupUrl | http_error | HTTP 404 |" in summary.read_text()

    only = await asyncio.to_thread(_run, *args, "--only", "good", "--per-host-seconds", "0.01")
    assert only.returncode == 0, only.stdout + only.stderr
    checked = [(r["slug"], r["field"]) for r in json.loads(report.read_text())["results"]]
    assert checked == [("good", "signupUrl"), ("good", "evidence")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--timeout", "0"], "must be more than 0 and at most 300 seconds"),
        (["--max-redirects", "99"], "from 0 to 20"),
        (["--concurrency", "x"], "must be a whole number"),
        (["--only", "nobody"], "no published programme nobody"),
        (["--resolve", "acme.fr=not-an-address"], "expected HOST=IP-ADDRESS"),
        (["--resolve", "=127.0.0.1"], "expected HOST=IP-ADDRESS"),
    ],
)
@pytest.mark.process
def test_bad_command_lines_are_refused(
    content: Content, tmp_path: Path, args: list[str], message: str
) -> None:
    content.add("good", submission())
    done = _run("--content", str(content.content), "--report", str(tmp_path / "r.json"), *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.process
def test_content_that_does_not_build_is_not_checked(content: Content, tmp_path: Path) -> None:
    content.add("bad", submission(cookieDays="-1"))
    done = _run("--content", str(content.content), "--report", str(tmp_path / "r.json"))
    assert done.returncode == 2
    assert "bad.yaml" in done.stderr and "nothing checked" in done.stderr
    assert not (tmp_path / "r.json").exists()
