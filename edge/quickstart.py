"""`python3 dev.py serve`: build the sample content, seed the demo account, serve both halves.

Any `python -m edge` flag may follow (e.g. `--port 9000`); the demo key is new on every run.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from accounts.demo import seed_demo
from edge.__main__ import serve
from edge.config import Config, ConfigError, load

ROOT = Path(__file__).resolve().parent.parent


# A wildcard listening address is read at the machine's loopback.
WILDCARD_HOSTS = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}


def site_url(config: Config) -> str:
    """Where readers reach this server: `--public-url`, else its own host and port, so the
    site's canonical links, sitemap and llms.txt name the address actually served."""
    if config.public_url:
        return config.public_url
    host = WILDCARD_HOSTS.get(config.host, config.host)
    return f"http://{f'[{host}]' if ':' in host else host}:{config.port}"


def build_sample(config: Config) -> None:
    """Run the real build over content/ into the configured dist/ (it says what it made)."""
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "build.py"),
            "--content",
            str(ROOT / "content"),
            "--out",
            str(config.dist),
            "--base-url",
            site_url(config),
        ],
        check=True,
    )


def banner(config: Config, key: str) -> str:
    base = site_url(config)
    return "\n".join(
        [
            "",
            f"  API      {base}/v1/programs",
            f"  site     {base}/",
            f"  docs     {base}/docs/",
            f"  app      {base}/app/  (the publisher dashboard: paste the demo key)",
            f"  demo key {key}",
            "",
            "  try:",
            f'  curl -s -H "Authorization: Bearer {key}" "{base}/v1/programs?limit=3"',
            f'  curl -s -H "Authorization: Bearer {key}" "{base}/v1/commissions?status=approved&limit=2"',
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = load(argv)
    except ConfigError as exc:
        print(f"quickstart: {exc}", file=sys.stderr)
        return 2
    config = dataclasses.replace(config, serve_site=True)
    build_sample(config)
    key = seed_demo(config.database, config.resolved_secret())
    print(banner(config, key), flush=True)
    serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
