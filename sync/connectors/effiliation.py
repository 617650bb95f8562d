"""Effiliation publisher transactions (one pipe-delimited CSV per window, key in the query)."""

from __future__ import annotations

import csv
import datetime as dt
import io
from typing import Any

from accounts.statusmap import fold
from sync.connectors.base import CallContext, Connector, Fields, Page, collect, expect_ok, last_day
from sync.errors import AuthRejected, MalformedResponse
from sync.http import HttpRequest, HttpResponse
from sync.model import Window
from sync.spec import (
    AmountFormat,
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    Rate,
)

SPEC = ConnectorSpec(
    network="effiliation",
    base_url="https://api.effiliation.com",
    credential_fields=(CredentialField("apiKey", "API key (Effiliation: Mon compte, API)"),),
    auth="query parameter key=<apiKey>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(days=1),
    pagination=Pagination.NONE,
    rate=Rate(30, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 30/min",
    amount_format=AmountFormat.STRING,
    # The currency column is unconfirmed [U]: `devise`, else the connection's.
    currency_source=CurrencySource.RECORD_OR_CONNECTION,
    sub_id_field="effi_id",
    # No filter by change date is published: the re-scan is the one way to learn of changes.
    rescan=dt.timedelta(days=60),
    horizon=dt.timedelta(days=730),
    # The API is known to be slow.
    timeout=300.0,
    notes=("Columns are read by header name: their positions changed once already.",),
)

BAD_CREDENTIALS = "bad credentials"
# Header name (folded) -> field; several spellings where the research saw them differ [U].
COLUMNS: dict[str, tuple[str, ...]] = {
    "id": ("id transaction", "idtransaction", "id"),
    "program_id": ("id programme", "idprogramme", "id program"),
    "program_name": ("nom programme", "programme", "program"),
    "sub_id": ("effi id", "subid", "effi_id"),
    "sale": ("montant", "amount"),
    "commission": ("commission", "remuneration"),
    "status": ("statut", "status", "etat"),
    "currency": ("devise", "currency"),
    "clicked_at": ("date clic", "date click"),
    "transacted_at": ("date transaction", "date", "date vente"),
}


class Effiliation(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/apiv2/transaction.csv"),
            params=(
                ("key", ctx.credentials["apiKey"]),
                ("start", window.start.strftime("%d/%m/%Y")),
                ("end", last_day(window).strftime("%d/%m/%Y")),
                ("type", "datetran"),
                ("all", "yes"),
            ),
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        text = decode(response.body)
        if fold(text).startswith(BAD_CREDENTIALS):
            # Its answer to a bad key, with a 200 status.
            raise AuthRejected("effiliation refused the credentials (bad credentials)")
        expect_ok("effiliation", response)
        records = read_csv(text)
        done, refused = collect(ctx, records, read)
        return Page(done, refused)


def decode(body: bytes) -> str:
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError:
        return body.decode("latin-1")


def read_csv(text: str) -> list[dict[str, str]]:
    """Rows by field name; a row whose width differs from the header's means a cut or
    malformed answer, and fails the whole window rather than losing rows silently."""
    if not text.strip():
        return []
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="|", strict=True))
    except csv.Error as error:
        raise MalformedResponse(f"effiliation: the CSV does not parse ({error})") from None
    header = [fold(name) for name in rows[0]]
    where: dict[str, int] = {}
    for name, spellings in COLUMNS.items():
        for spelling in spellings:
            if spelling in header:
                where[name] = header.index(spelling)
                break
    if "id" not in where or "commission" not in where:
        raise MalformedResponse("effiliation: the CSV header lacks the id or commission column")
    out = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise MalformedResponse(
                f"effiliation: CSV line {number} has {len(row)} fields, not {len(header)}"
            )
        out.append({name: row[i] for name, i in where.items()})
    return out


def french_number(value: str | None) -> str | None:
    """ "12,50" -> "12.50" (a decimal comma), spaces dropped; None stays None."""
    if value is None:
        return None
    value = value.replace("\u00a0", "").replace(" ", "")
    return value.replace(",", ".") if "." not in value else value


def read(record: dict[str, str]) -> Fields:
    sale = french_number(record.get("sale"))
    return Fields(
        external_id=record.get("id"),
        raw_status=record.get("status"),
        commission=french_number(record.get("commission")),
        currency=record.get("currency"),
        transacted_at=record.get("transacted_at"),
        sale=sale or None,
        clicked_at=record.get("clicked_at") or None,
        program_id=record.get("program_id"),
        program_name=record.get("program_name"),
        sub_ids={"effi_id": record.get("sub_id")},
    )
