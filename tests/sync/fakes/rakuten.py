"""Rakuten Advertising Events' fake, as pubhelp.rakutenadvertising.com documents the API: a
bare JSON array of events (one per SKU, no status), numbered pages of `limit`, filters by
transaction or process date; a return is a new event with negative amounts."""

from __future__ import annotations

import datetime as dt

from aiohttp import web

from fakes.base import (
    Fake,
    Late,
    NetState,
    Record,
    Reversal,
    dumps,
    json_response,
    refused,
    setter,
    shown,
    utc,
)

CREDENTIALS = {"accessToken": "PLANTED-rakuten-token-4e21"}
FORM = "%Y-%m-%d %H:%M:%S"
# JavaScript's Date.toString(), as Events writes its dates.
JS = "%a %b %d %Y %H:%M:%S GMT+0000 (UTC)"


def when(text: str) -> dt.datetime:
    """An event's Date.toString() date."""
    return dt.datetime.strptime(text[4:33], "%b %d %Y %H:%M:%S GMT%z")


def js_date(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime(JS)


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if not st.authorised(request, f"Bearer {CREDENTIALS['accessToken']}"):
        return refused("rakuten")
    q = request.query
    date = "process_date" if "process_date_start" in q else "transaction_date"
    first, last = utc(q[f"{date}_start"], FORM), utc(q[f"{date}_end"], FORM)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"errors": [{"message": "date range too large"}]}, 400)
    # A `__` member (never sent) files a record whose sent date is poisoned.
    hits = [r for r in st.records if first <= when(r.get(f"__{date}", r[date])) <= last]
    limit, page = int(q["limit"]), int(q.get("page", "1"))
    return json_response(shown(hits[(page - 1) * limit : page * limit]))


def returned(records: list[Record], record: Record, now: dt.datetime) -> None:
    """A return: a new event of the same order and SKU, negative, processed now."""
    records.append(
        {
            **record,
            "etransaction_id": f"{record['etransaction_id']}-r",
            "sale_amount": -record["sale_amount"],
            "commissions": -record["commissions"],
            "quantity": -record["quantity"],
            "process_date": js_date(now),
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps(records)


FAKE = Fake(
    network="rakuten",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=7,
    id_field="etransaction_id",
    # Events sends no status at all: no word of a record can flip. The suite's flip case
    # cannot hold for this network until a fake may declare none.
    flip=None,  # a change of type is another row, never a status word changed
    sample_id="t-1006",
    set_commission=setter("commissions"),
    amended=("4.50", "4.50"),
    reversal=Reversal("t-1006", returned, "t-1006-r", "pending", "-5.00", names_original=False),
    page_size=2,
    paged=True,
    change_dates={"reversal": ("process_date", JS)},
    drop_currency=lambda r: r.pop("currency"),
    truncated=b'[{"etransaction_id": "t-1',
    answer=answer,
    late=Late(("process_date", "transaction_date"), JS, frozenset({"reversal"}), reversal_row=True),
)
