"""Rakuten Advertising Events, as pubhelp.rakutenadvertising.com documents it: a bare JSON
array of events, numbered pages of `limit`, filters by transaction or process date."""

from __future__ import annotations

import datetime as dt
from typing import Any

from aiohttp import web
from fakes.kit import admit, refused
from sync_support import NetState, json_response, shown, utc

CREDENTIALS = {"accessToken": "PLANTED-rakuten-token-4e21"}
MAX_DAYS = 7
ID = "etransaction_id"
FORM = "%Y-%m-%d %H:%M:%S"


def when(text: str) -> dt.datetime:
    """An event's Date.toString() date."""
    return dt.datetime.strptime(text[4:33], "%b %d %Y %H:%M:%S GMT%z")


async def handle(request: web.Request, st: NetState) -> web.Response:
    if st.reject_auth or request.headers.get("Authorization") != (
        f"Bearer {CREDENTIALS['accessToken']}"
    ):
        return refused("rakuten")
    q = request.query
    date = "process_date" if "process_date_start" in q else "transaction_date"
    first, last = utc(q[f"{date}_start"], FORM), utc(q[f"{date}_end"], FORM)
    if not admit(st, first, last, MAX_DAYS):
        return json_response({"errors": [{"message": "date range too large"}]}, 400)
    # A `__` member (never sent) dates a record whose sent date is poisoned.
    hits = [r for r in st.records if first <= when(r.get(f"__{date}", r[date])) <= last]
    limit, page = int(q["limit"]), int(q.get("page", "1"))
    return json_response(shown(hits[(page - 1) * limit : page * limit]))


def js_date(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%a %b %d %Y %H:%M:%S GMT+0000 (UTC)")


def _set(name: str, value: Any):
    def change(record: dict[str, Any]) -> None:
        record[f"__{name}"] = record[name]  # where the fake still files it
        record[name] = value

    return change


# Records whose values no commission may hold, and what the refusal says.
POISONS = (
    ("t-1006", _set("commissions", "1e309"), "commission"),
    ("t-1006", _set("currency", "XYZ"), "currency"),
    ("t-1006", _set("transaction_date", "Thu Jan 01 2099 00:00:00 GMT+0000 (UTC)"), "future"),
    ("t-1006", _set("transaction_date", "yesterday"), "transaction date"),
)

PAGE_SIZE = 2
FLIP = None  # Events sends no status


def read_id(record: dict[str, Any]) -> object:
    return record[ID]
