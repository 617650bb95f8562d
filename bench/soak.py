#!/usr/bin/env python3
"""Soak run (not a test): a real deployment under mixed traffic while its parts fail.

    python3 dev.py bench soak --minutes 3 [--n 20000] [--clients 8] [--grace 3]

1. Starts what docs/deploy.md describes, on this machine: a private PostgreSQL
   (tests/support/pgserver.py), a private Redis (tests/support/redisserver.py), a build of
   the synthetic catalogue (bench/synth.py, `build.py --no-site`), an account store seeded
   with many keys (some revoked) and deep commission histories, and the edge with 2 worker
   processes (`python -m edge --workers 2`, the Redis rate limiter).
2. For `--minutes`, `--clients` clients send mixed traffic from many keys: directory pages
   with `Accept-Encoding: gzip` following cursors, `/v1/programs/{slug}`, `/v1/me`, whole
   commission histories paged through to the end, invalid parameters, revoked keys. A client
   retries a GET once when its keep-alive connection was closed under it (what HTTP clients
   do), and waits `Retry-After` (capped at 1 s) before asking a page again after a 503.
3. Meanwhile, on a timer: new builds swapped into dist/ (the edge reloads them), commission
   imports (`python -m admin commissions import`, re-run until done, as an operator would),
   PostgreSQL stopped and started (fast, then immediate), Redis killed and restarted, one
   edge worker killed with SIGKILL (twice, the second time while PostgreSQL is down; the
   supervisor must start it again).
4. Prints the statuses per endpoint every second and a final verdict line,
   `soak: PASS ...` or `soak: FAIL ...` with every reason. It fails on: a status outside the
   endpoint's table (contract/endpoints.py, the spec's tables), any 500, an answer other
   than the expected one (200, or 400/401/404 for the requests made to get them) while
   PostgreSQL was up, counted from `--grace` seconds after it came back, a revoked key
   answered 200, a connection error outside a worker kill's window, a killed worker not
   replaced within 5 s by one that stays up, a build not served within 10 s, and any
   commission row lost, duplicated or unexpected: in the store at the end, and in every
   history a client paged through (which must hold every row imported before its first
   page).

Writes bench/out/soak/results.json. docs/performance.md ("Soak run") has a run's figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store import accounts, commissions, connections

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "bench", ROOT / "tests"):  # run as a script from anywhere
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import aiohttp  # noqa: E402
from support.pgserver import PgServer, find_bin_dir, free_port  # noqa: E402
from support.redisserver import RedisServer, find_redis_server  # noqa: E402

from contract.endpoints import COMMISSIONS, ME, PROGRAM, PROGRAMS  # noqa: E402

OUT = ROOT / "bench" / "out" / "soak"
SECRET = "soak-secret-" + "s" * 40
NETWORK = "awin"
ENDPOINTS = {e.name: e for e in (PROGRAMS, PROGRAM, ME, COMMISSIONS)}
# Every endpoint answers 200, 304 or an error status of its table in the spec.
ALLOWED = {name: {200, 304, *e.statuses} for name, e in ENDPOINTS.items()}
RELOAD_DEADLINE = 10.0  # seconds for a new build to be served
RESTART_DEADLINE = 5.0  # seconds for the supervisor to replace a killed worker
KILL_WINDOW = 1.0  # seconds around a SIGKILL in which a connection may break
STAY_UP = 3.0  # seconds a replacement worker must live to count as started


# --- what happened ----------------------------------------------------------------------


@dataclass(slots=True)
class Sample:
    endpoint: str
    kind: str  # ok, unknown-slug, bad, revoked
    expected: int
    status: int  # 0: the connection failed (after one retry)
    start: float
    end: float
    path: str


@dataclass
class Outages:
    """When each dependency was down: (down, up) pairs in time.monotonic()."""

    pg: list[tuple[float, float]] = field(default_factory=list)
    redis: list[tuple[float, float]] = field(default_factory=list)
    kills: list[float] = field(default_factory=list)
    pg_down_since: float | None = None

    def pg_up_throughout(self, start: float, end: float, grace: float) -> bool:
        if self.pg_down_since is not None and self.pg_down_since <= end:
            return False
        return all(end < down or start > up + grace for down, up in self.pg)

    def near_kill(self, start: float, end: float) -> bool:
        return any(start - KILL_WINDOW <= kill <= end + KILL_WINDOW for kill in self.kills)


@dataclass
class Traversal:
    uid: str
    start: float
    seen: list[str] = field(default_factory=list)
    complete: bool = False


@dataclass
class Ledger:
    """Every commission row that should exist, and when it was known committed."""

    rows: dict[str, dict[str, float]] = field(default_factory=dict)  # uid -> id -> committed
    imports: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class World:
    base: str
    keys: list[tuple[str, str]]  # (uid, key) of working keys
    deep: list[tuple[str, str]]  # (uid, key) of the accounts with deep histories
    revoked: list[str]
    samples: list[Sample] = field(default_factory=list)
    outages: Outages = field(default_factory=Outages)
    traversals: list[Traversal] = field(default_factory=list)
    slugs: list[str] = field(default_factory=list)
    ledger: Ledger = field(default_factory=Ledger)
    events: list[tuple[float, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    builds: list[dict[str, Any]] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def event(self, text: str) -> None:
        self.events.append((time.monotonic(), text))


# --- set-up -----------------------------------------------------------------------------


def build(content: Path, dist: Path) -> float:
    started = time.perf_counter()
    cmd = [sys.executable, str(ROOT / "build.py"), "--content", str(content), "--out", str(dist)]
    subprocess.run([*cmd, "--no-site", "--quiet"], check=True, cwd=ROOT)
    return time.perf_counter() - started


def make_catalogue(n: int, seed: int) -> tuple[Path, Path]:
    from synth import generate

    content, dist = OUT / "content", OUT / "dist"
    stamp = OUT / "content.stamp"
    wanted = json.dumps({"n": n, "seed": seed})
    if not (stamp.exists() and stamp.read_text() == wanted and dist.exists()):
        for path in (content, dist):
            shutil.rmtree(path, ignore_errors=True)
        generate(n, seed, content)
        print(f"soak: building {n} submissions ...", flush=True)
        print(f"soak: cold build {build(content, dist):.1f} s", flush=True)
        stamp.write_text(wanted)
    return content, dist


def commission_rows(prefix: str, count: int, rng: random.Random) -> list[Any]:
    from store.base import NewCommission

    return [
        NewCommission(
            external_id=f"{prefix}-{i}",
            status=rng.choice(("pending", "approved", "paid")),
            raw_status=None,
            commission_amount=f"{rng.randint(1, 500)}.{rng.randint(0, 99):02d}",
            currency=rng.choice(("EUR", "USD", "GBP")),
            transacted_at=random_instant(rng),
        )
        for i in range(count)
    ]


def random_instant(rng: random.Random) -> str:
    return (
        f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}T"
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
    )


async def seed(url: str, args: argparse.Namespace, ledger: Ledger) -> dict[str, Any]:
    """Accounts with keys (some revoked), a connected network and commission histories."""
    from accounts import apikeys
    from accounts.crypto import encrypt_credentials
    from edge.config import Config
    from store.engines.postgres import PostgresStore

    keyring = Config(secret_key=SECRET).keyring()
    rng = random.Random(7)
    store = await PostgresStore.open(url, writable=True, timeout=60.0)
    keys, deep, revoked = [], [], []
    try:
        for i in range(args.accounts):
            uid = await store.write(
                accounts.create, f"soak{i}@example.com", "pro" if i % 4 else "free"
            )
            sealed = encrypt_credentials(keyring, uid, NETWORK, b'{"token": "soak"}')
            await store.write(connections.connect, uid, NETWORK, sealed)
            for k in range(2):
                issued = apikeys.generate_key()
                await store.write(
                    accounts.create_key, uid, issued.key_hash, issued.prefix, f"k{k}", ("read",)
                )
                keys.append((uid, issued.key))
            issued = apikeys.generate_key()
            view = await store.write(
                accounts.create_key, uid, issued.key_hash, issued.prefix, "old", ("read",)
            )
            await store.write(accounts.revoke_key, view.id)
            revoked.append(issued.key)
            count = args.deep_rows if i < args.deep_accounts else 40
            rows = commission_rows(f"seed{i}", count, rng)
            for chunk in range(0, len(rows), 2000):
                await store.write(commissions.upsert, uid, NETWORK, rows[chunk : chunk + 2000])
            ledger.rows[uid] = {row.external_id: 0.0 for row in rows}
            if i < args.deep_accounts:
                deep.append((uid, keys[-1][1]))
    finally:
        await store.close()
    return {"keys": keys, "deep": deep, "revoked": revoked}


def edge_env(port: int, dist: Path, database: str, redis_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "EDGE_HOST": "127.0.0.1",
        "EDGE_PORT": str(port),
        "EDGE_DIST": str(dist),
        "EDGE_DATABASE": database,
        "EDGE_REDIS_URL": redis_url,
        "EDGE_SECRET_KEY": SECRET,
        "EDGE_WORKERS": "2",
        # Limits out of reach: a 429 would be a refusal the soak cannot tell from a bug.
        "EDGE_RATE_LIMIT_PRO": "100000000/60",
        "EDGE_RATE_LIMIT_FREE": "100000000/60",
        "EDGE_ACCESS_LOG": "false",
        "EDGE_LOG_LEVEL": "WARNING",
    }


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry.name))
    return found


async def wait_ready(base: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(base + "/readyz") as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(0.2)
    raise SystemExit("soak: the edge did not become ready")


# --- traffic ----------------------------------------------------------------------------


async def request(
    world: World,
    session: aiohttp.ClientSession,
    endpoint: str,
    kind: str,
    expected: int,
    path: str,
    key: str,
) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {key}", "Accept-Encoding": "gzip"}
    start = time.monotonic()
    status, body = 0, None
    for _attempt in range(2):  # once more on a connection closed under us
        try:
            async with session.get(world.base + path, headers=headers) as resp:
                status = resp.status
                body = await resp.json() if status == 200 else await resp.read()
                if status == 503:
                    body = float(resp.headers.get("Retry-After", "1"))
            break
        except (TimeoutError, aiohttp.ClientConnectionError):
            status = 0
    world.samples.append(Sample(endpoint, kind, expected, status, start, time.monotonic(), path))
    return status, body


async def directory(world: World, session: aiohttp.ClientSession, rng: random.Random) -> None:
    key = rng.choice(world.keys)[1]
    query = rng.choice(("", "model=cps&", "market=FR&", "minScore=40&", "recurring=true&"))
    path = f"/v1/programs?{query}limit=25"
    for _page in range(rng.randint(1, 6)):
        status, body = await request(world, session, "programs", "ok", 200, path, key)
        if status != 200:
            return
        if len(world.slugs) < 500:
            world.slugs.extend(row["slug"] for row in body["data"][:3])
        cursor = body["page"]["nextCursor"]
        if cursor is None:
            return
        path = f"/v1/programs?{query}limit=25&cursor={cursor}"


async def history(world: World, session: aiohttp.ClientSession, rng: random.Random) -> None:
    """A whole commission history, page after page; a 503 is waited out, same cursor."""
    uid, key = rng.choice(world.deep)
    walk = Traversal(uid, time.monotonic())
    world.traversals.append(walk)
    path = "/v1/commissions?limit=100"
    while not world.stop.is_set():
        status, body = await request(world, session, "commissions", "ok", 200, path, key)
        if status == 503:
            await asyncio.sleep(min(body, 1.0))
            continue
        if status != 200:
            return
        walk.seen.extend(row["externalId"] for row in body["data"])
        cursor = body["page"]["nextCursor"]
        if cursor is None:
            walk.complete = True
            return
        path = f"/v1/commissions?limit=100&cursor={cursor}"


BAD = (
    ("programs", "/v1/programs?limit=0"),
    ("programs", "/v1/programs?minScore=abc"),
    ("programs", "/v1/programs?cursor=not-a-cursor"),
    ("programs", "/v1/programs?colour=red"),
    ("commissions", "/v1/commissions?from=2026-13-01"),
    ("commissions", "/v1/commissions?from=2026-05-01&to=2026-04-01"),
    ("commissions", "/v1/commissions?status=lost"),
)
REVOKED = (
    ("programs", "/v1/programs"),
    ("program", "/v1/programs/{slug}"),
    ("me", "/v1/me"),
    ("commissions", "/v1/commissions"),
)


async def one_visit(world: World, session: aiohttp.ClientSession, rng: random.Random) -> None:
    roll = rng.random()
    key = rng.choice(world.keys)[1]
    slug = rng.choice(world.slugs) if world.slugs else None
    if roll < 0.35 or slug is None:
        await directory(world, session, rng)
    elif roll < 0.55:
        if rng.random() < 0.1:
            path = "/v1/programs/no-such-programme-soak"
            await request(world, session, "program", "unknown-slug", 404, path, key)
        else:
            await request(world, session, "program", "ok", 200, f"/v1/programs/{slug}", key)
    elif roll < 0.70:
        await request(world, session, "me", "ok", 200, "/v1/me", key)
    elif roll < 0.82:
        await history(world, session, rng)
    elif roll < 0.92:
        endpoint, path = rng.choice(BAD)
        await request(world, session, endpoint, "bad", 400, path, key)
    else:
        endpoint, path = rng.choice(REVOKED)
        path = path.format(slug=slug)  # a real slug: only the key is wrong
        await request(world, session, endpoint, "revoked", 401, path, rng.choice(world.revoked))


async def client(world: World, number: int) -> None:
    rng = random.Random(1000 + number)
    timeout = aiohttp.ClientTimeout(total=15)
    async with aiohttp.ClientSession(timeout=timeout, auto_decompress=True) as session:
        while not world.stop.is_set():
            await one_visit(world, session, rng)


# --- the faults, on a timer -------------------------------------------------------------


async def at(t0: float, offset: float, world: World) -> bool:
    """Sleep until t0 + offset; False when the run ended first."""
    delay = t0 + offset - time.monotonic()
    if delay > 0:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(world.stop.wait(), delay)
    return not world.stop.is_set()


async def pg_outage(world: World, server: PgServer, mode: str, down_for: float) -> None:
    world.outages.pg_down_since = time.monotonic()
    world.event(f"postgresql stop ({mode})")
    await asyncio.to_thread(server.stop, mode)
    await asyncio.sleep(down_for)
    await asyncio.to_thread(server.start)
    world.outages.pg.append((world.outages.pg_down_since, time.monotonic()))
    world.outages.pg_down_since = None
    world.event("postgresql started")


async def redis_outage(world: World, server: RedisServer, down_for: float) -> None:
    down = time.monotonic()
    world.event("redis SIGKILL")
    if server.process is not None:
        server.process.kill()
        await asyncio.to_thread(server.process.wait)
    await asyncio.sleep(down_for)
    await asyncio.to_thread(server.start)
    world.outages.redis.append((down, time.monotonic()))
    world.event("redis started")


async def kill_worker(world: World, supervisor: int) -> None:
    workers = children(supervisor)
    if not workers:
        world.problems.append("no edge worker to kill")
        return
    victim = workers[0]
    world.outages.kills.append(time.monotonic())
    os.kill(victim, signal.SIGKILL)
    world.event(f"edge worker {victim} SIGKILL")
    started = time.monotonic()
    now: list[int] = []
    while time.monotonic() - started < RESTART_DEADLINE and len(now) < len(workers):
        await asyncio.sleep(0.1)
        now = [pid for pid in children(supervisor) if pid != victim]
    took = time.monotonic() - started
    if len(now) < len(workers):
        world.problems.append(f"killed worker {victim} not replaced within {RESTART_DEADLINE:g} s")
        return
    # The replacement must stay up: one that cannot start exits, and is started again.
    await asyncio.sleep(STAY_UP)
    if children(supervisor) != now:
        world.problems.append(
            f"the replacement of worker {victim} exited again: it could not start "
            f"(see 'cannot start' in {OUT / 'edge.log'})"
        )
        return
    world.event(f"edge worker replaced in {took:.1f} s")


async def first_page_etag(world: World) -> str | None:
    key = world.keys[0][1]
    headers = {"Authorization": f"Bearer {key}", "Connection": "close"}
    async with aiohttp.ClientSession() as session:
        with contextlib.suppress(TimeoutError, aiohttp.ClientError):
            async with session.get(world.base + "/v1/programs", headers=headers) as resp:
                return resp.headers.get("ETag") if resp.status == 200 else None
    return None


async def new_build(world: World, content: Path, dist: Path, rng: random.Random) -> None:
    """One submission changed, rebuilt, swapped in; the clock stops when both workers
    (new connections land on either) serve the new build's first page."""
    before = None
    for _ in range(25):  # a fresh worker during an outage may not verify the key yet
        before = await first_page_etag(world)
        if before is not None:
            break
        await asyncio.sleep(0.2)
    files = sorted((content / "programs").glob("*.yaml"))
    while True:  # a published one, changed for real: the served pages differ
        path = rng.choice(files)
        text = path.read_text(encoding="utf-8")
        current = re.search(r"cookieDays: (\d+)", text)
        if "status: published" in text and current is not None:
            break
    days = rng.choice([d for d in (7, 30, 60, 90, 365) if d != int(current.group(1))])
    path.write_text(re.sub(r"cookieDays: \d+", f"cookieDays: {days}", text), encoding="utf-8")
    seconds = await asyncio.to_thread(build, content, dist)
    swapped = time.monotonic()
    world.event(f"build swapped in ({seconds:.1f} s)")
    seen: set[str] = set()
    while time.monotonic() - swapped < RELOAD_DEADLINE:
        # Six new connections (either worker) all give one tag, not the old build's.
        tags = set(await asyncio.gather(*(first_page_etag(world) for _ in range(6))))
        seen |= tags - {None, before}
        if len(tags) == 1 and None not in tags and before not in tags:
            break
        await asyncio.sleep(0.2)
    else:
        world.problems.append(
            f"a new build was not served within {RELOAD_DEADLINE:g} s "
            f"(first page tag before {before}, seen since {sorted(seen)})"
        )
    reload = time.monotonic() - swapped
    world.builds.append({"build_s": round(seconds, 2), "served_after_s": round(reload, 2)})


