"""`python -m sync` (console script `affdir-sync`): the long-lived sync worker.

It opens the account store the edge reads (`--database`, default `EDGE_DATABASE`) and the
edge's secrets (`EDGE_SECRET_KEY` or `EDGE_SECRET_FILE`, and `EDGE_RETIRED_SECRET_KEYS`),
then syncs every due connection on a schedule until SIGTERM or SIGINT. Status words are
mapped by the published table (accounts/data/status_map.json) unless `--status-map FILE`
names another. docs/sync.md tells how to run it beside the edge.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import logging
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from accounts.commandline import keyring_of, store_arguments
from accounts.keyring import SecretError
from accounts.settings import start_store
from accounts.statusmap import MapStatus, load_status_map
from contract.commandline import Arg, add_arguments, arg
from contract.logformat import LOG_FORMATS
from contract.process import stop_on_signals
from contract.version import VERSION, version_line
from contract.vocabulary import EVENTS_RETENTION_DAYS, EVENTS_RETENTION_DAYS_MAX
from store import StoreError
from sync.connectors import CONNECTORS
from sync.events import Unobserved
from sync.health import Progress, default_stall_seconds
from sync.logs import configure_logging
from sync.metrics import SyncMetrics
from sync.monitor import serve_monitor
from sync.rankings import keep_rankings
from sync.retention import keep_retention
from sync.runner import SyncSettings
from sync.storage import AccountSyncStore, credential_opener, credential_sealer
from sync.worker import Worker, WorkerConfig

PROG = "affdir-sync"


def worker_arguments(environ: Mapping[str, str]) -> tuple[Arg, ...]:
    """The worker's command line; the defaults that depend on where it runs come from
    `environ` and the host."""
    return (
        *store_arguments(environ),
        arg("--status-map", type=Path, metavar="FILE"),
        arg(
            "--interval-minutes",
            type=float,
            default=360.0,
            help="a connection is due again this long after its last attempt",
        ),
        arg("--concurrency", type=int, default=4, help="syncs at once"),
        arg(
            "--lease-seconds",
            type=float,
            default=3600.0,
            help="how long a connection stays claimed by this worker if it dies",
        ),
        arg("--poll-seconds", type=float, default=30.0),
        arg("--backfill-days", type=int, default=90),
        arg(
            "--base-url",
            action="append",
            default=[],
            metavar="NETWORK=URL",
            help="a network's API base URL (a proxy, a sandbox); repeatable",
        ),
        arg("--worker-id", default=f"{socket.gethostname()}:{os.getpid()}"),
        arg(
            "--events-retention-days",
            type=int,
            default=environ.get("EDGE_EVENTS_RETENTION_DAYS") or EVENTS_RETENTION_DAYS,
            metavar="DAYS",
            help="events older than this are pruned every hour (EDGE_EVENTS_RETENTION_DAYS)",
        ),
        *observability_arguments(environ),
    )


def observability_arguments(environ: Mapping[str, str]) -> tuple[Arg, ...]:
    """--version, the log format, the metrics port and its /healthz (docs/sync.md)."""
    return (
        arg("--version", action="version", version=version_line(PROG)),
        arg(
            "--log-format",
            choices=LOG_FORMATS,
            default=environ.get("SYNC_LOG_FORMAT") or None,
            help="json: one JSON object per line; text: plain lines (SYNC_LOG_FORMAT; "
            "unset: text on a terminal, json otherwise)",
        ),
        arg(
            "--metrics-port",
            type=int,
            default=0,
            metavar="PORT",
            help="serve GET /metrics and GET /healthz on this port (0: not at all)",
        ),
        arg(
            "--metrics-host", default="127.0.0.1", metavar="HOST", help="the metrics port's address"
        ),
        arg(
            "--stall-seconds",
            type=float,
            metavar="N",
            help="/healthz answers 503 after this long without progress "
            "(default: 3 poll intervals, at least 1800)",
        ),
    )


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    add_arguments(parser, worker_arguments(os.environ))
    args = parser.parse_args(argv)
    for name in ("interval_minutes", "lease_seconds", "poll_seconds"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name.replace('_', '-')} must be a positive number")
    if args.concurrency < 1 or args.backfill_days < 1:
        parser.error("--concurrency and --backfill-days must be at least 1")
    if not 1 <= args.events_retention_days <= EVENTS_RETENTION_DAYS_MAX:
        parser.error(f"--events-retention-days must be 1 to {EVENTS_RETENTION_DAYS_MAX}")
    check_observability_arguments(parser, args)
    return args


def check_observability_arguments(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> None:
    if args.log_format not in (None, *LOG_FORMATS):
        parser.error(f"SYNC_LOG_FORMAT must be one of: {', '.join(LOG_FORMATS)}")
    if not 0 <= args.metrics_port <= 65535:
        parser.error("--metrics-port must be a port number (0: off)")
    if args.stall_seconds is None:
        args.stall_seconds = default_stall_seconds(args.poll_seconds)
    elif not args.stall_seconds > 0:
        parser.error("--stall-seconds must be a positive number")


def status_mapper(path: Path | None) -> MapStatus:
    """The published status table (or the one at `path`) as the sync's MapStatus."""
    return load_status_map(path).status


