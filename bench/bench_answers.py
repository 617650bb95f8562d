#!/usr/bin/env python3
"""The directory's answers as readers get them, against a bare aiohttp peer (not a test).

    python3 dev.py bench bench_answers [--rounds 3] [--duration 5] [--connections 16]

One page, `GET /v1/programs?vertical=saas` (25 rows) of bench_directory's catalogue (bench/synth.py,
20,000 submissions, built by build.py), asked three ways:

- **keyed gzip**: `Authorization` and `Accept-Encoding: gzip` (what API clients send);
- **keyed identity**: `Authorization`, no `Accept-Encoding`;
- **keyless gzip**: `Accept-Encoding: gzip`, no key (what a CDN fetches: the public answer).

The edge runs as `python -m edge` would (`edge.serving.make_runner`: every middleware, the
real authenticator and account store, the in-memory limiter with limits out of reach), the
access log on and written to a file, as a deployment's stderr would be. The **bare** peer is
an aiohttp handler answering the same URL with the edge's exact bytes for that coding (the
identity page, or its gzip coding with `Content-Encoding: gzip`), in its own process with
the same server settings. A second edge with the access log off gives the log's share.

Each round runs, for every case, the bare peer then the edge (paired: the machine's speed
drifts within minutes), with wrk pinned to one core and the servers to the other
(`taskset`, when there are two). The report gives, per case, the median over the rounds of
the edge's requests per second divided by the bare peer's (target >= 0.5), the p99 of
each (target: the edge's within 2x the peer's) and the page's bytes.

Writes bench/out/answers/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:  # run as a script from anywhere
        sys.path.insert(0, str(path))

from bench_directory import (  # noqa: E402
    KEY,
    SECRET,
    _ms,
    cpu_seconds,
    free_port,
    get,
    make_accounts,
    make_dist,
    stop,
    wait_ready,
)

OUT = ROOT / "bench" / "out" / "answers"
PAGE = "/v1/programs?vertical=saas"
KEYED = {"Authorization": f"Bearer {KEY}"}
GZIP = {"Accept-Encoding": "gzip"}
SERVERS = ("bare", "edge", "quiet")  # the peer, the edge, the edge without its access log
CASES = {
    "keyed gzip": {**KEYED, **GZIP},
    "keyed identity": KEYED,
    "keyless gzip": GZIP,
}


# --- the servers (subprocesses of this script) ------------------------------------------


def serve_edge(port: int, dist: Path, database: Path, access_log: bool) -> None:
    """The edge as `python -m edge` runs it (edge.logs, edge.serving), limits out of reach,
    its access log (with `access_log`) on stderr, which the caller sends to a file."""
    import asyncio
    import signal

    from aiohttp import web

    from edge import serving
    from edge.config import Config
    from edge.logs import configure_logging

    config = Config(
        host="127.0.0.1",
        port=port,
        dist=dist,
        database=str(database),
        secret_key=SECRET,
        rate_limit_free=(10**9, 1),
        rate_limit_pro=(10**9, 1),
        rate_limit_anonymous=(10**9, 1),
        access_log=access_log,
        log_level="WARNING",
        log_format="json",
    )
    configure_logging(config)

    async def main() -> None:
        runner = serving.make_runner(config)
        await runner.setup()
        await web.TCPSite(runner, config.host, config.port).start()
        stopped = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stopped.set)
        try:
            await stopped.wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())


def serve_bare(port: int, identity: Path, gzipped: Path) -> None:
    """aiohttp answering PAGE with the edge's bytes: its gzip coding when asked for it."""
    from aiohttp import web

    plain, packed = identity.read_bytes(), gzipped.read_bytes()
    coding = {"Content-Encoding": "gzip"}

    async def page(request: web.Request) -> web.Response:
        if "gzip" in request.headers.get("Accept-Encoding", ""):
            return web.Response(body=packed, content_type="application/json", headers=coding)
        return web.Response(body=plain, content_type="application/json")

    app = web.Application()
    app.router.add_get("/v1/programs", page)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


# --- measuring --------------------------------------------------------------------------


def pinned(cpu: int | None) -> list[str]:
    return ["taskset", "-c", str(cpu)] if cpu is not None else []


