#!/usr/bin/env python3
"""Build the directory: validate content/programs/*.yaml, score, shard, write dist/ atomically.

    python build.py [--content DIR] [--out DIR] [--base-url URL] [--quiet]
    python build.py --check [FILE ...]     validate only (all of content/, or these files)
    python build.py --write-schema         regenerate content/schema/program.schema.json

Exit status: 0 built (or valid), 1 invalid submissions or the build failed (dist/ is then
left exactly as it was), 2 bad command line, 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM), dist/ again as it was. docs/build.md has the details.

This file is the table of contents; `catalog.pipeline.build` runs the stages in this order:

    load       catalog.loading      find <content>/programs/*.yaml
    validate   catalog.validation   check each file against the rules
    partition  catalog.partition    published, unpublished, rejected or invalid; any error
                                    stops the build, every problem reported at once
    score      catalog.scoring      score the published programmes, put them in order
    shard      catalog.sharding     the ranks each combination of the filters lists
    write      catalog.writing      the HTML directory (catalog.site, templates/) and every
                                    byte of the API's files (catalog.rendering), swapped
                                    into dist/ atomically

`catalog.incremental` lets a rebuild skip what did not change (validate, score and write
go through it); `catalog.cli` is the command line. The same command runs as
`python -m catalog`, and as `affdir-build` once the project is installed: this file is
not installed, as a top-level module named `build` would shadow the PyPA `build` package.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from catalog import cli
from catalog.pipeline import Options, Result, build, check

__all__ = ["Options", "Result", "build", "check", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (`catalog.cli.main`) under this file's name; the exit status."""
    return cli.main(argv, prog="build.py")


if __name__ == "__main__":
    sys.exit(main())