async def import_rows(world: World, database: str, rng: random.Random, number: int) -> None:
    """`python -m admin commissions import` of new rows into a deep account, re-run until
    it reports done (safe: rows are upserted by externalId)."""
    uid, _key = rng.choice(world.deep)
    ids = [f"imp{number}-{i}" for i in range(rng.randint(20, 80))]
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["externalId", "commissionAmount", "currency", "transactedAt"])
        for external_id in ids:
            writer.writerow([external_id, f"{rng.randint(1, 99)}.50", "EUR", random_instant(rng)])
    env = {**os.environ, "EDGE_DATABASE": database, "EDGE_SECRET_KEY": SECRET}
    cmd = [sys.executable, "-m", "admin", "commissions", "import"]
    cmd += ["--account", uid, "--network", NETWORK, handle.name]
    attempts = 0
    failures: list[str] = []  # what the runs that did not finish said
    try:
        while attempts < 60:
            attempts += 1
            done = await asyncio.to_thread(
                subprocess.run, cmd, cwd=ROOT, env=env, capture_output=True, text=True
            )
            if done.returncode == 0:
                committed = time.monotonic()
                world.ledger.rows[uid].update(dict.fromkeys(ids, committed))
                world.ledger.imports.append(
                    {"rows": len(ids), "attempts": attempts, "failures": failures}
                )
                world.event(f"import of {len(ids)} rows done ({attempts} attempts)")
                return
            failures.append(done.stderr.strip()[-300:])
            await asyncio.sleep(1.0)
        world.problems.append(f"import {number} never succeeded: {done.stderr.strip()[-200:]}")
    finally:
        os.unlink(handle.name)


