"""The JSON Schema (2020-12) of a submission, generated from `catalog.submission`.

`content/schema/program.schema.json` is this function's output, committed so editors can
use it; `python build.py --write-schema` regenerates it and a test fails when it is stale.
The build does not validate with it (its own checks, from the same specs, also give line
numbers and fixes), but everything the schema rejects, the build rejects too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from catalog.submission import (
    CONTROL_CHARS,
    FIELDS,
    HOST_PATTERN,
    INVISIBLE_CHARS,
    STATUS,
    TIMESTAMP_PATTERN,
    URL_PATTERN,
    FieldSpec,
)
from contract import currencies
from contract import vocabulary as v
from contract.countries import COUNTRIES
from contract.networks import NETWORKS, PROGRAM_ID_MAX_LENGTH, PROGRAM_NETWORKS_MAX

SCHEMA_PATH = Path("schema") / "program.schema.json"  # relative to the content directory
SCHEMA_ID = "https://affdir.example/schema/program.schema.json"


def generate() -> dict[str, Any]:
    """The schema as a JSON-ready dict."""
    # Drafts need only a status (the build reads nothing else of them); a published
    # submission needs every required field, createdAt included.
    required = [f.name for f in FIELDS if f.required]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Affiliate programme submission",
        "description": (
            "One programme, in content/programs/<slug>.yaml. The slug is the file name. "
            "The build computes the score; do not set it. Unknown fields are refused."
        ),
        "type": "object",
        "additionalProperties": False,
        "required": [STATUS.name],
        "properties": {f.name: _property(f) for f in FIELDS},
        "if": {"properties": {STATUS.name: {"const": v.PUBLISHED}}},
        "then": {"required": required},
    }


def render() -> str:
    """The schema file's exact text."""
    return json.dumps(generate(), indent=2, ensure_ascii=False) + "\n"


def write(content: Path) -> Path:
    """Write the schema file under `content`; returns its path."""
    path = content / SCHEMA_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(), encoding="utf-8")
    return path


def _property(spec: FieldSpec) -> dict[str, Any]:
    prop: dict[str, Any] = {"description": spec.description}
    prop.update(_KINDS[spec.kind](spec))
    if spec.examples:
        prop["examples"] = list(spec.examples)
    return prop


def _text(spec: FieldSpec, *, one_line: bool) -> dict[str, Any]:
    # Not blank, no spaces at either end; one-line fields have no line breaks or tabs; no
    # control or invisible characters (the validator's rule, from the same classes).
    inner = (
        rf"[^\x00-\x1f\x7f{INVISIBLE_CHARS}]*"
        if one_line
        else rf"[^{CONTROL_CHARS}{INVISIBLE_CHARS}]*"
    )
    edge = rf"[^\s\x00-\x1f\x7f{INVISIBLE_CHARS}]"
    prop: dict[str, Any] = {
        "type": "string",
        "minLength": 1,
        "pattern": f"^{edge}(?:{inner}{edge})?$",
    }
    if spec.max_length is not None:
        prop["maxLength"] = spec.max_length
    if spec.empty_allowed:
        return {"anyOf": [{"const": ""}, prop]}
    return prop


def _url(spec: FieldSpec) -> dict[str, Any]:
    prop: dict[str, Any] = {
        "type": "string",
        "format": "uri",
        "pattern": URL_PATTERN,
        "maxLength": spec.max_length,
    }
    if spec.empty_allowed:
        return {"anyOf": [{"const": ""}, prop]}
    return prop


def _number(spec: FieldSpec, kind: str) -> dict[str, Any]:
    return {"type": kind, "minimum": spec.minimum, "maximum": spec.maximum}


