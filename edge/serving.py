"""Running the app: aiohttp's runner, with the API's answer to requests aiohttp cannot parse.

aiohttp answers a request its HTTP parser refuses (a line over 8190 bytes, a malformed
header, an unknown method) by itself, before any middleware runs: a plain-text 400 that
quotes the offending bytes back, which may be the sender's own `Authorization` header,
with no JSON body and no `X-Request-Id`. A client that logs the bodies of its errors would
log its key. `EdgeRunner` serves the app through a request handler whose error answer is
the API's own: the one JSON error body, a request id, nothing of what was sent.

aiohttp has no setting for this: the handler class is chosen by `web.Server.__call__`
(the protocol factory), and the server by `AppRunner._make_server`. Both are overridden
here, and only here; the tests run the edge as a process to check the answer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Coroutine
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from edge.app import create_app
from edge.config import Config
from edge.http.accesslog import JsonAccessLogger
from edge.http.errors import error_body
from edge.http.middlewares import JSON, REQUEST_ID_HEADER, new_request_id

log = logging.getLogger("edge")

SHUTDOWN_TIMEOUT = 10.0  # seconds a stopping edge gives the requests in flight

UNPARSABLE = (
    "the request is not valid HTTP/1.1 (a request line or header over 8190 bytes, an "
    "unknown method, or a malformed header); nothing of it was read"
)


def unparsable_response(status: int) -> web.Response:
    """The API's answer to a request the HTTP parser refused (status 400), or to a failure
    outside the app (500): the one error body, nothing of the request in it."""
    rid = new_request_id()
    if status >= 500:
        body = error_body("internal_error", "internal error", None, rid)
        status = 500
    else:
        body = error_body("invalid_parameter", UNPARSABLE, None, rid)
        status = 400
    response = web.Response(
        body=body,
        status=status,
        content_type=JSON,
        headers={"Cache-Control": "no-store", REQUEST_ID_HEADER: rid},
    )
    response.force_close()  # the connection's state is unknown after a refused request
    return response


class EdgeRequestHandler(RequestHandler):
    """aiohttp's connection handler, answering what it cannot parse as the API does."""

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        # aiohttp's own first: it logs (edge.logs keeps the client's bytes out of the log)
        # and refuses to answer on a connection where a response has begun.
        super().handle_error(request, status, exc, message)
        return unparsable_response(status)


class EdgeServer(web.Server):
    """`web.Server` whose connections use EdgeRequestHandler."""

    def __call__(self) -> RequestHandler:
        return EdgeRequestHandler(self, loop=self._loop, **self._kwargs)


class EdgeRunner(web.AppRunner):
    """`web.AppRunner` serving through EdgeServer."""

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # The same server (state, handler, request factory), with EdgeServer's factory.
        server.__class__ = EdgeServer
        return server


def make_runner(config: Config, app: web.Application | None = None) -> EdgeRunner:
    """The runner of the edge app for `config`, access log on the `edge.access` logger."""
    return EdgeRunner(
        app if app is not None else create_app(config),
        access_log=logging.getLogger("edge.access"),
        access_log_class=JsonAccessLogger,
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