async def faults(world: World, ctx: dict[str, Any], seconds: float) -> None:
    rng = random.Random(99)
    t0 = time.monotonic()
    plan: list[tuple[float, Any]] = []
    for n, offset in enumerate(range(5, int(seconds * 0.9), 10)):
        plan.append((offset, lambda n=n: import_rows(world, ctx["database"], rng, n)))
    for offset in range(15, int(seconds * 0.9), 30):
        plan.append((offset + 2, lambda: new_build(world, ctx["content"], ctx["dist"], rng)))
    plan += [
        (seconds * 0.20, lambda: pg_outage(world, ctx["pg"], "fast", 6.0)),
        (seconds * 0.40, lambda: redis_outage(world, ctx["redis"], 6.0)),
        (seconds * 0.50, lambda: kill_worker(world, ctx["edge"].pid)),
        (seconds * 0.65, lambda: pg_outage(world, ctx["pg"], "immediate", 8.0)),
        # A worker dies while PostgreSQL is down: its replacement must start anyway.
        (seconds * 0.65 + 3.0, lambda: kill_worker(world, ctx["edge"].pid)),
    ]
    running = []
    for offset, action in sorted(plan, key=lambda item: item[0]):
        if not await at(t0, offset, world):
            break
        running.append(asyncio.ensure_future(action()))
    await asyncio.gather(*running)


