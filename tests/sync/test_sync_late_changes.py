"""Late changes: an approval, a decline, a reversal and an amendment of a transaction older
than any re-scan reach the store on the next run wherever the network reports them (a
change filter of its own, or a row of its own dated when the change is made), and, where it
does not, the stored state is kept: only the re-scan catches them, so a change to an older
transaction is not seen. Every network plays it, each its own way (`fakes.base.Late`): its
status words (its own codes where the status table leaves them unknown; none where it has
no status), its reversal (a word, an update, or a negative row of its own), its amounts.

The fake networks answer each change filter as the research describes it (Awin dateType,
CJ locking date and correction records, Impact locking and last-update dates, Admitad
status_updated, Partnerize date_type=last_modified, Daisycon's modification date,
Skimlinks updated_since, Sovrn updateDate, Rakuten's process date); `stamp_change` dates a
change where the network's filter reads it."""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest
from fakes import FAKES
from fakes.base import Late
from support.clock import FakeClock
from sync_support import (
    ACCOUNT,
    NETWORKS,
    FakeNetworks,
    MemoryStore,
    connection,
    expected,
    stamp_change,
)

from accounts.statusmap import load_status_map
from store import AccountStore, CommissionQuery, commissions
from sync.connectors import CONNECTORS
from sync.model import Outcome
from sync.storage import AccountSyncStore, credential_opener

DAY = 86400.0
TABLE = load_status_map()
KINDS = ("approval", "decline", "reversal", "amendment")


# Every network: the scenario is planted on each, each changed its own way.
LATE = NETWORKS


def late(network: str) -> Late:
    found = FAKES[network].late
    assert found is not None, f"fakes/{network}.py declares no late-changes scenario"
    return found


def caught(network: str) -> frozenset[str]:
    return late(network).caught


def words(network: str) -> dict[str, Any]:
    """The network's wire words by meaning (pending, approved, declined): its fake's, else
    the first word its status table maps to each; none for a network without a status."""
    shape = late(network)
    if shape.words is not None:
        return dict(shape.words)
    if FAKES[network].flip is None:
        return {}
    table = TABLE.tables[network]
    found = {}
    for meaning in ("pending", "approved", "declined"):
        word = next((w for w, s in table.items() if s == meaning), None)
        if word is not None:
            found[meaning] = word
    return found


def status_member(network: str) -> str:
    flip = FAKES[network].flip
    assert flip is not None, f"{network} sends no status word"
    return flip.member


def _external_id(network: str, n: int) -> Any:
    fake = FAKES[network]
    if isinstance(fake.records()[0][fake.id_field], int):
        return 990000 + n
    # CJ's watermark orders ids as numbers.
    return str(2299990000 + n) if network == "cj" else f"LATE-{n}"


def put(record: dict[str, Any], member: str | tuple[str, ...], value: Any) -> None:
    *parents, last = (member,) if isinstance(member, str) else member
    for step in parents:
        record = record[step]
    record[last] = value


@dataclass
class Planted:
    """The four transactions planted on a network, by kind of change, and the rows the run
    after the changes added (a reversal as a row of its own)."""

    records: dict[str, dict[str, Any]]
    ids: dict[str, str]
    added: list[str] = field(default_factory=list)


def plant(networks: FakeNetworks, network: str, now: dt.datetime) -> Planted:
    """Four new transactions five days old: three pending, the fourth approved (in the
    network's words, where it has them)."""
    fake, shape = FAKES[network], late(network)
    st = networks[network]
    said = words(network)
    planted = Planted({}, {})
    for n, kind in enumerate(KINDS):
        record = copy.deepcopy(st.records[0])
        if shape.identify is not None:
            shape.identify(record, str(_external_id(network, n)))
        else:
            record[fake.id_field] = _external_id(network, n)
        first = "approved" if kind == "reversal" else "pending"
        if said:
            record[status_member(network)] = said.get(first, said.get("pending"))
        for member in shape.dates:
            put(record, member, shape.dated(now - dt.timedelta(days=5)))
        if network == "cj":
            record["eventDate"] = record["postingDate"]
            record["originalActionId"] = record["commissionId"]
        record.update(shape.extra)
        st.records.append(record)
        planted.records[kind] = record
        planted.ids[kind] = str(record[fake.id_field])
    return planted


