#!/usr/bin/env python3
"""Screenshot of the demo account's dashboard into docs/images/dashboard.png (the README's).

    .venv/bin/python scripts/screenshot-dashboard.py [--out docs/images/dashboard.png]

Serves the sample build and a freshly seeded demo account with `python -m edge.quickstart`
(in a temporary directory, on a free port), opens /app/ in Debian's chromium with the demo
key, waits for the page's `rendered` marker and saves the first screen. The demo's history
ends on the day it is seeded, so the picture follows the calendar.
"""

from __future__ import annotations

import argparse
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WINDOW = (1100, 1100)
# One currency: its totals, then its chart of the months, within the first screen.
VIEW = "#currency=EUR"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "dashboard.png")
    args = parser.parse_args(argv)
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        print(
            "needs Debian's chromium and chromedriver: scripts/ensure-chromium.sh", file=sys.stderr
        )
        return 2
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    with tempfile.TemporaryDirectory(prefix="affdir-screenshot-") as tmp:
        port = free_port()
        command = [sys.executable, "-m", "edge.quickstart", "--port", str(port)]
        command += ["--dist", f"{tmp}/dist", "--database", f"{tmp}/edge.sqlite3"]
        command += ["--secret-file", f"{tmp}/secret.key", "--access-log", "false"]
        edge = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            assert edge.stdout is not None
            output, deadline = "", time.monotonic() + 180
            while "Running on" not in output and time.monotonic() < deadline:
                line = edge.stdout.readline()
                if not line:
                    print(output, file=sys.stderr)
                    return 1
                output += line
            key = re.search(r"demo key (afk_\S+)", output)
            if key is None:
                print(output, file=sys.stderr)
                return 1
            options = webdriver.ChromeOptions()
            options.binary_location = chromium
            for flag in FLAGS:
                options.add_argument(flag)
            options.add_argument(f"--user-data-dir={tmp}/profile")
            options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
            driver = webdriver.Chrome(options=options, service=Service(chromedriver))
            try:
                base = f"http://127.0.0.1:{port}"
                driver.get(base + "/app/")
                driver.execute_script(
                    "sessionStorage.setItem('affdir.apiKey', arguments[0])", key.group(1)
                )
                driver.get(base + "/app/" + VIEW)
                WebDriverWait(driver, 30).until(
                    lambda d: d.execute_script("return document.documentElement.dataset.rendered")
                )
                # The dashboard's own heading at the top of the picture.
                driver.execute_script("document.querySelector('main h1').scrollIntoView()")
                args.out.parent.mkdir(parents=True, exist_ok=True)
                driver.save_screenshot(str(args.out))
            finally:
                driver.quit()
        finally:
            edge.terminate()
            edge.wait(30)
    print(f"{args.out}: {args.out.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
