"""Streamed imports: a file read as lines block by block, and chunks of rows written in one
store transaction that a problem anywhere rolls back."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator

import pytest
from support.accountkit import new_account
from support.importkit import parse_export

from accounts import importer
from accounts.importer import ExportError, FirstLines, decode, read_export, text_lines
from accounts.statusmap import load_status_map
from store import AccountStore, connections, open_store
from store import commissions as store_commissions
from store.base import NewCommission

STATUSES = load_status_map()
HEADER = "externalId,commissionAmount,currency,transactedAt"


def csv_text(ids: list[str], end: str = "\n") -> str:
    rows = [HEADER, *(f"{i},1.50,EUR,2026-01-01T10:00:00Z" for i in ids)]
    return end.join(rows) + end


def streamed(data: bytes, fmt: str, **options: int) -> list[NewCommission]:
    lines = text_lines(io.BytesIO(data), fmt)
    return [row for rows in read_export(lines, fmt, "awin", STATUSES, **options) for row in rows]


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 16])
@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_lines_read_block_by_block_are_the_lines_of_the_whole_text(monkeypatch, block, end):
    # Line ends and UTF-8 characters cut between two blocks ("\r" | "\n", "é" in two bytes),
    # a BOM, a quoted line end: the rows are those of the text read whole.
    monkeypatch.setattr(importer, "READ_BLOCK", block)
    text = csv_text(["A-é", "B", "C", "D"], end)
    data = ("\ufeff" + text).encode()
    assert streamed(data, "csv", chunk=2) == parse_export(text, "csv", "awin", STATUSES)
    quoted = text + f'"x{end}y"{end}{end}z'
    lines = text_lines(io.BytesIO(quoted.encode()), "csv")
    assert list(lines) == list(io.StringIO(quoted, newline=""))


@pytest.mark.parametrize("block", [1, 5, 1 << 16])
def test_json_lines_end_at_a_line_feed_only(monkeypatch, block):
    monkeypatch.setattr(importer, "READ_BLOCK", block)
    line = (
        '{"externalId": "%s", "programName": "x\u2028y", "commissionAmount": 1,\r '
        '"currency": "EUR", "transactedAt": "2026-01-01"}'
    )
    # U+2028 splits no line (it is refused as a name's character, at the line it is on).
    data = f"{line % 'A'}\r\n\n{line % 'B'}".encode()
    with pytest.raises(ExportError) as refused:
        streamed(data, "jsonl")
    assert [(p.line, p.field) for p in refused.value.problems] == [
        (1, "programName"),
        (3, "programName"),
    ]
    rows = streamed(data.replace("\u2028".encode(), b" "), "jsonl")
    assert [(r.external_id, r.program_name) for r in rows] == [("A", "x y"), ("B", "x y")]


@pytest.mark.parametrize("block", [1, 3, 1 << 16])
@pytest.mark.parametrize("bad", [b"\xff", b"\xe2\x82", b"\xc3\x28", b"\xef\xbb"])
def test_a_byte_that_is_not_utf8_is_the_one_problem_at_its_line(monkeypatch, block, bad):
    # Whatever was read before it (a bad row on line 3 here), as when the file is decoded
    # whole (importer.decode).
    monkeypatch.setattr(importer, "READ_BLOCK", block)
    good = (csv_text(["A"]) + "B,x,EUR,2026-01-01\n").encode()
    for data in (good + b"C" + bad + b",1,EUR,2026-01-01\n", good + bad):
        with pytest.raises(ExportError) as whole:
            decode(data)
        with pytest.raises(ExportError) as refused:
            streamed(data, "csv")
        assert refused.value.problems == whole.value.problems
        assert [(p.line, p.field) for p in refused.value.problems] == [(4, "file")]


def test_a_line_longer_than_the_limit_is_refused_at_its_line(monkeypatch):
    monkeypatch.setattr(importer, "LINE_MAX", 100)
    data = (csv_text(["A"]) + "B" * 500 + "\n").encode()
    with pytest.raises(ExportError) as refused:
        streamed(data, "csv")
    assert [(p.line, p.field) for p in refused.value.problems] == [(3, "line")]


def test_a_repeat_is_named_with_its_first_line_across_chunks():
    ids = [f"E{i}" for i in range(50)] + ["E7", "E49"]
    with pytest.raises(ExportError) as refused:
        streamed(csv_text(ids).encode(), "csv", chunk=8)
    assert [p.render("f") for p in refused.value.problems] == [
        "f:52: externalId: duplicate of line 9",
        "f:53: externalId: duplicate of line 51",
    ]


def test_first_lines_keep_every_id_through_growth():
    lines = FirstLines()
    ids = [f"TX{i:08d}" for i in range(20_000)]
    assert [lines.first(x, n) for n, x in enumerate(ids, start=1)] == list(range(1, 20_001))
    assert [lines.first(x, 99_999) for x in ids] == list(range(1, 20_001))


def commissions(prefix: str, count: int, amount: str = "1.50") -> list[NewCommission]:
    return [
        NewCommission(f"{prefix}{i}", "pending", "pending", amount, "EUR", "2026-01-01T10:00:00Z")
        for i in range(count)
    ]


@pytest.mark.slow
async def test_a_stream_of_chunks_is_one_transaction(admin_store: AccountStore):
    account = await new_account(admin_store)
    await admin_store.write(connections.connect, account.uid, "awin", b"sealed")

    def failing() -> Iterator[list[NewCommission]]:
        yield commissions("A", 3_000)
        yield commissions("B", 3_000)
        raise ExportError([])

    with pytest.raises(ExportError):
        await admin_store.write(store_commissions.upsert_stream, account.uid, "awin", failing())
    # A repeat in a later chunk, or an invalid row: nothing of the earlier chunks stays.
    repeat = [commissions("A", 10), commissions("B", 10), commissions("A", 1)]
    with pytest.raises(ValueError, match="'A0' appears twice"):
        await admin_store.write(store_commissions.upsert_stream, account.uid, "awin", iter(repeat))
    invalid = [commissions("A", 10), commissions("B", 1, amount="1,5")]
    with pytest.raises(ValueError, match="commission_amount"):
        await admin_store.write(store_commissions.upsert_stream, account.uid, "awin", iter(invalid))
    first = await admin_store.write(
        store_commissions.upsert_stream,
        account.uid,
        "awin",
        iter([commissions("A", 5), commissions("B", 5)]),
    )
    assert (first.inserted, first.updated, first.unchanged) == (10, 0, 0)
    again = await admin_store.write(
        store_commissions.upsert_stream,
        account.uid,
        "awin",
        iter([commissions("A", 5, "2.00"), commissions("B", 7)]),
    )
    assert (again.inserted, again.updated, again.unchanged) == (2, 5, 5)


def test_a_file_all_wrong_keeps_the_problems_it_prints_and_counts_the_others(monkeypatch):
    monkeypatch.setattr(importer, "PROBLEMS_KEPT", 50)
    text = HEADER + "\n" + "".join(f"E{i},x,EUR,2026-01-01\n" for i in range(500))
    with pytest.raises(ExportError) as refused:
        parse_export(text, "csv", "awin", STATUSES)
    assert len(refused.value.problems) <= 51
    shown = refused.value.render("f")
    assert shown[0].startswith("f:2: commissionAmount:")
    assert shown[19].startswith("f:21: commissionAmount:")
    assert shown[20:] == ["f: ... and 480 more problems"]


async def test_a_stream_may_wait_for_its_chunks_longer_than_the_store_timeout(database):
    # The caller reads and checks each chunk while the transaction waits: PostgreSQL's
    # backstop for a transaction left idle (the timeout plus a second) must not end it.
    store = await open_store(database, writable=True, readers=1, timeout=0.2)
    try:
        account = await new_account(store)
        await store.write(connections.connect, account.uid, "awin", b"sealed")

        def slow() -> Iterator[list[NewCommission]]:
            for prefix in "AB":
                time.sleep(1.5)  # as a chunk read on the event loop would hold it
                yield commissions(prefix, 10)

        result = await store.write(store_commissions.upsert_stream, account.uid, "awin", slow())
        assert (result.inserted, result.updated, result.unchanged) == (20, 0, 0)
    finally:
        await store.close()
