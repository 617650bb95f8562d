"""Reading answers that are not JSON: XML (SOAP envelopes, XML reports) and CSV/TSV
reports, bounded and hardened, written once for every connector.

XML goes through defusedxml: a DTD, an entity declaration (the "billion laughs") or an
external reference refuses the whole answer, never expands. CSV is read by header name,
its byte-order mark stripped, its rows, columns and fields bounded; a row whose cells do
not match the header is a `BadRow`, which `collect` refuses with its reason while the other
rows stand. Every failure is a SyncError naming the network, never quoting the answer.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from sync.errors import MalformedResponse, ResponseTooLarge, SyncError

# The largest XML or CSV answer read (the HTTP layer's cap bounds what arrives already;
# this bounds what a caller hands in from elsewhere, a file for one).
MAX_BYTES = 64 * 2**20


# --- XML --------------------------------------------------------------------------------


def parse_xml(network: str, body: bytes, *, max_bytes: int = MAX_BYTES) -> Element:
    """The root element of an XML answer. A DTD, an entity or an external reference is
    refused (MalformedResponse), as is an answer that is not well-formed."""
    if len(body) > max_bytes:
        raise ResponseTooLarge(f"{network}: the XML answer is larger than {max_bytes} bytes")
    failed: str | None = None
    try:
        return fromstring(body, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException:
        failed = "declares a DTD or entities, which are never read"
    except (ParseError, ValueError, UnicodeError):
        failed = "is not well-formed XML"
    # Raised outside the handler: the parser's message may quote the answer.
    raise MalformedResponse(f"{network}: the answer {failed}")


def local(tag: object) -> str:
    """An element's name without its namespace (`{urn:x}Body` -> `Body`)."""
    text = tag if isinstance(tag, str) else ""
    return text.rpartition("}")[2]


def children(element: Element, name: str) -> list[Element]:
    """The element's children named `name` (any namespace)."""
    return [child for child in element if local(child.tag) == name]


def find(element: Element, *path: str) -> Element | None:
    """The first descendant along `path` of local names, None when a step is absent."""
    current: Element | None = element
    for name in path:
        if current is None:
            return None
        current = next((c for c in current if local(c.tag) == name), None)
    return current


def find_all(element: Element, name: str) -> list[Element]:
    """Every descendant named `name` (any namespace), in document order."""
    return [e for e in element.iter() if local(e.tag) == name]


def text(element: Element | None) -> str | None:
    """An element's text, stripped; None when absent or empty."""
    if element is None or element.text is None:
        return None
    value = element.text.strip()
    return value or None


def record(element: Element) -> dict[str, Any]:
    """An XML record as a dict, the way connectors read JSON ones: its attributes, then its
    children by local name (a leaf's text, a nested element's own record; a name repeated
    gives a list of them). An `xsi:nil` child reads as None."""
    out: dict[str, Any] = {local(k): v for k, v in element.attrib.items()}
    repeated = _repeated(element)
    for child in element:
        name = local(child.tag)
        value: Any
        if any(local(k) == "nil" and v == "true" for k, v in child.attrib.items()):
            value = None
        elif len(child):
            value = record(child)
        else:
            value = child.text.strip() if child.text is not None else ""
        if name in repeated:
            out.setdefault(name, []).append(value)
        else:
            out[name] = value
    return out


def _repeated(element: Element) -> set[str]:
    seen: set[str] = set()
    twice: set[str] = set()
    for child in element:
        name = local(child.tag)
        (twice if name in seen else seen).add(name)
    return twice


@dataclass(frozen=True, slots=True)
class SoapFault:
    """A SOAP Fault's code and text (the network's words: shown only through
    `sync.runner.shown`, bounded, never with a secret)."""

    code: str
    message: str


def soap_body(network: str, root: Element) -> Element:
    """The first element inside a SOAP envelope's Body; MalformedResponse without one."""
    if local(root.tag) != "Envelope":
        raise MalformedResponse(f"{network}: the answer is not a SOAP envelope")
    body = find(root, "Body")
    if body is None or not len(body):
        raise MalformedResponse(f"{network}: the SOAP envelope has no body")
    return body[0]


