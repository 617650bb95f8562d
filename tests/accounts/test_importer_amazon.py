"""Amazon Associates' earnings report as an import (`--format amazon-earnings`): read by
column name after its title line, ids built stable from each row (the report has none), a
refund kept as a negative row, the connection's currency, and the command end to end."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from accounts.amazon import amount_text
from accounts.importer import ExportError, detect_format, read_export, text_lines
from accounts.statusmap import load_status_map

ROOT = Path(__file__).resolve().parents[2]
FEED = (
    "Fee-Earnings reports from 01-01-2026 to 01-31-2026\n"
    "category\ttitle\tasin\tseller\ttag\tdate\tprice\tqty\trevenue\tearnings\tlinktype\tsubtag\n"
    "Books\tA Book\tB00TEST001\tAmazon.com\tshop-20\t2026-01-05\t$19.99\t1\t$19.99\t$0.90\ttext\tpost-1\n"
    "Books\tA Book\tB00TEST001\tAmazon.com\tshop-20\t2026-01-05\t$19.99\t1\t$19.99\t$0.90\ttext\tpost-1\n"
    "Kitchen\tA Pan\tB00TEST002\tThird Party\tshop-20\t2026-01-07\t$1,250.00\t1\t$1,250.00\t$37.50\tbanner\t\n"
    "Books\tA Book\tB00TEST001\tAmazon.com\tshop-20\t2026-01-20\t$19.99\t-1\t($19.99)\t($0.90)\ttext\tpost-1\n"
)
# The report saved from the Associates website names its columns otherwise.
WEBSITE = (
    "Category\tName\tASIN\tSeller\tTracking ID\tDate Shipped\tPrice($)\tItems Shipped\t"
    "Returns\tRevenue($)\tAd Fees($)\tDevice Type Group\n"
    "Books\tA Book\tB00TEST001\tAmazon.com\tshop-20\t2026-01-05\t19.99\t1\t0\t19.99\t0.90\tDESKTOP\n"
)


def read(text: str, currency: str | None = "USD"):
    lines = text_lines(io.BytesIO(text.encode()), "amazon-earnings")
    chunks = read_export(lines, "amazon-earnings", "amazon", load_status_map(), currency=currency)
    return [row for chunk in chunks for row in chunk]


def test_the_report_is_read_by_name_after_its_title_line():
    rows = read(FEED)
    assert [(r.commission_amount, r.sale_amount, r.currency) for r in rows] == [
        ("0.90", "19.99", "USD"),
        ("0.90", "19.99", "USD"),
        ("37.50", "1250.00", "USD"),
        ("-0.90", "-19.99", "USD"),  # the refund: a new negative row, never +0.90
    ]
    first = rows[0]
    assert (first.program_external_id, first.sub_id, first.transacted_at) == (
        "shop-20",
        "post-1",
        "2026-01-05T00:00:00Z",
    )
    assert (first.raw_status, first.status) == ("shipped", "unknown")
    assert rows[3].raw_status == "returned"


def test_ids_are_stable_and_two_identical_sales_stay_two():
    once, again = read(FEED), read(FEED)
    ids = [r.external_id for r in once]
    assert ids == [r.external_id for r in again]
    assert len(set(ids)) == 4  # the two identical rows of the 5th are two sales
    assert ids[0].startswith("amz-") and ids[0].endswith("-1") and ids[1].endswith("-2")


def test_the_websites_report_reads_the_same():
    (row,) = read(WEBSITE)
    assert (row.commission_amount, row.sale_amount, row.program_external_id) == (
        "0.90",
        "19.99",
        "shop-20",
    )


def test_without_a_currency_nothing_is_imported_and_the_fix_is_named():
    with pytest.raises(ExportError) as caught:
        read(FEED, currency=None)
    assert any("--currency" in p.message for p in caught.value.problems)


def test_a_file_without_the_columns_is_refused():
    with pytest.raises(ExportError):
        read("a\tb\n1\t2\n")


@pytest.mark.parametrize(
    ("text", "plain"),
    [("$1,234.56", "1234.56"), ("($4.26)", "-4.26"), ("-$4.26", "-4.26"), ("0.90", "0.90")],
)
def test_report_amounts_keep_their_sign(text, plain):
    assert amount_text(text) == plain


def test_the_daily_feed_file_name_says_its_format():
    assert detect_format("shop-20-earnings-report-20260105.tsv") == "amazon-earnings"


@pytest.mark.process
def test_the_command_imports_it_for_an_import_only_connection(tmp_path, database):
    env = {
        **os.environ,
        "EDGE_DATABASE": database,
        "EDGE_SECRET_KEY": "amazon-import-secret-" + "a" * 32,
        "EDGE_SECRET_FILE": str(tmp_path / "secret.key"),
    }

    def admin(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "admin", *args],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
        )  # fmt: skip

    uid = admin("account", "create", "--plan", "pro").stdout.strip()
    connected = admin(
        "network", "connect", "--account", uid, "--network", "amazon", "--import-only",
        "--currency", "USD",
    )  # fmt: skip
    assert connected.returncode == 0, connected.stderr
    report = tmp_path / "shop-20-earnings-report-20260131.tsv"
    report.write_text(FEED)
    first = admin(
        "--json", "commissions", "import", "--account", uid, "--network", "amazon", str(report)
    )
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["inserted"] == 4
    again = admin(
        "--json", "commissions", "import", "--account", uid, "--network", "amazon", str(report)
    )
    assert again.returncode == 0, again.stderr
    assert (json.loads(again.stdout)["inserted"], json.loads(again.stdout)["unchanged"]) == (0, 4)
