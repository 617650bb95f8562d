"""Parsing of commission exports (CSV or JSON Lines) into validated NewCommission rows.

Pure functions over a stream: lines in (text_lines reads them from a file), chunks of
valid rows out, then every problem found, if any, as ExportError. The admin CLI writes
the chunks as they come in one store transaction (store.commissions.upsert_stream),
which that error rolls back: a file with one bad row imports nothing, and no file is held
whole. The formats (columns, timestamps, amounts) are documented in docs/accounts.md.
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import hashlib
import itertools
import json
import re
import unicodedata
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from zoneinfo import ZoneInfo

from accounts import amazon
from accounts.statusmap import StatusMap
from contract import commission, currencies
from contract.vocabulary import FLAG_PATTERN
from store.base import AMOUNT_RE, NewCommission, format_timestamp


def _fields_of() -> dict[str, tuple[str, ...]]:
    by_column: dict[str, tuple[str, ...]] = {}
    for f in commission.FIELDS:
        by_column[f.column] = (*by_column.get(f.column, ()), f.name)
    return by_column


def _parsed(columns: Iterable[str]) -> tuple[tuple[str, commission.Kind, int], ...]:
    """Each column, its kind (that of the field it names) and the limit of the text it
    holds (the status column: the network's word, within the raw status's limit)."""
    out = []
    for column in columns:
        own = next(f for f in commission.FIELDS if f.member == column)
        limit = next((f.limit for f in commission.FIELDS if f.column == column and f.limit), 0)
        out.append((column, own.kind, limit))
    return tuple(out)


# The accepted columns (JSON members), in the order problems are reported, and the
# NewCommission fields each one states (see NewCommission.stated): contract.commission's
# FIELDS, each under its import column (the status column states the status and the
# network's word for it).
FIELDS_OF: dict[str, tuple[str, ...]] = _fields_of()
COLUMNS: tuple[str, ...] = tuple(FIELDS_OF)
COLUMN_OF = {field: column for column, fields in FIELDS_OF.items() for field in fields}
# The columns a record must have a value in: those of the fields never null, but the
# status (a record without one is `unknown`).
REQUIRED: frozenset[str] = frozenset(
    f.column for f in commission.FIELDS if not f.nullable and f.kind != "status"
)
# (column, kind, text limit), in COLUMNS order.
PARSED = _parsed(COLUMNS)
TEXT_LIMITS = {column: limit for column, kind, limit in PARSED if kind == "text"}
STATUS_LIMIT = next(limit for _, kind, limit in PARSED if kind == "status")
# Other header names of a column (contract.commission's aliases).
ALIASES = {alias: f.column for f in commission.FIELDS for alias in f.aliases}
# The status column, read into the status and the network's word (StatusMap.normalise);
# every other field is its column's parsed value.
_STATUS_COLUMN = COLUMN_OF["status"]
_PLAIN = tuple((f.name, f.column) for f in commission.FIELDS if f.column != _STATUS_COLUMN)
MAX_REPORTED = 20
PROBLEMS_KEPT = 10_000  # then only the first MAX_REPORTED, and a count of the others
FORMATS = ("csv", "jsonl", amazon.FORMAT)

_AMOUNT_INPUT = re.compile(
    rf"([+-]?)([0-9]{{1,{commission.AMOUNT_DIGITS}}})(?:\.([0-9]{{1,{commission.AMOUNT_SCALE}}}))?"
)
_EPOCH = re.compile(r"[0-9]{9,11}")
_DATE_ONLY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})[T ](?P<time>[0-9]{2}:[0-9]{2}(?::[0-9]{2})?)"
    r"(?:[.,](?P<fraction>[0-9]{1,9}))?\s*(?P<offset>Z|z|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
_CURRENCY = re.compile(r"[A-Za-z]{3}")


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    field: str
    message: str

    def render(self, source: str) -> str:
        return f"{source}:{self.line}: {self.field}: {self.message}"


class ExportError(Exception):
    """The export has problems; nothing of it may be imported."""

    def __init__(self, problems: list[Problem], more: int = 0) -> None:
        super().__init__(f"{len(problems) + more} problem(s)")
        self.problems = problems
        self.more = more  # problems found after those listed, and not kept

    def render(self, source: str) -> list[str]:
        lines = [p.render(source) for p in self.problems[:MAX_REPORTED]]
        hidden = len(self.problems) + self.more - MAX_REPORTED
        if hidden > 0:
            lines.append(f"{source}: ... and {hidden} more problems")
        return lines


class JsonNumber(str):
    """A JSON number kept as the literal text the file has (never a float)."""


class _FieldError(ValueError):
    pass


# --- Single values ----------------------------------------------------------------------


def parse_amount(value: object) -> str:
    """Canonical decimal text of an amount, exactly as reported ("12.30" stays "12.30")."""
    if not isinstance(value, str):
        raise _FieldError("expected a number or a decimal string")
    match = _AMOUNT_INPUT.fullmatch(_trim(value))
    if not match:
        raise _FieldError(
            f"{value!r} is not a plain decimal number (digits, one '.' as decimal separator, "
            "or ',' in a file separated by ';' or tabs; no thousands separators, no exponent)"
        )
    sign, whole, fraction = match.groups()
    text = str(int(whole)) + (f".{fraction}" if fraction is not None else "")
    text = ("-" if sign == "-" else "") + text
    assert AMOUNT_RE.fullmatch(text)
    return text


def parse_timestamp(value: object, zone: dt.tzinfo | None, latest: str | None = None) -> str:
    """The UTC `YYYY-MM-DDTHH:MM:SSZ` form of an accepted timestamp (fractions truncated),
    within contract.commission's range: from 1990 to `latest` (default: a day from now)."""
    latest = latest or commission.latest_instant(dt.datetime.now(dt.UTC))
    if isinstance(value, JsonNumber) or (isinstance(value, str) and _EPOCH.fullmatch(value)):
        if not _EPOCH.fullmatch(value):
            raise _FieldError(f"{value!r}: Unix time must be whole seconds (9 to 11 digits)")
        try:
            moment = dt.datetime.fromtimestamp(int(value), dt.UTC)
        except (OverflowError, OSError, ValueError):
            raise _FieldError(f"{value!r} is out of range ({_RANGE})") from None
        return _in_range(moment, value, latest)
    if not isinstance(value, str):
        raise _FieldError("expected a timestamp string")
    text = _trim(value)
    if _DATE_ONLY.fullmatch(text):
        try:
            day = dt.date.fromisoformat(text)
        except ValueError:
            raise _FieldError(f"{text!r} is not a calendar date") from None
        moment = dt.datetime.combine(day, dt.time(), zone or dt.UTC)
        return _in_range(moment, text, latest)
    match = _DATE_TIME.fullmatch(text)
    if not match:
        raise _FieldError(
            f"{text!r} is not an ISO 8601 date-time (e.g. 2026-03-04T10:11:12Z or "
            "2026-03-04 11:11:12+01:00), a date or Unix seconds"
        )
    offset = match["offset"]
    if offset in {"Z", "z"}:
        offset = "+00:00"
    elif offset and len(offset) == 3:
        offset += ":00"
    elif offset and ":" not in offset:
        offset = offset[:3] + ":" + offset[3:]
    time_part = match["time"] if match["time"].count(":") == 2 else match["time"] + ":00"
    try:
        moment = dt.datetime.fromisoformat(f"{match['date']}T{time_part}{offset or ''}")
    except ValueError:
        raise _FieldError(f"{text!r} is not a real date and time") from None
    if moment.tzinfo is None:
        if zone is None:
            raise _FieldError(f"{text!r} has no UTC offset; add one (Z, +01:00) or pass --timezone")
        moment = _local(moment, zone, text)
    return _in_range(moment, text, latest)


