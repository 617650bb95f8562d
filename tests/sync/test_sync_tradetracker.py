"""TradeTracker's SOAP service as the conformance suite does not ask of every network: a
session opened by `authenticate` and carried by its cookie, every affiliate site read in
limit/offset pages without a total, a session that ends mid-run, and faults sent with HTTP
500 (read as the service's answer, never retried as a server failure)."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

from fakes.tradetracker import SOAP_ENV, fault
from sync_support import Canned, expected

from sync.model import Outcome


async def test_every_site_is_read_in_pages_with_the_session_cookie(networks, store, run_sync):
    st = networks["tradetracker"]
    report = await run_sync("tradetracker")
    assert report.outcome is Outcome.OK, report.reason
    assert set(store.rows_of("tradetracker")) == set(expected("tradetracker"))
    # One session for the run; both sites' records arrived (site 1002's are leads in GBP).
    assert st.tokens == ["sess0"]
    assert {r.currency for r in store.rows_of("tradetracker").values()} == {"EUR", "GBP"}
    # Pages of 2: the window with site 1001's three January records took two calls, and
    # every window was asked of both sites.
    windows = st.windows
    assert len(windows) > 2 * len(set(windows))
    assert all(s.method == "POST" and s.path == "/tradetracker/soap/affiliate" for s in st.seen)


async def test_a_session_that_ends_mid_run_is_opened_again_once(networks, store, run_sync):
    st = networks["tradetracker"]
    st.revoke_token_after = 2
    report = await run_sync("tradetracker")
    assert report.outcome is Outcome.OK, report.reason
    assert st.tokens == ["sess0", "ended", "sess2"]
    assert set(store.rows_of("tradetracker")) == set(expected("tradetracker"))


async def test_a_fault_with_http_500_is_an_answer_not_a_server_failure(
    networks, store, clock, run_sync
):
    st = networks["tradetracker"]
    st.inject.append(
        Canned(500, fault("Maximum number of requests exceeded").body, content_type="text/xml")
    )
    report = await run_sync("tradetracker")
    # The fault to authenticate refuses the credentials at once: no retry, no backoff.
    assert report.outcome is Outcome.AUTH_FAILED
    assert len(st.seen) == 1 and clock.slept == []


async def test_a_fault_on_a_data_call_fails_its_window_with_the_network_words(
    networks, store, run_sync
):
    st = networks["tradetracker"]

    def third_call_faults(state) -> None:
        if len(state.seen) == 3:  # the first getConversionTransactions
            state.inject.append(Canned(500, fault("Invalid filter").body, content_type="text/xml"))

    st.on_request = third_call_faults
    report = await run_sync("tradetracker")
    assert report.outcome in (Outcome.PARTIAL, Outcome.ERROR)
    assert report.reason.code == "network_error"
    assert "Invalid filter" in report.reason.message
    assert report.position is None


async def test_a_500_that_is_no_fault_is_retried(networks, store, clock, run_sync):
    networks["tradetracker"].inject.append(
        Canned(500, b"<html>oops</html>", content_type="text/html")
    )
    report = await run_sync("tradetracker")
    assert report.outcome is Outcome.OK, report.reason
    assert clock.slept and len(store.rows_of("tradetracker")) == len(expected("tradetracker"))


async def test_the_envelopes_carry_the_filter_the_service_documents(networks, store, run_sync):
    bodies: list[bytes] = []
    original_fake = networks["tradetracker"].fake
    original = original_fake.serve

    async def spy(request, st):
        bodies.append(await request.read())
        return await original(request, st)

    networks["tradetracker"].fake = dataclasses.replace(original_fake, serve=spy)
    await run_sync("tradetracker")
    methods = [
        ET.fromstring(b).find(f"{{{SOAP_ENV}}}Body")[0].tag.rpartition("}")[2] for b in bodies
    ]
    assert methods[:2] == ["authenticate", "getAffiliateSites"]
    # The payments last, in one call with an empty filter (as php-oara asks).
    assert set(methods[2:-1]) == {"getConversionTransactions"}
    assert methods[-1] == "getPayments"
    payments = ET.fromstring(bodies[-1]).find(f"{{{SOAP_ENV}}}Body")[0]
    assert [(c.tag, list(c)) for c in payments] == [("options", [])]
    call = ET.fromstring(bodies[2]).find(f"{{{SOAP_ENV}}}Body")[0]
    options = {c.tag: c.text for c in call.find("options")}
    assert call.find("affiliateSiteID").text == "1001"
    assert set(options) == {
        "registrationDateFrom",
        "registrationDateTo",
        "limit",
        "offset",
        "sort",
        "sortDirection",
    }
    assert (options["limit"], options["offset"], options["sort"]) == ("2", "0", "registrationDate")
