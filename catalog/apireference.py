"""The API reference page: the OpenAPI document rendered as one static HTML page.

Written by the build with the guides (dist/docs/reference/index.html), from the same
document (`contract.openapi.document`) and the examples recorded from a served edge
(`contract.examples`), with the site's Jinja2 environment and a template that loads
nothing from anywhere: no script, no font, no stylesheet but its own inline one.

Generic over operations: whatever the document lists is shown, each operation with its
parameters as a person reads them (values as lists, formats named, a long pattern by what
it means with the exact rule one click away), its statuses, the error codes each can carry,
and for each status the recorded request (curl, Python, JavaScript) and answer.
"""

from __future__ import annotations

import json
import shlex
from typing import Any
from urllib.parse import parse_qsl

from markdown_it import MarkdownIt
from markupsafe import Markup

from catalog import markup
from catalog.site.pages import TEMPLATES_DIR, make_environment
from contract import examples as recorded
from contract import openapi
from contract import vocabulary as v

PATH = openapi.REFERENCE_PATH
TEMPLATE = "api-reference.html"
REF_PREFIX = "#/components/schemas/"
# A pattern up to this long is shown as it is; a longer one by what it means.
SHORT_PATTERN = 40
# What the document's patterns mean, for a reader.
PATTERN_MEANINGS: dict[str, str] = {
    openapi.DATE_PATTERN: "a date, YYYY-MM-DD",
    openapi.CURSOR_PATTERN: "an opaque cursor, as `page.nextCursor` gave it",
    openapi.PRINTABLE_PATTERN: "text without control characters",
    openapi.REQUEST_ID_PATTERN: "`req_` and 24 hexadecimal digits",
    openapi.MARKET_QUERY_PATTERN: "two letters, any case",
    v.COUNTRY_PATTERN: "two capital letters",
    v.CURRENCY_PATTERN: "three capital letters",
}
FORMATS: dict[str, str] = {
    "date": "a date (YYYY-MM-DD)",
    "date-time": "an RFC 3339 date and time",
    "uri": "a URL",
    "email": "an e-mail address",
}
# The key as the snippets read it: from the environment, never written in the code.
KEY_VARIABLE = "API_KEY"
KEY_PLACEHOLDER = "<API key>"  # how contract/examples.json shows the key
# Markdown links of the document's texts -> where they lead from the reference page.
LINKS = {openapi.DOCS_URL: "../"}


