"""What every long-lived process (the edge, the sync worker, the webhook delivery worker)
does alike: stop on SIGTERM or SIGINT, and serve its operators' port (GET /metrics, and
/healthz where it has one) beside its work.

Here, below all of them (none may import another), because the operators' side of a
process is a contract with their supervisor and their scraper, like the log line's
(contract.logformat): one way to stop, one way to be scraped.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator

from aiohttp import web

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.asynccontextmanager
async def stop_on_signals() -> AsyncIterator[asyncio.Event]:
    """An event set by the first SIGTERM or SIGINT while the context is entered; the
    handlers are removed on leaving it (a later signal then acts as it would by default)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop.set)
    try:
        yield stop
    finally:
        for signum in STOP_SIGNALS:
            with contextlib.suppress(Exception):  # the loop may be closing already
                loop.remove_signal_handler(signum)


@contextlib.asynccontextmanager
async def serve_side_app(
    app: web.Application, host: str, port: int
) -> AsyncIterator[tuple[str, int]]:
    """Serve `app` on host:port while the context is entered; yields the host as a URL
    writes it (`127.0.0.1`, `[::1]`) and the port bound (port 0 picks a free one). No
    access log: a scraper's requests every few seconds would drown the process's own
    lines. OSError when the port cannot be had."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        address, bound = runner.addresses[0][:2]
        yield (f"[{address}]" if ":" in address else address), bound
    finally:
        await runner.cleanup()
