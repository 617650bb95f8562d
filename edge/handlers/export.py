"""CSV and NDJSON exports of /v1/commissions and /v1/commissions/summary: the format a
request asks for, the checks only an export makes, the encoding of rows, and the stream.

An export is written with aiohttp's StreamResponse chunk by chunk as the store gives the
rows (contract.exports.EXPORT_CHUNK at a time, each chunk one keyset read): the edge holds
one chunk, never the whole export, and `write` waits while a slow client's socket is full.
The first chunk is read before the status line is sent, so a store that cannot be read
answers 503 as the JSON form does; one failing later can no longer change the status, so
the connection is cut before the end of the chunked body: a client sees a truncated
transfer, never a short file that looks whole.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from typing import Any

import orjson
from aiohttp import web

from contract import exports
from contract.exports import CSV_FORMAT, JSON_FORMAT, NDJSON_FORMAT, Dialect
from contract.resources import DECIMAL, Resource
from edge import appkeys
from edge.http.errors import invalid
from edge.http.httpcache import accepts_gzip
from edge.http.ratelimit import rate_headers
from edge.http.requestid import REQUEST_ID_HEADER

log = logging.getLogger("edge.export")


def accepted_format(accept: str) -> str:
    """The export format an Accept header asks for by its media type (text/csv,
    application/x-ndjson), json for any other; a type refused with q=0 does not count."""
    for item in accept.split(","):
        media, *options = (part.strip() for part in item.split(";"))
        if any(o.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for o in options):
            continue
        for name, media_type in exports.MEDIA_TYPES.items():
            if media.lower() == media_type:
                return name
    return JSON_FORMAT


def chosen_format(params: Mapping[str, Any], accept: str) -> str:
    """The answer's format: the `format` parameter, else what Accept names. `dialect`
    goes with CSV only: invalid_parameter otherwise."""
    export_format: str = params.get("format") or accepted_format(accept)
    if "dialect" in params and export_format != CSV_FORMAT:
        raise invalid("dialect", "dialect applies to a CSV export only (format=csv)")
    return export_format


def refuse_paging(params: Collection[str]) -> None:
    """An export holds every matching row from the first: limit and cursor page nothing."""
    for name in ("limit", "cursor"):
        if name in params:
            raise invalid(
                name,
                f"{name} does not apply to an export, which holds every matching row; "
                "use the filters to narrow it",
            )


def amount_columns(resource: Resource) -> frozenset[str]:
    """The members of `resource` that are amounts (written with the dialect's decimal)."""
    return frozenset(f.name for f in resource.fields if f.format == DECIMAL)


def csv_chunk(
    items: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    amounts: frozenset[str],
    dialect: Dialect,
) -> bytes:
    """Rows of an export as CSV lines (CRLF, quoted only where needed, RFC 4180): null an
    empty cell, amounts as stored with the dialect's decimal separator."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=dialect.delimiter, lineterminator="\r\n")
    for item in items:
        cells = []
        for name in columns:
            value = item[name]
            if value is None:
                cells.append("")
            elif name in amounts:
                cells.append(str(value).replace(".", dialect.decimal))
            else:
                cells.append(value)
        writer.writerow(cells)
    return out.getvalue().encode("utf-8")


def csv_header(columns: Sequence[str], dialect: Dialect) -> bytes:
    """The header row, after a byte order mark when the dialect wants one."""
    out = io.StringIO()
    csv.writer(out, delimiter=dialect.delimiter, lineterminator="\r\n").writerow(columns)
    return ("\ufeff" if dialect.bom else "").encode("utf-8") + out.getvalue().encode("utf-8")


def ndjson_chunk(items: Sequence[Mapping[str, Any]]) -> bytes:
    """Rows of an export as NDJSON: one JSON object a line, amounts as JSON numbers."""
    return b"".join(orjson.dumps(item) + b"\n" for item in items)


async def stream(
    request: web.Request,
    *,
    endpoint: str,
    export_format: str,
    dialect: Dialect,
    resource: Resource,
    headers: Mapping[str, str],
    first: list[dict[str, Any]],
    rest: AsyncIterator[list[dict[str, Any]]],
) -> web.StreamResponse:
    """Write the export: `first` (already read), then each chunk of `rest` as it comes.
    For CSV the items' amounts are text; for NDJSON, JSON number fragments."""
    # A member omitted unless asked (a summary row's outcomes) is no column.
    columns = resource.always
    amounts = amount_columns(resource)
    response = web.StreamResponse(
        headers={
            **headers,
            "Content-Type": exports.CONTENT_TYPES[export_format],
            "Content-Disposition": (
                f'attachment; filename="{exports.file_name(endpoint, export_format)}"'
            ),
        }
    )
    if accepts_gzip(request.headers.get("Accept-Encoding", "")):
        response.enable_compression()
    # Sent before the rows: the request id and rate limit steps set their headers once the
    # handler returns, after a streamed body.
    response.headers[REQUEST_ID_HEADER] = request[appkeys.REQUEST_ID]
    state = request.get(appkeys.RATE_STATE)
    if state is not None:
        response.headers.update(rate_headers(state))
    await response.prepare(request)

    def encode(items: list[dict[str, Any]]) -> bytes:
        if export_format == NDJSON_FORMAT:
            return ndjson_chunk(items)
        return csv_chunk(items, columns, amounts, dialect)

    if export_format == CSV_FORMAT:
        await response.write(csv_header(columns, dialect))
    if first:
        await response.write(encode(first))
    async for items in rest:
        await response.write(encode(items))
    await response.write_eof()
    return response
