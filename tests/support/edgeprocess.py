"""Helpers of the scale-out tests: seeded keys and real `python -m edge` processes (the
fixtures that start Redis servers and collect the processes are in tests/edge/scale/conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from accounts import apikeys
from store import accounts, open_store
from support.redisserver import free_port

ROOT = Path(__file__).resolve().parents[2]
SECRET = "scale-test-secret-" + "s" * 40
EDGE_START_TIMEOUT = 30.0


async def seed_key(database: str, plan: str = "free") -> str:
    """Create an account of `plan` with one key in `database`; return the key."""
    store = await open_store(database, writable=True, readers=1)
    try:
        uid = await store.write(accounts.create, None, plan)
        issued = apikeys.generate_key()
        await store.write(
            accounts.create_key, uid, issued.key_hash, issued.prefix, "scale tests", ("read",)
        )
    finally:
        await store.close()
    return issued.key


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# --- real edge processes ---------------------------------------------------------------


@dataclass
class EdgeProcess:
    """A `python -m edge` subprocess; its stderr goes to `log`."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, then wait; SIGKILL (and fail) if it does not stop in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(
                f"edge did not stop on SIGTERM\n{self.log_text()[-3000:]}"
            ) from None


async def wait_healthy(edge: EdgeProcess, within: float = EDGE_START_TIMEOUT) -> None:
    """Until GET /healthz answers 200 (fails early with the log if the process exits)."""
    deadline = time.monotonic() + within
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if edge.process.poll() is not None:
                raise AssertionError(
                    f"edge exited with {edge.process.returncode}\n{edge.log_text()[-3000:]}"
                )
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with session.get(edge.base_url + "/healthz") as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(0.05)
    raise AssertionError(f"edge not healthy after {within} s\n{edge.log_text()[-3000:]}")


def start_edge(
    workdir: Path,
    args: Sequence[str],
    *,
    port: int | None = None,
    program: Sequence[str] = ("-m", "edge"),
) -> EdgeProcess:
    """Start `python -m edge ARGS --port PORT` (a free port by default) in `workdir`;
    `program` replaces `-m edge` (tests/support/slowedge.py: the edge plus a slow route)."""
    port = port or free_port()
    log = workdir / f"edge-{port}-{time.monotonic_ns()}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                *program,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--access-log",
                "false",
                *args,
            ],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "EDGE_SECRET_KEY": SECRET},
        )
    return EdgeProcess(process, port, log)


def children(pid: int) -> set[int]:
    """The pids of the live (not zombie) child processes of `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            # /proc/PID/stat: "pid (comm) state ppid ..."; comm may contain spaces.
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def alive(pids: set[int]) -> set[int]:
    """Those of `pids` still executing: an exited orphan waits as a zombie until init reaps
    it, which holds no port and serves nothing, so it does not count."""
    found = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.add(pid)
    return found


def running(pids: set[int]) -> set[int]:
    """Those of `pids` that are still processes (zombies included: not yet reaped)."""
    return {pid for pid in pids if Path(f"/proc/{pid}").exists()}
