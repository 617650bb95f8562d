"""Daisycon, whose refresh token rotates at every use: the conformance cases with a run that
can store refreshed credentials (as the worker's can), and Daisycon's own cases: the token
stored before it is used, a run that dies after a refresh, a query past 10,000 records,
one row per transaction part."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
import test_sync_connectors as suite
from sync_support import ACCOUNT, Canned, decrypt, expected, seal

from sync.model import Outcome

NETWORK = "daisycon"


@pytest.fixture
def run_sync(run_sync):
    """The suite's run, able to store refreshed credentials as a worker's run is."""

    async def run(network: str, deadline: float | None = None, **overrides: Any):
        overrides.setdefault("seal", seal)
        return await run_sync(network, deadline, **overrides)

    return run


# The conformance suite's cases, each with the parameters it takes besides fixtures.
CASES: list[tuple[Callable[..., Any], dict[str, Any]]] = [
    (suite.test_a_first_sync_collects_every_recorded_row, {}),
    (suite.test_no_request_asks_for_more_than_the_network_window, {}),
    (suite.test_several_pages_are_all_fetched, {}),
    (suite.test_rerunning_a_sync_changes_nothing, {}),
    (suite.test_429_with_retry_after_is_waited_out, {}),
    (suite.test_a_5xx_then_success_is_retried, {}),
    (suite.test_401_and_403_are_auth_failed, {"status": 401}),
    (suite.test_401_and_403_are_auth_failed, {"status": 403}),
    (suite.test_the_network_own_bad_credential_answer_is_auth_failed, {}),
    (suite.test_a_truncated_body_fails_its_window_and_the_next_run_recovers, {}),
    (suite.test_a_status_that_flips_between_two_syncs_updates_the_same_row, {}),
    (suite.test_a_corrected_amount_updates_the_same_row, {}),
    (suite.test_a_reversal_reaches_the_store_as_the_network_reports_it, {}),
    *(
        (suite.test_a_poison_amount_is_refused_with_the_row_and_its_reason, {"poison": p})
        for p in suite.POISON
    ),
    (suite.test_a_window_too_large_for_the_network_is_never_taken_for_an_empty_one, {}),
    (suite.test_a_backfill_of_two_years_ends_complete_within_every_limit, {}),
]


@pytest.mark.parametrize(
    ("case", "params"),
    CASES,
    ids=[f"{c.__name__}{list(p.values()) or ''}" for c, p in CASES],
)
async def test_daisycon_passes_the_conformance_cases(
    case, params, networks, store, clock, settings, run_sync
):
    given = {"network": NETWORK, "networks": networks, "store": store, "clock": clock}
    given |= {"settings": settings, "run_sync": run_sync, **params}
    await case(**{name: given[name] for name in inspect.signature(case).parameters})


def stored(store) -> dict[str, str]:
    return dict(decrypt(suite.connection(NETWORK), store.credentials[(ACCOUNT, NETWORK)]))


async def test_the_rotated_refresh_token_is_stored_and_the_next_run_uses_it(
    networks, store, clock, run_sync
):
    first = await run_sync(NETWORK)
    assert first.outcome is Outcome.OK, first.reason
    assert stored(store)["refreshToken"] == networks[NETWORK].tokens[-1]
    # Past the access token's life, the next run refreshes with the stored token.
    clock.advance(3600)
    second = await run_sync(NETWORK)
    assert second.outcome is Outcome.OK, second.reason
    assert len(networks[NETWORK].tokens) == 2
    assert stored(store)["refreshToken"] == networks[NETWORK].tokens[-1]


async def test_a_run_within_the_access_token_life_refreshes_nothing(networks, store, run_sync):
    await run_sync(NETWORK)
    again = await run_sync(NETWORK)
    assert again.outcome is Outcome.OK, again.reason
    assert len(networks[NETWORK].tokens) == 1


async def test_a_run_that_dies_after_a_refresh_leaves_the_new_token_stored(
    networks, store, clock, run_sync
):
    from sync_support import StoreCrashError

    store.crash_on_write = 1
    with pytest.raises(StoreCrashError):
        await run_sync(NETWORK)
    # The network retired the refresh token the run used; the store holds the new one.
    assert stored(store)["refreshToken"] == networks[NETWORK].tokens[-1]
    store.crash_on_write = None
    clock.advance(3600)
    report = await run_sync(NETWORK)
    assert report.outcome is Outcome.OK, report.reason
    assert set(store.rows_of(NETWORK)) == set(expected(NETWORK))


async def test_without_a_way_to_store_the_new_token_nothing_is_used(networks, store, run_sync):
    report = await run_sync(NETWORK, seal=None)
    assert report.outcome is Outcome.ERROR
    assert report.reason.code == "credentials_unstorable"
    assert networks[NETWORK].data_calls == 0


async def test_a_query_past_ten_thousand_records_is_split(networks, store, run_sync):
    await run_sync(NETWORK)  # a live access token: the next answer is a data answer
    networks[NETWORK].inject.append(Canned(200, b"[]", headers={"X-Total-Count": "10001"}))
    report = await run_sync(NETWORK)
    assert report.outcome is Outcome.OK, report.reason
    assert report.counts.windows_split == 1
    assert set(store.rows_of(NETWORK)) == set(expected(NETWORK))


async def test_each_part_is_its_own_row_with_its_own_status(networks, store, run_sync):
    await run_sync(NETWORK)
    rows = store.rows_of(NETWORK)
    approved, disapproved = rows["dc-a2:p1"], rows["dc-a2:p2"]
    assert (approved.status, disapproved.status) == ("approved", "declined")
    assert disapproved.status_reason == "daisycon:disapproved"
    assert approved.program_external_id == disapproved.program_external_id == "123"
