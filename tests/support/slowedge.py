"""`python tests/support/slowedge.py ARGS`: `python -m edge ARGS` with one more route,
`GET /slow?s=N`, which answers after N seconds: a request in flight for the shutdown tests."""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web

from edge import __main__ as edge_main
from edge import serving
from edge.config import Config


def create_app(config: Config) -> web.Application:
    app = make_app(config)

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(float(request.query["s"]))
        return web.json_response({"data": "slow"})

    app.router.add_get("/slow", slow)
    return app


make_app = serving.create_app
serving.create_app = create_app  # the runner's factory, in this process and its workers

if __name__ == "__main__":
    sys.exit(edge_main.main(sys.argv[1:]))
