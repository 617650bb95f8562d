"""`python -m edge`: serve the API with the configuration from flags and EDGE_* variables."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from edge import serving, workers
from edge.config import Config, ConfigError, load
from edge.logs import configure_logging


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
    serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
