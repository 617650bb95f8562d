"""`python -m webhooks` (console script `affdir-webhooks`): the webhook delivery worker.

Its own process beside the edge and the sync worker: deliveries wait on receivers for
seconds at a time and are retried for days, so they must neither slow down a sync nor stop
when a sync is restarted, and the worker scales (several may share one store: deliveries
are leased) apart from them. It opens the account store the edge reads (`--database`,
default `EDGE_DATABASE`) and the edge's secrets (`EDGE_SECRET_KEY` or `EDGE_SECRET_FILE`,
and `EDGE_RETIRED_SECRET_KEYS`), which open the endpoints' signing secrets, then delivers
until SIGTERM or SIGINT. A PostgreSQL store that is down when it starts is waited for
(accounts.settings.start_store). docs/deploy.md tells how to run it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
from collections.abc import Mapping, Sequence

from accounts.commandline import keyring_of, store_arguments
from accounts.keyring import SecretError
from accounts.settings import start_store
from contract.commandline import Arg, add_arguments, arg, number
from contract.process import stop_on_signals
from contract.version import version_line
from contract.webhooks import REQUEST_TIMEOUT
from store import StoreError
from webhooks.targets import TargetPolicy
from webhooks.worker import Worker, WorkerSettings

PROG = "affdir-webhooks"


SECONDS = number(float, 0, 86400, above=True, unit="seconds")
STORE_TIMEOUT = 2.0  # seconds a store call waits for a connection, a lock or a read
COUNT = number(int, 1, 1000)


def worker_arguments(environ: Mapping[str, str]) -> tuple[Arg, ...]:
    """The worker's command line; the database's default comes from `environ`."""
    return (
        arg("--version", action="version", version=version_line(PROG)),
        *store_arguments(environ),
        arg(
            "--allow-loopback",
            action="store_true",
            help="also deliver to loopback addresses, and over plain http:// (development, "
            "tests); private and link-local addresses stay refused",
        ),
        arg(
            "--per-endpoint",
            type=COUNT,
            default=4,
            metavar="N",
            help="requests in flight per endpoint",
        ),
        arg(
            "--max-endpoints", type=COUNT, default=64, metavar="N", help="endpoints served at once"
        ),
        arg(
            "--timeout-seconds",
            type=SECONDS,
            default=REQUEST_TIMEOUT,
            help="one request's time, answer included",
        ),
        arg(
            "--lease-seconds",
            type=SECONDS,
            default=60.0,
            help="how long a claimed delivery stays this worker's if it dies "
            "(longer than the timeout)",
        ),
        arg(
            "--poll-seconds", type=SECONDS, default=1.0, help="how often new events are looked for"
        ),
        arg("--worker-id", default=f"{socket.gethostname()}:{os.getpid()}"),
    )


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=(__doc__ or "").splitlines()[0])
    add_arguments(parser, worker_arguments(os.environ))
    args = parser.parse_args(argv)
    if args.lease_seconds <= args.timeout_seconds:
        parser.error("--lease-seconds must be longer than --timeout-seconds")
    return args


async def serve(args: argparse.Namespace) -> int:
    try:
        keyring = keyring_of(args, os.environ)
    except SecretError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    settings = WorkerSettings(
        worker_id=args.worker_id,
        policy=TargetPolicy(allow_loopback=args.allow_loopback),
        per_endpoint=args.per_endpoint,
        max_endpoints=args.max_endpoints,
        request_timeout=args.timeout_seconds,
        lease_seconds=args.lease_seconds,
        poll_seconds=args.poll_seconds,
    )
    try:
        store = await start_store(args.database, timeout=STORE_TIMEOUT, writable=True)
    except StoreError as exc:
        print(f"{PROG}: cannot start: {exc}", file=sys.stderr)
        return 1
    try:
        async with stop_on_signals() as stop:
            logging.getLogger("webhooks").info("delivering as %s", settings.worker_id)
            await Worker(store, keyring, settings).run(stop)
    finally:
        await store.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
