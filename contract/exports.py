"""Exports of /v1/commissions and /v1/commissions/summary: their formats, media types,
CSV dialects and file names (the edge's writer, the query parser, the OpenAPI document and
the tests read them here)."""

from __future__ import annotations

from dataclasses import dataclass

JSON_FORMAT = "json"
CSV_FORMAT = "csv"
NDJSON_FORMAT = "ndjson"
FORMATS: tuple[str, ...] = (JSON_FORMAT, CSV_FORMAT, NDJSON_FORMAT)

CSV = "text/csv"
NDJSON = "application/x-ndjson"
# The media type of each export format, as Accept asks for it and Content-Type answers.
MEDIA_TYPES: dict[str, str] = {CSV_FORMAT: CSV, NDJSON_FORMAT: NDJSON}
CONTENT_TYPES: dict[str, str] = {
    CSV_FORMAT: f"{CSV}; charset=utf-8; header=present",
    NDJSON_FORMAT: f"{NDJSON}; charset=utf-8",
}

# Rows an export reads from the store at a time (one keyset read each): what the edge holds
# of an export at once, whatever its length.
EXPORT_CHUNK = 1_000


@dataclass(frozen=True, slots=True)
class Dialect:
    """How a CSV export is written."""

    name: str
    delimiter: str
    decimal: str  # the decimal separator of amounts
    bom: bool  # a UTF-8 byte order mark first: how Excel tells UTF-8 from a local code page


RFC4180 = Dialect("rfc4180", ",", ".", bom=False)
# Spreadsheets in comma-decimal locales (French, German, ...): `;` between cells, `12,30`.
EXCEL_EU = Dialect("excel-eu", ";", ",", bom=True)
DIALECTS: dict[str, Dialect] = {d.name: d for d in (RFC4180, EXCEL_EU)}


def file_name(endpoint: str, export_format: str) -> str:
    """The Content-Disposition file name of an export (`commissions.csv`)."""
    stem = "commissions" if endpoint == "commissions" else "commission-summary"
    return f"{stem}.{export_format}"
