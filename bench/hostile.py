#!/usr/bin/env python3
"""Hostile client (not a test): replays issue 36's findings against a served deployment.

    python3 dev.py bench hostile

Starts, on this machine, the edge with compose.yaml's own settings for it (its
`EDGE_TRUSTED_PROXIES` included: this machine is a host of the LAN, outside compose's
network), on a SQLite store seeded with two accounts and the sample build of content/;
the MCP server over streamable HTTP in front of it; and runs the admin CLI against the
same store. Then tries, as an attacker would:

- webhook URLs that a parser rewrites into loopback or metadata addresses (Unicode digits,
  ideographic full stops, integer, octal and hex IPv4, CR/LF, spaces): each must be refused
  by `affdir-admin webhook add`;
- X-Forwarded-For from a LAN address: a new made-up client address per request must not
  escape the refused-key limit; then behind a trusted proxy, hops written `ip:port` and `[v6]:port` must count as their own clients;
- dated queries over the whole calendar (years 0001 to 9999, groupBy month and day):
  200 or 400, never 500;
- the MCP server over HTTP without a key, with a wrong key, and with a foreign Host;
- one account's cursor presented by another account's key;
- consecutive commissions' ids: they must show no sequence, and one account's id is 404
  under another's key;
- a secret file readable by others: the edge must refuse to start, saying `chmod 600`.

Prints one line per check and a verdict, `hostile: PASS` or `hostile: FAIL` with every
reason (exit status 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "tests"):  # run as a script from anywhere
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import aiohttp  # noqa: E402
import yaml  # noqa: E402
from support.pgserver import free_port  # noqa: E402
from support.sample import build_sample  # noqa: E402

from accounts import apikeys  # noqa: E402
from store import accounts, commissions, open_store  # noqa: E402
from store.base import NewCommission  # noqa: E402

SECRET = "hostile-secret-" + "h" * 40
HOSTILE_URLS = [
    "https://１２７．０．０．１/hook",
    "https://127。0。0。1/hook",
    "https://①②⑦.0.0.1/hook",
    "https://١٦٩.٢٥٤.١٦٩.٢٥٤/latest/meta-data",
    "https://2130706433/hook",
    "https://0x7f.1/hook",
    "https://0177.0.0.1/hook",
    "https://127.1/hook",
    "https://hooks.example.com/a\r\nX-Injected: 1",
    "https://hooks.example.com/a b",
    "https://[::ffff:127.0.0.1]/hook",
    "https://169.254.169.254/latest/meta-data",
]
DATED = [
    ("/v1/commissions/summary", {"from": "0001-01-01", "to": "9999-12-31", "groupBy": "month"}),
    ("/v1/commissions/summary", {"from": "0001-01-01", "to": "9999-12-31", "groupBy": "day"}),
    ("/v1/commissions/summary", {"from": "9999-12-31", "to": "9999-12-31", "groupBy": "month"}),
    ("/v1/commissions/summary", {"from": "0001-01-01", "to": "0001-01-01"}),
    ("/v1/commissions/summary", {"from": "0001-01-02", "to": "9999-12-30"}),
    ("/v1/commissions/summary", {"updatedSince": "0001-01-01T00:00:00+14:00"}),
    ("/v1/commissions", {"from": "0001-01-01", "to": "9999-12-31"}),
    ("/v1/commissions", {"updatedSince": "9999-12-31T23:59:59-12:00"}),
]


class Verdict:
    def __init__(self) -> None:
        self.failures: list[str] = []

    def check(self, ok: bool, what: str) -> None:
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            self.failures.append(what)


def compose_edge_environment() -> dict[str, str]:
    """The edge's environment in compose.yaml, `${VAR:-default}` read as its default."""
    spec = yaml.safe_load((ROOT / "compose.yaml").read_text())
    environment = spec["services"]["edge"]["environment"]
    default = re.compile(r"\$\{[A-Z_]+:-([^}]*)\}")
    return {k: default.sub(r"\1", str(v)) for k, v in environment.items()}