def change(network: str, planted: Planted, now: dt.datetime, st) -> None:
    """The late changes the network can make, dated as it dates them: a status word where
    it has one, its own reversal (a word, an update, or a row of its own), an amount."""
    fake, said = FAKES[network], words(network)
    approval, decline, reversal, amendment = (planted.records[k] for k in KINDS)
    if "approved" in said:
        approval[status_member(network)] = said["approved"]
        stamp_change(network, approval, "status", now)
    if network == "cj":
        # Corrections are new records posted now, signed, naming their original.
        for n, (record, reason, amount) in enumerate(
            [
                (decline, "DUPLICATED_ORDER", f"-{decline['pubCommissionAmountPubCurrency']}"),
                (
                    reversal,
                    "RETURNED_MERCHANDISE",
                    f"-{reversal['pubCommissionAmountPubCurrency']}",
                ),
                (amendment, "RETURNED_MERCHANDISE", "-1.00"),
            ],
            start=10,
        ):
            fix = copy.deepcopy(record)
            fix.update(
                commissionId=str(2299990000 + n),
                original=False,
                originalActionId=str(record["commissionId"]),
                correctionReason=reason,
                pubCommissionAmountPubCurrency=amount,
                postingDate=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            )
            st.records.append(fix)
        return
    if "declined" in said:
        decline[status_member(network)] = said["declined"]
        stamp_change(network, decline, "status", now)
    fake.reversal.apply(st.records, reversal, now)
    fake.set_commission(amendment, fake.amended[0])
    stamp_change(network, amendment, "amount", now)


State = tuple[str, str | None, str]  # status, raw status, commission


async def scenario(
    network: str, networks: FakeNetworks, clock: FakeClock, run, stored
) -> tuple[Planted, dict[str, State]]:
    """Plant, sync, let 150 days of monthly runs pass, change, sync once more: what was
    planted and what the store held of it after the first sync (`stored()`: id -> State)."""
    planted = plant(networks, network, clock.now())
    assert (await run(network)).outcome is Outcome.OK
    first = {k: v for k, v in (await stored()).items() if k in planted.ids.values()}
    assert set(first) == set(planted.ids.values()), network
    for _ in range(5):  # 150 days: past every re-scan, with runs keeping the position up
        clock.advance(30 * DAY)
        assert (await run(network)).outcome is Outcome.OK
    known = set(await stored())
    change(network, planted, clock.now() - dt.timedelta(hours=1), networks[network])
    clock.advance(6 * 3600)
    report = await run(network)
    assert report.outcome is Outcome.OK, report.reason
    planted.added = sorted(set(await stored()) - known)
    return planted, first


def expectations(
    network: str, planted: Planted, first: dict[str, State]
) -> dict[str, State | None]:
    """external id -> the State the store should hold after the scenario (None: no row): a
    change the network reports is stored, one it does not leaves the first state."""
    fake, said = FAKES[network], words(network)
    wanted: dict[str, State | None] = dict(first)
    # CJ corrects by new records naming their original: only its approval is a word.
    decided = [("approval", said.get("approved"))]
    if network != "cj":
        decided.append(("decline", said.get("declined")))
    for kind, word in decided:
        external_id = planted.ids[kind]
        if word is not None and kind in caught(network):
            status = TABLE.status(network, str(word))
            wanted[external_id] = (status, str(word), first[external_id][2])
    if network == "cj":
        return wanted
    reversal, external_id = fake.reversal, planted.ids["reversal"]
    if late(network).reversal_row:
        # The rows the last run added: the reversal's own, where the network reports it.
        assert len(planted.added) == ("reversal" in caught(network)), (network, planted.added)
        for row in planted.added:
            wanted[row] = ("reversal row", None, "")
    elif "reversal" in caught(network):
        _, raw, commission = first[external_id]
        if said:  # the word the network's reversal wrote
            raw = str(planted.records["reversal"][status_member(network)])
        recorded = expected(network).get(reversal.target, {}).get("commissionAmount")
        if recorded not in (None, reversal.amount):
            commission = reversal.amount  # the reversal sets the amount (Sovrn's zero)
        wanted[external_id] = (reversal.status, raw, commission)
    amended = planted.ids["amendment"]
    if "amendment" in caught(network):
        status, raw, _ = first[amended]
        wanted[amended] = (status, raw, fake.amended[1])
    return wanted


def check(network: str, wanted: dict[str, State | None], rows: dict[str, State]) -> None:
    for external_id, state in wanted.items():
        if state is None:
            assert external_id not in rows, (network, external_id)
        elif state[0] == "reversal row":
            # A row of its own, negative, with the network's reversal status.
            status, _, commission = rows[external_id]
            assert status == FAKES[network].reversal.status, (network, external_id, status)
            assert commission.startswith("-"), (network, external_id, commission)
        else:
            assert rows[external_id] == state, (network, external_id, rows[external_id], state)


def states(rows) -> dict[str, State]:
    return {r.external_id: (r.status, r.raw_status, r.commission_amount) for r in rows}


