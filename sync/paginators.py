"""How a window's pages are walked: one paginator per pagination kind, and the one loop
that drives them (after singer_sdk.pagination).

A connector declares its kind (`ConnectorSpec.pagination`), builds the request for a page
state and parses an answer into a `Page`; its paginator reads that Page for the next
page's state, and `pages` bounds the walk: at most `max_pages` requests (`page_limit`), no
page state twice (a cursor or link that loops: `malformed_response`), no page started
after the run's deadline.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sync.clock import Clock
from sync.connectors.base import CallContext, Connector, Page, Send
from sync.errors import MalformedResponse, PageLimit, RunDeadline
from sync.model import Window
from sync.spec import Pagination


class Paginator(Protocol):
    """The first page's state, and the state of the page after `page` (None: the window
    is complete)."""

    @property
    def first(self) -> Any: ...

    def following(self, state: Any, page: Page) -> Any: ...


class OnePage:
    """NONE: one answer holds the whole window (the window bounds the result set)."""

    first = None

    def following(self, state: Any, page: Page) -> None:
        return None


class Offset:
    """OFFSET: the state is how many records came before the page (`Page.records` of each
    answer), until an empty page or the window's `Page.total`."""

    first = 0

    def following(self, state: int, page: Page) -> int | None:
        offset = state + page.records
        if page.records and page.total is not None and offset < page.total:
            return offset
        return None


class Named:
    """PAGE, CURSOR and WATERMARK: the answer names the next page's state (a next-page
    link, an opaque cursor, the highest id so far) as `Page.next`, None at the end; the
    connector puts it in the next request."""

    first = None

    def following(self, state: Any, page: Page) -> Any:
        return page.next


PAGINATORS: Mapping[Pagination, Paginator] = {
    Pagination.NONE: OnePage(),
    Pagination.OFFSET: Offset(),
    Pagination.PAGE: Named(),
    Pagination.CURSOR: Named(),
    Pagination.WATERMARK: Named(),
}


@dataclass(frozen=True, slots=True)
class PageLimits:
    """What bounds the walk of one window: pages per window, and the run's deadline (on
    `clock.monotonic()`; None: none)."""

    max_pages: int
    clock: Clock
    deadline: float | None = None

    def past_deadline(self) -> bool:
        return self.deadline is not None and self.clock.monotonic() >= self.deadline


async def pages(
    connector: Connector, ctx: CallContext, send: Send, window: Window, limits: PageLimits
) -> AsyncIterator[Page]:
    """Every page of `window`, parsed, in order. Raises PageLimit past `max_pages` pages,
    MalformedResponse for a page state seen before, RunDeadline when the deadline passed
    between pages, and what sending and parsing raise."""
    network = ctx.spec.network
    paginator = PAGINATORS[ctx.spec.pagination]
    state = paginator.first
    seen: set[bytes] = set()
    for number in range(limits.max_pages):
        if number and limits.past_deadline():
            raise RunDeadline(f"{network}: the run reached its time limit within a window")
        response = await send(connector.request(ctx, window, state))
        page = connector.parse(ctx, window, state, response)
        yield page
        state = paginator.following(state, page)
        if state is None:
            return
        # A digest, not the state: a hostile cursor may be megabytes long.
        digest = hashlib.sha256(repr(state).encode()).digest()
        if digest in seen:
            raise MalformedResponse(f"{network}: the pages loop (a page state came back)")
        seen.add(digest)
    raise PageLimit(f"{network}: more than {limits.max_pages} pages for one window")
