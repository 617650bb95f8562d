"""Fixtures of the HTML directory's tests: rendered sites, a real build, a real browser."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from site_samples import BASE_URL, ROOT, sample_programs
from support.sample import build_sample

from catalog.model import Program
from catalog.site.pages import render_site
from edge.app import create_app
from edge.config import Config

ARTIFACTS = ROOT / "test-artifacts" / "site"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def write_site(files: dict[str, bytes], root: Path) -> Path:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


@pytest.fixture(scope="session")
def programs() -> list[Program]:
    return sample_programs()


@pytest.fixture(scope="session")
def site_files(programs: list[Program]) -> dict[str, bytes]:
    """The sample content's site, rendered by render_site directly."""
    return render_site(programs, BASE_URL)


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dist/ of a real build of content/ (the build calls render_site from its site stage)."""
    out = tmp_path_factory.mktemp("build") / "dist"
    return build_sample(out, "--base-url", BASE_URL, "--no-cache", "--no-sync")


# --- a real edge serving the site, in a thread (for the browser) ---------------------


class EdgeThread:
    """The real edge application (serve_site on) on a free loopback port, in its own loop."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.loop = asyncio.new_event_loop()
        self.runner: web.AppRunner | None = None
        self.port = 0
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="site-edge", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self.ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self._stop())
        self.loop.close()

    async def _start(self) -> None:
        self.runner = web.AppRunner(create_app(self.config), access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = self.runner.addresses[0][1]

    async def _stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def __enter__(self) -> EdgeThread:
        self.thread.start()
        if not self.ready.wait(30):
            raise RuntimeError("the edge did not start within 30 s")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture(scope="session")
def site_server(built_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a real edge serving `built_dist` with --serve-site true."""
    state = tmp_path_factory.mktemp("edge")
    config = Config(
        dist=built_dist,
        database=str(state / "edge.sqlite3"),
        secret_key="site-tests-" + "x" * 40,
        secret_file=state / "secret.key",
        access_log=False,
        serve_site=True,
    )
    with EdgeThread(config) as edge:
        yield edge.url


# --- the browser ----------------------------------------------------------------------


def chromium_binaries() -> tuple[str, str]:
    """(chromium, chromedriver): installed here by scripts/ensure-chromium.sh when in CI,
    else the tests skip with the reason."""
    found = shutil.which("chromium"), shutil.which("chromedriver")
    if not all(found) and os.environ.get("CI"):
        subprocess.run(
            ["bash", str(ROOT / "scripts" / "ensure-chromium.sh")], check=True, timeout=1200
        )
        found = shutil.which("chromium"), shutil.which("chromedriver")
    if not all(found):
        pytest.skip(
            "browser tests need Debian's chromium and chromedriver: run "
            "`bash scripts/ensure-chromium.sh` (as root) to install them"
        )
    return found[0] or "", found[1] or ""


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless chromium driven by selenium through Debian's chromedriver."""
    chromium, chromedriver = chromium_binaries()
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    # Both paths given: selenium's own manager never looks for (or downloads) anything.
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.add_argument("--window-size=1280,900")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