def _local(naive: dt.datetime, zone: dt.tzinfo, shown: str) -> dt.datetime:
    """`naive` read in `zone`. A time the clocks skipped (spring forward) is an error: the
    export or the zone is wrong. A time they showed twice (fall back) is the first one, as
    an export written in local time cannot say which it meant."""
    moment = naive.replace(tzinfo=zone)
    try:
        back = moment.astimezone(dt.UTC).astimezone(zone).replace(tzinfo=None)
    except OverflowError:  # at the ends of the calendar: _in_range says so
        return moment
    if back != naive:
        raise _FieldError(f"{shown!r} does not exist in {zone} (the clocks skipped it)")
    return moment


_RANGE = "from 1990-01-01 to a day from now, in UTC"


def _in_range(moment: dt.datetime, shown: str, latest: str) -> str:
    """The stored form of `moment`; _FieldError when contract.commission refuses it (before
    1990, after `latest`, or past year 9999 once converted to UTC)."""
    try:
        text = format_timestamp(moment)
    except OverflowError:
        text = None
    if text is None or commission.instant_problem(text, latest) is not None:
        raise _FieldError(f"{shown!r} is out of range ({_RANGE})")
    return text


def parse_text(value: object, limit: int) -> str:
    if isinstance(value, JsonNumber):
        # Numeric ids are common in exports: their literal text, within the same limit.
        if len(value) > limit:
            raise _FieldError(f"longer than {limit} characters")
        return str(value)
    if not isinstance(value, str):
        raise _FieldError("expected a string")
    text = _trim(value)
    if len(text) > limit:
        raise _FieldError(f"longer than {limit} characters")
    if not text.isprintable():
        # Spaces other than U+0020 (a no-break space before "%" in French exports) are text,
        # and so are the few format characters real names need (as in submissions:
        # docs/submissions.md); controls, line separators and other invisible characters
        # are not.
        shown = _FLAG.sub("", text)
        bad = next((c for c in shown if not c.isprintable() and not _is_text(c)), None)
        if bad is not None:
            raise _FieldError(f"contains the control or invisible character U+{ord(bad):04X}")
    return text


