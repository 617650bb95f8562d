"""`python -m sync` (console script `affdir-sync`): the long-lived sync worker.

The account store is reached through a factory named by `--store module:function` (or
AFFDIR_SYNC_STORE): an async function returning `(store, decrypt)`, the store implementing
`sync.ports.SyncStore` and `decrypt` opening its ciphertexts. Status words are mapped by the
JSON table given with `--status-map` (the account store's), else by the connectors' own
declared words.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from sync.connectors import CONNECTORS
from sync.runner import SyncSettings
from sync.statuses import MapStatus, fold, mapper, tables_from_specs
from sync.worker import Worker, WorkerConfig


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="affdir-sync", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store", default=os.environ.get("AFFDIR_SYNC_STORE"), metavar="MODULE:FUNCTION"
    )
    parser.add_argument("--status-map", type=Path, metavar="FILE")
    parser.add_argument("--interval-minutes", type=float, default=360.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--lease-seconds", type=float, default=3600.0)
    parser.add_argument("--poll-seconds", type=float, default=30.0)
    parser.add_argument("--backfill-days", type=int, default=90)
    parser.add_argument(
        "--base-url",
        action="append",
        default=[],
        metavar="NETWORK=URL",
        help="a network's API base URL (a proxy, a sandbox); repeatable",
    )
    parser.add_argument("--worker-id", default=f"{socket.gethostname()}:{os.getpid()}")
    return parser.parse_args(argv)


def status_mapper(path: Path | None) -> MapStatus:
    """The mapping of a status-map JSON file (network -> word -> status), or the specs'."""
    if path is None:
        return mapper(tables_from_specs(c.spec for c in CONNECTORS.values()))
    data = json.loads(path.read_text("utf-8"))
    tables = {
        network: {fold(word): status for word, status in table.items()}
        for network, table in data.items()
        if not network.startswith("_") and isinstance(table, dict)
    }
    return mapper(tables)


def base_urls(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        network, sep, url = pair.partition("=")
        if not sep or network not in CONNECTORS:
            raise SystemExit(f"--base-url expects NETWORK=URL with a known network, not {pair!r}")
        out[network] = url
    return out


async def serve(args: argparse.Namespace) -> int:
    module_name, _, function = (args.store or "").partition(":")
    if not module_name or not function:
        print("affdir-sync: name the store factory with --store MODULE:FUNCTION", file=sys.stderr)
        return 2
    factory = getattr(importlib.import_module(module_name), function)
    store, decrypt = await factory()
    worker = Worker(
        store,
        decrypt,
        status_mapper(args.status_map),
        WorkerConfig(
            worker_id=args.worker_id,
            interval=dt.timedelta(minutes=args.interval_minutes),
            concurrency=args.concurrency,
            lease_seconds=args.lease_seconds,
            poll_seconds=args.poll_seconds,
        ),
        SyncSettings(
            base_urls=base_urls(args.base_url), backfill=dt.timedelta(days=args.backfill_days)
        ),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    logging.getLogger("sync").info("affdir-sync %s started", args.worker_id)
    try:
        await worker.run(stop)
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            await close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    return asyncio.run(serve(parse_args(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    raise SystemExit(main())