def base_urls(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        network, sep, url = pair.partition("=")
        if not sep or network not in CONNECTORS:
            raise ValueError(f"--base-url expects NETWORK=URL with a known network, not {pair!r}")
        out[network] = url
    return out


async def serve(args: argparse.Namespace) -> int:
    try:
        keyring = keyring_of(args, os.environ)
        map_status = status_mapper(args.status_map)
        urls = base_urls(args.base_url)
    except (SecretError, ValueError, OSError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    # A PostgreSQL store that is down (a database restart during a deploy) is waited for:
    # the worker starts, and syncs once the store answers.
    try:
        store = await start_store(args.database, timeout=30.0, writable=True)
    except (StoreError, OSError) as exc:
        print(f"{PROG}: cannot open the account store: {exc}", file=sys.stderr)
        return 1
    metrics = SyncMetrics(Progress(args.stall_seconds)) if args.metrics_port else None
    worker = Worker(
        AccountSyncStore(store, args.worker_id),
        credential_opener(keyring),
        map_status,
        WorkerConfig(
            worker_id=args.worker_id,
            interval=dt.timedelta(minutes=args.interval_minutes),
            concurrency=args.concurrency,
            lease_seconds=args.lease_seconds,
            poll_seconds=args.poll_seconds,
        ),
        SyncSettings(base_urls=urls, backfill=dt.timedelta(days=args.backfill_days)),
        events=metrics or Unobserved(),
        seal=credential_sealer(keyring),
    )
    try:
        async with stop_on_signals() as stop, contextlib.AsyncExitStack() as monitoring:
            logging.getLogger("sync").info("%s %s %s started", PROG, VERSION, args.worker_id)
            if metrics is not None:
                try:
                    await monitoring.enter_async_context(
                        serve_monitor(metrics, store, args.metrics_host, args.metrics_port)
                    )
                except OSError as exc:  # the port taken, say
                    print(f"{PROG}: cannot serve the metrics port: {exc}", file=sys.stderr)
                    return 1
            # Beside the syncs: the events' retention (sync.retention) and the months'
            # rankings (sync.rankings).
            upkeep = [
                asyncio.create_task(keep_retention(store, args.events_retention_days, stop)),
                asyncio.create_task(keep_rankings(store, stop)),
            ]
            try:
                await worker.run(stop)
            finally:
                for task in upkeep:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
    finally:
        await store.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    configure_logging(args.log_format)
    return asyncio.run(serve(args))


if __name__ == "__main__":
    raise SystemExit(main())
