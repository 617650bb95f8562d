"""Amazon Associates' earnings report, read as an export (`commissions import --format
amazon-earnings`): Amazon has no reporting API, only this tab-separated file (the daily
`<tag>-earnings-report-YYYYMMDD.tsv` of its data feed, or the "Fee-Earnings" report saved
from Associates Central).

Its rows carry no transaction id and no currency. Each row's id is built from what the row
says (its date, ASIN, tracking id, sub-tag, link type, seller, quantity, price, revenue and
earnings), hashed, with the count of identical rows before it in the file: the same file
imported again, or a day's file downloaded twice, gives the same ids, so re-importing
updates rows instead of adding them. The currency is the connection's
(`network connect --import-only --currency USD`). A refund is a row of negative earnings:
kept as it is, a new negative row, never turned positive. Amazon states no status per row:
the word kept is `shipped` (or `returned` for a negative row), which the status table does
not map, so the status is `unknown` until Amazon's own terms say more [U].
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator

FORMAT = "amazon-earnings"
# The report's column names (lower case, spaces and punctuation dropped) -> the meaning.
# The data feed's own names first, then the ones of the report saved from the website.
COLUMNS = {
    "asin": "asin",
    "category": "category",
    "date": "date",
    "edate": "edate",
    "earnings": "earnings",
    "linktype": "linktype",
    "price": "price",
    "qty": "qty",
    "rate": "rate",
    "revenue": "revenue",
    "seller": "seller",
    "subtag": "subtag",
    "tag": "tag",
    "title": "title",
    "name": "title",
    "trackingid": "tag",
    "dateshipped": "date",
    "itemsshipped": "qty",
    "adfees": "earnings",
    "devicetypegroup": "device",
    "returns": "returns",
    "direct": "direct",
}
REQUIRED = ("date", "earnings")
# What makes two rows the same sale (the id is their digest and their count).
IDENTITY = (
    "date",
    "asin",
    "title",
    "tag",
    "subtag",
    "linktype",
    "seller",
    "qty",
    "price",
    "revenue",
    "earnings",
)
_NAME = re.compile(r"\(.*?\)|[^a-z0-9]")


def column_name(text: str) -> str:
    """`Ad Fees($)` -> `adfees`: the name without its unit, case or punctuation."""
    return _NAME.sub("", text.strip().lower())


def amount_text(value: str) -> str:
    """A report amount as plain decimal text: `$1,234.56` -> `1234.56`, `(4.26)` and
    `-$4.26` -> `-4.26`. Anything else is returned as it is (the importer refuses it)."""
    text = value.strip()
    negative = text.startswith("(") and text.endswith(")")
    if negative:
        text = text[1:-1].strip()
    text = text.lstrip("$€£¥").strip()
    if text.startswith("-"):
        if negative:
            return value  # a sign inside parentheses: refused as written
        negative, text = True, text[1:].lstrip("$€£¥").strip()
    if re.fullmatch(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?", text):
        text = text.replace(",", "")
    return ("-" if negative else "") + text


def records(
    lines: Iterable[str], problems: list[tuple[int, str, str]], currency: str | None
) -> Iterator[tuple[int, dict[str, object]]]:
    """The report's rows as importer records (canonical column names), one at a time.
    Lines before the header (a title line such as "Fee-Earnings reports from ...") are
    skipped; `problems` gets (line, column, why) for what cannot be read."""
    if not currency:
        problems.append(
            (
                1,
                "currency",
                "Amazon's report names no currency: connect the network with "
                "--currency (network connect --import-only --currency USD)",
            )
        )
    reader = csv.reader(lines, delimiter="\t", strict=True)
    header: list[str] | None = None
    seen: Counter[str] = Counter()
    try:
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                names = [COLUMNS.get(column_name(cell), "") for cell in row]
                if all(need in names for need in REQUIRED):
                    header = names
                elif line > 5:
                    problems.append((line, "header", "no header with date and earnings columns"))
                    return
                continue
            if len(row) != len(header):
                problems.append(
                    (line, "row", f"has {len(row)} fields, the header has {len(header)}")
                )
                continue
            cells = {name: cell.strip() for name, cell in zip(header, row, strict=True) if name}
            yield line, record(cells, seen, currency)
    except csv.Error as exc:
        problems.append((reader.line_num, "file", f"not a tab-separated report ({exc})"))
        return
    if header is None:
        problems.append((1, "header", "no header with date and earnings columns"))


def record(cells: dict[str, str], seen: Counter[str], currency: str | None) -> dict[str, object]:
    """One report row as an importer record; `seen` counts the identical rows before it."""
    identity = "\t".join(cells.get(name, "") for name in IDENTITY)
    digest = hashlib.blake2b(identity.encode(), digest_size=12).hexdigest()
    seen[digest] += 1
    earnings = amount_text(cells.get("earnings", ""))
    revenue = cells.get("revenue")
    out: dict[str, object] = {
        "externalId": f"amz-{digest}-{seen[digest]}",
        "programName": "Amazon Associates",
        "programExternalId": cells.get("tag") or None,
        "status": "returned" if earnings.startswith("-") else "shipped",
        "commissionAmount": earnings,
        "saleAmount": amount_text(revenue) if revenue else None,
        "currency": currency or "",
        "transactedAt": cells.get("date", ""),
        "subId": cells.get("subtag") or None,
    }
    return out
