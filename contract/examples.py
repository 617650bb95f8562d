"""The API's examples: one recorded request and answer per operation and documented status.

`examples.json`, beside this module, is recorded from a real served edge by the contract
tests (tests/contract/examples_recorder.py) and checked against it on every run, so an
example cannot drift from what the API answers. The OpenAPI document
(`contract.openapi`) and the reference pages (`catalog.apireference`) both read it here.

Numbers are kept as written: amounts are decimals in JSON (`70.70`), and a float would
print them otherwise. `load` reads them as `Decimal`, `dumps` writes them back unchanged.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

PATH = Path(__file__).with_name("examples.json")
INDENT = "  "
# The origin the examples show (the recording's loopback origin is replaced by it).
ORIGIN = "https://api.example"

# {operationId: {status: {"title", "request": {method, path, query, headers},
#                         "response": {status, headers, body?}}}}
Examples = dict[str, dict[str, dict[str, Any]]]


def load(path: Path = PATH) -> Examples:
    """The recorded examples, numbers with a fraction as `Decimal`; empty if none yet."""
    if not path.exists():
        return {}
    loaded: Examples = json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
    return loaded


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
