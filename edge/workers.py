"""`python -m edge --workers N`: N worker processes sharing one port, under a supervisor.

- Each worker is a forked process running its own event loop and its own application: its
  own copy of the build, its own store connections, its own listening socket. The sockets
  share the port with SO_REUSEPORT, so the kernel spreads new connections over the workers
  (Linux balances by connection hash; a shared accept queue would let one busy worker take
  most of them).
- The supervisor (the process you started) holds a bound, never-listening SO_REUSEPORT
  socket on the port for its whole life: it picks the port when `--port 0`, fails at once
  when the port is taken, and keeps it ours while a worker restarts. It never accepts.
- Supervision: a worker that exits unexpectedly is started again (after a growing delay if
  it keeps dying right after start, so a broken configuration does not spin the CPU). If a
  worker cannot start at all during the first start-up, everything stops with an error, as
  a single-process edge would.
- Signals to the supervisor: SIGTERM or SIGINT stop the workers gracefully (each stops
  accepting, finishes its requests within SHUTDOWN_TIMEOUT, runs its cleanups); a second
  one kills them. SIGHUP is passed to every worker: each reloads the build.
- Workers ignore SIGINT (Ctrl-C in a terminal reaches the whole process group; the
  supervisor decides) and stop by themselves if the supervisor disappears.

Why fork: the supervisor has no threads and no event loop when it forks, so the children
start clean and quickly, with logging configured and modules imported. Linux only, like
SO_REUSEPORT balancing.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import multiprocessing
import os
import signal
import socket
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess

from aiohttp import web

from edge import serving
from edge.config import Config

log = logging.getLogger("edge.workers")

SHUTDOWN_TIMEOUT = serving.SHUTDOWN_TIMEOUT  # seconds a stopping worker gives in-flight requests
KILL_AFTER = SHUTDOWN_TIMEOUT + 5.0  # then the supervisor stops waiting and kills it
FAST_EXIT = 5.0  # a worker that dies sooner than this after its start is crash-looping
MAX_RESTART_DELAY = 30.0
PARENT_CHECK_INTERVAL = 1.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
READY = b"ready"


def restart_delay(fast_failures: int) -> float:
    """Seconds before restarting a worker that died right after start that many times in a
    row: none for a worker that ran a while, then 0.5, 1, 2, ... up to MAX_RESTART_DELAY."""
    if fast_failures <= 0:
        return 0.0
    return min(MAX_RESTART_DELAY, 0.5 * 2.0 ** (fast_failures - 1))


def reserve_port(host: str, port: int) -> socket.socket:
    """A bound (not listening) SO_REUSEPORT socket on host:port: the port the workers share."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


# --- a worker ---------------------------------------------------------------------------