# What is trimmed off the ends of a value: tabs and Unicode spaces, nothing else. str.strip()
# would also take control characters, line and paragraph separators and NEL off, unseen:
# "CT1\x1f" would be stored as "CT1" and collide with another id.
_BLANKS = "\t" + "".join(chr(c) for c in range(0x3001) if unicodedata.category(chr(c)) == "Zs")
_JSON_SPACE = " \t\r"  # JSON's whitespace, "\n" aside (it ends the line)


def _trim(text: str) -> str:
    return text.strip(_BLANKS)


# Zero-width non-joiner and joiner (Persian words, emoji sequences such as a family) and
# the soft hyphen: invisible, yet part of how the words are written.
_TEXT_FORMAT_CHARS = frozenset("\u200c\u200d\u00ad")
# A subdivision flag (England, Scotland, Wales): a black flag, tag letters, a cancel tag.
# Tag characters anywhere else can hide a message, and are refused.
_FLAG = re.compile(FLAG_PATTERN)


def _is_text(char: str) -> bool:
    return char in _TEXT_FORMAT_CHARS or unicodedata.category(char) == "Zs"


def parse_currency(value: object) -> str:
    if not isinstance(value, str) or not _CURRENCY.fullmatch(_trim(value)):
        raise _FieldError(f"{value!r} is not an ISO 4217 code (three letters, e.g. EUR)")
    code = _trim(value).upper()
    if code not in currencies.CODES:
        raise _FieldError(f"{value!r} is not an ISO 4217 currency code (e.g. EUR, GBP, USD)")
    return code


def _empty(value: object) -> bool:
    return value is None or (isinstance(value, str) and not _trim(value))


# --- Records ----------------------------------------------------------------------------