async def ticker(world: World, t0: float) -> None:
    """One line per second: the statuses each endpoint answered in that second."""
    shown = 0
    events = 0
    while not world.stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(world.stop.wait(), 1.0)
        upto = len(world.samples)
        counts: dict[str, Counter[int]] = defaultdict(Counter)
        for sample in world.samples[shown:upto]:
            counts[sample.endpoint][sample.status] += 1
        shown = upto
        parts = [
            f"{name} " + " ".join(f"{s}:{c}" for s, c in sorted(counts[name].items()))
            for name in ENDPOINTS
            if counts[name]
        ]
        notes = [text for _, text in world.events[events:]]
        events = len(world.events)
        line = f"{time.monotonic() - t0:5.0f}s  " + " | ".join(parts)
        print(line + (f"   << {'; '.join(notes)}" if notes else ""), flush=True)


# --- the verdict ------------------------------------------------------------------------


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


def judge_samples(world: World, grace: float, t0: float) -> tuple[list[str], dict[str, Any]]:
    reasons: list[str] = []
    examples: dict[str, list[str]] = defaultdict(list)
    outside: Counter[tuple[str, int]] = Counter()
    refused: Counter[tuple[str, str, int]] = Counter()
    broken: Counter[str] = Counter()
    revoked_ok = 0
    for s in world.samples:
        if s.status == 0:
            if not world.outages.near_kill(s.start, s.end):
                broken[s.endpoint] += 1
            continue
        if s.status not in ALLOWED[s.endpoint]:
            outside[(s.endpoint, s.status)] += 1
        if s.kind == "revoked" and s.status == 200:
            revoked_ok += 1
        elif s.status != s.expected and world.outages.pg_up_throughout(s.start, s.end, grace):
            refused[(s.endpoint, s.kind, s.status)] += 1
            examples[f"{s.endpoint} {s.kind} {s.status}"].append(
                f"{s.start - t0:.1f}s {s.path[:80]}"
            )
    for (endpoint, status), count in sorted(outside.items()):
        reasons.append(f"{count} x {status} on {endpoint} (not in its table)")
    for (endpoint, kind, status), count in sorted(refused.items()):
        reasons.append(f"{count} x {status} on {endpoint} ({kind}) while PostgreSQL was up")
    for endpoint, count in sorted(broken.items()):
        reasons.append(f"{count} connection errors on {endpoint} away from a worker kill")
    if revoked_ok:
        reasons.append(f"{revoked_ok} revoked-key requests answered 200")
    return reasons, {
        "outside_table": {f"{e} {s}": c for (e, s), c in outside.items()},
        "refused_while_up": {f"{e} {k} {s}": c for (e, k, s), c in refused.items()},
        "connection_errors_outside_kills": dict(broken),
        "refusal_examples": {k: v[:5] for k, v in examples.items()},
    }


