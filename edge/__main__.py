"""`python -m edge`: serve the API with the configuration from flags and EDGE_* variables."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from edge import serving, workers
from edge.config import Config, ConfigError, load
from edge.logs import configure_logging
from store import StoreError


def serve(config: Config) -> None:
    """Run the edge until interrupted."""
    configure_logging(config)
    if config.workers > 1:
        workers.supervise(config)  # N processes on one port (edge/workers.py)
        return
    serving.serve(config)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = load(argv)
    except ConfigError as exc:
        print(f"edge: {exc}", file=sys.stderr)
        return 2
    try:
        serve(config)
    except ConfigError as exc:  # found at start: a Redis URL, a secret file...
        print(f"edge: {exc}", file=sys.stderr)
        return 2
    except (StoreError, OSError) as exc:  # the account store, the port, a file
        print(f"edge: cannot start: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
