"""`python -m edge`: serve the API with the configuration from flags and EDGE_* variables."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from aiohttp import web

from edge import workers
from edge.accesslog import JsonAccessLogger
from edge.app import create_app
from edge.config import Config, ConfigError, load
from edge.logs import configure_logging


def serve(config: Config) -> None:
    """Run the edge until interrupted."""
    configure_logging(config)
    if config.workers > 1:
        workers.supervise(config)  # N processes on one port (edge/workers.py)
        return
    web.run_app(
        create_app(config),
        host=config.host,
        port=config.port,
        access_log=logging.getLogger("edge.access"),
        access_log_class=JsonAccessLogger,
        print=lambda msg: logging.getLogger("edge").info(msg.strip()),
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = load(argv)
    except ConfigError as exc:
        print(f"edge: {exc}", file=sys.stderr)
        return 2
    serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
