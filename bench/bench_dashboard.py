#!/usr/bin/env python3
"""Speed and size of the publisher dashboard (/app/) in this machine's chromium (not a test).

    python3 dev.py bench bench_dashboard [--loads 7]

1. Runs `python -m edge.quickstart` (the real build of content/, the seeded demo account,
   the edge serving both) on a free port into bench/out/dashboard/, and reads the demo key
   from its banner.
2. Drives Debian's chromium through selenium (the browser tests' flags), the HTTP cache
   off, so that every load is a first load:
   - **bytes**: what the first load of /app/ transfers before a key is given (the page, its
     stylesheets, script and icon), then with the demo key (the API's answers too), from
     the Resource Timing entries' `transferSize` (headers and the coded body: gzip where
     the server coded it);
   - **render**: with the key in sessionStorage, the time from navigation to the
     `dashboard-rendered` mark the page sets when every section is drawn, for `--loads`
     loads (the median, and the range);
   - **baseline**: in the same run, the load of the site's home page (navigation to its
     `load` event), a static page of the same site: the ratio says what the dashboard's
     API calls and drawing add.
Prints the figures and writes them to bench/out/dashboard/results.json.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "dashboard"
FLAGS = (
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
TARGET_BYTES = 150 * 1024
TARGET_RENDER_MS = 1000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_edge(port: int) -> tuple[subprocess.Popen[str], str]:
    """The quickstart on `port`; returns the process and the demo key once it serves."""
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    command = [sys.executable, "-m", "edge.quickstart", "--port", str(port)]
    command += ["--dist", str(OUT / "dist"), "--database", str(OUT / "edge.sqlite3")]
    command += ["--secret-file", str(OUT / "secret.key"), "--access-log", "false"]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    output = ""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise SystemExit("the quickstart stopped:\n" + output)
        output += line
        if "Running on" in line:
            match = re.search(r"demo key (afk_\S+)", output)
            if match:
                return process, match.group(1)
    raise SystemExit("the quickstart did not serve within 180 s")


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        raise SystemExit("needs Debian's chromium and chromedriver: scripts/ensure-chromium.sh")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={OUT / 'profile'}")
    options.add_argument("--window-size=1280,900")
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


TRANSFERRED = (
    "const nav = performance.getEntriesByType('navigation')[0];"
    "return [nav, ...performance.getEntriesByType('resource')]"
    ".map(e => [e.name, e.transferSize, e.encodedBodySize, e.decodedBodySize]);"
)


def wait_for(driver: Any, script: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.01)
    raise SystemExit(f"timed out waiting for: {script}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=7, help="loads measured per case")
    args = parser.parse_args(argv)
    port = free_port()
    process, key = start_edge(port)
    base = f"http://127.0.0.1:{port}"
    driver = browser()
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        # First load, no key yet: what a visitor downloads to see the page.
        driver.get(base + "/app/")
        wait_for(driver, "return document.readyState === 'complete'")
        shell = driver.execute_script(TRANSFERRED)
        # The key given, every section drawn: the API's answers added.
        driver.execute_script("sessionStorage.setItem('affdir.apiKey', arguments[0])", key)
        renders = []
        full: list[list[Any]] = []
        for _ in range(args.loads):
            driver.get("about:blank")
            driver.get(base + "/app/")
            wait_for(driver, "return document.documentElement.dataset.rendered")
            mark = driver.execute_script(
                "return performance.getEntriesByName('dashboard-rendered')[0].startTime"
            )
            renders.append(float(mark))
            full = driver.execute_script(TRANSFERRED)
        homes = []
        for _ in range(args.loads):
            driver.get("about:blank")
            driver.get(base + "/")
            wait_for(driver, "return document.readyState === 'complete'")
            homes.append(
                float(
                    wait_for(
                        driver,
                        "return performance.getEntriesByType('navigation')[0].loadEventEnd",
                    )
                )
            )
    finally:
        driver.quit()
        process.terminate()
        process.wait(30)
    shell_bytes = sum(e[1] for e in shell)
    full_bytes = sum(e[1] for e in full)
    results = {
        "shell": {"transferred": shell_bytes, "decoded": sum(e[3] for e in shell), "files": shell},
        "withKey": {"transferred": full_bytes, "decoded": sum(e[3] for e in full)},
        "renderMs": {
            "median": statistics.median(renders),
            "min": min(renders),
            "max": max(renders),
        },
        "homeLoadMs": {"median": statistics.median(homes), "min": min(homes), "max": max(homes)},
        "ratioRenderToHome": statistics.median(renders) / statistics.median(homes),
        "loads": args.loads,
    }
    (OUT / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(
        f"first load of /app/ (no key): {shell_bytes / 1024:.1f} KB transferred "
        f"({results['shell']['decoded'] / 1024:.1f} KB decoded), target < {TARGET_BYTES // 1024} KB"
    )
    for name, size, coded, decoded in shell:
        print(
            f"  {name.removeprefix(base)}: {size} B transferred, {coded} B body, {decoded} B decoded"
        )
    print(
        f"with the demo key (API answers too): {full_bytes / 1024:.1f} KB transferred "
        f"({results['withKey']['decoded'] / 1024:.1f} KB decoded)"
    )
    print(
        f"render (navigation to 'dashboard-rendered'), {args.loads} loads: median "
        f"{results['renderMs']['median']:.0f} ms (range {min(renders):.0f}-{max(renders):.0f}), "
        f"target < {TARGET_RENDER_MS} ms"
    )
    print(
        f"baseline, the home page's load event: median {results['homeLoadMs']['median']:.0f} ms; "
        f"ratio dashboard/home {results['ratioRenderToHome']:.2f}"
    )
    print(f"written: {OUT / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
