#!/usr/bin/env python3
"""Benchmark the build on a synthetic catalogue (bench/synth.py). Not a test.

    python bench/bench_build.py [--n 20000] [--seed 1] [--dir DIR] [--no-site] [--keep]
                                [--rebuilds 5]

Generates N submissions into a temporary directory (under --dir, default the system's temp
directory), flushes them to disk (os.sync), then measures, each in a fresh process:

1. the baseline: PyYAML's CSafeLoader over every file, then jsonschema (the committed
   schema, one validator) over every document, one by one, in one process;
2. a cold build (no cache, no dist/); 3. a rebuild after one submission changed (it
   assembles the new build in a fresh staging directory, linking unchanged files); 4. a
   rebuild after another change (it recycles the spare tree the previous rebuild kept);
   5. a rebuild with nothing changed; then 6. `--rebuilds` more rebuilds after one change
   each, for their spread;

and prints per-stage times, the process's wall time with Python's start-up and its CPU time
(with its workers'; steadier than wall on a shared machine), peak memory (max RSS of the
process and of its workers), the file count and size of dist/, and ratios against the
baseline. `--no-site` builds as `build.py --no-site` does (the API's files only).
bench/README.md has the current figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import synth  # noqa: E402  (bench/ is on sys.path when run as a script)

RACY_WAIT = 2.1  # seconds: fingerprints of files younger than this are not trusted (cache.py)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="submissions (default 20000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=None, help="where to make the temp dir")
    parser.add_argument("--no-site", action="store_true", help="skip the HTML site stage")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    parser.add_argument(
        "--rebuilds",
        type=int,
        default=5,
        help="more one-change rebuilds after the table, for their spread (default 5)",
    )
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args.child)

    work = Path(tempfile.mkdtemp(prefix="bench-build-", dir=args.dir))
    content, out = work / "content", work / "dist"
    try:
        started = time.perf_counter()
        synth.generate(args.n, args.seed, content)
        print(f"generated {args.n} submissions in {time.perf_counter() - started:.1f} s "
              f"into {content} (seed {args.seed})")  # fmt: skip
        # The build's syncfs flushes the whole file system: without this, the cold build would
        # also pay for writing the 20,000 files just generated (content is long on disk in
        # real use).
        os.sync()
        time.sleep(RACY_WAIT)
        base = _spawn(["baseline", str(content)])
        command = ["build", str(content), str(out), str(args.no_site)]
        runs = {"cold": _spawn(command)}
        _change_one(content, "cookieDays: 30\n", "cookieDays: 365\n")
        runs["1 changed"] = _spawn(command)  # the first rebuild assembles in a fresh staging dir
        _change_one(content, "payout: monthly\n", "payout: weekly\n")
        runs["1 more"] = _spawn(command)  # from now on, the spare (the build before) is recycled
        runs["no change"] = _spawn(command)
        _report(args, base, runs, _disk_usage(out))
        _report_rebuilds(command, content, args.rebuilds)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _change_one(content: Path, old: str, new: str) -> None:
    """Change one published submission's terms (its score and shards change with it)."""
    for path in sorted((content / "programs").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "status: published" in text and old in text:
            path.write_text(text.replace(old, new), "utf-8")
            return


def _spawn(args: list[str]) -> dict:
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"bench: child {args[0]} failed:\n{done.stderr}")
    result = json.loads(done.stdout)
    result["process wall"] = time.perf_counter() - started
    # The child's and its workers' user + system CPU: on a shared machine, steadier than wall.
    result["cpu"] = _children_cpu() - cpu_before
    return result


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _report_rebuilds(command: list[str], content: Path, count: int) -> None:
    """`count` more rebuilds after one change each (a different file's cookieDays each
    time), as the command line runs them: process wall and CPU, min / median / max."""
    if count < 1:
        return
    walls, cpus = [], []
    for number in range(count):
        _change_nth(content, number)
        run = _spawn(command)
        walls.append(run["process wall"])
        cpus.append(run["cpu"])
    print(f"\n{count} more rebuilds after one change (process wall with start-up; CPU):")
    for label, values in (("wall", walls), ("CPU", cpus)):
        print(f"  {label:<5} min {min(values):.3f} s, median {statistics.median(values):.3f} s, "
              f"max {max(values):.3f} s")  # fmt: skip


def _change_nth(content: Path, number: int) -> None:
    """Change the cookieDays of the published submission `number` places into the content."""
    published = [
        path
        for path in sorted((content / "programs").glob("*.yaml"))
        if "status: published" in path.read_text(encoding="utf-8")
    ]
    path = published[(100 + number * 37) % len(published)]  # any --n: small ones wrap
    text = path.read_text(encoding="utf-8")
    old = next(line for line in text.splitlines() if line.startswith("cookieDays: "))
    days = int(old.split(": ")[1])
    path.write_text(text.replace(old + "\n", f"cookieDays: {days % 365 + 1}\n"), "utf-8")


