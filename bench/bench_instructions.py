#!/usr/bin/env python3
"""The directory edge's cost per request in CPU instructions, counted by callgrind (not a test).

    python3 dev.py bench bench_instructions [--n 20000] [--requests 2000] [--gzip]

Requests per second on this shared virtual machine drift by a quarter within minutes, so
small changes to the request path cannot be told apart with wrk (bench_directory.py). An
instruction count can: valgrind's callgrind counts every instruction the server process runs
in user space, whatever the rest of the machine is doing, and the same build gives the same
count to within a fraction of a percent. It does not see the kernel's share (sending 25 kB
over loopback), which is the same for every case here, so the ratios below are those of the
user-space work; requests per second remain bench_directory.py's to report.

1. The catalogue and account store of bench_directory.py (bench/out/directory), and the same
   servers, each run under `valgrind --tool=callgrind`:
   - `bare`: aiohttp returning the edge's own first page as a constant (the reference of
     the throughput target, as in bench_directory.py);
   - `floor`: the same, plus one no-op aiohttp middleware and the very response headers the
     edge sends with that page (ETag, Cache-Control, Link, rate limit, CORS, request id):
     what the contract costs in aiohttp before any work of ours;
   - `edge`: the real edge (real authenticator and account store).
2. For each case: `--warm` requests, then the counters are zeroed, then exactly
   `--requests` requests one after the other on one keep-alive connection (one at a time,
   so every run does the same work), then the counters are dumped and divided.

With `--gzip` every request sends `Accept-Encoding: gzip` (what browsers and most HTTP
libraries send), and `bare` and `floor` answer the edge's own gzip-coded page with
`Content-Encoding: gzip`: the same bytes as the edge again.

Prints instructions per request and each case's ratio to `bare`, and writes them to
bench/out/instructions/results.json (results-gzip.json with `--gzip`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:  # run as a script from anywhere
        sys.path.insert(0, str(path))

import bench_directory as bd  # noqa: E402

OUT = ROOT / "bench" / "out" / "instructions"
FILTERED = "/v1/programs?model=cps&market=FR&minScore=40"


# --- running servers under callgrind ------------------------------------------------------


class Counted:
    """A server process under callgrind, its counters zeroed and dumped on demand."""

    def __init__(self, name: str, argv: list[str], port: int) -> None:
        self.name, self.port = name, port
        self.prefix = OUT / f"callgrind.{name}"
        for stale in OUT.glob(f"callgrind.{name}*"):
            stale.unlink()
        self.proc = subprocess.Popen(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={self.prefix}",
                "--dump-instr=no",
                "--dump-line=no",
                sys.executable,
                *argv,
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def control(self, flag: str) -> None:
        subprocess.run(
            ["callgrind_control", flag, str(self.proc.pid)], check=True, capture_output=True
        )

    def dumped_total(self, dumps_before: int) -> int:
        """The instruction total of the dump made after `dumps_before` earlier ones."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            dumps = sorted(OUT.glob(f"callgrind.{self.name}.*"), key=_dump_number)
            if len(dumps) > dumps_before:
                text = dumps[-1].read_text(errors="replace")
                if match := re.search(r"^(?:totals|summary):\s*(\d+)", text, re.MULTILINE):
                    return int(match.group(1))
            time.sleep(0.2)
        raise RuntimeError(f"{self.name}: callgrind wrote no dump")

    def dumps(self) -> int:
        return len(list(OUT.glob(f"callgrind.{self.name}.*")))

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _dump_number(path: Path) -> int:
    return int(path.name.rpartition(".")[2])


