"""Running the app: aiohttp's runner, with the API's answer to requests aiohttp cannot parse.

aiohttp answers a request its HTTP parser refuses (a line over 8190 bytes, a malformed
header, an unknown method) by itself, before any middleware runs: a plain-text 400 that
quotes the offending bytes back, which may be the sender's own `Authorization` header,
with no JSON body and no `X-Request-Id`. A client that logs the bodies of its errors would
log its key. `EdgeRunner` serves the app through connections whose error answer is the
API's own: the one JSON error body, a request id, nothing of what was sent.

aiohttp has no setting for this; its public parts are enough: `web.RequestHandler` (a
connection) answers such a request with its `handle_error`, and a site (`web.TCPSite`...)
makes its connections with the runner's `server`, which it calls as its protocol factory.
`EdgeRunner.server` is that factory, making `EdgeRequestHandler`s for aiohttp's server.
tests/edge/scale/test_unparsable.py checks the answer on an edge run as a process, whatever the
aiohttp version.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

from edge.app import create_app
from edge.config import Config
from edge.http.accesslog import LOGGER, AccessLog
from edge.http.errors import protocol_error_response
from edge.logs import log_format

log = logging.getLogger("edge")

SHUTDOWN_TIMEOUT = 10.0  # seconds a stopping edge gives the requests in flight


class EdgeRequestHandler(web.RequestHandler):
    """aiohttp's connection handler, answering what it cannot parse as the API does."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        # aiohttp's own first: it logs (edge.logs keeps the client's bytes out of the log)
        # and refuses to answer on a connection where a response has begun.
        super().handle_error(request, status, exc, message)
        return protocol_error_response(status)


class EdgeConnections:
    """The protocol factory of an EdgeRunner's sites: an `EdgeRequestHandler` per
    connection, served by aiohttp's `server` (its request handler and request factory,
    its list of connections for a graceful shutdown), made with `handler_args`, what
    aiohttp's own factory would pass."""

    def __init__(self, server: web.Server, handler_args: dict[str, Any]) -> None:
        self.server = server
        self.handler_args = handler_args

    def __call__(self) -> web.RequestHandler:
        loop = asyncio.get_running_loop()
        # `debug` as aiohttp's application sets it by default: the loop's.
        return EdgeRequestHandler(
            self.server, loop=loop, debug=loop.get_debug(), **self.handler_args
        )


class EdgeRunner(web.AppRunner):
    """`web.AppRunner` whose sites serve through EdgeRequestHandler connections.

    `handler_args` are the keyword arguments of every connection (access log and its
    class); `access` is the access log they write to, closed (its last lines written) once
    the runner has stopped; `shutdown_timeout` and the rest go to AppRunner."""

    def __init__(
        self,
        app: web.Application,
        *,
        handler_args: dict[str, Any],
        access: AccessLog | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, **handler_args, **kwargs)
        self.handler_args = handler_args
        self.access = access

    async def cleanup(self) -> None:
        """Stop as AppRunner does (requests in flight end, each logged), then write the
        access log's last lines."""
        try:
            await super().cleanup()
        finally:
            if self.access is not None:
                self.access.close()

    @property
    def server(self) -> web.Server | None:
        """aiohttp's server (after `setup`) behind the factory of EdgeRequestHandlers."""
        server = super().server
        if server is None:
            return None
        return EdgeConnections(server, self.handler_args)  # type: ignore[return-value]


def make_runner(config: Config, app: web.Application | None = None) -> EdgeRunner:
    """The runner of the edge app for `config`; with `--access-log`, its lines go to stderr
    through an `AccessLog`."""
    access = None
    handler_args: dict[str, Any] = {"access_log": None}
    if config.access_log:
        json_lines = log_format(config, sys.stderr) == "json"
        access = AccessLog(sys.stderr.buffer, json_lines=json_lines)
        # aiohttp logs only with a logger given; the lines bypass it (edge.http.accesslog).
        handler_args = {
            "access_log": logging.getLogger(LOGGER),
            "access_log_class": access.logger_class(),
        }
    return EdgeRunner(
        app if app is not None else create_app(config),
        handler_args=handler_args,
        access=access,
        # aiohttp waits this long for a request in flight, then as long again after asking
        # it to stop: half each, so a stopping edge is done within SHUTDOWN_TIMEOUT.
        shutdown_timeout=SHUTDOWN_TIMEOUT / 2,
    )


def serve(config: Config) -> None:
    """Serve `config` in this process until SIGINT or SIGTERM, then stop gracefully.

    The signals are taken from the start: one that comes while the store connects or the
    build loads stops the start-up and cleans up (no KeyboardInterrupt traceback)."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, _on_stop_signal, stop, signum)
        runner = make_runner(config)
        try:
            site = await _unless_stopped(_start(runner, config), stop)
            if site is not None:
                log.info("Running on %s (Ctrl-C to stop)", _url(site, runner))
                await stop.wait()
            log.info("stopping")
        finally:
            await runner.cleanup()

    asyncio.run(main())


def _on_stop_signal(stop: asyncio.Event, signum: int) -> None:
    # The first stops gracefully; a second quits now, as the supervisor of several workers
    # kills them on a second signal (requests in flight are cut, cleanups skipped).
    if not stop.is_set():
        stop.set()
        return
    log.warning("second stop signal: quitting now")
    logging.shutdown()
    os._exit(128 + signum)


async def _start(runner: web.AppRunner, config: Config) -> web.TCPSite:
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port)
    await site.start()
    return site


async def _unless_stopped(
    starting: Coroutine[Any, Any, web.TCPSite], stop: asyncio.Event
) -> web.TCPSite | None:
    """The started site, or None when `stop` is set first (the start-up is cancelled)."""
    start = asyncio.ensure_future(starting)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({start, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if start.done():
        return start.result()  # raises what the start-up raised
    start.cancel()
    try:
        await start
    except asyncio.CancelledError:
        pass
    except Exception as exc:  # asked to stop: what the cancelled start-up raised is noise
        log.info("start-up stopped: %s", exc)
    return None


def _url(site: web.TCPSite, runner: web.AppRunner) -> str:
    # With --port 0 the name says port 0: the addresses say which one was given.
    addresses = runner.addresses
    if addresses and isinstance(addresses[0], tuple):
        host, port = addresses[0][:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}"
    return site.name
