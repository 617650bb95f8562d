"""The account store: migrations, indexes, isolation of credentials, failures.

Tests taking `database`/`admin_store` run on SQLite and PostgreSQL; those on a SQLite file
of their own (tmp_path) or marked `sqlite_only` test SQLite internals (their PostgreSQL
twins are in tests/store/pg)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import sqlite3
import time
from pathlib import Path

import pytest
from support.accountkit import execute_sql, fetch_rows, new_account, new_key, read_all, sleep_in
from support.clock import FakeClock

from accounts import apikeys
from edge.request.query import commission_seq_of
from store import (
    AccountStore,
    Conflict,
    NotFound,
    Session,
    StoreError,
    StoreUnavailable,
    UnsupportedDatabaseError,
    accounts,
    commissions,
    connections,
    open_store,
)
from store.base import (
    TIMESTAMP_RE,
    CommissionQuery,
    ImportResult,
    NewCommission,
    format_timestamp,
)
from store.commissions import VALUES_CHUNK, commissions_sql, page_sql, values_chunks
from store.engines.sqlite import SqliteStore, database_path
from store.publicids import KEY_BYTES, PublicIds
from store.schema import LATEST


def row(external_id: str, when: str = "2026-01-02T03:04:05Z", **extra: str) -> NewCommission:
    return NewCommission(
        external_id=external_id,
        status=extra.pop("status", "pending"),
        raw_status=extra.pop("raw_status", "pending"),
        commission_amount=extra.pop("amount", "1.00"),
        currency=extra.pop("currency", "EUR"),
        transacted_at=when,
        **extra,
    )


async def test_migrations_are_recorded_and_applied_once(tmp_path: Path):
    path = tmp_path / "deep" / "dir" / "a.sqlite3"
    for _ in range(2):
        store = await open_store(str(path), writable=True)
        await store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        versions = conn.execute("SELECT version FROM schema_migrations").fetchall()
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert versions == [(v,) for v in range(1, LATEST + 1)]
    assert mode == "wal"


async def test_a_schema_newer_than_the_code_is_refused(tmp_path: Path):
    path = tmp_path / "a.sqlite3"
    store = await open_store(str(path))
    await store.close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO schema_migrations VALUES (99, '2030-01-01T00:00:00Z')")
    conn.close()
    with pytest.raises(StoreError, match="newer than this code"):
        await open_store(str(path))


async def test_garbage_or_unreachable_files_are_unavailable_not_crashes(tmp_path: Path):
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreUnavailable, match="cannot open the account store"):
        await open_store(str(garbage))
    blocked = tmp_path / "file"
    blocked.write_text("x")
    with pytest.raises(StoreUnavailable):
        await open_store(str(blocked / "under-a-file.sqlite3"))


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("var/edge.sqlite3", "var/edge.sqlite3"),
        ("sqlite:///abs/x.db", "/abs/x.db"),
        ("sqlite:rel/x.db", "rel/x.db"),
        ("sqlite:///with%20space.db", "/with space.db"),
    ],
)
def test_database_urls(url, path):
    assert database_path(url) == Path(path)


@pytest.mark.parametrize("url", ["mysql://h/db", "http://h/db"])
async def test_other_databases_are_refused_clearly(url):
    with pytest.raises(UnsupportedDatabaseError, match="unknown database URL scheme"):
        await open_store(url)


def test_commission_ids_have_one_width_and_read_back():
    samples = [0, 1, 31, 32, 999, 10**6, 2**40, 2**63 - 1]
    public = PublicIds.from_key(bytes(KEY_BYTES))
    ids = [public.commission(s) for s in samples]
    assert all(len(i) == len(ids[0]) for i in ids)
    # The edge reads them back (GET /v1/commissions/{id}).
    assert [commission_seq_of(public, i) for i in ids] == samples
    assert commission_seq_of(public, "com_nope") is None


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("network", "status", "since", "until", "after"),
    list(
        itertools.product(
            [None, "awin"],
            [None, "paid"],
            [None, dt.date(2026, 1, 1)],
            [None, dt.date(2026, 2, 1)],
            [None, ("2026-01-15T00:00:00Z", 42)],
        )
    ),
)
async def test_every_page_query_seeks_an_index_and_never_sorts(
    admin_store, network, status, since, until, after
):
    query = CommissionQuery("acc_x", 26, network, status, since, until, after)
    assert "OFFSET" not in commissions_sql(query)[0].upper()
    sql, params = page_sql(query)  # what the store runs: the page query, aggregated

    steps = [r[3] for r in await admin_store.read(fetch_rows, "EXPLAIN QUERY PLAN " + sql, *params)]
    main = next(s for s in steps if "commissions" in s)
    assert main.startswith("SEARCH commissions USING INDEX commissions_"), steps
    assert "account_id=?" in main
    assert not any("TEMP B-TREE" in s for s in steps), steps


async def test_read_connections_cannot_read_credentials(admin_store, seeded):
    await admin_store.write(connections.connect, seeded.uid, "awin", b"v1 sealed bytes")
    for sql in (
        "SELECT ciphertext FROM network_credentials",
        "SELECT count(*) FROM network_credentials",
        "SELECT * FROM network_credentials",
        "SELECT n.network, c.ciphertext FROM networks n "
        "JOIN network_credentials c ON c.account_id = n.account_id AND c.network = n.network",
    ):
        with pytest.raises(StoreUnavailable, match=r"not authorized|prohibited"):
            await read_all(admin_store, sql)


async def test_the_api_read_paths_never_mention_credentials(database: str):
    seen: list[str] = []
    path = database
    writer = await open_store(path, writable=True, readers=1)
    account = await new_account(writer)
    await writer.write(connections.connect, account.uid, "awin", b"sealed")
    reader = await open_store(path, trace=seen.append)
    try:
        assert (await reader.read(accounts.lookup_key, apikeys.key_hash(account.key))) is not None
        for network, status, since in itertools.product(
            [None, "awin"], [None, "paid"], [None, dt.date(2026, 1, 1)]
        ):
            await reader.read(
                commissions.page,
                CommissionQuery(
                    account.uid, 10, network, status, since, None, ("2027-01-01T00:00:00Z", 5)
                ),
            )
        await reader.read(accounts.find, account.uid)
    finally:
        await reader.close()
        await writer.close()
    statements = [s for s in seen if s.upper().startswith("SELECT")]
    assert any("api_keys" in s for s in statements) and any("commissions" in s for s in statements)
    assert not any("credential" in s.lower() for s in seen)


async def test_a_stuck_call_times_out_and_frees_its_connection(tmp_path: Path):
    store = await SqliteStore.open(tmp_path / "t.sqlite3", timeout=0.2, readers=1)
    try:
        spin = (
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        )
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="did not answer"):
            await store.read(fetch_rows, spin)
        assert time.monotonic() - started < 1.0
        # Interrupted: the one connection serves the next call at once.
        assert await store.read(fetch_rows, "SELECT 1") == [(1,)]

        # A call that cannot even get a connection (the only one is busy) times out too.
        slow = asyncio.ensure_future(store.read(sleep_in, 0.5))
        await asyncio.sleep(0.05)
        with pytest.raises(StoreUnavailable):
            await store.read(fetch_rows, "SELECT 1")
        with pytest.raises(StoreUnavailable):
            await slow
    finally:
        await store.close()


async def stored_commissions(store: AccountStore) -> int:
    ((count,),) = await read_all(store, "SELECT count(*) FROM commissions")
    return int(count)


@pytest.mark.parametrize("stop", ["deadline", "cancel"])
@pytest.mark.parametrize("after", [0.0, 0.05, 0.3])
@pytest.mark.slow
async def test_a_stopped_write_is_all_or_nothing_and_its_caller_is_told_which(
    database, admin_store, seeded, stop, after
):
    # Wherever the stop lands (waiting for the connection, mid-statement, between two
    # statements, at COMMIT), the caller hears the truth: a result if the rows are there,
    # an error (CancelledError when cancelled) if none of them is.
    batch = [row(f"e{i}", amount=f"{i}.50") for i in range(20_000)]
    deadline = after if stop == "deadline" else None
    store = await open_store(database, writable=True, readers=1, write_timeout=deadline)
    try:
        task = asyncio.ensure_future(store.write(commissions.upsert, seeded.uid, "awin", batch))
        if stop == "cancel":
            await asyncio.sleep(after)
            task.cancel()
        try:
            result = await task
        except (StoreUnavailable, asyncio.CancelledError) as exc:
            assert isinstance(
                exc, StoreUnavailable if stop == "deadline" else asyncio.CancelledError
            )
            assert stop == "cancel" or "rolled back: nothing was written" in str(exc)
            assert await stored_commissions(admin_store) == 0
        else:
            assert (result.inserted, result.updated) == (20_000, 0)
            assert await stored_commissions(admin_store) == 20_000
        if stop == "cancel":  # (a deadline of 0 s would stop the next write too)
            # The store is left as it should be: the next write on it runs and commits.
            await store.write(accounts.set_plan, seeded.uid, "free")
    finally:
        await store.close()
    # The operator runs the import again: it is complete, whatever the first run did.
    again = await admin_store.write(commissions.upsert, seeded.uid, "awin", batch)
    assert again.inserted + again.unchanged == 20_000 and again.updated == 0
    assert await stored_commissions(admin_store) == 20_000


@pytest.mark.parametrize("stop", ["deadline", "cancel"])
async def test_a_write_stopped_between_two_statements_is_rolled_back(tmp_path: Path, stop):
    # `interrupt()` is a no-op while no statement runs (between the rows of an
    # executemany, while Python prepares the next ones). The write must not go on to
    # COMMIT there while its caller is told it failed.
    path = tmp_path / "t.sqlite3"
    deadline = 0.1 if stop == "deadline" else None
    store = await SqliteStore.open(path, writable=True, readers=1, write_timeout=deadline)

    async def insert_then_think(s: Session) -> None:
        await s.execute(
            "INSERT INTO accounts (uid, plan, created_at) VALUES ('acc_a', 'free', 'now')"
        )
        time.sleep(0.4)  # noqa: ASYNC251 - Python work in the store thread, no statement running

    try:
        task = asyncio.ensure_future(store.write(insert_then_think))
        if stop == "cancel":
            await asyncio.sleep(0.1)
            task.cancel()
        with pytest.raises(StoreUnavailable if stop == "deadline" else asyncio.CancelledError):
            await task
        # The connection is not left inside the transaction either: the next write commits.
        await store.write(accounts.create, None, "pro", uid="acc_b")
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT uid FROM accounts").fetchall() == [("acc_b",)]


async def test_a_closed_store_is_unavailable(database: str):
    store = await open_store(database)
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreUnavailable, match="closed"):
        await store.read(accounts.lookup_key, "0" * 64)


async def test_the_edge_store_is_read_only(database: str):
    store = await open_store(database)
    try:
        with pytest.raises(StoreError, match="read-only"):
            await store.write(accounts.create, None, "free")
        with pytest.raises(
            StoreUnavailable, match=r"readonly|read-only|query_only|attempt to write"
        ):
            await store.read(execute_sql, "INSERT INTO schema_migrations VALUES (50, 'x')")
    finally:
        await store.close()


async def test_account_lifecycle_and_capabilities(database: str):
    wall = FakeClock(wall=dt.datetime(2026, 5, 6, 7, 8, 9, 999, tzinfo=dt.UTC))
    store = await open_store(database, writable=True, clock=wall.now)
    try:
        uid = await store.write(accounts.create, None, "free")
        view = await store.read(accounts.find, uid)
        assert view is not None and (view.email, view.plan, view.suspended) == (None, "free", False)
        assert view.created_at == "2026-05-06T07:08:09Z"
        assert {
            n: (c.enabled, c.configured, c.enabled_at) for n, c in view.capabilities.items()
        } == {
            "acquisition": (False, False, None),
            "monetisation": (False, False, None),
        }
        state = await store.write(accounts.set_capability, uid, "monetisation", True)
        assert (state.enabled, state.configured, state.enabled_at) == (
            True,
            True,
            "2026-05-06T07:08:09Z",
        )
        state = await store.write(accounts.set_capability, uid, "monetisation", False)
        assert (state.enabled, state.configured, state.enabled_at) == (
            False,
            True,
            "2026-05-06T07:08:09Z",
        )
        await store.write(accounts.set_plan, uid, "pro")
        await store.write(accounts.set_suspended, uid, True)
        view = await store.read(accounts.find, uid)
        assert view is not None and (view.plan, view.suspended) == ("pro", True)
        with pytest.raises(ValueError):
            await store.write(accounts.set_plan, uid, "gold")
        with pytest.raises(NotFound):
            await store.write(accounts.set_plan, "acc_missing", "pro")
        with pytest.raises(NotFound):
            await store.write(
                connections.record_sync, uid, "awin", "ok", accounts=1, programs=1, transactions=1
            )
        await store.write(connections.connect, uid, "awin", b"sealed")
        with pytest.raises(ValueError):
            await store.write(
                connections.record_sync,
                uid,
                "awin",
                "never",
                accounts=1,
                programs=1,
                transactions=1,
            )
        await store.write(
            connections.record_sync, uid, "awin", "partial", accounts=2, programs=3, transactions=4
        )
        view = await store.read(accounts.find, uid)
        assert view is not None
        (network,) = view.networks
        assert (network.status, network.accounts, network.programs, network.transactions) == (
            "partial",
            2,
            3,
            4,
        )
        with pytest.raises(ValueError, match="network"):
            await store.write(connections.connect, uid, "Bad Network!", b"x")
        with pytest.raises(Conflict):
            await store.write(accounts.create, None, "free", uid=uid)
    finally:
        await store.close()


async def test_keys_are_revoked_by_id_or_unambiguous_prefix(admin_store):
    account = await new_account(admin_store)
    other = await new_key(admin_store, account.uid)
    revoked = await admin_store.write(accounts.revoke_key, account.prefix)
    assert revoked.id == account.key_id and revoked.state == "revoked"
    assert (
        await admin_store.write(accounts.revoke_key, account.prefix)
    ).revoked_at == revoked.revoked_at
    assert await admin_store.read(accounts.lookup_key, apikeys.key_hash(account.key)) is None
    assert await admin_store.read(accounts.lookup_key, apikeys.key_hash(other.key)) is not None
    await admin_store.write(accounts.create_key, account.uid, "h1", "afk_SAMEPREF", "a", ("read",))
    await admin_store.write(accounts.create_key, account.uid, "h2", "afk_SAMEPREF", "b", ("read",))
    with pytest.raises(Conflict, match="several keys"):
        await admin_store.write(accounts.revoke_key, "afk_SAMEPREF")
    with pytest.raises(NotFound):
        await admin_store.write(accounts.revoke_key, "afk_nothing")
    assert (await admin_store.write(accounts.revoke_key, other.key_id)).state == "revoked"
    states = [k.state for k in await admin_store.read(accounts.list_keys, account.uid)]
    assert sorted(states) == ["active", "active", "revoked", "revoked"]
    with pytest.raises(ValueError):
        await admin_store.write(accounts.create_key, account.uid, "h3", "afk_x", "c", ("write",))


async def test_upsert_keeps_the_identity_of_a_row(admin_store, seeded):
    await admin_store.write(commissions.upsert, seeded.uid, "awin", [row("A"), row("B")])
    first = await admin_store.read(commissions.page, CommissionQuery(seeded.uid, 10))
    await admin_store.write(commissions.upsert, seeded.uid, "awin", [row("A", status="approved")])
    second = await admin_store.read(commissions.page, CommissionQuery(seeded.uid, 10))
    assert [r.seq for r in first] == [r.seq for r in second]
    assert {r.external_id: r.status for r in second} == {"A": "approved", "B": "pending"}
    # The same external id at another network is another commission.
    await admin_store.write(commissions.upsert, seeded.uid, "cj", [row("A")])
    assert len(await admin_store.read(commissions.page, CommissionQuery(seeded.uid, 10))) == 3
    with pytest.raises(ValueError, match="twice"):
        await admin_store.write(commissions.upsert, seeded.uid, "cj", [row("Z"), row("Z")])
    with pytest.raises(NotFound):
        await admin_store.write(commissions.upsert, "acc_nobody", "cj", [row("Z")])


async def test_upserts_count_and_keep_every_character(admin_store, seeded):
    # Rows travel to the database in chunks (one JSON text for SQLite, arrays for
    # PostgreSQL): whatever their text holds comes back as it was.
    texts = ['q"uote\\back', "Épicerie fine 😀", "tab\there\nnew line", "  spaced  ", "\u2028"]
    rows = [row(f"T{i}", program_name=t, sub_id=t, raw_status=t) for i, t in enumerate(texts)]
    first = await admin_store.write(commissions.upsert, seeded.uid, "awin", rows)
    assert (first.inserted, first.updated, first.unchanged) == (5, 0, 0)
    stored = await admin_store.read(commissions.page, CommissionQuery(seeded.uid, 10))
    assert sorted((r.external_id, r.program_name, r.sub_id, r.raw_status) for r in stored) == [
        (f"T{i}", t, t, t) for i, t in enumerate(texts)
    ]
    changed = [*rows[:4], row("T4", program_name="renamed"), row("T5")]
    again = await admin_store.write(commissions.upsert, seeded.uid, "awin", changed)
    assert (again.inserted, again.updated, again.unchanged) == (1, 1, 4)


@pytest.mark.parametrize("count", [0, 1, 2047, 2048, 2049, 5000, 17_001])
def test_sqlite_writes_rows_in_chunks_of_a_few_sizes_only(count):
    # Each distinct size is a statement SQLite compiles and keeps: a dozen at most.
    chunks = list(values_chunks(count))
    end = 0
    for start, size in chunks:  # contiguous, in order, each row once
        assert start == end
        end = start + size
    assert end == count
    assert {size for _, size in chunks} <= {VALUES_CHUNK >> n for n in range(12)}


@pytest.mark.slow
async def test_counts_stay_exact_across_chunks(admin_store, seeded):
    first = [row(f"C{i:05d}") for i in range(3000)]
    assert await admin_store.write(commissions.upsert, seeded.uid, "awin", first) == ImportResult(
        3000, 0, 0
    )
    # Every 7th changed, 1,500 new, spread over several statements of each store.
    again = [row(f"C{i:05d}", amount="2.00" if i % 7 == 0 else "1.00") for i in range(4500)]
    result = await admin_store.write(commissions.upsert, seeded.uid, "awin", again)
    assert result == ImportResult(1500, 429, 2571)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"amount": "1,50"}, "commission_amount: not a plain decimal number"),
        ({"amount": "1" * 19}, "commission_amount: more than 18 digits before"),
        ({"sale_amount": "+3"}, "sale_amount: not a plain decimal number"),
        ({"when": "2026-01-02 03:04:05"}, "transacted_at: not YYYY-MM-DDTHH:MM:SSZ"),
        ({"when": "9999-01-02T03:04:05Z"}, "transacted_at: more than a day in the future"),
        ({"clicked_at": "2026-01-02"}, "clicked_at: not YYYY-MM-DDTHH:MM:SSZ"),
        ({"currency": "eur"}, "currency: not an ISO 4217 currency code"),
        ({"currency": "XYZ"}, "currency: not an ISO 4217 currency code"),
        ({"external_id": ""}, "external_id: empty"),
        ({"program_external_id": "p\x00"}, "program_external_id: holds a NUL character"),
    ],
)
async def test_a_row_outside_the_stored_forms_is_refused_naming_its_field(
    admin_store, seeded, fields, message
):
    values = {"external_id": "R1", **fields}
    good = row("OK")
    with pytest.raises(ValueError, match=message):
        await admin_store.write(commissions.upsert, seeded.uid, "awin", [good, row(**values)])
    assert await admin_store.read(commissions.page, CommissionQuery(seeded.uid, 10)) == []


@pytest.mark.parametrize("field", ["external_id", "program_name", "raw_status", "sub_id"])
async def test_a_nul_character_is_refused_by_both_stores(admin_store, seeded, field):
    # PostgreSQL's text cannot hold one: refused the same way everywhere, before writing.
    values = {"external_id": "N1", field: "a\x00b"}
    with pytest.raises(ValueError, match=f"{field}: holds a NUL character"):
        await admin_store.write(commissions.upsert, seeded.uid, "awin", [row(**values)])
    assert await admin_store.read(commissions.page, CommissionQuery(seeded.uid, 10)) == []


@pytest.mark.parametrize(
    "email", ["", "not an email", "a\x01b@example.com", "a@b@c", "x" * 250 + "@e.co"]
)
async def test_an_email_that_is_no_address_is_refused(admin_store, email):
    # Stored as given, /v1/me would show "" or a terminal escape.
    with pytest.raises(ValueError, match="email must be an address"):
        await admin_store.write(accounts.create, email, "free")


async def test_good_emails_and_none_are_kept(admin_store):
    for email in (None, "pub@example.com", "Zoë.Müller+tag@example.fr"):
        uid = await admin_store.write(accounts.create, email, "free")
        assert (await admin_store.read(accounts.find, uid)).email == email


@pytest.mark.parametrize("label", ["", "   ", "a\x1b[31mred", "two\nlines", "x" * 101])
async def test_a_label_that_cannot_be_listed_safely_is_refused(admin_store, seeded, label):
    with pytest.raises(ValueError, match="label must be 1 to 100 printable"):
        await admin_store.write(
            accounts.create_key, seeded.uid, "h" * 64, "afk_LABELTST", label, ("read",)
        )


@pytest.mark.parametrize(
    ("network", "counts", "message"),
    [
        ("awin", (2**31, 0, 0), "counts must be whole numbers from 0 to 2147483647"),
        ("awin", (0, 0, -1), "counts must be"),
        ("AWIN", (0, 0, 0), "network 'AWIN' must be 1-32 lowercase"),
    ],
)
async def test_a_sync_outside_what_both_stores_hold_is_refused(
    admin_store, seeded, network, counts, message
):
    await admin_store.write(connections.connect, seeded.uid, "awin", b"sealed")
    account_count, programs, transactions = counts
    with pytest.raises(ValueError, match=message):
        await admin_store.write(
            connections.record_sync,
            seeded.uid,
            network,
            "ok",
            accounts=account_count,
            programs=programs,
            transactions=transactions,
        )
    limit = 2**31 - 1
    await admin_store.write(
        connections.record_sync,
        seeded.uid,
        "awin",
        "ok",
        accounts=limit,
        programs=limit,
        transactions=limit,
    )
    (net,) = (await admin_store.read(accounts.find, seeded.uid)).networks
    assert net.transactions == limit


@pytest.mark.parametrize(
    ("moment", "stored"),
    [
        (dt.datetime(999, 12, 31, 23, 59, 59, tzinfo=dt.UTC), "0999-12-31T23:59:59Z"),
        (dt.datetime(1000, 1, 1, 0, 30, tzinfo=dt.timezone(dt.timedelta(hours=1))), "0999-12-31T23:30:00Z"),
        (dt.datetime(2026, 3, 4, 5, 6, 7, 999_999, tzinfo=dt.UTC), "2026-03-04T05:06:07Z"),
    ],
)  # fmt: skip
def test_a_moment_has_one_stored_form_whatever_its_year(moment, stored):
    assert format_timestamp(moment) == stored
    assert TIMESTAMP_RE.fullmatch(stored)