async def _until_stopped(stop: asyncio.Event, parent_pid: int) -> None:
    """Wait for SIGTERM (`stop`), or for the supervisor to be gone (killed with SIGKILL,
    say): a worker never stays behind as an orphan holding the port."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(PARENT_CHECK_INTERVAL):
                await stop.wait()
        if os.getppid() != parent_pid:
            log.warning("supervisor %d is gone: stopping", parent_pid)
            return


async def serve_worker(config: Config, index: int, ready: Connection, parent_pid: int) -> None:
    """Serve `config` on its shared port until SIGTERM, then stop gracefully."""
    if config.metrics_port:
        # Each worker is its own scrape target (edge.metrics); 0 stays 0: each picks one.
        config = dataclasses.replace(config, metrics_port=config.metrics_port + index)
    runner = serving.make_runner(config)
    await runner.setup()
    try:
        site = web.TCPSite(runner, config.host, config.port, reuse_port=True)
        await site.start()
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        ready.send_bytes(READY)
        ready.close()
        log.info("worker %d (pid %d) serving on %s", index, os.getpid(), site.name)
        await _until_stopped(stop, parent_pid)
        log.info("worker %d (pid %d) stopping", index, os.getpid())
    finally:
        await runner.cleanup()


def _worker_main(
    config: Config,
    index: int,
    ready: Connection,
    parent_pid: int,
    inherited: tuple[socket.socket, int, int],
) -> None:
    """The forked child: undo what it inherited from the supervisor, then serve."""
    # Without this, the child's signals would be written into the supervisor's pipe.
    signal.set_wakeup_fd(-1)
    reservation, *pipe = inherited
    # detach(): this process's copy of the socket object must not close the fd number
    # again later, when it may belong to something else.
    for fd in (reservation.detach(), *pipe):
        with contextlib.suppress(OSError):
            os.close(fd)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # until the loop's handler is installed
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Until the directory installs its reload handler: a SIGHUP must never kill a worker.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        asyncio.run(serve_worker(config, index, ready, parent_pid))
    except Exception as exc:
        log.critical("worker %d (pid %d) failed: %s", index, os.getpid(), exc, exc_info=True)
        raise SystemExit(1) from None


# --- the supervisor ---------------------------------------------------------------------


@dataclass
class Slot:
    """One of the N worker places and the process currently in it."""

    index: int
    process: BaseProcess | None = None
    ready: Connection | None = None  # read end, until the worker says it is serving
    started_at: float = 0.0
    serving: bool = False
    fast_failures: int = 0
    restart_at: float | None = None  # when to start it again, after it died

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.exitcode is None


class Supervisor:
    def __init__(self, config: Config, reservation: socket.socket, wake: tuple[int, int]) -> None:
        self.config = config
        self.slots = [Slot(i) for i in range(config.workers)]
        self._context = multiprocessing.get_context("fork")
        self._inherited = (reservation, *wake)
        self._wake = wake[0]  # read end of the signal pipe
        self._all_served = False  # every worker has served once

    def start(self, slot: Slot) -> None:
        receive, send = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=_worker_main,
            args=(self.config, slot.index, send, os.getpid(), self._inherited),
            name=f"edge-worker-{slot.index}",
        )
        process.start()
        send.close()  # the child has its copy; ours would keep `receive` from seeing EOF
        slot.process, slot.ready = process, receive
        slot.started_at, slot.serving, slot.restart_at = time.monotonic(), False, None

    def signals(self) -> list[int]:
        """Signal numbers that arrived since the last call (set_wakeup_fd writes them)."""
        received: list[int] = []
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._wake, 64):
                received.extend(chunk)
        return received

    def run(self) -> None:
        """Start the workers, keep them running, return once they stopped on request."""
        for slot in self.slots:
            self.start(slot)
        while True:
            waiting: list[Connection | int] = [self._wake]
            for slot in self.slots:
                if slot.ready is not None:
                    waiting.append(slot.ready)
                if slot.process is not None:
                    # Until _reap has handled its exit (exitcode is not asked here: it may
                    # reap a dead worker, whose sentinel would then never wake us again).
                    waiting.append(slot.process.sentinel)
            due = [s.restart_at for s in self.slots if s.restart_at is not None]
            timeout = max(0.0, min(due) - time.monotonic()) if due else None
            woken = wait(waiting, timeout)
            for signum in self.signals():
                if signum in STOP_SIGNALS:
                    log.info("%s: stopping the workers", signal.Signals(signum).name)
                    self.stop()
                    return
                if signum == signal.SIGHUP:
                    self.forward(signal.SIGHUP)
            for slot in self.slots:
                if slot.process is not None and slot.process.sentinel in woken:
                    # The sentinel says it ended; the kernel may take a moment more before
                    # it can be reaped (its files close first), so wait for that here.
                    slot.process.join()
                self._check(slot)

    def _check(self, slot: Slot) -> None:
        if slot.ready is not None and slot.ready.poll():
            with contextlib.suppress(EOFError, OSError):
                slot.serving = slot.ready.recv_bytes() == READY
            slot.ready.close()
            slot.ready = None
            if not self._all_served and all(s.serving for s in self.slots):
                self._all_served = True
                host = self.config.host
                log.info(
                    "%d workers serving on http://%s:%d",
                    len(self.slots),
                    f"[{host}]" if ":" in host else host,  # an IPv6 address, as in a URL
                    self.config.port,
                )
        process = slot.process
        if process is not None and process.exitcode is not None:
            self._reap(slot, process)
        if slot.restart_at is not None and time.monotonic() >= slot.restart_at:
            self.start(slot)

    def _reap(self, slot: Slot, process: BaseProcess) -> None:
        process.join()
        status, pid = process.exitcode, process.pid
        process.close()  # frees its sentinel fd now, not whenever it is collected
        slot.process = None
        if slot.ready is not None:
            slot.ready.close()
            slot.ready = None
        if not self._all_served:
            self.stop()
            raise SystemExit(
                f"edge: worker {slot.index} exited with status {status} during start-up; "
                "see its log above"
            )
        ran = time.monotonic() - slot.started_at
        slot.fast_failures = slot.fast_failures + 1 if ran < FAST_EXIT else 0
        delay = restart_delay(slot.fast_failures)
        log.error(
            "worker %d (pid %s) exited with status %s after %.1f s; restarting it in %.1f s",
            slot.index,
            pid,
            status,
            ran,
            delay,
        )
        slot.restart_at = time.monotonic() + delay

    def forward(self, signum: int) -> None:
        for slot in self.slots:
            if slot.alive and slot.process is not None and slot.process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(slot.process.pid, signum)

    def stop(self) -> None:
        """SIGTERM every worker, wait for them (KILL_AFTER at most, or until a second stop
        signal), then SIGKILL what is left."""
        self.forward(signal.SIGTERM)
        deadline = time.monotonic() + KILL_AFTER
        while (running := [s.process for s in self.slots if s.alive]) and (
            remaining := deadline - time.monotonic()
        ) > 0:
            wait([self._wake, *(p.sentinel for p in running if p is not None)], remaining)
            if any(signum in STOP_SIGNALS for signum in self.signals()):
                log.warning("second stop signal: killing the workers")
                break
        else:
            if running:
                log.warning(
                    "%d worker(s) still running %.0f s after SIGTERM: killing them",
                    len(running),
                    KILL_AFTER,
                )
        self.forward(signal.SIGKILL)
        for slot in self.slots:
            if slot.process is not None:
                slot.process.join()
            if slot.ready is not None:
                slot.ready.close()
                slot.ready = None


def supervise(config: Config) -> None:
    """Run `config.workers` workers on one port until SIGTERM/SIGINT (logging configured)."""
    # config.load refuses several workers without --redis-url: a key's limit holds across
    # every worker (docs/spec/api-decisions.md, Rate limits), which memory in one process
    # cannot do.
    reservation = reserve_port(config.host, config.port)
    config = dataclasses.replace(config, port=reservation.getsockname()[1])
    # Made once here, so that N workers starting at once never race to create it.
    config.resolved_secret()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    # The handlers do nothing: set_wakeup_fd writes each signal's number to the pipe, which
    # wakes the supervisor's wait() and tells it which signal came.
    previous_wakeup = signal.set_wakeup_fd(wake_write)
    handled = (*STOP_SIGNALS, signal.SIGHUP)
    previous = {signum: signal.signal(signum, lambda *_: None) for signum in handled}
    try:
        Supervisor(config, reservation, (wake_read, wake_write)).run()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(previous_wakeup)
        os.close(wake_read)
        os.close(wake_write)
        reservation.close()