def parse_record(
    record: Mapping[str, object],
    line: int,
    network: str,
    statuses: StatusMap,
    zone: dt.tzinfo | None = None,
    latest: str | None = None,
) -> tuple[NewCommission | None, list[Problem]]:
    """One record (canonical column names) into a commission, or the problems it has.
    `latest`: the latest instant accepted (default: a day from now)."""
    latest = latest or commission.latest_instant(dt.datetime.now(dt.UTC))
    problems: list[Problem] = []
    out: dict[str, Any] = {}

    for column, kind, limit in PARSED:
        value = record.get(column)
        if _empty(value):
            if column in REQUIRED:
                problems.append(Problem(line, column, "is required"))
            out[column] = None
            continue
        try:
            if kind == "amount":
                out[column] = parse_amount(value)
            elif kind == "instant":
                out[column] = parse_timestamp(value, zone, latest)
            elif kind == "currency":
                out[column] = parse_currency(value)
            else:
                out[column] = parse_text(value, limit)
        except _FieldError as exc:
            problems.append(Problem(line, column, str(exc)))
    if problems:
        return None, problems
    status, raw_status = statuses.normalise(network, out[_STATUS_COLUMN])
    row = NewCommission(
        stated=stated_fields(record),
        status=status,
        raw_status=raw_status,
        **{name: out[column] for name, column in _PLAIN},
    )
    # The parsers above keep to contract.commission already; its check is the last word.
    found = commission.problem(row, latest)
    if found is not None:
        return None, [Problem(line, COLUMN_OF[found[0]], found[1])]
    return row, []


def stated_fields(record: Mapping[str, object]) -> frozenset[str] | None:
    """The fields a record states: those of the columns it has (null or empty included,
    which clear a value); None when it has every column."""
    if len(record) == len(COLUMNS):
        return None
    return frozenset(field for column in record for field in FIELDS_OF[column])


def column_key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).casefold()


_CANONICAL = {column_key(c): c for c in COLUMNS}
_CANONICAL.update({column_key(alias): c for alias, c in ALIASES.items()})


def canonical_columns(names: list[str], line: int) -> tuple[list[str | None], list[Problem]]:
    """Map header names to canonical ones; unknown and repeated names are problems."""
    problems: list[Problem] = []
    mapped: list[str | None] = []
    for name in names:
        canonical = _CANONICAL.get(column_key(name))
        if canonical is None and not _trim(name):
            mapped.append(None)  # a trailing delimiter: an unnamed, ignored column
            continue
        if canonical is None:
            problems.append(Problem(line, name, f"unknown column; accepted: {', '.join(COLUMNS)}"))
        elif canonical in mapped:
            problems.append(Problem(line, name, f"column {canonical} is given twice"))
        mapped.append(canonical)
    return mapped, problems


# --- Files ------------------------------------------------------------------------------

# A file is read READ_BLOCK bytes at a time and written CHUNK_ROWS rows at a time: what an
# import holds is bounded by these (and by the ids seen, for duplicates), not by the file.
READ_BLOCK = 1 << 16
CHUNK_ROWS = 10_000
LINE_MAX = 1 << 20  # characters in one line of a file; no export row comes near it
HEAD_MAX = 1 << 20  # characters at the start of a CSV where its delimiter is detected

_CSV_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")  # as open(newline="") reads lines
_JSONL_LINE = re.compile(r"[^\n]*\n")  # "\r" before "\n" is JSON whitespace