def judge_traversals(world: World) -> tuple[list[str], dict[str, Any]]:
    reasons = []
    complete = [w for w in world.traversals if w.complete]
    rows_seen = 0
    for walk in complete:
        expected = world.ledger.rows[walk.uid]
        counts = Counter(walk.seen)
        rows_seen += len(walk.seen)
        dupes = [i for i, c in counts.items() if c > 1]
        unknown = [i for i in counts if i not in expected]
        missing = [i for i, when in expected.items() if when < walk.start and i not in counts]
        for what, ids in (("duplicated", dupes), ("unexpected", unknown), ("missing", missing)):
            if ids:
                reasons.append(f"a history of {walk.uid} had {len(ids)} {what} rows: {ids[:3]}")
    return reasons, {"histories_paged": len(complete), "rows_paged": rows_seen}


async def judge_store(world: World, url: str) -> tuple[list[str], dict[str, Any]]:
    import asyncpg

    reasons = []
    conn = await asyncpg.connect(url)
    try:
        stored = await conn.fetch(
            "SELECT a.uid, c.external_id, count(*) AS n FROM commissions c "
            "JOIN accounts a ON a.id = c.account_id GROUP BY 1, 2"
        )
    finally:
        await conn.close()
    found: dict[str, Counter[str]] = defaultdict(Counter)
    for row in stored:
        found[row["uid"]][row["external_id"]] += row["n"]
    total = 0
    for uid, expected in world.ledger.rows.items():
        have = found.get(uid, Counter())
        total += sum(have.values())
        lost = set(expected) - set(have)
        extra = set(have) - set(expected)
        doubled = [i for i, n in have.items() if n > 1]
        for what, ids in (("lost", lost), ("unexpected", extra), ("duplicated", doubled)):
            if ids:
                reasons.append(f"store: {len(ids)} {what} rows of {uid}: {sorted(ids)[:3]}")
    return reasons, {"rows_in_store": total}