def start(args: list[str], cpu: int | None, log: Path | None = None) -> subprocess.Popen:
    """This script as a server (`args`), its stderr appended to `log` when given."""
    err = log.open("ab") if log is not None else None
    try:
        command = [*pinned(cpu), sys.executable, str(Path(__file__).resolve()), *args]
        return subprocess.Popen(command, cwd=ROOT, stderr=err)
    finally:
        if err is not None:
            err.close()


def wrk(url: str, headers: dict[str, str], args: argparse.Namespace, pid: int) -> dict[str, Any]:
    """One wrk run: requests/s, p50/p99 (ms), server CPU per request (µs), errors."""
    cmd = [*pinned(args.client_cpu), "wrk", "-t1", f"-c{args.connections}", "--latency"]
    for name, value in headers.items():
        cmd += ["-H", f"{name}: {value}"]
    before = cpu_seconds(pid)
    out = subprocess.run(
        [*cmd, f"-d{args.duration}s", url], check=True, capture_output=True, text=True
    ).stdout
    cpu = cpu_seconds(pid) - before
    total = int(re.search(r"(\d+) requests in", out).group(1))
    errors = 0
    if m := re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        errors += int(m.group(1))
    if m := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out):
        errors += sum(int(x) for x in m.groups())
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": _ms(re.search(r"\n\s+50%\s+(\S+)", out).group(1)),
        "p99_ms": _ms(re.search(r"\n\s+99%\s+(\S+)", out).group(1)),
        "cpu_us": round(cpu / max(total, 1) * 1e6, 1),
        "requests": total,
        "errors": errors,
    }


def load_average() -> float:
    return os.getloadavg()[0]


