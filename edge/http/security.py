"""Headers every answer of the edge carries, whatever made it: the API, the site, a static
file, an error, a 304.

- `X-Content-Type-Options: nosniff`: a browser takes each answer for the type it declares,
  so a JSON body that quotes a request parameter is never run as a script or a page.
- `Server: affdir`: aiohttp would name itself and its version (and Python's), which tells a
  scanner which advisories to try and tells a client nothing it needs.

They are set from aiohttp's public `on_response_prepare` signal, which runs for every
response the application prepares, whichever middleware or handler made it or raised it;
aiohttp only fills in its own `Server` when none is set. Answers made outside the
application (a request its HTTP parser refused) get them from `edge.http.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

SECURITY_HEADERS: Mapping[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "Server": "affdir",
}


async def stamp_security_headers(_request: web.Request, response: web.StreamResponse) -> None:
    """The `on_response_prepare` handler: SECURITY_HEADERS on `response`."""
    response.headers.update(SECURITY_HEADERS)


def install(app: web.Application) -> None:
    """Stamp SECURITY_HEADERS on every answer of `app`."""
    app.on_response_prepare.append(stamp_security_headers)