def soap_fault(root: Element) -> SoapFault | None:
    """The envelope's Fault (SOAP 1.1 faultcode/faultstring, or 1.2 Code/Reason), if any."""
    fault = find(root, "Body", "Fault")
    if fault is None:
        return None
    code = text(find(fault, "faultcode")) or text(find(fault, "Code", "Value")) or ""
    message = text(find(fault, "faultstring")) or text(find(fault, "Reason", "Text")) or ""
    return SoapFault(code[:100], message[:200])


def is_soap_fault(body: bytes) -> bool:
    """Whether `body` is a SOAP envelope holding a Fault (False for anything else, a body
    that is not XML included)."""
    try:
        root = parse_xml("soap", body)
    except SyncError:
        return False
    return local(root.tag) == "Envelope" and soap_fault(root) is not None


# --- CSV and TSV ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableLimits:
    """What bounds a CSV/TSV answer: its data rows, its columns, one field's characters."""

    max_rows: int = 1_000_000
    max_columns: int = 500
    max_field: int = 10_000


@dataclass(frozen=True, slots=True)
class BadRow:
    """A row that cannot be read as a record (its cells do not match the header, or a
    field is too long); `collect` refuses it with `reason`."""

    line: int
    reason: str


def read_table(
    network: str,
    body: bytes,
    *,
    delimiter: str = ",",
    required: Iterable[str] = (),
    limits: TableLimits = TableLimits(),
    encoding: str = "utf-8",
    allow_empty: bool = True,
) -> list[dict[str, str] | BadRow]:
    """The data rows of a CSV (or, with `delimiter="\\t"`, TSV) answer, each a dict by the
    header's names (trimmed; a byte-order mark before the first is dropped).

    MalformedResponse: the text does not decode, its quoting is broken, the header repeats
    a name or lacks one of `required`, or there are more rows or columns than `limits`
    allow. An empty answer (no header at all) is no rows when `allow_empty`."""
    if len(body) > MAX_BYTES:
        raise ResponseTooLarge(f"{network}: the report is larger than {MAX_BYTES} bytes")
    failed: str | None = None
    try:
        content = body.decode(encoding).removeprefix("\ufeff")
    except (UnicodeDecodeError, LookupError):
        failed = f"the report is not {encoding} text"
    if failed is not None:
        raise MalformedResponse(f"{network}: {failed}")
    reader = csv.reader(io.StringIO(content, newline=""), delimiter=delimiter, strict=True)
    rows: list[dict[str, str] | BadRow] = []
    header: Sequence[str] | None = None
    try:
        for cells in reader:
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue  # a blank line
            if header is None:
                header = _header(network, cells, required, limits)
                continue
            if len(rows) >= limits.max_rows:
                raise MalformedResponse(f"{network}: more than {limits.max_rows} rows")
            rows.append(_row(header, cells, reader.line_num, limits))
    except csv.Error:
        failed = "the report's quoting is broken, or a field is past the reader's limit"
    if failed is not None:
        raise MalformedResponse(f"{network}: {failed}")
    if header is None and not allow_empty:
        raise MalformedResponse(f"{network}: the report has no header")
    return rows


def _header(
    network: str, cells: Sequence[str], required: Iterable[str], limits: TableLimits
) -> list[str]:
    if len(cells) > limits.max_columns:
        raise MalformedResponse(f"{network}: more than {limits.max_columns} columns")
    names = [c.strip() for c in cells]
    if len(set(names)) != len(names):
        raise MalformedResponse(f"{network}: the report's header repeats a column name")
    missing = [name for name in required if name not in names]
    if missing:
        raise MalformedResponse(f"{network}: the report lacks the columns {', '.join(missing)}")
    return names


def _row(
    header: Sequence[str], cells: Sequence[str], line: int, limits: TableLimits
) -> dict[str, str] | BadRow:
    if len(cells) != len(header):
        return BadRow(line, f"line {line}: {len(cells)} cells for {len(header)} columns")
    if any(len(cell) > limits.max_field for cell in cells):
        return BadRow(line, f"line {line}: a field longer than {limits.max_field} characters")
    return dict(zip(header, cells, strict=True))
