"""A private, throwaway PostgreSQL server for tests and benchmarks.

    bin_dir = find_bin_dir()                 # None: PostgreSQL is not installed
    server = PgServer.create(bin_dir)        # initdb in a fresh temp dir, then start
    url = server.url("postgres")             # postgresql://postgres@127.0.0.1:PORT/postgres
    server.stop(); server.start()            # an outage, on the same port and data
    server.destroy()                         # stop and delete everything

The server listens on 127.0.0.1 on a free port, keeps its unix socket inside its own temp
dir, trusts local connections (no password: nothing else can reach it), and trades
durability for speed (fsync, synchronous_commit and full_page_writes off): a crash loses
test data only. initdb and postgres refuse to run as root, so as root every command runs
as the `postgres` system user (Debian's postgresql package creates it), over a temp dir
chowned to that user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_USER = "postgres"
SUPERUSER = "postgres"
BIN_GLOBS = (
    "/usr/lib/postgresql/*/bin",
    "/usr/local/pgsql/bin",
    "/opt/homebrew/opt/postgresql*/bin",
)
START_TIMEOUT = 60  # seconds pg_ctl waits for the server to accept connections

# Settings for a disposable server: fast, not durable.
TEST_SETTINGS: Mapping[str, str] = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "100",
    "shared_buffers": "64MB",
    "log_min_messages": "warning",
    "log_min_error_statement": "panic",  # tests provoke errors on purpose; keep the log short
}


class PgServerError(RuntimeError):
    """The server could not be set up, started or stopped (the message has the log tail)."""


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path)) or (0,)


def find_bin_dir(extra: Sequence[str] = ()) -> Path | None:
    """The directory of a complete set of server binaries (initdb, pg_ctl, postgres, psql): the
    newest Debian-style versioned install first, then PATH; None when there is none."""
    candidates = [Path(p) for p in extra]
    for pattern in BIN_GLOBS:
        candidates.extend(
            Path(p) for p in sorted(glob.glob(pattern), key=_version_key, reverse=True)
        )
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for directory in candidates:
        if all(
            os.access(directory / name, os.X_OK)
            for name in ("initdb", "pg_ctl", "postgres", "psql")
        ):
            return directory
    return None


def free_port() -> int:
    """A TCP port nobody listens on right now (a race with other processes is retried)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_server_user() -> list[str]:
    """The command prefix that runs a server binary as a user it accepts."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        raise PgServerError(
            f"running as root, and there is no {SYSTEM_USER!r} user to run PostgreSQL as "
            "(install Debian's postgresql package, which creates it)"
        ) from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PgServerError("running as root, and runuser(1) is missing")
    return [runuser, "-u", SYSTEM_USER, "--"]


@dataclass
class PgServer:
    """One initialised cluster in `root`; `start`/`stop` may be called any number of times."""

    bin_dir: Path
    root: Path
    port: int
    settings: Mapping[str, str] = field(default_factory=lambda: dict(TEST_SETTINGS))
    running: bool = False

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_file(self) -> Path:
        return self.root / "server.log"

    @classmethod
    def create(
        cls, bin_dir: Path, *, settings: Mapping[str, str] | None = None, start: bool = True
    ) -> PgServer:
        """initdb a new cluster in a temp dir (and start it); destroyed again on failure."""
        root = Path(tempfile.mkdtemp(prefix="affdir-pg-"))
        server = cls(bin_dir, root, free_port(), dict(TEST_SETTINGS) | dict(settings or {}))
        try:
            server._init()
            if start:
                server.start()
        except BaseException:
            server.destroy()
            raise
        return server

    def url(self, database: str = "postgres", user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def _run(self, args: Sequence[str], *, timeout: float = START_TIMEOUT + 30) -> str:
        command = [*_as_server_user(), *args]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False, cwd=self.root
            )
        except subprocess.TimeoutExpired as exc:
            raise PgServerError(f"{' '.join(args[:2])} timed out\n{self.log_tail()}") from exc
        if done.returncode != 0:
            raise PgServerError(
                f"{' '.join(str(a) for a in args)} failed ({done.returncode}):\n"
                f"{done.stdout}{done.stderr}\n{self.log_tail()}"
            )
        return done.stdout

    def _init(self) -> None:
        if _as_server_user():  # root: the server user must own its directory
            user = pwd.getpwnam(SYSTEM_USER)
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self.root.chmod(0o700)
        self._run(
            [
                str(self.bin_dir / "initdb"),
                "--pgdata",
                str(self.data_dir),
                "--username",
                SUPERUSER,
                "--auth",
                "trust",
                "--encoding",
                "UTF8",
                # C collation: text sorts by code point, as in SQLite, whatever the machine.
                "--locale",
                "C",
                "--no-sync",
            ]
        )
        self._write_settings()

    def _write_settings(self) -> None:
        """Network settings and speed settings, in the cluster's auto.conf (read at start)."""
        lines = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.root),
            **self.settings,
        }
        text = "".join(f"{name} = '{value}'\n" for name, value in lines.items())
        # Written as the server user: the file must stay readable (and owned) by it.
        path = self.data_dir / "postgresql.auto.conf"
        stat = path.stat()
        path.write_text(text)
        os.chown(path, stat.st_uid, stat.st_gid)

    def start(self) -> None:
        """Start and wait until it accepts connections; a port taken meanwhile is replaced."""
        for attempt in range(3):
            try:
                self._run(
                    [
                        str(self.bin_dir / "pg_ctl"),
                        "--pgdata",
                        str(self.data_dir),
                        "--log",
                        str(self.log_file),
                        "--wait",
                        "--timeout",
                        str(START_TIMEOUT),
                        "start",
                    ]
                )
            except PgServerError:
                if attempt == 2 or "Address already in use" not in self.log_tail():
                    raise
                self.port = free_port()
                self._write_settings()
            else:
                self.running = True
                return

    def stop(self, mode: str = "fast") -> None:
        """Stop: `fast` (disconnect clients, clean shutdown) or `immediate` (like a crash).

        Before an immediate stop the WAL is flushed (CHECKPOINT): with this server's
        synchronous_commit=off, commits already acknowledged would otherwise be lost in the
        crash, which a production server (synchronous_commit=on) never does. Transactions
        still open are cut as in a real crash."""
        if not self.running:
            return
        if mode == "immediate":
            self.sql("CHECKPOINT")
        self._run(
            [
                str(self.bin_dir / "pg_ctl"),
                "--pgdata",
                str(self.data_dir),
                "--mode",
                mode,
                "--wait",
                "stop",
            ]
        )
        self.running = False

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Run one statement with psql over the unix socket; its output."""
        return self._run(
            [
                str(self.bin_dir / "psql"),
                "--host", str(self.root), "--port", str(self.port), "--username", SUPERUSER,
                "--dbname", database, "--no-psqlrc", "--quiet", "--tuples-only",
                "--set", "ON_ERROR_STOP=1", "--command", statement,
            ]
        )  # fmt: skip

    def pids(self) -> list[int]:
        """The postmaster and every process it started (Linux /proc), e.g. to freeze them
        with SIGSTOP: a server that accepts connections and then never answers."""
        master = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                # Fields after the command name, which is in parentheses and may hold spaces.
                fields = stat.read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        found, todo = [], [master]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def destroy(self) -> None:
        """Stop (abruptly: nothing is kept) and delete the cluster."""
        try:
            if self.running:
                self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