def _child(args: list[str]) -> int:
    kind = args[0]
    started = time.perf_counter()
    if kind == "baseline":
        result = _baseline(Path(args[1]))
    else:
        result = _build(Path(args[1]), Path(args[2]), args[3] == "True")
    result["wall"] = time.perf_counter() - started
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result["maxrss MB"] = {"self": self_kb / 1024, "workers": children_kb / 1024}
    print(json.dumps(result))
    return 0


def _baseline(content: Path) -> dict:
    import yaml
    from jsonschema import Draft202012Validator

    files = sorted((content / "programs").glob("*.yaml"))
    started = time.perf_counter()
    documents = [yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader) for path in files]
    loaded = time.perf_counter()
    schema = json.loads((ROOT / "content" / "schema" / "program.schema.json").read_text())
    validator = Draft202012Validator(schema)
    invalid = sum(1 for doc in documents if not validator.is_valid(doc))
    validated = time.perf_counter()
    return {
        "stages": {"yaml.load": loaded - started, "jsonschema": validated - loaded},
        "invalid": invalid,
    }


def _build(content: Path, out: Path, no_site: bool) -> dict:
    import build
    from catalog.progress import Progress

    options = build.Options(content=content, out=out, site=not no_site)
    progress = Progress(quiet=True)
    result = build.build(options, progress)
    return {
        "stages": progress.timings(),
        "live after": progress.elapsed - progress.timings()["write"] + result.seconds_to_swap,
        "written": result.written,
        "linked": result.linked,
        "kept": result.kept,
        "assembled in": result.assembled_in,
        "counts": result.counts,
    }


def _disk_usage(root: Path) -> dict:
    files = dirs = size = blocks = 0
    for path, dirnames, filenames in os.walk(root):
        dirs += len(dirnames)
        blocks += os.lstat(path).st_blocks
        for name in filenames:
            stat = os.lstat(os.path.join(path, name))
            files += 1
            size += stat.st_size
            blocks += stat.st_blocks
    return {"files": files, "dirs": dirs, "bytes": size, "disk bytes": blocks * 512}


def _report(args: argparse.Namespace, base: dict, runs: dict[str, dict], usage: dict) -> None:
    baseline = sum(base["stages"].values())
    print(f"\nmachine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
          f"n={args.n} seed={args.seed}{' (no site)' if args.no_site else ''}")  # fmt: skip
    print(f"baseline (sequential CSafeLoader + jsonschema): "
          f"load {base['stages']['yaml.load']:.2f} s + validate {base['stages']['jsonschema']:.2f} s"
          f" = {baseline:.2f} s; peak {base['maxrss MB']['self']:.0f} MB")  # fmt: skip
    stages = list(runs["cold"]["stages"])
    print(f"\n{'stage':<10}" + "".join(f"{name:>14}" for name in runs))
    for stage in stages:
        print(f"{stage:<10}" + "".join(f"{r['stages'][stage]:>12.3f} s" for r in runs.values()))
    rows = [
        ("total", lambda r: f"{r['wall']:.3f} s"),
        ("live after", lambda r: f"{r['live after']:.3f} s"),
        ("+ startup", lambda r: f"{r['process wall']:.3f} s"),
        ("CPU", lambda r: f"{r['cpu']:.3f} s"),
        ("vs base", lambda r: f"{r['wall'] / baseline:.2f}x"),
        ("written", lambda r: str(r["written"])),
        ("linked", lambda r: str(r["linked"])),
        ("kept", lambda r: str(r["kept"])),
        ("in", lambda r: r["assembled in"]),
        ("peak MB", lambda r: f"{r['maxrss MB']['self']:.0f}+{r['maxrss MB']['workers']:.0f}"),
    ]
    for label, cell in rows:
        print(f"{label:<10}" + "".join(f"{cell(r):>14}" for r in runs.values()))
    cold_validate = runs["cold"]["stages"]["validate"]
    print(f"\nvalidate (read+parse+check, cold) vs baseline load+validate: "
          f"{cold_validate:.2f} s vs {baseline:.2f} s = {cold_validate / baseline:.2f}x")  # fmt: skip
    counts = runs["cold"]["counts"]
    print(f"dist/: {usage['files']} files in {usage['dirs']} directories, "
          f"{usage['bytes'] / 1e6:.1f} MB of data, {usage['disk bytes'] / 1e6:.1f} MB on disk; "
          f"{counts['published']} published, {counts['shards']} shards")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
