"""Commission exports held as text, parsed whole: what the importer's tests compare."""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Iterator

from accounts.importer import read_export
from accounts.statusmap import StatusMap
from store.base import NewCommission


def parse_export(
    text: str,
    fmt: str,
    network: str,
    statuses: StatusMap,
    zone: dt.tzinfo | None = None,
    now: dt.datetime | None = None,
) -> list[NewCommission]:
    """Every commission of an export held as text, or ExportError with every problem
    found (read_export, all at once)."""
    lines = io.StringIO(text, newline="") if fmt == "csv" else _jsonl_lines(text)
    return [row for rows in read_export(lines, fmt, network, statuses, zone, now) for row in rows]


def _jsonl_lines(text: str) -> Iterator[str]:
    # At "\n" only: str.splitlines would also cut at U+2028, NEL and others, which JSON
    # strings may hold as they are.
    return (match.group() for match in re.finditer(r"[^\n]*\n|[^\n]+$", text))