def summary(world: World) -> dict[str, Any]:
    per: dict[str, dict[str, Any]] = {}
    for name in ENDPOINTS:
        mine = [s for s in world.samples if s.endpoint == name]
        per[name] = {
            "requests": len(mine),
            "statuses": dict(sorted(Counter(s.status for s in mine).items())),
            "p50_ms": round(1000 * sorted(s.end - s.start for s in mine)[len(mine) // 2], 2)
            if mine
            else 0.0,
            "p99_ms": round(1000 * p99([s.end - s.start for s in mine]), 2),
        }
    return per


async def soak(args: argparse.Namespace, ctx: dict[str, Any], seeded: dict[str, Any]) -> int:
    world = World(ctx["base"], seeded["keys"], seeded["deep"], seeded["revoked"])
    world.ledger = ctx["ledger"]
    seconds = args.minutes * 60
    t0 = time.monotonic()
    clients = [asyncio.ensure_future(client(world, i)) for i in range(args.clients)]
    tick = asyncio.ensure_future(ticker(world, t0))
    chaos = asyncio.ensure_future(faults(world, ctx, seconds))
    await asyncio.sleep(seconds)
    world.stop.set()
    await asyncio.gather(*clients, tick)
    await chaos  # a build or an import still running is let finish
    elapsed = time.monotonic() - t0

    reasons = list(world.problems)
    more, statuses = judge_samples(world, args.grace, t0)
    reasons += more
    more, paged = judge_traversals(world)
    reasons += more
    more, stored = await judge_store(world, ctx["database"])
    reasons += more
    per = summary(world)
    kinds = Counter(f"{s.kind} {s.status}" for s in world.samples)
    results = {
        "minutes": args.minutes,
        "clients": args.clients,
        "grace_s": args.grace,
        "elapsed_s": round(elapsed, 1),
        "requests": len(world.samples),
        "per_endpoint": per,
        "by_kind": dict(sorted(kinds.items())),
        "events": [(round(t - t0, 1), text) for t, text in world.events],
        "builds": world.builds,
        "imports": world.ledger.imports,
        **statuses,
        **paged,
        **stored,
        "reasons": reasons,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "load_average": os.getloadavg(),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print()
    for name, figures in per.items():
        print(
            f"soak: {name:<12} {figures['requests']:>7} requests  p50 {figures['p50_ms']:7.2f} ms"
            f"  p99 {figures['p99_ms']:7.2f} ms  {figures['statuses']}"
        )
    print(f"soak: by kind {dict(sorted(kinds.items()))}")
    print(
        f"soak: {paged['histories_paged']} histories paged to the end ({paged['rows_paged']} "
        f"rows), {len(world.ledger.imports)} imports, {len(world.builds)} builds, "
        f"{stored['rows_in_store']} rows in the store"
    )
    head = f"{len(world.samples)} requests in {elapsed:.0f} s"
    if reasons:
        print(f"soak: FAIL {head}: " + "; ".join(reasons))
        return 1
    print(f"soak: PASS {head}, no status outside the tables, no 500, no refusal while up")
    return 0


def run(args: argparse.Namespace) -> int:
    bin_dir = find_bin_dir()
    redis_binary = find_redis_server()
    if bin_dir is None or redis_binary is None:
        sys.exit("soak: needs PostgreSQL (initdb, pg_ctl) and redis-server installed")
    OUT.mkdir(parents=True, exist_ok=True)
    content, dist = make_catalogue(args.n, args.seed)
    print("soak: starting PostgreSQL and Redis ...", flush=True)
    pg = PgServer.create(bin_dir)
    redis = RedisServer.create(redis_binary)
    edge = None
    log = (OUT / "edge.log").open("wb")
    try:
        pg.sql("CREATE DATABASE affdir_soak")
        database = pg.url("affdir_soak")
        ledger = Ledger()
        print("soak: seeding the account store ...", flush=True)
        seeded = asyncio.run(seed(database, args, ledger))
        port = free_port()
        cmd = [sys.executable, "-m", "edge"]
        env = edge_env(port, dist, database, redis.url)
        edge = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        asyncio.run(wait_ready(base))
        print(
            f"soak: {len(seeded['keys'])} keys, {len(seeded['revoked'])} revoked, "
            f"{args.clients} clients, {args.minutes:g} min; edge log {OUT / 'edge.log'}",
            flush=True,
        )
        ctx = {
            "base": base,
            "database": database,
            "pg": pg,
            "redis": redis,
            "edge": edge,
            "content": content,
            "dist": dist,
            "ledger": ledger,
        }
        return asyncio.run(soak(args, ctx, seeded))
    finally:
        if edge is not None:
            edge.send_signal(signal.SIGTERM)
            try:
                edge.wait(30)
            except subprocess.TimeoutExpired:
                edge.kill()
        log.close()
        redis.destroy()
        pg.destroy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--n", type=int, default=20000, help="synthetic submissions")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--accounts", type=int, default=40, help="accounts, 2 keys each")
    parser.add_argument("--deep-accounts", type=int, default=4)
    parser.add_argument("--deep-rows", type=int, default=3000, help="commissions of each")
    parser.add_argument(
        "--grace",
        type=float,
        default=3.0,
        help="seconds after PostgreSQL is back before a refusal counts against the run",
    )
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
