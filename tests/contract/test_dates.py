"""Every dated parameter of every endpoint, anywhere in years 0001 to 9999: 200 or the
documented 400, never a 500 (summaries by month or day over huge periods once overflowed
Python's dates at either end of the calendar)."""

from __future__ import annotations

import datetime as dt
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest
from contract_support import LiveEdge, live_edge
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from contract.endpoints import ENDPOINTS, Endpoint

DATED = [e for e in ENDPOINTS if any(p.kind in ("date", "instant") for p in e.params)]
GROUPINGS = [None, "month", "day", "month,network", "day,status", "network"]
CODES = {"invalid_parameter", "invalid_date_range"}
DATES = st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))
EDGES = [dt.date(1, 1, 1), dt.date(1, 1, 31), dt.date(1, 2, 1), dt.date(9999, 12, 1),
         dt.date(9999, 12, 31), dt.date(9999, 11, 30)]  # fmt: skip
DATES_OR_EDGES = st.one_of(DATES, st.sampled_from(EDGES))
OFFSETS = st.sampled_from(["Z", "+00:00", "+14:00", "-12:00", "+01:30"])


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveEdge]:
    with live_edge(tmp_path_factory.mktemp("dates"), commissions=50) as edge:
        yield edge


def ask(live: LiveEdge, path: str, query: dict[str, str]) -> tuple[int, dict]:
    url = f"{live.base_url}{path}?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {live.key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def instant(day: dt.date, offset: str) -> str:
    return f"{day.isoformat()}T23:59:59{offset}"


@pytest.mark.parametrize("endpoint", DATED, ids=lambda e: e.name)
def test_any_date_of_the_calendar_is_200_or_a_documented_400(live, endpoint: Endpoint):
    names = {p.name for p in endpoint.params}

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.none() | DATES_OR_EDGES,
        st.none() | DATES_OR_EDGES,
        st.none() | st.tuples(DATES_OR_EDGES, OFFSETS),
        st.sampled_from(GROUPINGS),
    )
    @example(dt.date(1, 1, 1), dt.date(9999, 12, 31), None, "month")
    @example(dt.date(1, 1, 1), dt.date(9999, 12, 31), None, "day")
    @example(dt.date(9999, 12, 31), dt.date(9999, 12, 31), None, "month")
    @example(dt.date(1, 1, 1), dt.date(1, 1, 1), None, "month")
    @example(dt.date(1, 1, 2), dt.date(9999, 12, 30), None, None)
    @example(None, None, (dt.date(1, 1, 1), "+14:00"), None)
    @example(None, None, (dt.date(9999, 12, 31), "-12:00"), "month")
    def run(since, until, updated, group_by) -> None:
        query: dict[str, str] = {}
        if since is not None:
            query["from"] = since.isoformat()
        if until is not None:
            query["to"] = until.isoformat()
        if updated is not None and "updatedSince" in names:
            query["updatedSince"] = instant(*updated)
        if group_by is not None and "groupBy" in names:
            query["groupBy"] = group_by
        status, body = ask(live, endpoint.path, query)
        assert status in (200, 400), (query, status, body)
        if status == 400:
            assert body["code"] in CODES, (query, body)
        else:
            assert isinstance(body["data"], list)

    run()


def test_the_dated_endpoints_are_those_of_the_contract():
    # A new dated parameter elsewhere must be added to the draw above.
    assert {e.name for e in DATED} == {"commissions", "commission_summary", "payments"}