async def seed(database: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """Two accounts with commissions: ((uid, key), (uid, key))."""
    store = await open_store(database, writable=True, readers=1)
    made = []
    try:
        for name in ("victim", "attacker"):
            uid = await store.write(accounts.create, f"{name}@example.com", "pro")
            issued = apikeys.generate_key()
            await store.write(
                accounts.create_key, uid, issued.key_hash, issued.prefix, name, ("read",)
            )
            rows = [
                NewCommission(f"{name}-{n}", "pending", None, "2.50", "EUR",
                              f"2026-01-{1 + n:02d}T10:00:00Z")
                for n in range(6)
            ]  # fmt: skip
            await store.write(commissions.upsert, uid, "awin", rows)
            made.append((uid, issued.key))
    finally:
        await store.close()
    return made[0], made[1]


@contextlib.contextmanager
def process(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        yield child
    finally:
        child.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=15)


async def wait_for(url: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(url) as resp:
                    if resp.status < 500:
                        return
            await asyncio.sleep(0.2)
    raise SystemExit(f"hostile: {url} did not answer")


def edge_env(base: dict[str, str], port: int, dist: Path, database: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    env.update(base)
    env.update(
        {
            "EDGE_HOST": "127.0.0.1",
            "EDGE_PORT": str(port),
            "EDGE_DIST": str(dist),
            "EDGE_DATABASE": database,
            "EDGE_SECRET_KEY": SECRET,
            "EDGE_ACCESS_LOG": "false",
            "EDGE_LOG_LEVEL": "WARNING",
        }
    )
    for unused in ("EDGE_REDIS_URL", "EDGE_SECRET_FILE", "EDGE_PUBLIC_URL"):
        env.pop(unused, None)
    return env


def webhook_urls(verdict: Verdict, database: str, account: str) -> None:
    print("webhook targets (affdir-admin webhook add):")
    env = {**os.environ, "EDGE_DATABASE": database, "EDGE_SECRET_KEY": SECRET}
    for url in HOSTILE_URLS:
        for loopback in ([], ["--allow-loopback"]):
            done = subprocess.run(
                [sys.executable, "-m", "admin", "webhook", "add", "--account", account, url, *loopback],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            verdict.check(
                done.returncode != 0 and "Traceback" not in done.stderr,
                f"refused {url!r} {' '.join(loopback)}".rstrip(),
            )


async def refused_keys(verdict: Verdict, base: str, limit: int) -> None:
    print(f"X-Forwarded-For from the LAN (refused-key limit {limit}):")
    bad = {"Authorization": "Bearer afk_" + "Z" * 38}
    statuses = []
    async with aiohttp.ClientSession() as session:
        for n in range(limit + 5):
            spoof = {"X-Forwarded-For": f"198.51.100.{n % 250}, 10.0.0.{n % 250}"}
            async with session.get(f"{base}/v1/me", headers={**bad, **spoof}) as resp:
                statuses.append(resp.status)
    verdict.check(429 in statuses, "a new made-up address per request does not escape the limit")


async def trusted_hops(verdict: Verdict, base: str, limit: int) -> None:
    print("behind a trusted proxy, hops with ports:")
    bad = {"Authorization": "Bearer afk_" + "Y" * 38}
    async with aiohttp.ClientSession() as session:

        async def until_limited(hop: str) -> int:
            for n in range(limit + 5):
                headers = {**bad, "X-Forwarded-For": hop}
                async with session.get(f"{base}/v1/me", headers=headers) as resp:
                    if resp.status == 429:
                        return n
            return limit + 5

        first = await until_limited("203.0.113.7:51234")
        # Another client's hop, with a port and brackets: its own count, not the proxy's.
        async with session.get(
            f"{base}/v1/me", headers={**bad, "X-Forwarded-For": "[2001:db8::7]:443"}
        ) as resp:
            other = resp.status
    verdict.check(first <= limit, "ip:port is counted as its client and limited")
    verdict.check(other == 401, "[v6]:port is another client, not the proxy's exhausted count")


async def dates(verdict: Verdict, base: str, key: str) -> None:
    print("dated queries over the whole calendar:")
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession() as session:
        for path, query in DATED:
            async with session.get(base + path, params=query, headers=headers) as resp:
                status = resp.status
            verdict.check(status in (200, 400), f"{path} {query}: {status}")


async def cursors(verdict: Verdict, base: str, victim: str, attacker: str) -> None:
    print("one account's cursor under another's key:")
    async with aiohttp.ClientSession() as session:
        for path in ("/v1/commissions", "/v1/events"):
            async with session.get(
                base + path, params={"limit": "2"}, headers={"Authorization": f"Bearer {victim}"}
            ) as resp:
                token = (await resp.json())["page"]["nextCursor"]
            async with session.get(
                base + path,
                params={"limit": "2", "cursor": token},
                headers={"Authorization": f"Bearer {attacker}"},
            ) as resp:
                body = await resp.json()
                status = resp.status
            verdict.check(
                status == 400 and body.get("code") == "invalid_cursor", f"{path}: {status}"
            )


async def public_ids(verdict: Verdict, base: str, victim: str, attacker: str) -> None:
    print("ids that reveal no volume:")
    found: dict[str, list[str]] = {}
    async with aiohttp.ClientSession() as session:
        for name, key in (("victim", victim), ("attacker", attacker)):
            async with session.get(
                base + "/v1/commissions", headers={"Authorization": f"Bearer {key}"}
            ) as resp:
                found[name] = [c["id"] for c in (await resp.json())["data"]]
        # Each account's rows were written one after another: consecutive row ids.
        values = sorted(int(i[4:], 16) for i in found["attacker"])
        gaps = [b - a for a, b in itertools.pairwise(values)]
        verdict.check(bool(gaps) and min(gaps) > 2**20, "an account's ids show no sequence")
        async with session.get(
            base + f"/v1/commissions/{found['victim'][0]}",
            headers={"Authorization": f"Bearer {attacker}"},
        ) as resp:
            verdict.check(resp.status == 404, f"another account's id: {resp.status}")


async def mcp(verdict: Verdict, url: str, key: str) -> None:
    print("the MCP server over HTTP:")
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    cases: list[tuple[str, dict[str, str], Any]] = [
        ("no key", {}, 401),
        ("a wrong key", {"Authorization": "Bearer afk_" + "X" * 38}, 401),
        ("a foreign Host", {"Authorization": f"Bearer {key}", "Host": "evil.example"}, 421),
    ]
    async with aiohttp.ClientSession() as session:
        for what, extra, expected in cases:
            async with session.post(url, json=listing, headers={**headers, **extra}) as resp:
                verdict.check(resp.status == expected, f"{what}: {resp.status}")


def open_secret_file(verdict: Verdict, work: Path, env: dict[str, str]) -> None:
    print("a secret file others may read:")
    secret = work / "shared.key"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o644)
    env = {k: v for k, v in env.items() if k != "EDGE_SECRET_KEY"}
    env["EDGE_SECRET_FILE"] = str(secret)
    env["EDGE_PORT"] = str(free_port())
    done = subprocess.run(
        [sys.executable, "-m", "edge"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    verdict.check(
        done.returncode == 2 and f"chmod 600 {secret}" in done.stderr,
        f"the edge refuses it (exit {done.returncode})",
    )


async def main() -> int:
    verdict = Verdict()
    settings = compose_edge_environment()
    print(f"compose.yaml's EDGE_TRUSTED_PROXIES: {settings.get('EDGE_TRUSTED_PROXIES')}")
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        work = Path(tmp)
        dist = build_sample(work / "dist")
        database = str(work / "edge.sqlite3")
        (victim_uid, victim), (_, attacker) = await seed(database)
        limit = int(settings.get("EDGE_AUTH_FAILURE_LIMIT", "30/60").split("/")[0])
        port = free_port()
        env = edge_env(settings, port, dist, database)
        base = f"http://127.0.0.1:{port}"
        with process([sys.executable, "-m", "edge"], env):
            await wait_for(base + "/healthz")
            webhook_urls(verdict, database, victim_uid)
            await dates(verdict, base, victim)
            await cursors(verdict, base, victim, attacker)
            await public_ids(verdict, base, victim, attacker)
            mcp_port = free_port()
            mcp_env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
            command = [sys.executable, "-m", "agents", "--transport", "http"]
            command += ["--port", str(mcp_port), "--api-url", base]
            with process(command, mcp_env):
                mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
                await wait_for(mcp_url)
                await mcp(verdict, mcp_url, victim)
            # Last: it leaves this machine's address over the refused-key limit.
            await refused_keys(verdict, base, limit)
        # The same edge behind a proxy it trusts (this machine's loopback).
        port = free_port()
        env = edge_env({**settings, "EDGE_TRUSTED_PROXIES": "127.0.0.1"}, port, dist, database)
        with process([sys.executable, "-m", "edge"], env):
            base = f"http://127.0.0.1:{port}"
            await wait_for(base + "/healthz")
            await trusted_hops(verdict, base, limit)
        open_secret_file(verdict, work, env)
    if verdict.failures:
        print(f"hostile: FAIL ({len(verdict.failures)}): " + "; ".join(verdict.failures))
        return 1
    print("hostile: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
