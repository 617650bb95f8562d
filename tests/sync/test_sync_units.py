"""Pure parts: the planner, amounts and dates, status words, Retry-After, the limiter."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal

import pytest
from support.clock import FakeClock
from sync_support import max_in_any_period

from accounts.statusmap import load_status_map
from contract import commission
from store.base import VALUE_FIELDS
from sync.connectors import CONNECTORS
from sync.connectors.base import CallContext, Credentials, Fields, transaction
from sync.http import HttpRequest, RetryPolicy, backoff_delay, retry_after_seconds
from sync.model import Position, Window
from sync.planner import cut, plan, split
from sync.ratelimit import SlidingLimiter, credential_key
from sync.runner import syncing
from sync.spec import AmountFormat, Rate
from sync.values import ValueProblem, decode_json, optional_text, parse_amount, parse_timestamp

NOW = dt.datetime(2026, 3, 15, 12, 30, 45, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
SECOND = dt.timedelta(seconds=1)


def test_windows_are_cut_to_the_largest_window_and_cover_the_range_once():
    windows = cut(NOW - 100 * DAY, NOW, 31 * DAY, SECOND)
    assert all(w.length <= 31 * DAY for w in windows)
    assert windows[0].start == NOW - 100 * DAY and windows[-1].end == NOW
    assert all(a.end == b.start for a, b in itertools.pairwise(windows))


def test_day_granular_windows_fall_on_midnight():
    planned = plan(
        None,
        NOW,
        max_window=31 * DAY,
        granularity=DAY,
        rescan=60 * DAY,
        horizon=730 * DAY,
        backfill=90 * DAY,
    )
    for p in planned[:-1]:
        assert p.window.end.time() == dt.time(0)
        assert p.window.length <= 31 * DAY
    assert planned[0].window.start.time() == dt.time(0)


def test_a_first_run_only_fetches_forward_and_a_later_one_rescans_first():
    kwargs = dict(
        max_window=31 * DAY,
        granularity=SECOND,
        rescan=60 * DAY,
        horizon=730 * DAY,
        backfill=90 * DAY,
    )
    first = plan(None, NOW, **kwargs)
    assert all(p.advances for p in first)
    later = plan(Position(NOW - DAY), NOW, **kwargs)
    rescans = [p for p in later if not p.advances]
    forwards = [p for p in later if p.advances]
    assert rescans[0].window.start == NOW - 60 * DAY and rescans[-1].window.end == NOW - DAY
    assert forwards == [forwards[0]] and forwards[0].window == Window(
        NOW - DAY, NOW.replace(microsecond=0)
    )


def test_the_backfill_never_reaches_past_the_network_horizon():
    planned = plan(
        None,
        NOW,
        max_window=45 * DAY,
        granularity=SECOND,
        rescan=DAY,
        horizon=100 * DAY,
        backfill=3000 * DAY,
    )
    assert planned[0].window.start == NOW - 100 * DAY


CHANGE_KWARGS = dict(
    max_window=31 * DAY,
    granularity=SECOND,
    rescan=0 * DAY,
    horizon=730 * DAY,
    backfill=90 * DAY,
    changes=["validation", "amendment"],
    change_lookback=31 * DAY,
)


def test_change_feeds_are_read_over_the_lookback_before_the_rescan_and_forward():
    later = plan(Position(NOW - DAY), NOW, **CHANGE_KWARGS)
    feeds = [p.window for p in later if p.window.feed]
    assert [w.feed for w in feeds] == ["validation", "amendment"]  # one window each
    for feed in ("validation", "amendment"):
        mine = [w for w in feeds if w.feed == feed]
        assert mine[0].start == NOW - 31 * DAY and mine[-1].end == NOW.replace(microsecond=0)
        assert all(a.end == b.start for a, b in itertools.pairwise(mine))
    assert not any(p.advances for p in later if p.window.feed)
    assert [p.window.feed for p in later if p.advances] == [""]
    # A first run reads every transaction as it stands: no change feed.
    assert not [p for p in plan(None, NOW, **CHANGE_KWARGS) if p.window.feed]


def test_a_lagging_position_widens_the_change_windows_never_past_the_horizon():
    lagging = plan(Position(NOW - 200 * DAY), NOW, **CHANGE_KWARGS)
    assert min(p.window.start for p in lagging if p.window.feed) == NOW - 200 * DAY
    lost = plan(Position(NOW - 5000 * DAY), NOW, **CHANGE_KWARGS)
    assert min(p.window.start for p in lost if p.window.feed) == NOW - 730 * DAY


def test_a_feed_read_by_the_forward_windows_gets_none_of_its_own():
    planned = plan(Position(NOW - DAY), NOW, **{**CHANGE_KWARGS, "changes": ["", "locking"]})
    assert {p.window.feed for p in planned} == {"", "locking"}
    assert [p.window.feed for p in planned if p.advances] == [""]


def test_a_split_window_keeps_its_feed():
    halves = split(Window(NOW - 4 * DAY, NOW, "locking"), DAY)
    assert halves is not None and {h.feed for h in halves} == {"locking"}


def test_split_halves_on_the_granularity_and_stops():
    window = Window(NOW - 4 * DAY, NOW)
    halves = split(window, DAY)
    assert halves is not None and halves[0].end.time() == dt.time(0)
    assert split(Window(NOW - DAY, NOW), DAY) is None
    assert split(Window(NOW - dt.timedelta(seconds=90), NOW), SECOND) is None


@pytest.mark.parametrize(
    ("value", "fmt", "text"),
    [
        ("6.00", AmountFormat.STRING, "6.00"),
        ("-7.78", AmountFormat.STRING, "-7.78"),
        (Decimal("85.20"), AmountFormat.NUMBER, "85.20"),
        (60, AmountFormat.NUMBER, "60"),
        (1250, AmountFormat.CENTS, "12.50"),
        (-1250, AmountFormat.CENTS, "-12.50"),
        (5, AmountFormat.CENTS, "0.05"),
        ("+3.5", AmountFormat.STRING, "3.5"),
    ],
)
def test_amounts_stay_exact_and_signed(value, fmt, text):
    assert parse_amount(value, fmt) == text


@pytest.mark.parametrize("value", [None, 4.26, "1e3", "abc", True, "12.5.1"])
def test_amounts_that_are_not_exact_numbers_are_refused(value):
    with pytest.raises(ValueProblem):
        parse_amount(value, AmountFormat.STRING)


@pytest.mark.parametrize(
    ("value", "text"),
    [("  AB-1 ", "AB-1"), ("", None), ("   ", None), (None, None), (True, None), (1234, "1234"),
     ("Prog\x00ramme", "Prog\ufffdramme")],
)  # fmt: skip
def test_text_fields_are_trimmed_and_a_nul_is_replaced_not_dropped(value, text):
    # No store keeps a NUL: the record is kept (a commission is never lost to its label).
    assert optional_text(value) == text


def test_json_numbers_never_become_floats():
    assert decode_json(b'{"a": 85.20}') == {"a": Decimal("85.20")}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("2026-01-03T10:12:00", "2026-01-03T10:12:00Z"),
        ("2026-01-08T15:20:00-08:00", "2026-01-08T23:20:00Z"),
        ("2026-01-02 10:00:00", "2026-01-02T10:00:00Z"),
        ("02/01/2026 09:30:00", "2026-01-02T09:30:00Z"),
        (1767613200, "2026-01-05T11:40:00Z"),
    ],
)
def test_dates_are_read_as_utc(value, text):
    assert parse_timestamp(value) == text


def test_an_unmapped_word_is_unknown_never_a_guess():
    map_status = load_status_map().status
    assert map_status("kwanko", "pending_approval") == "pending"
    assert map_status("tradedoubler", "A") == "approved"
    assert map_status("admitad", "approved_but_stalled") == "approved"
    assert map_status("effiliation", "Refusé") == "declined"
    assert map_status("awin", "deleted") == "declined"
    assert map_status("awin", "on hold") == "unknown"
    assert map_status("cj", None) == "unknown"
    assert map_status("nowhere", "on hold") == "unknown"


def test_every_spec_declares_what_the_sync_needs():
    for network, connector in CONNECTORS.items():
        spec = connector.spec
        assert spec.network == network
        assert spec.credential_fields and spec.max_window > dt.timedelta(0)
        assert spec.rate.requests > 0 and spec.rate_source
        assert spec.rescan <= spec.horizon


def test_retry_after_reads_seconds_and_http_dates():
    now = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)
    assert retry_after_seconds({"Retry-After": "37"}, now) == 37
    assert retry_after_seconds({"Retry-After": "Sun, 15 Mar 2026 12:01:00 GMT"}, now) == 60
    assert retry_after_seconds({"Retry-After": "soon"}, now) is None
    assert retry_after_seconds({}, now) is None


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    policy = RetryPolicy(backoff_base=1.0, backoff_cap=10.0)
    assert [backoff_delay(n, policy, lambda: 0.0) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, 5.0]
    assert backoff_delay(2, policy, lambda: 1.0) == 4.0


async def test_the_limiter_never_lets_more_than_the_rate_through():
    clock = FakeClock()
    limiter = SlidingLimiter(Rate(20, 60), clock)
    times = []
    for _ in range(95):
        await limiter.acquire()
        times.append(clock.monotonic())
    assert max_in_any_period(times, 60) == 20
    assert times[-1] - times[0] < 5 * 60  # and it is not slower than it needs to be


def test_limiter_keys_do_not_show_the_credential():
    key = credential_key("awin", {"accessToken": "PLANTED-awin-token-7f3a91"})
    assert "PLANTED" not in key and key.startswith("awin:")


def _ctx():
    spec = CONNECTORS["awin"].spec
    return CallContext(
        spec=spec,
        base_url=spec.base_url,
        credentials=Credentials({}),
        currency=None,
        page_size=0,
        map_status=load_status_map().status,
    )


@pytest.mark.parametrize(
    ("given", "unstated"),
    [
        ({}, set()),
        ({"sale": None}, {"sale_amount"}),
        ({"clicked_at": ""}, {"clicked_at"}),
        ({"raw_status": None}, {"status", "raw_status"}),
        ({"raw_status": None, "paid_reason": "awin:paymentId"}, {"raw_status"}),
        ({"sub_ids": {}, "program_name": None}, {"sub_id", "program_name"}),
    ],
)
def test_a_member_a_record_lacks_is_not_stated(given, unstated):
    """What the store then keeps as it was (store.base.with_stored)."""
    fields = {
        "external_id": "1",
        "raw_status": "approved",
        "commission": Decimal("4.26"),
        "currency": "EUR",
        "transacted_at": "2026-01-03T10:12:00",
        "sale": Decimal("85.20"),
        "clicked_at": "2026-01-03T09:55:00",
        "program_id": 11111,
        "program_name": "Boutique Lumen",
        "sub_ids": {"clickRef": "sub-abc"},
        **given,
    }
    row = transaction(_ctx(), Fields(**fields))
    # A field read through Fields.more (none given here) is not stated either.
    unstated = unstated | {f.name for f in commission.FIELDS if f.wire is None}
    if not unstated:
        assert row.stated is None
    else:
        assert row.stated is not None and set(VALUE_FIELDS) - row.stated == unstated


async def test_a_raw_body_goes_with_its_content_type_and_no_cookie_comes_back(aiohttp_server):
    """A SOAP envelope is sent as it is; a cookie one answer set is never sent again (the
    worker's session keeps none: one account's session must not reach another's)."""
    from aiohttp import web

    seen: list[tuple[str, bytes, str | None]] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append((request.content_type, await request.read(), request.headers.get("Cookie")))
        response = web.Response(text="ok")
        response.set_cookie("PHPSESSID", "account-a")
        return response

    app = web.Application()
    app.router.add_post("/soap", handle)
    server = await aiohttp_server(app, access_log=None)
    clock = FakeClock()
    # The worker's own session (sync.runner.syncing), nothing else of the Syncer used.
    async with syncing(None, None, None, clock=clock) as syncer:  # type: ignore[arg-type]
        request = HttpRequest(
            # By name: a cookie jar keeps no cookie of a bare IP address.
            "POST",
            str(server.make_url("/soap")).replace("127.0.0.1", "localhost"),
            body=b"<e/>",
            content_type="text/xml",
        )
        for _ in range(2):
            await syncer.client.send("t", request, SlidingLimiter(Rate(100, 60), clock), 10.0)
    assert seen == [("text/xml", b"<e/>", None), ("text/xml", b"<e/>", None)]


def test_a_request_has_one_body():
    with pytest.raises(ValueError):
        HttpRequest("POST", "http://x", json={}, body=b"x", content_type="text/xml")
    with pytest.raises(ValueError):
        HttpRequest("POST", "http://x", body=b"x")