def _terms(spec: FieldSpec) -> dict[str, Any]:
    """The typed commission; the build's rules per mode, as far as a schema states them."""
    number = {"type": "number", "minimum": 0, "maximum": v.AMOUNT_MAX}
    unit = {
        "type": "string",
        "pattern": v.RATE_UNIT_PATTERN,
        "description": f"{v.PERCENT}, or the ISO 4217 code of the amount's currency (EUR).",
    }
    rate = {"anyOf": [{"required": ["value", "unit"]}, {"required": ["upTo", "unit"]}]}
    part = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"value": number, "upTo": number, "unit": unit},
        **rate,
    }
    tier = {
        "type": "object",
        "additionalProperties": False,
        "required": list(v.TIER_MEMBERS),
        "properties": {"from": number, "value": number},
    }

    def when(mode: str, then: dict[str, Any]) -> dict[str, Any]:
        return {"if": {"properties": {"mode": {"const": mode}}}, "then": then}

    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["mode"],
        "properties": {
            "mode": {"type": "string", "enum": list(v.COMMISSION_MODES)},
            "value": number,
            "upTo": number,
            "unit": unit,
            "durationMonths": {"type": "integer", "minimum": 1, "maximum": v.DURATION_MONTHS_MAX},
            "lifetime": {"type": "boolean"},
            "tiers": {
                "type": "array",
                "minItems": v.TIERS_MIN,
                "maxItems": v.TIERS_MAX,
                "items": tier,
            },
            "parts": {
                "type": "array",
                "minItems": v.PARTS_MIN,
                "maxItems": v.PARTS_MAX,
                "items": part,
            },
        },
        "allOf": [
            when(
                v.PERCENTAGE,
                {
                    **rate,
                    "properties": {
                        "unit": {"const": v.PERCENT},
                        "value": {"maximum": v.PERCENT_MAX},
                        "upTo": {"maximum": v.PERCENT_MAX},
                    },
                },
            ),
            when(v.FLAT, {**rate, "properties": {"unit": {"not": {"const": v.PERCENT}}}}),
            when(v.TIERED, {"required": ["unit", "tiers"]}),
            when(v.HYBRID, {"required": ["parts"]}),
        ],
    }


_KINDS = {
    "line": lambda spec: _text(spec, one_line=True),
    "text": lambda spec: _text(spec, one_line=False),
    "enum": lambda spec: {"type": "string", "enum": list(spec.enum or ())},
    "boolean": lambda spec: {"type": "boolean"},
    "integer": lambda spec: _number(spec, "integer"),
    "number": lambda spec: _number(spec, "number"),
    "markets": lambda spec: {
        "type": "array",
        "minItems": 1,
        "maxItems": v.MARKETS_MAX,
        "uniqueItems": True,
        "items": {
            "type": "string",
            "description": "ISO 3166-1 alpha-2 country code, in capitals.",
            "enum": sorted(COUNTRIES),
        },
    },
    "currency": lambda spec: {
        "type": "string",
        "description": "Current ISO 4217 currency code, in capitals.",
        "enum": sorted(currencies.CURRENT),
    },
    "url": _url,
    "host": lambda spec: {"type": "string", "pattern": HOST_PATTERN, "maxLength": 253},
    "slug": lambda spec: {
        "type": "string",
        "pattern": v.SLUG_PATTERN,
        "minLength": 1,
        "maxLength": spec.max_length,
    },
    "timestamp": lambda spec: {
        "type": "string",
        "format": "date-time",
        "pattern": TIMESTAMP_PATTERN,
    },
    "terms": _terms,
    "networks": lambda spec: {
        "type": "array",
        "maxItems": PROGRAM_NETWORKS_MAX,
        "uniqueItems": True,
        "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["network", "programId"],
            "properties": {
                "network": {"type": "string", "enum": list(NETWORKS)},
                "programId": {
                    **_text(FieldSpec("programId", "line", ""), one_line=True),
                    "maxLength": PROGRAM_ID_MAX_LENGTH,
                    "description": "The programme's id at the network, as text (quote digits).",
                },
            },
        },
    },
}
