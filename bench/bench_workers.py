#!/usr/bin/env python3
"""Load benchmark of `python -m edge --workers N` (not a test): GET /v1/programs, 1 vs 2 workers.

    python3 dev.py bench bench_workers [--n 20000] [--duration 10] [--connections 64]

1. Takes the directory benchmark's catalogue (bench_directory.make_dist: n synthetic
   submissions through the real build, kept in bench/out/directory/dist between runs).
2. Seeds a SQLite account store with one pro key (rate limit out of reach), so the real
   authenticator and limiter run, as in production.
3. For each configuration starts the real edge (`python -m edge`, the real supervisor for
   N > 1), drives it with wrk over loopback and reads the CPU time of all its processes:
   1 worker; then, on the Redis limiter (a private redis-server; skipped when it is not
   installed or with --no-redis), 1 worker and 2 workers: several workers need Redis.
4. Prints req/s, p50/p99 and the ratio 2 workers / 1 worker (both on Redis); writes
   bench/out/workers/results.json.

On a 2-core machine wrk needs a core of its own too, so 2 workers cannot reach 2x here: the
server CPU per request says how much of the gap is contention rather than the edge.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from store import accounts

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "bench", ROOT / "tests"):  # run as a script from anywhere
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from bench_directory import cpu_seconds, free_port, get, make_dist  # noqa: E402

OUT = ROOT / "bench" / "out" / "workers"
SECRET = "bench-secret-" + "w" * 40
UNLIMITED = "1000000000/1"


@dataclass
class Run:
    name: str
    workers: int
    redis: bool
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int
    cpu_us: float  # CPU time of every edge process (user + system) per request


def seed_key(database: Path) -> str:
    """A fresh store with one pro account and key; returns the key."""
    from accounts import apikeys
    from store import open_store

    async def seed() -> str:
        store = await open_store(str(database), writable=True, readers=1)
        try:
            uid = await store.write(accounts.create, None, "pro")
            issued = apikeys.generate_key()
            await store.write(
                accounts.create_key, uid, issued.key_hash, issued.prefix, "bench", ("read",)
            )
            return issued.key
        finally:
            await store.close()

    for path in database.parent.glob(database.name + "*"):
        path.unlink()
    return asyncio.run(seed())


def process_tree(pid: int) -> list[int]:
    """`pid` and its children (the supervisor and its workers)."""
    found = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def tree_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):  # a process that ended meanwhile
            total += cpu_seconds(pid)
    return total


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def milliseconds(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * _UNITS[unit]


def run_wrk(url: str, key: str, args: argparse.Namespace, seconds: int) -> dict[str, Any]:
    cmd = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{seconds}s", "--latency"]
    cmd += ["-H", f"Authorization: Bearer {key}", url]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    errors = 0
    if m := re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        errors += int(m.group(1))
    if m := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out):
        errors += sum(int(x) for x in m.groups())
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": milliseconds(re.search(r"\n\s+50%\s+(\S+)", out).group(1)),
        "p99_ms": milliseconds(re.search(r"\n\s+99%\s+(\S+)", out).group(1)),
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "errors": errors,
    }


def start_edge(port: int, dist: Path, database: Path, workers: int, redis_url: str | None):
    args = [
        sys.executable,
        "-m",
        "edge",
        "--port",
        str(port),
        "--dist",
        str(dist),
        "--database",
        str(database),
        "--rate-limit-pro",
        UNLIMITED,
        "--access-log",
        "false",
        "--workers",
        str(workers),
    ]
    if redis_url:
        args += ["--redis-url", redis_url]
    with log_file(workers).open("wb") as log:
        return subprocess.Popen(
            args,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "EDGE_SECRET_KEY": SECRET},
        )


def log_file(workers: int) -> Path:
    return OUT / f"edge-{workers}.log"


def wait_ready(port: int, proc: subprocess.Popen, workers: int) -> None:
    """Until /readyz is 200 and, with workers, every worker listens: wrk opens its
    connections once, and SO_REUSEPORT spreads them over the sockets listening then."""
    started = time.monotonic()
    while time.monotonic() - started < 120:
        if proc.poll() is not None:
            raise RuntimeError(f"edge exited with {proc.returncode}; see {log_file(workers)}")
        try:
            ready = get(port, "/readyz")[0] == 200
        except OSError:
            ready = False
        if ready and (workers == 1 or "workers serving" in log_file(workers).read_text()):
            return
        time.sleep(0.1)
    raise RuntimeError("edge not ready in 120 s")


def measure(
    name: str,
    workers: int,
    redis_url: str | None,
    dist: Path,
    database: Path,
    key: str,
    args: argparse.Namespace,
) -> Run:
    port = free_port()
    proc = start_edge(port, dist, database, workers, redis_url)
    try:
        wait_ready(port, proc, workers)
        url = f"http://127.0.0.1:{port}{args.path}"
        status, _, _ = get(port, args.path, {"Authorization": f"Bearer {key}"})
        assert status == 200, f"{url} answered {status}"
        run_wrk(url, key, args, 2)  # warm-up
        pids = process_tree(proc.pid)
        before = tree_cpu(pids)
        figures = run_wrk(url, key, args, args.duration)
        cpu = tree_cpu(pids) - before
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    result = Run(name, workers, bool(redis_url), cpu_us=0.0, **figures)
    result.cpu_us = round(cpu / max(1, result.requests) * 1e6, 1)
    print(
        f"  {name:<24} {result.rps:>8,.0f} req/s  p50 {result.p50_ms:6.2f} ms  "
        f"p99 {result.p99_ms:6.2f} ms  edge CPU {result.cpu_us:6.1f} us/req  "
        f"({result.requests:,} requests, {result.errors} errors)",
        flush=True,
    )
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install -y wrk")
    OUT.mkdir(parents=True, exist_ok=True)
    mini = args.mini_writer or not (ROOT / "bench" / "synth.py").exists()
    dist, how = make_dist(args.n, args.seed, mini)
    database = OUT / "edge.sqlite3"
    key = seed_key(database)
    print(
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s GET {args.path} "
        f"on loopback, {os.cpu_count()} CPUs, catalogue of {args.n} ({how}):",
        flush=True,
    )
    runs = [measure("1 worker", 1, None, dist, database, key, args)]
    redis = None
    if not args.no_redis:
        from support.redisserver import RedisServer, find_redis_server

        binary = find_redis_server()
        if binary is None:
            print("  (redis-server not installed: several workers need it, so no 2-worker run)")
        else:
            redis = RedisServer.create(binary)
    try:
        if redis is not None:
            # Several workers need Redis (one limit across them): 1 worker is measured on it
            # too, so the ratio compares worker counts, not limiters.
            runs.append(measure("1 worker + Redis", 1, redis.url, dist, database, key, args))
            runs.append(measure("2 workers + Redis", 2, redis.url, dist, database, key, args))
    finally:
        if redis is not None:
            redis.destroy()
    results: dict[str, Any] = {
        "catalogue": {"n": args.n, "seed": args.seed, "made_with": how},
        "cpus": os.cpu_count(),
        "wrk": {"threads": args.threads, "connections": args.connections, "path": args.path},
        "runs": [asdict(r) for r in runs],
    }
    if len(runs) == 3:
        one, two = runs[1], runs[2]
        results["ratio_2_over_1_rps"] = round(two.rps / one.rps, 3)
        results["ratio_2_over_1_cpu_per_request"] = round(two.cpu_us / one.cpu_us, 3)
    return results


def report(results: dict[str, Any]) -> None:
    if "ratio_2_over_1_rps" not in results:
        print("\nno 2-worker run (it needs Redis)")
        return
    print(
        f"\n2 workers / 1 worker, both on the Redis limiter: {results['ratio_2_over_1_rps']:.2f}x "
        f"req/s (edge CPU per request {results['ratio_2_over_1_cpu_per_request']:.2f}x)"
    )
    memory, redis = results["runs"][0], results["runs"][1]
    print(
        f"Redis limiter, 1 worker: {redis['rps'] / memory['rps']:.2f}x the req/s of the "
        f"in-memory limiter, +{redis['cpu_us'] - memory['cpu_us']:.0f} us CPU per request"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="submissions in the catalogue")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--path", default="/v1/programs", help="what wrk requests")
    parser.add_argument("--no-redis", action="store_true", help="skip the Redis run")
    parser.add_argument("--mini-writer", action="store_true", help="skip synth.py + build.py")
    args = parser.parse_args(argv)
    results = run(args)
    report(results)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
