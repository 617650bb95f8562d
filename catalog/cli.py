"""The build's command line: `python build.py`, `python -m catalog` and `affdir-build`.

Exit status: 0 built (or valid), 1 invalid submissions or the build failed (dist/ is then
left exactly as it was), 2 bad command line, 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM), dist/ again as it was. docs/build.md has the details.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from catalog import schema, writing
from catalog.errors import BuildError, Diagnostic
from catalog.incremental import CACHE_DIR
from catalog.pipeline import DEFAULT_BASE_URL, Options, Result, build, check
from catalog.progress import Progress
from catalog.site.meta import normalise_base_url
from contract import vocabulary as v
from contract.commandline import add_arguments, arg
from contract.version import VERSION

# The build's command line, read by `parse_args`.
BUILD_ARGUMENTS = (
    arg("--version", action="version", version=f"%(prog)s {VERSION}"),
    arg(
        "--content",
        type=Path,
        default=Path("content"),
        metavar="DIR",
        help="content directory holding programs/*.yaml (default: content)",
    ),
    arg(
        "--out",
        type=Path,
        default=Path("dist"),
        metavar="DIR",
        help="output directory, replaced atomically (default: dist)",
    ),
    arg(
        "--check",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="validate only, write nothing: all of the content, or these files "
        "(their slugs are still checked against the content's)",
    ),
    arg(
        "--base-url",
        default=DEFAULT_BASE_URL,
        metavar="URL",
        help=f"absolute URL the site is served from (default: {DEFAULT_BASE_URL})",
    ),
    arg("--quiet", action="store_true", help="print only problems, no progress or summary"),
    arg(
        "--no-cache",
        action="store_true",
        help=f"neither read nor write {CACHE_DIR}/ (a cold build)",
    ),
    arg(
        "--no-site",
        action="store_true",
        help="build the API's files only, without the HTML directory (dist/ then holds no "
        "site; for an edge that serves the API alone)",
    ),
    arg(
        "--no-sync",
        action="store_true",
        help="do not flush the new build to disk before swapping it in",
    ),
    arg(
        "--write-schema",
        action="store_true",
        help="regenerate <content>/schema/program.schema.json and exit",
    ),
)


def parse_args(argv: Sequence[str] | None, prog: str | None = None) -> argparse.Namespace:
    """The command line, checked; `prog` names the command in usage and errors."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Validate programme submissions and build the directory into dist/.",
    )
    add_arguments(parser, BUILD_ARGUMENTS)
    args = parser.parse_args(argv)  # fmt: skip
    if args.write_schema and args.check is not None:
        parser.error("--write-schema writes the schema; --check writes nothing: give one")
    try:
        # The site's own check (catalog.site.meta), at once: not after validating everything.
        args.base_url = normalise_base_url(args.base_url)
    except ValueError:
        parser.error(
            "--base-url must be an absolute http(s) URL without user, query or fragment, "
            "e.g. https://affdir.example"
        )
    return args


def report(diagnostics: Sequence[Diagnostic], stream: TextIO, github: bool) -> None:
    """Print problems one per line; under GitHub Actions also as workflow annotations."""
    for diagnostic in diagnostics:
        print(diagnostic, file=stream)
    if github:
        for diagnostic in diagnostics:
            print(diagnostic.github(), flush=True)


class Terminated(BaseException):
    """SIGTERM, raised where the build is: a BaseException, like KeyboardInterrupt, so no
    `except Exception` on the way can swallow it, and every cleanup runs."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """The command line entry point (`affdir-build`); returns the exit status."""
    args = parse_args(argv, prog)
    github = os.environ.get("GITHUB_ACTIONS") == "true"
    progress = Progress(quiet=args.quiet)
    if args.write_schema:
        path = schema.write(args.content)
        progress.say(f"wrote {path}")
        return 0
    options = Options(
        content=args.content,
        out=args.out,
        base_url=args.base_url,
        cache=not args.no_cache,
        sync=not args.no_sync,
        site=not args.no_site,
    )
    # A SIGTERM unwinds like Ctrl-C, so the staging directory is cleaned up either way.
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run(args, options, progress, github)
    except (KeyboardInterrupt, Terminated) as exc:
        # Also while problems are being printed: dist/ is whole either way.
        if args.check is not None:
            print("\ninterrupted; a check writes nothing", file=sys.stderr)
        else:
            print(
                f"\ninterrupted; {options.out} holds a whole build, never part of one",
                file=sys.stderr,
            )
        return 130 if isinstance(exc, KeyboardInterrupt) else 128 + signal.SIGTERM


def _run(args: argparse.Namespace, options: Options, progress: Progress, github: bool) -> int:
    """Check or build, then report; the exit status."""
    try:
        if args.check is not None:
            result = check(options, args.check, progress)
        else:
            result = build(options, progress)
    except BuildError as exc:
        report(exc.diagnostics, sys.stderr, github)
        if args.check is not None:
            print(f"check failed: {exc.summary}", file=sys.stderr)
        else:
            print(f"build failed: {exc.summary}; {options.out} left as it was", file=sys.stderr)
        return 1
    except (writing.WriteError, OSError) as exc:
        print(f"build failed: {exc}; {options.out} left as it was", file=sys.stderr)
        return 1
    report(result.warnings, sys.stderr, github)
    progress.say(_summary(result, options, args.check is not None, progress.elapsed))
    return 0


def _summary(result: Result, options: Options, checking: bool, elapsed: float) -> str:
    c = result.counts
    statuses = ", ".join(f"{c.get(s, 0)} {s}" for s in v.SUBMISSION_STATUSES)
    if checking:
        many = "" if c["submissions"] == 1 else "s"
        return f"check passed: {c['submissions']} submission{many} ({statuses}) in {elapsed:.2f} s"
    return (
        f"built {options.out}: {statuses}; {c['shards']} shards, {c['pages']} pages, "
        f"{result.files} files, {result.bytes / 1e6:.1f} MB in {elapsed:.2f} s"
    )
