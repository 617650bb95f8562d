"""A private, throwaway Redis server for tests and benchmarks.

    binary = find_redis_server()          # None: Redis is not installed
    server = RedisServer.create(binary)   # a temp dir, a free port, started
    url = server.url                      # redis://127.0.0.1:PORT/0
    server.stop(); server.start()         # an outage, then Redis back on the same port
    server.pause(); server.resume()       # a hung Redis (SIGSTOP): connects, never answers
    server.destroy()                      # stop and delete everything

The server listens on 127.0.0.1 only, keeps nothing on disk (`--save ""`, no AOF: a restart
comes back empty, like a Redis that lost its memory) and runs in the foreground as a child
of the test process, its log in its own temp dir.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT = 10.0  # seconds for redis-server to answer PING
STOP_TIMEOUT = 10.0


class RedisServerError(RuntimeError):
    """The server could not be started or stopped (the message has the log tail)."""


def find_redis_server() -> str | None:
    """The redis-server binary on PATH (or Debian's place), or None when not installed."""
    found = shutil.which("redis-server")
    if found:
        return found
    debian = Path("/usr/bin/redis-server")
    return str(debian) if debian.exists() else None


def free_port() -> int:
    """A TCP port nobody listens on right now (a race with other processes is retried)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ping(port: int, timeout: float = 0.5) -> bool:
    """True when a Redis on 127.0.0.1:port answers PING."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@dataclass
class RedisServer:
    """One redis-server in `root` on `port`; `start`/`stop` may be called any number of times."""

    binary: str
    root: Path
    port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def create(cls, binary: str, *, start: bool = True) -> RedisServer:
        root = Path(tempfile.mkdtemp(prefix="affdir-redis-"))
        server = cls(binary, root, free_port())
        try:
            if start:
                server.start()
        except BaseException:
            server.destroy()
            raise
        return server

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def log_file(self) -> Path:
        return self.root / "redis.log"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        return "(no log)"

    def start(self) -> None:
        """Start and wait for PING. On the first start a port taken meanwhile is replaced;
        a restart keeps its port (clients reconnect to the same URL)."""
        if self.running:
            return
        first = self.process is None
        for _attempt in range(3):
            self._spawn()
            if self._wait_ready():
                return
            self._kill()
            if not first:
                time.sleep(0.2)  # the old socket may linger briefly: same port, try again
            else:
                self.port = free_port()
        raise RedisServerError(f"redis-server did not start on {self.port}\n{self.log_tail()}")

    def _spawn(self) -> None:
        with self.log_file.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    self.binary,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.root),
                    "--daemonize",
                    "no",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if not self.running:
                return False
            if ping(self.port):
                return True
            time.sleep(0.02)
        return False

    def stop(self) -> None:
        """Stop it (SIGTERM; it saves nothing, so this is quick); the port is free after."""
        if self.process is None:
            return
        self.resume()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._kill()

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def pause(self) -> None:
        """Freeze it: connections are accepted by the kernel but nothing is answered."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, signum: int) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signum)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