def ref_name(schema: dict[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref.removeprefix(REF_PREFIX) if isinstance(ref, str) else None


def type_text(schema: dict[str, Any]) -> Markup:
    """The type as a phrase, with links to the component schemas it names."""
    name = ref_name(schema)
    if name is not None:
        return Markup('<a href="#schema-{0}">{0}</a>').format(name)
    if "anyOf" in schema:
        return Markup(" or ").join(type_text(part) for part in schema["anyOf"])
    kind = schema.get("type", "any")
    kinds = kind if isinstance(kind, list) else [kind]
    words = []
    for k in kinds:
        if k == "array" and "items" in schema:
            words.append(Markup("list of ") + type_text(schema["items"]))
        else:
            words.append(Markup.escape(k))
    return Markup(" or ").join(words)


def constraints(schema: dict[str, Any], md: MarkdownIt) -> list[Markup]:
    """The constraints of a schema, each as a short phrase."""
    found: list[Markup] = []
    if "format" in schema:
        found.append(Markup.escape(FORMATS.get(schema["format"], f"format {schema['format']}")))
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        found.append(Markup.escape(f"from {low} to {high}"))
    elif low is not None:
        found.append(Markup.escape(f"at least {low}"))
    elif high is not None:
        found.append(Markup.escape(f"at most {high}"))
    short, long_ = schema.get("minLength"), schema.get("maxLength")
    if long_ is not None:
        found.append(Markup.escape(f"{short or 0} to {long_} characters"))
    if "maxItems" in schema:
        found.append(Markup.escape(f"at most {schema['maxItems']} items"))
    if "default" in schema:
        found.append(Markup("default <code>{}</code>").format(schema["default"]))
    pattern = schema.get("pattern")
    if pattern is not None:
        meaning = PATTERN_MEANINGS.get(pattern)
        if meaning is not None:
            found.append(markup.inline(meaning, md))
        elif len(pattern) <= SHORT_PATTERN:
            found.append(Markup("matching <code>{}</code>").format(pattern))
        else:
            found.append(Markup("a pattern (below)"))
    return found


def describe(schema: dict[str, Any], md: MarkdownIt) -> dict[str, Any]:
    """What the page shows of a schema: its type, constraints, values, exact rule, link."""
    items = schema.get("items", {})
    values = schema.get("enum", items.get("enum"))
    docs = schema.get("externalDocs", items.get("externalDocs"))
    pattern = schema.get("pattern", items.get("pattern"))
    return {
        "type": type_text(schema),
        "constraints": constraints(schema, md) + constraints(items, md),
        "choices": ["null" if value is None else str(value) for value in values or ()],
        # One click away: the rule exactly as the document states it.
        "rule": pattern or None,
        "link": docs,
        "description": markup.inline(schema.get("description", ""), md),
    }


def query_of(example: dict[str, Any]) -> list[tuple[str, str]]:
    return parse_qsl(example["request"]["query"], keep_blank_values=True)


def url_of(example: dict[str, Any]) -> str:
    query = example["request"]["query"]
    return recorded.ORIGIN + example["request"]["path"] + (f"?{query}" if query else "")


def curl(example: dict[str, Any]) -> str:
    """The request as a curl command; the key read from the shell's API_KEY."""
    lines = [f"curl -s -i {shlex.quote(url_of(example))}"]
    for name, value in example["request"]["headers"].items():
        if KEY_PLACEHOLDER in value:  # double quotes, so that the shell expands the key
            lines.append(f'  -H "{name}: {value.replace(KEY_PLACEHOLDER, "$" + KEY_VARIABLE)}"')
        else:
            lines.append(f"  -H {shlex.quote(f'{name}: {value}')}")
    return " \\\n".join(lines)


def python(example: dict[str, Any]) -> str:
    """The request with httpx; the key read from the environment."""
    request = example["request"]
    headers = []
    for name, value in request["headers"].items():
        if KEY_PLACEHOLDER in value:
            before, _, after = value.partition(KEY_PLACEHOLDER)
            key = "{os.environ['" + KEY_VARIABLE + "']}"
            headers.append(f'{json.dumps(name)}: f"{before}{key}{after}"')
        else:
            headers.append(f"{json.dumps(name)}: {json.dumps(value)}")
    lines = ["import os", ""] if any("os.environ" in h for h in headers) else []
    lines += ["import httpx", "", "response = httpx.get("]
    lines.append(f"    {json.dumps(recorded.ORIGIN + request['path'])},")
    params = query_of(example)
    if params:
        pairs = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in params)
        lines.append(f"    params={{{pairs}}},")
    if headers:
        lines.append(f"    headers={{{', '.join(headers)}}},")
    lines.append(")")
    has_body = "body" in example["response"]
    lines.append(
        "print(response.status_code, response.json())"
        if has_body
        else "print(response.status_code)"
    )
    return "\n".join(lines)


def javascript(example: dict[str, Any]) -> str:
    """The request with fetch (a module or Node 18 and later); the key from the environment."""
    headers = []
    for name, value in example["request"]["headers"].items():
        if KEY_PLACEHOLDER in value:
            value = value.replace(KEY_PLACEHOLDER, "${process.env." + KEY_VARIABLE + "}")
            headers.append(f"{json.dumps(name)}: `{value}`")
        else:
            headers.append(f"{json.dumps(name)}: {json.dumps(value)}")
    url = json.dumps(url_of(example))
    if headers:
        lines = [
            f"const response = await fetch({url}, {{",
            f"  headers: {{ {', '.join(headers)} }},",
            "});",
        ]
    else:
        lines = [f"const response = await fetch({url});"]
    has_body = "body" in example["response"]
    lines.append(
        "console.log(response.status, await response.json());"
        if has_body
        else "console.log(response.status);"
    )
    return "\n".join(lines)


def answer_text(example: dict[str, Any]) -> str:
    """The answer as it arrives: status line, headers, the JSON body indented."""
    response = example["response"]
    lines = [f"HTTP/1.1 {response['status']}"]
    lines += [f"{name}: {value}" for name, value in response["headers"].items()]
    text = "\n".join(lines)
    if "body" in response:
        text += "\n\n" + recorded.dumps(response["body"])
    return text


def example_view(example: dict[str, Any]) -> dict[str, Any]:
    return {
        "title": example["title"],
        "requests": [
            ("curl", "sh", curl(example)),
            ("Python (httpx)", "python", python(example)),
            ("JavaScript (fetch)", "js", javascript(example)),
        ],
        "answer": answer_text(example),
    }


def key_need(security: list[dict[str, list[str]]] | None) -> str:
    """What an operation's `security` asks of a caller: `none` (no requirement, `[]`),
    `optional` (an empty requirement `{}` among others: a key may be sent) or `required`."""
    if security == []:
        return "none"
    if security is not None and {} in security:
        return "optional"
    return "required"


def operations(
    document: dict[str, Any], examples: recorded.Examples, md: MarkdownIt
) -> list[dict[str, Any]]:
    """Every operation, in the document's path order, with what the page shows of it."""
    result = []
    for path, item in document["paths"].items():
        for method, op in item.items():
            recorded_here = examples.get(op["operationId"], {})
            responses = []
            for status, response in op["responses"].items():
                content = response.get("content", {}).get(openapi.JSON)
                example = recorded_here.get(status)
                responses.append(
                    {
                        "status": status,
                        "description": markup.inline(response["description"], md),
                        "body": type_text(content["schema"]) if content else Markup(""),
                        "codes": response.get("x-error-codes", []),
                        "headers": [
                            {"name": name, "required": h["required"]}
                            for name, h in response.get("headers", {}).items()
                        ],
                        "example": example_view(example) if example else None,
                    }
                )
            result.append(
                {
                    "id": op["operationId"],
                    "method": method.upper(),
                    "path": path,
                    "summary": markup.inline(op.get("summary", ""), md),
                    "description": markup.block(op.get("description", ""), md),
                    "auth": key_need(op.get("security")),
                    "parameters": [
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p["required"],
                            "example": None
                            if p.get("example") is None
                            else recorded.dumps(p["example"]).strip('"'),
                            **describe(p["schema"], md),
                            "description": markup.inline(
                                p.get("description", "") or p["schema"].get("description", ""),
                                md,
                            ),
                        }
                        for p in op.get("parameters", [])
                    ],
                    "responses": responses,
                }
            )
    return result