def wait_ready(server: Counted, path: str, headers: dict[str, str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.proc.returncode}")
        try:
            if bd.get(server.port, path, headers)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{server.name} was not ready within {timeout:.0f} s under valgrind")


def requests(port: int, path: str, headers: dict[str, str], count: int) -> int:
    """`count` GETs one after the other on one keep-alive connection; bytes received."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    received = 0
    try:
        for _ in range(count):
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"GET {path}: {response.status} {body[:200]!r}")
            received += len(body)
    finally:
        conn.close()
    return received


def count_case(
    server: Counted, path: str, headers: dict[str, str], args: argparse.Namespace
) -> dict[str, Any]:
    """Instructions per request of `path` on `server` (after a warm-up)."""
    requests(server.port, path, headers, args.warm)
    before = server.dumps()
    server.control("-z")
    received = requests(server.port, path, headers, args.requests)
    server.control("-d")
    total = server.dumped_total(before)
    return {
        "instructions": total,
        "requests": args.requests,
        "per_request": round(total / args.requests),
        "bytes_per_response": received // args.requests,
    }


# --- the run --------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed: apt-get install -y valgrind")
    OUT.mkdir(parents=True, exist_ok=True)
    mini = args.mini_writer or not (ROOT / "build.py").exists()
    dist, how = bd.make_dist(args.n, args.seed, mini)
    db = bd.OUT / "edge.sqlite3"
    bd.make_accounts(db)
    keyed = {"Authorization": f"Bearer {bd.KEY}"}
    coding = bd.GZIP if args.gzip else {}
    script = str(ROOT / "bench" / "bench_directory.py")
    edge_port, bare_port, floor_port = bd.free_port(), bd.free_port(), bd.free_port()
    servers: list[Counted] = []
    results: dict[str, Any] = {"catalogue": {"n": args.n, "seed": args.seed, "made_with": how}}
    try:
        edge = Counted(
            "edge", [script, "serve-edge", str(edge_port), str(dist), str(db)], edge_port
        )
        servers.append(edge)
        print(f"starting the edge under callgrind ({how} catalogue of {args.n})...", flush=True)
        wait_ready(edge, "/v1/programs", keyed, args.start_timeout)
        _, edge_headers, page = bd.get(edge_port, "/v1/programs", {**keyed, **coding})
        page_file, headers_file = OUT / "first-page.json", OUT / "edge-headers.json"
        page_file.write_bytes(page)
        # bench_directory's constant-page route reads this file (the identity page).
        (bd.OUT / "first-page.json").write_bytes(bd.get(edge_port, "/v1/programs", keyed)[2])
        headers_file.write_text(
            json.dumps(
                {k: v for k, v in edge_headers.items() if k.lower() not in bd.AIOHTTP_HEADERS}
            )
        )
        bare_argv = [script, "serve-bare", str(bare_port), str(page_file)]
        bare = Counted("bare", bare_argv + (["gzip"] if args.gzip else []), bare_port)
        floor = Counted(
            "floor",
            [script, "serve-floor", str(floor_port), str(page_file), str(headers_file)],
            floor_port,
        )
        servers += [bare, floor]
        wait_ready(bare, "/v1/programs", {}, args.start_timeout)
        wait_ready(floor, "/v1/programs", {}, args.start_timeout)
        cursor, depth = bd.deep_cursor(edge_port, keyed, args.depth)
        sent = {**keyed, **coding}
        cases = [
            ("bare", "bare aiohttp, same page", bare, "/v1/programs", coding),
            ("floor", "+ no-op middleware + the edge's headers", floor, "/v1/programs", coding),
            ("stack", "edge middlewares, constant page", edge, bd.STACK_ONLY, sent),
            ("programs", "edge /v1/programs", edge, "/v1/programs", sent),
            ("filtered", "edge two filters + minScore", edge, FILTERED, sent),
            ("deep", f"edge deep cursor (row {depth})", edge, f"/v1/programs?cursor={cursor}", sent),
        ]  # fmt: skip
        counted: dict[str, Any] = {}
        print(f"{args.requests} requests per case, one at a time, after {args.warm} to warm up:")
        for key, label, server, path, headers in cases:
            counted[key] = {"label": label, "path": path, **count_case(server, path, headers, args)}
            per = counted[key]["per_request"]
            ratio = counted["bare"]["per_request"] / per
            print(f"  {label:<44} {per:>9,} instructions/request  ratio {ratio:.3f}", flush=True)
        results["cases"] = counted
        results["page_bytes"] = len(page)
        results["gzip"] = args.gzip
    finally:
        for server in servers:
            server.stop()
    return results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="submissions in the catalogue")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--requests", type=int, default=2000, help="counted requests per case")
    parser.add_argument("--warm", type=int, default=300, help="requests before counting")
    parser.add_argument("--depth", type=int, default=12_000, help="rows before the deep cursor")
    parser.add_argument("--start-timeout", type=float, default=600, help="seconds per server")
    parser.add_argument("--mini-writer", action="store_true", help="skip synth.py + build.py")
    parser.add_argument(
        "--gzip", action="store_true", help="send Accept-Encoding: gzip, as real clients do"
    )
    args = parser.parse_args(argv)
    results = run(args)
    written = OUT / ("results-gzip.json" if args.gzip else "results.json")
    written.write_text(json.dumps(results, indent=2))
    print(f"written to {written.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