@pytest.mark.parametrize("network", LATE)
async def test_late_changes_reach_the_store_where_the_network_reports_them(
    network, networks, store: MemoryStore, clock: FakeClock, run_sync
):
    async def stored() -> dict[str, State]:
        return states(store.rows_of(network).values())

    planted, first = await scenario(network, networks, clock, run_sync, stored)
    check(network, expectations(network, planted, first), await stored())
    rows = store.rows_of(network)
    if network == "cj":
        corrections = {
            r.external_id: r for r in rows.values() if r.external_id.startswith("22999900")
        }
        corrections = {k: r for k, r in corrections.items() if r.original_id}
        originals = {r.original_id for r in corrections.values()}
        assert originals == {"2299990001", "2299990002", "2299990003"}
        assert all(r.commission_amount.startswith("-") for r in corrections.values())


def test_every_network_declares_how_it_reports_late_changes():
    assert all(FAKES[n].late is not None for n in NETWORKS)


def test_the_table_claims_exactly_what_the_fakes_show():
    """A network whose fake catches late changes claims its change feeds in docs/sync.md;
    one whose fake catches none says it has no change filter."""
    for network in LATE:
        claimed = CONNECTORS[network].spec.late_changes_caught()
        if caught(network):
            assert CONNECTORS[network].spec.change_feeds and "any transaction" in claimed
        else:
            assert not CONNECTORS[network].spec.change_feeds
            assert "no change filter is published" in claimed


@pytest.mark.parametrize("network", LATE)
async def test_late_changes_on_the_real_stores(
    network, networks, leased_run, real_store: AccountStore, clock: FakeClock
):
    sync_store = AccountSyncStore(real_store, "w1")

    async def run(name: str):
        return await leased_run(name, sync_store)

    async def rows():
        return await real_store.read(
            commissions.page, CommissionQuery(ACCOUNT, limit=1000, network=network)
        )

    async def stored() -> dict[str, State]:
        return states(await rows())

    planted, first = await scenario(network, networks, clock, run, stored)
    wanted = expectations(network, planted, first)
    check(network, wanted, await stored())
    by_id = {r.external_id: r for r in await rows()}
    for external_id in planted.ids.values():
        # A caught change kept the state it replaced; a missed one left no trace.
        detail = await real_store.read(commissions.find, ACCOUNT, by_id[external_id].seq)
        assert detail is not None
        history = [(h.status, h.raw_status, h.commission_amount) for h in detail.history]
        if wanted[external_id] != first[external_id]:
            assert history == [first[external_id]], (network, external_id)
        else:
            assert history == [], (network, external_id)


@pytest.mark.parametrize("absent", ["omitted", "null"])
async def test_an_answer_without_a_member_keeps_the_stored_value_and_history_is_kept(
    absent, networks, run_sync, real_store: AccountStore, keyring, clock: FakeClock
):
    """The saleAmount case: a later answer that omits it, or sends it null, leaves the
    stored one; the status change it brings is stored, with the state it replaced."""
    sync_store = AccountSyncStore(real_store, "w1")

    async def run():

        conn = connection("awin")
        assert await sync_store.claim(conn, "w1", 3600.0)
        try:
            report = await run_sync("awin", store=sync_store, decrypt=credential_opener(keyring))
        finally:
            await sync_store.release(conn, "w1")
        assert report.outcome is Outcome.OK, report.reason
        return {
            r.external_id: r
            for r in await real_store.read(
                commissions.page, CommissionQuery(ACCOUNT, limit=1000, network="awin")
            )
        }

    before = (await run())["1591984035"]
    assert (before.status, before.sale_amount, before.clicked_at) == (
        "approved",
        "85.20",
        "2026-01-03T09:55:00Z",
    )
    (record,) = [r for r in networks["awin"].records if r["id"] == 1591984035]
    if absent == "omitted":
        del record["saleAmount"], record["clickDate"]
    else:
        record["saleAmount"] = record["clickDate"] = None
    record["commissionStatus"] = "declined"
    stamp_change("awin", record, "status", clock.now())
    clock.advance(6 * 3600)
    after = (await run())["1591984035"]
    assert (after.status, after.sale_amount, after.clicked_at) == (
        "declined",
        "85.20",
        "2026-01-03T09:55:00Z",
    )
    detail = await real_store.read(commissions.find, ACCOUNT, after.seq)
    assert detail is not None
    assert [(h.status, h.raw_status, h.sale_amount) for h in detail.history] == [
        ("approved", "approved", "85.20")
    ]
    assert detail.history[0].replaced_at == "2026-03-15T18:00:00Z"  # the second sync
