"""`python -m admin`: the operator's command line."""

from __future__ import annotations

import sys

from admin.cli import main

if __name__ == "__main__":
    sys.exit(main())
