"""Request ids: every request gets one, named by its log lines; every answer carries it
(`X-Request-Id`), errors included, but a public one (`edge.http.publiccache`). The request
id step is the outermost of the request steps (edge.app)."""

from __future__ import annotations

import os
import random
from contextvars import ContextVar

from aiohttp import web
from aiohttp.typedefs import Handler

from edge import appkeys
from edge.http.publiccache import is_public

REQUEST_ID_HEADER = "X-Request-Id"

# The id of the request being handled, for the log lines written while it is (edge.logs):
# each request runs in its own task, whose context is its own.
CURRENT_REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)

# Request ids must be unique, not secret: 96 bits from a generator seeded by the OS (per
# process: reseeded in every forked child) cost no system call per request, where
# os.urandom is one `getrandom` each time.
_ids = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _ids.seed(os.urandom(32)))


def new_request_id() -> str:
    """A request id: `req_` and 96 random bits as 24 hex digits."""
    return f"req_{_ids.getrandbits(96):024x}"


@web.middleware
async def request_id_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The request id step: a new id for the request, named by the log lines written while
    it is handled (edge.logs) and sent with its answer, errors included (the steps below
    turn every failure into an answer), but for a public answer: a shared cache would
    replay it to everyone (edge.http.publiccache)."""
    request[appkeys.REQUEST_ID] = rid = new_request_id()
    CURRENT_REQUEST_ID.set(rid)
    response = await handler(request)
    # A streamed answer (an export) sent its headers, this one included, when it began.
    if not is_public(response.headers) and not response.prepared:
        response.headers[REQUEST_ID_HEADER] = rid
    return response
