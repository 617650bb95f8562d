"""`python tests/support/slowedge.py ARGS`: `python -m edge ARGS` with one more route,
`GET /slow?s=N`, which answers after N seconds: a request in flight for the shutdown tests."""

from __future__ import annotations

import asyncio
import logging
import sys

from aiohttp import web

from edge import __main__ as edge_main
from edge import serving
from edge.config import Config

SLOW_STARTED = "slowedge: a slow request is in its handler"


def create_app(config: Config) -> web.Application:
    app = make_app(config)

    async def slow(request: web.Request) -> web.Response:
        # The test waits for this line of the edge's log (in its format, at any level it
        # shows) before it signals the edge.
        logging.getLogger("slowedge").warning(SLOW_STARTED)
        await asyncio.sleep(float(request.query["s"]))
        return web.json_response({"data": "slow"})

    app.router.add_get("/slow", slow)
    return app


make_app = serving.create_app

if __name__ == "__main__":
    # The runner's factory, in this process and its (forked) workers. Only when run: the
    # tests import SLOW_STARTED from here and keep the edge's own factory.
    serving.create_app = create_app
    sys.exit(edge_main.main(sys.argv[1:]))