def text_lines(stream: BinaryIO, fmt: str) -> Iterator[str]:
    """The lines of a UTF-8 export (a BOM dropped), each with its line end, read as a
    stream: CSV lines end at "\r\n", "\r" or "\n", JSON Lines at "\n" only. ExportError
    with that one problem for a byte that is not UTF-8 (at its line, counted in "\n") or
    a line longer than LINE_MAX characters."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    ends = _JSONL_LINE if fmt == "jsonl" else _CSV_LINE
    newlines = 0  # in the bytes before the block being decoded
    count = 0  # lines given
    tail = ""  # the start of a line whose end has not been read yet
    while True:
        data = stream.read(READ_BLOCK)
        try:
            text = tail + decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            # exc.object: the block, after at most 3 bytes of an unfinished character.
            line = newlines + exc.object[: exc.start].count(b"\n") + 1
            raise ExportError([Problem(line, "file", "not UTF-8 text")]) from None
        newlines += data.count(b"\n")
        if not data:
            if text:
                yield text
            return
        taken = 0
        for match in ends.finditer(text):
            if match.end() == len(text) and text.endswith("\r"):
                break  # its "\n" may begin the next block
            if match.end() - taken > LINE_MAX:
                break
            yield match.group()
            count += 1
            taken = match.end()
        tail = text[taken:]
        if len(tail) > LINE_MAX:  # ended or not: the same refusal wherever blocks are cut
            problem = Problem(count + 1, "line", f"longer than {LINE_MAX} characters")
            raise ExportError([problem])


CSV_DELIMITERS = (",", ";", "\t")


def _known_columns(head: list[str], delimiter: str) -> int:
    """How many known column names the header row has when read with `delimiter`: the
    first row with a non-blank cell, as the CSV reader sees it (quoted names unquoted, a
    row of empty cells such as ";;;" skipped, as the records' reading skips it)."""
    reader = csv.reader(head, delimiter=delimiter)
    try:
        header = next((row for row in reader if any(_trim(cell) for cell in row)), [])
    except csv.Error:
        return -1
    return sum(column_key(_trim(cell)) in _CANONICAL for cell in header)


def _head(lines: Iterator[str]) -> tuple[list[str], bool]:
    """The first lines, up to HEAD_MAX characters (and the line that passes it), and
    whether they are the whole file."""
    head: list[str] = []
    size = 0
    for line in lines:
        head.append(line)
        size += len(line)
        if size >= HEAD_MAX:
            return head, False
    return head, True


# The amounts of a record, which a comma-decimal locale writes with a decimal comma.
AMOUNT_COLUMNS = tuple(column for column, kind, _ in PARSED if kind == "amount")
_DECIMAL_COMMA = re.compile(r"\s*[+-]?[0-9]+,[0-9]+\s*")


def decimal_point(cell: str) -> str:
    """An amount of a CSV separated by `;` or tabs, as spreadsheets in comma-decimal locales
    write it (`12,30`): the comma, the only separator such a cell can hold, read as the
    decimal point. Anything else is left for parse_amount to judge."""
    return cell.replace(",", ".") if _DECIMAL_COMMA.fullmatch(cell) else cell


def read_csv(
    lines: Iterable[str], problems: list[Problem]
) -> Iterator[tuple[int, dict[str, object]]]:
    """Records of a CSV export with a header row; `,`, `;` or tab separated (detected
    from the header in the first HEAD_MAX characters), one at a time from its lines (as
    text_lines or open(newline="") give them); the problems found are appended to
    `problems`. Separated by `;` or tabs, an amount may have a decimal comma."""
    rest = iter(lines)
    head, whole = _head(rest)
    if whole and not "".join(head).strip(_BLANKS + "\r\n"):
        problems.append(Problem(1, "header", "the file is empty; expected a header row"))
        return
    delimiter = max(CSV_DELIMITERS, key=lambda d: _known_columns(head, d))  # ties: the first
    reader = csv.reader(itertools.chain(head, rest), delimiter=delimiter, strict=True)
    columns: list[str | None] | None = None
    line = 1
    try:
        for row in reader:
            start, line = line, reader.line_num + 1
            if not any(_trim(cell) for cell in row):
                continue
            if columns is None:
                columns, header_problems = canonical_columns([_trim(c) for c in row], start)
                problems.extend(header_problems)
                missing = sorted(REQUIRED - set(filter(None, columns)))
                if missing:
                    problems.append(
                        Problem(start, "header", f"missing column(s): {', '.join(missing)}")
                    )
                continue
            if len(row) != len(columns):
                problems.append(
                    Problem(start, "row", f"has {len(row)} fields, the header has {len(columns)}")
                )
                continue
            unnamed = [i for i, c in enumerate(columns) if c is None and _trim(row[i])]
            if unnamed:
                # Only an empty cell may sit under an unnamed column (a trailing delimiter):
                # a value there would be dropped without a word.
                where = ", ".join(str(i + 1) for i in unnamed)
                problems.append(Problem(start, "row", f"a value in unnamed column {where}"))
                continue
            record: dict[str, object] = {
                c: cell for c, cell in zip(columns, row, strict=True) if c is not None
            }
            if delimiter != ",":
                for name in AMOUNT_COLUMNS:
                    cell = record.get(name)
                    if isinstance(cell, str):
                        record[name] = decimal_point(cell)
            yield start, record
    except csv.Error as exc:
        problems.append(Problem(line, "row", f"not valid CSV: {exc}"))


class _RepeatedKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_repeats(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object's members; a member given twice is an error, not "the last one wins"."""
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise _RepeatedKeyError(key)
        result[key] = value
    return result


def read_jsonl(
    lines: Iterable[str], problems: list[Problem]
) -> Iterator[tuple[int, dict[str, object]]]:
    """Records of a JSON Lines export: one JSON object per line (lines cut at "\n" only),
    blank lines ignored, one at a time; the problems found are appended to `problems`."""
    for number, line in enumerate(lines, start=1):
        if not line.strip(_JSON_SPACE + "\n"):
            continue
        try:
            value = json.loads(
                line, parse_float=JsonNumber, parse_int=JsonNumber, object_pairs_hook=_no_repeats
            )
        except _RepeatedKeyError as exc:
            problems.append(Problem(number, exc.key, "given twice; give it once"))
            continue
        except ValueError as exc:
            problems.append(Problem(number, "line", f"not valid JSON: {exc}"))
            continue
        if not isinstance(value, dict):
            problems.append(Problem(number, "line", "expected a JSON object"))
            continue
        columns, column_problems = canonical_columns(list(value), number)
        problems.extend(column_problems)
        yield number, {c: item for c, item in zip(columns, value.values(), strict=True) if c}


def detect_format(path: str) -> str:
    name = Path(path).name.lower()
    if re.fullmatch(r".*earnings-report.*\.tsv", name):
        return amazon.FORMAT
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in {".jsonl", ".ndjson", ".json"}:
        return "jsonl"
    raise ValueError(
        f"cannot tell the format of {path!r} from its name; pass --format {'|'.join(FORMATS)}"
    )


def decode(data: bytes) -> str:
    """UTF-8 text (a BOM is dropped); ExportError naming the line of a bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ExportError([Problem(line, "file", "not UTF-8 text")]) from None


class FirstLines:
    """The line each external id of a file is first seen on, in 25 to 50 bytes an id: a
    table (open addressing, 20-byte slots kept 40 to 80% full) of the ids' 128-bit
    digests, not the ids (a dict of them takes over 100 bytes an id: more than a
    million-row file's rows need at a time). Two ids with one digest, taken for a repeat,
    have odds near 1e-27 in a file of a million rows."""

    def __init__(self) -> None:
        self._high, self._low, self._lines = _slots(1 << 12)
        self._count = 0

    def first(self, external_id: str, line: int) -> int:
        """The line `external_id` was first seen on; `line`, noted, when it is new."""
        digest = hashlib.blake2b(external_id.encode(), digest_size=16).digest()
        high, low = int.from_bytes(digest[:8]), int.from_bytes(digest[8:])
        mask = len(self._lines) - 1
        slot = low & mask
        while seen := self._lines[slot]:
            if self._low[slot] == low and self._high[slot] == high:
                return seen
            slot = (slot + 1) & mask
        self._high[slot], self._low[slot], self._lines[slot] = high, low, line
        self._count += 1
        if self._count * 5 > len(self._lines) * 4:  # 80% full: twice the size
            old = (self._high, self._low, self._lines)
            self._high, self._low, self._lines = _slots(2 * len(self._lines))
            mask = len(self._lines) - 1
            for taken in zip(*old, strict=True):
                if taken[2]:
                    slot = taken[1] & mask
                    while self._lines[slot]:
                        slot = (slot + 1) & mask
                    self._high[slot], self._low[slot], self._lines[slot] = taken
        return line


def _slots(size: int) -> tuple[array[int], array[int], array[int]]:
    """`size` free slots: the digests' two halves, and the line (0: free; lines count
    from 1)."""
    return array("Q", bytes(8 * size)), array("Q", bytes(8 * size)), array("I", bytes(4 * size))


def read_export(
    lines: Iterable[str],
    fmt: str,
    network: str,
    statuses: StatusMap,
    zone: dt.tzinfo | None = None,
    now: dt.datetime | None = None,
    chunk: int | None = None,
    currency: str | None = None,
) -> Iterator[list[NewCommission]]:
    """The commissions of an export's lines (see text_lines), `chunk` rows at a time
    while no problem is found; after one, the rest is only checked, and ExportError with
    every problem found ends the iteration. Whoever writes the chunks as they come does so
    in one transaction that this error rolls back. Instants may be at most a day past
    `now` (default: the wall clock). `chunk` defaults to CHUNK_ROWS as it is when called.
    `currency`: the connection's, for a format whose rows name none (amazon-earnings)."""
    chunk = CHUNK_ROWS if chunk is None else chunk
    latest = commission.latest_instant(now or dt.datetime.now(dt.UTC))
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of: {', '.join(FORMATS)}")
    problems: list[Problem] = []
    records = _records(lines, fmt, problems, currency)
    rows: list[NewCommission] = []
    first_seen = FirstLines()  # the one part of an import that grows with the file
    more = 0
    for line, record in records:
        if len(problems) > PROBLEMS_KEPT:  # a file all wrong: keep what will be printed
            problems.sort(key=lambda p: p.line)
            more += len(problems) - MAX_REPORTED
            del problems[MAX_REPORTED:]
        row, row_problems = parse_record(record, line, network, statuses, zone, latest)
        problems.extend(row_problems)
        if row is None:
            continue
        first = first_seen.first(row.external_id, line)
        if first != line:
            problems.append(Problem(line, "externalId", f"duplicate of line {first}"))
            continue
        if problems:  # a file with a problem imports nothing: keep no more of it
            rows.clear()
            continue
        rows.append(row)
        if len(rows) >= chunk:
            yield rows
            rows = []
    if problems:
        problems.sort(key=lambda p: p.line)
        raise ExportError(problems, more)
    if rows:
        yield rows


def _records(
    lines: Iterable[str], fmt: str, problems: list[Problem], currency: str | None
) -> Iterator[tuple[int, Mapping[str, object]]]:
    if fmt == "csv":
        return read_csv(lines, problems)
    if fmt == "jsonl":
        return read_jsonl(lines, problems)
    return _amazon(lines, problems, currency)


def _amazon(
    lines: Iterable[str], problems: list[Problem], currency: str | None
) -> Iterator[tuple[int, Mapping[str, object]]]:
    found: list[tuple[int, str, str]] = []
    for line, record in amazon.records(lines, found, currency):
        problems.extend(Problem(*p) for p in found)
        found.clear()
        yield line, record
    problems.extend(Problem(*p) for p in found)


def zone_named(name: str | None) -> dt.tzinfo | None:
    """The IANA zone for naive timestamps (`--timezone Europe/Paris`), or None."""
    if name is None:
        return None
    if name.upper() in {"UTC", "Z"}:
        return dt.UTC
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}") from exc
