"""`python -m catalog`: the build's command line (`catalog.cli`), as `build.py` runs it."""

from __future__ import annotations

import sys

from catalog.cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m catalog"))