def schemas(document: dict[str, Any], md: MarkdownIt) -> list[dict[str, Any]]:
    """Every component schema with its members."""
    result = []
    for name, schema in document["components"]["schemas"].items():
        required = set(schema.get("required", ()))
        result.append(
            {
                "name": name,
                "description": markup.inline(schema.get("description", ""), md),
                "properties": [
                    {"name": prop, "required": prop in required, **describe(sub, md)}
                    for prop, sub in schema.get("properties", {}).items()
                ],
            }
        )
    return result


def headers(md: MarkdownIt) -> list[dict[str, Any]]:
    """Every response header the document declares, with its meaning."""
    return [
        {"name": name, "description": markup.inline(header["description"], md)}
        for name, header in openapi.HEADERS.items()
    ]


# The docs' navigation, (href below /docs/, label, page key): the reference's own when it is
# rendered alone; catalog.docpages adds the guides.
NAV: tuple[tuple[str, str, str], ...] = (
    ("", "API docs", "index"),
    ("reference/", "Reference", "reference"),
)


def render(
    document: dict[str, Any] | None = None,
    examples: recorded.Examples | None = None,
    nav: tuple[tuple[str, str, str], ...] = NAV,
) -> bytes:
    """The page's bytes: deterministic, the same document always gives the same page."""
    document = openapi.document() if document is None else document
    examples = recorded.load() if examples is None else examples
    md = markup.parser(LINKS)
    template = make_environment(TEMPLATES_DIR).get_template(TEMPLATE)
    page = template.render(
        root="../",
        nav=nav,
        title="API reference",
        current="reference",
        info=document["info"],
        description=markup.block(document["info"]["description"], md),
        servers=document.get("servers", []),
        operations=operations(document, examples, md),
        schemas=schemas(document, md),
        headers=headers(md),
        openapi_href="../../" + openapi.PATH.lstrip("/"),
        key_variable=KEY_VARIABLE,
        origin=recorded.ORIGIN,
    )
    return page.encode("utf-8")
