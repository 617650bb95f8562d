"""What the fake networks of tests/sync/fakes share: the window check every network makes,
and its refusal of credentials as the recordings show it."""

from __future__ import annotations

import datetime as dt

from aiohttp import web
from sync_support import NetState, recording


def admit(st: NetState, first: dt.datetime, last: dt.datetime, days: int) -> bool:
    """Record the window asked for (first and last moment, inclusive); False, counted as
    too long, when it spans more than `days`."""
    st.windows.append((first, last))
    if last + dt.timedelta(seconds=1) - first > dt.timedelta(days=days):
        st.too_long += 1
        return False
    return True


def refused(network: str, status: int = 401, name: str = "bad_credentials.json") -> web.Response:
    """The network's own answer to credentials it does not accept (recorded)."""
    return web.Response(
        status=status, body=recording(network, name), content_type="application/json"
    )
