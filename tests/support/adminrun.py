"""`affdir-admin ARGS` run inside the test process: what a test of a command's behaviour
needs (status, stdout, stderr, stdin), without the interpreter start-up of a subprocess
(a second or more each under load).

A test about the process boundary itself (signals, the exit status of a real process, the
stdin of a real process) starts `python -m admin` instead and carries the `process` marker.
"""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from unittest import mock

from admin.cli import main


def run_admin(
    env: Mapping[str, str], *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """Run the admin CLI's `main(args)` with `env` added to the environment and `stdin` as
    standard input; its exit status and output as a finished process would give them.

    Called from a coroutine (an async test), it runs in a thread of its own: the CLI runs
    its own event loop (asyncio.run), which cannot start inside the test's. Stop signals are
    then the test's (the CLI handles them only in the main thread), as in any in-process call.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(env, args, stdin)
    done: list[subprocess.CompletedProcess[bytes]] = []
    failed: list[BaseException] = []

    def target() -> None:
        try:
            done.append(_run(env, args, stdin))
        except BaseException as exc:  # re-raised in the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=target, name="affdir-admin")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return done[0]


def _run(
    env: Mapping[str, str], args: tuple[str, ...], stdin: bytes
) -> subprocess.CompletedProcess[bytes]:
    out, err = io.BytesIO(), io.BytesIO()
    streams = {
        "stdin": io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
        "stdout": io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        "stderr": io.TextIOWrapper(err, encoding="utf-8", write_through=True),
    }
    with mock.patch.dict(os.environ, env), mock.patch.multiple(sys, **streams):
        try:
            status = main(list(args))
        except SystemExit as exit_:  # argparse's usage errors and --help
            status = _exit_status(exit_.code)
        finally:
            for stream in streams.values():
                stream.flush()
        output, errors = out.getvalue(), err.getvalue()
    return subprocess.CompletedProcess(["affdir-admin", *args], status, output, errors)


def _exit_status(code: object) -> int:
    """The status `sys.exit(code)` gives a process: None is 0, a message 1 (printed)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