def run(args: argparse.Namespace) -> dict[str, Any]:
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install -y wrk")
    two = (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None and not args.no_pin
    args.client_cpu = 1 if two else None
    server_cpu = 0 if two else None
    dist, _ = make_dist(args.n, args.seed, mini_writer=False)
    OUT.mkdir(parents=True, exist_ok=True)
    db = OUT / "edge.sqlite3"
    make_accounts(db)
    ports = {name: free_port() for name in ("edge", "quiet", "bare")}
    logs = {"edge": OUT / "access.log", "quiet": OUT / "quiet.log"}
    for log in logs.values():
        log.unlink(missing_ok=True)
    procs: dict[str, subprocess.Popen] = {}
    try:
        for name, access in (("edge", "on"), ("quiet", "off")):
            procs[name] = start(
                ["serve-edge", str(ports[name]), str(dist), str(db), access],
                server_cpu,
                logs[name],
            )
            wait_ready(ports[name], PAGE, KEYED, procs[name])
        identity, gzipped = OUT / "page.json", OUT / "page.json.gz"
        _, _, plain = get(ports["edge"], PAGE, KEYED)
        status, answered, packed = get(ports["edge"], PAGE, {**KEYED, **GZIP})
        assert status == 200 and answered.get("Content-Encoding") == "gzip"
        identity.write_bytes(plain)
        gzipped.write_bytes(packed)
        page = json.loads(plain)
        assert len(page["data"]) == 25, "the page must hold 25 rows"
        procs["bare"] = start(
            ["serve-bare", str(ports["bare"]), str(identity), str(gzipped)], server_cpu
        )
        wait_ready(ports["bare"], PAGE, {}, procs["bare"])
        for headers in CASES.values():  # the bare peer sends the edge's exact bytes
            assert get(ports["bare"], PAGE, headers)[2] == get(ports["edge"], PAGE, headers)[2]

        def url(name: str) -> str:
            return f"http://127.0.0.1:{ports[name]}{PAGE}"

        # Warm every server and the page cache of both edges.
        for name in ports:
            for headers in CASES.values():
                wrk(
                    url(name),
                    headers,
                    argparse.Namespace(**{**vars(args), "duration": 1}),
                    procs[name].pid,
                )
        rounds: list[dict[str, Any]] = []
        for number in range(args.rounds):
            runs: dict[str, Any] = {"load_before": load_average()}
            for case, headers in CASES.items():
                for name in SERVERS:
                    result = wrk(url(name), headers, args, procs[name].pid)
                    runs[f"{case} / {name}"] = result
                    print(
                        f" round {number + 1} {case:<15} {name:<5} {result['rps']:>8,.0f} req/s"
                        f"  p50 {result['p50_ms']:6.2f} ms  p99 {result['p99_ms']:6.2f} ms"
                        f"  server CPU {result['cpu_us']:6.1f} us/req  ({result['errors']} errors)",
                        flush=True,
                    )
            runs["load_after"] = load_average()
            rounds.append(runs)
        lines = sum(1 for line in logs["edge"].open("rb") if b'"GET ' in line)
    finally:
        for proc in procs.values():
            stop(proc)
    return {
        "command": "python3 dev.py bench bench_answers " + " ".join(sys.argv[1:]),
        "page": PAGE,
        "page_bytes": {"identity": len(plain), "gzip": len(packed)},
        "pinned": two,
        "connections": args.connections,
        "duration_s": args.duration,
        "access_log_lines": lines,
        "rounds": rounds,
        "summary": summary(rounds),
    }


def summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case, medians over the rounds of each round's ratios."""
    out: dict[str, Any] = {}
    for case in CASES:
        bare, edge, quiet = ([r[f"{case} / {name}"] for r in rounds] for name in SERVERS)
        out[case] = {
            "ratio": round(
                statistics.median(e["rps"] / b["rps"] for e, b in zip(edge, bare, strict=True)), 3
            ),
            "ratio_range": [
                round(min(e["rps"] / b["rps"] for e, b in zip(edge, bare, strict=True)), 3),
                round(max(e["rps"] / b["rps"] for e, b in zip(edge, bare, strict=True)), 3),
            ],
            "ratio_log_off": round(
                statistics.median(q["rps"] / b["rps"] for q, b in zip(quiet, bare, strict=True)), 3
            ),
            "log_share": round(
                statistics.median(
                    1 - e["rps"] / q["rps"] for e, q in zip(edge, quiet, strict=True)
                ),
                3,
            ),
            "p99_ms": statistics.median(e["p99_ms"] for e in edge),
            "bare_p99_ms": statistics.median(b["p99_ms"] for b in bare),
            "p99_ratio": round(
                statistics.median(
                    e["p99_ms"] / b["p99_ms"] for e, b in zip(edge, bare, strict=True)
                ),
                2,
            ),
            "bare_rps": round(statistics.median(b["rps"] for b in bare)),
            "cpu_us": statistics.median(e["cpu_us"] for e in edge),
            "bare_cpu_us": statistics.median(b["cpu_us"] for b in bare),
        }
    return out


def report(results: dict[str, Any]) -> None:
    sizes = results["page_bytes"]
    print(
        f"\n{results['page']}: {sizes['identity']:,} bytes identity, {sizes['gzip']:,} gzip;"
        f" wrk -t1 -c{results['connections']} -d{results['duration_s']}s,"
        f" {'servers and wrk pinned apart' if results['pinned'] else 'not pinned'};"
        f" load average {min(r['load_before'] for r in results['rounds']):.1f} to"
        f" {max(r['load_after'] for r in results['rounds']):.1f}"
    )
    print(
        f"  {'case':<16}{'edge / bare':>12}{'range':>14}{'log off':>9}{'log share':>10}"
        f"{'p99 edge':>10}{'p99 bare':>10}{'p99 x':>7}"
    )
    for case, row in results["summary"].items():
        low, high = row["ratio_range"]
        print(
            f"  {case:<16}{row['ratio']:>12.2f}{f'{low:.2f} to {high:.2f}':>14}"
            f"{row['ratio_log_off']:>9.2f}{row['log_share']:>10.0%}"
            f"{row['p99_ms']:>8.2f}ms{row['bare_p99_ms']:>8.2f}ms{row['p99_ratio']:>7.2f}"
        )
    print("  (targets: edge / bare >= 0.5 for each case, p99 x <= 2)")
    print(f"access log: {results['access_log_lines']:,} lines written")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve-edge"]:
        port, dist, db, access = argv[1:5]
        serve_edge(int(port), Path(dist), Path(db), access == "on")
        return 0
    if argv[:1] == ["serve-bare"]:
        serve_bare(int(argv[1]), Path(argv[2]), Path(argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="submissions in the catalogue")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--no-pin", action="store_true", help="do not pin wrk and the servers")
    args = parser.parse_args(argv)
    results = run(args)
    report(results)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
