"""The API's examples: one recorded request and answer per operation and documented status.

`examples.json`, beside this module, is recorded from a real served edge by the contract
tests (tests/contract/examples_recorder.py) and checked against it on every run, so an
example cannot drift from what the API answers. The OpenAPI document
(`contract.openapi`) and the reference pages (`catalog.apireference`) both read it here.

Numbers are kept as written: amounts are decimals in JSON (`70.70`), and a float would
print them otherwise. `load` reads them as `Decimal`, `dumps` writes them back unchanged.

A commission in an answer (a Commission, a CommissionDetail, an event's CommissionRecord or
CommissionUpdate) is kept in the file without its null members of the commission field
table (`contract.commission.FIELDS`), and `load` puts them back in the resource's order
(`expand`). The members are the table's, in its order, in every answer (as the tests of
the field table hold): so a field added to the table, null in the recorded answers as in
every commission stored before it, leaves the file as it is, and the examples read from it
show the new member all the same.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from contract import commission
from contract.resources import COMMISSION, COMMISSION_DETAIL, COMMISSION_RECORD, COMMISSION_UPDATE

PATH = Path(__file__).with_name("examples.json")
INDENT = "  "
# The origin the examples show (the recording's loopback origin is replaced by it).
ORIGIN = "https://api.example"

# {operationId: {status: {"title", "request": {method, path, query, headers},
#                         "response": {status, headers, body?}}}}
Examples = dict[str, dict[str, dict[str, Any]]]

_TABLE = frozenset(commission.MEMBERS)
# A commission resource's member order, by its members outside the field table (the id
# and network first, then what each resource adds: programSlug, statusHistory, previous).
_ORDER_BY_OTHERS: dict[frozenset[str], tuple[str, ...]] = {
    frozenset(r.names) - _TABLE: r.names
    for r in (COMMISSION_RECORD, COMMISSION, COMMISSION_DETAIL, COMMISSION_UPDATE)
}
_COMMISSION_ID = "com_"


def load(path: Path = PATH) -> Examples:
    """The recorded examples, numbers with a fraction as `Decimal`; empty if none yet."""
    if not path.exists():
        return {}
    loaded: Examples = expand(json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal))
    return loaded


def _order_of(value: dict[str, Any]) -> tuple[str, ...] | None:
    """The member order of the commission resource `value` is, None when it is none."""
    if not str(value.get("id", "")).startswith(_COMMISSION_ID):
        return None
    return _ORDER_BY_OTHERS.get(frozenset(value) - _TABLE)


def compact(value: Any) -> Any:
    """The value as the file keeps it: every commission in it without its null members of
    the field table. `expand` gives the value back, member order included."""
    if isinstance(value, list):
        return [compact(item) for item in value]
    if not isinstance(value, dict):
        return value
    kept = {name: compact(item) for name, item in value.items()}
    if _order_of(value) is None:
        return kept
    return {name: item for name, item in kept.items() if item is not None or name not in _TABLE}


def expand(value: Any) -> Any:
    """The value with every commission in it whole: the field table's members the file
    leaves out (null ones) back as null, each at its place in the resource's order."""
    if isinstance(value, list):
        return [expand(item) for item in value]
    if not isinstance(value, dict):
        return value
    whole = {name: expand(item) for name, item in value.items()}
    order = _order_of(value)
    if order is None:
        return whole
    return {name: whole.get(name) for name in order}


def dumps(value: Any, level: int = 0) -> str:
    """JSON text indented by two spaces, a `Decimal` written exactly as it was read."""
    pad, inner = INDENT * level, INDENT * (level + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        members = [f"{inner}{json.dumps(k)}: {dumps(v, level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(members) + f"\n{pad}}}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [f"{inner}{dumps(v, level + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    if isinstance(value, Decimal):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def plain(value: Any) -> Any:
    """The value with every `Decimal` as a float: for serialisers that know no Decimal."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, Decimal):
        return float(value)
    return value
