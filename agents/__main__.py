"""`python -m agents`: the same as the `affdir-mcp` command."""

from __future__ import annotations

import sys

from agents.cli import main

if __name__ == "__main__":
    sys.exit(main())
