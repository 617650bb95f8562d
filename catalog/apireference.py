"""The API reference page: the OpenAPI document rendered as one static HTML page.

Written by the build beside `openapi.json` (dist/api-reference/index.html), from the same
document (`contract.openapi.document`), with the site's Jinja2 environment and a template
of its own that loads nothing from anywhere: no script, no font, no stylesheet but its
own inline one, so the page works offline and on any static host.
"""

from __future__ import annotations

from typing import Any

from catalog.site import TEMPLATES_DIR, make_environment
from contract import openapi

PATH = openapi.REFERENCE_PATH
TEMPLATE = "api-reference.html"
REF_PREFIX = "#/components/schemas/"


def schema_text(schema: dict[str, Any]) -> str:
    """A short, human description of a JSON Schema: its type and constraints."""
    if "$ref" in schema:
        return schema["$ref"].removeprefix(REF_PREFIX)
    if "anyOf" in schema:
        return " or ".join(schema_text(part) for part in schema["anyOf"])
    if "allOf" in schema:
        return " and ".join(schema_text(part) for part in schema["allOf"])
    kind = schema.get("type", "any")
    text = " or ".join(kind) if isinstance(kind, list) else str(kind)
    if "items" in schema:
        text += f" of {schema_text(schema['items'])}"
    details = []
    if "enum" in schema:
        details.append(
            "one of " + ", ".join("null" if e is None else str(e) for e in schema["enum"])
        )
    if "const" in schema:
        details.append(f"= {schema['const']}")
    for key, label in (
        ("format", "format"),
        ("minimum", "min"),
        ("maximum", "max"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("maxItems", "max items"),
        ("default", "default"),
        ("pattern", "pattern"),
    ):
        if key in schema:
            details.append(f"{label} {schema[key]}")
    return f"{text} ({'; '.join(details)})" if details else text


def operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every operation, in the document's path order, with what the page shows of it."""
    result = []
    for path, item in document["paths"].items():
        for method, op in item.items():
            responses = []
            for status, response in op["responses"].items():
                content = response.get("content", {}).get(openapi.JSON)
                responses.append(
                    {
                        "status": status,
                        "description": response["description"],
                        "schema": schema_text(content["schema"]) if content else "",
                        "headers": [
                            {"name": name, "required": h["required"]}
                            for name, h in response.get("headers", {}).items()
                        ],
                    }
                )
            result.append(
                {
                    "id": op["operationId"],
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("summary", ""),
                    "description": op.get("description", ""),
                    "public": op.get("security") == [],
                    "parameters": [
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p["required"],
                            "schema": schema_text(p["schema"]),
                            "description": p.get("description", ""),
                        }
                        for p in op.get("parameters", [])
                    ],
                    "responses": responses,
                }
            )
    return result


def schemas(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every component schema with its members."""
    result = []
    for name, schema in document["components"]["schemas"].items():
        required = set(schema.get("required", ()))
        result.append(
            {
                "name": name,
                "description": schema.get("description", ""),
                "properties": [
                    {
                        "name": prop,
                        "required": prop in required,
                        "schema": schema_text(sub),
                        "description": sub.get("description", ""),
                    }
                    for prop, sub in schema.get("properties", {}).items()
                ],
            }
        )
    return result


def headers() -> list[dict[str, str]]:
    """Every response header the document declares, with its meaning."""
    return [
        {"name": name, "description": header["description"]}
        for name, header in openapi.HEADERS.items()
    ]


def render(document: dict[str, Any] | None = None) -> bytes:
    """The page's bytes: deterministic, the same document always gives the same page."""
    document = openapi.document() if document is None else document
    template = make_environment(TEMPLATES_DIR).get_template(TEMPLATE)
    page = template.render(
        info=document["info"],
        servers=document.get("servers", []),
        operations=operations(document),
        schemas=schemas(document),
        headers=headers(),
        openapi_href="../" + openapi.PATH.lstrip("/"),
    )
    return page.encode("utf-8")
