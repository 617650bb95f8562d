"""Stage 2: check one submission against the rules and turn it into a validated record.

Pure functions of (file name, file bytes), so results can be cached by content hash and
computed in worker processes. Only the `status` of an unpublished or rejected submission is
read; everything else about it is ignored, so drafts never block a build.
"""

from __future__ import annotations

import difflib
import math
import re
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from catalog import yamlstrict
from catalog.errors import Problem
from catalog.submission import (
    BY_NAME,
    COMPUTED,
    CONTROL_CHARS,
    FIELDS,
    HOST_PATTERN,
    INVISIBLE_CHARS,
    STATUS,
    TIMESTAMP_EXAMPLE,
    TIMESTAMP_PATTERN,
    FieldSpec,
)
from catalog.yamlstrict import BROKEN, Ambiguous, Document
from contract import currencies
from contract import vocabulary as v
from contract.countries import COUNTRIES, NOT_ASSIGNED
from contract.endpoints import ENDPOINTS
from contract.networks import NETWORKS, PROGRAM_ID_MAX_LENGTH, PROGRAM_NETWORKS_MAX
from contract.vocabulary import FLAG_PATTERN

HOST_RE = re.compile(HOST_PATTERN)
TIMESTAMP_RE = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})"
    r"(?:[Tt ](?P<time>[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)"
    r"(?P<zone>Z|z|[+-][0-9]{2}:?[0-9]{2})?)?\Z"
)
STRICT_TIMESTAMP_RE = re.compile(TIMESTAMP_PATTERN)
_CONTROL_RE = re.compile(f"[{CONTROL_CHARS}{INVISIBLE_CHARS}]")
# Unicode tag characters are invisible. Their one use in text is a subdivision flag (England,
# Scotland, Wales): a black flag, tag letters, a cancel tag. Anywhere else they can carry a
# message a reader does not see but a program reading the directory does. Outside the
# Basic Multilingual Plane, so checked here and not by the schema (see INVISIBLE_CHARS).
_TAG_RE = re.compile("[\U000e0000-\U000e007f]")
_FLAG_RE = re.compile(FLAG_PATTERN)
_SPACE_OR_CONTROL_RE = re.compile(f"[\\s\\x00-\\x1f\\x7f{INVISIBLE_CHARS}]")
# http(s)://host, then a path, query or fragment, with no user, port or brackets: most URLs.
_SIMPLE_URL_RE = re.compile(r"https?://([^/?#@:\[\]\\]+)(?:[/?#].*)?", re.DOTALL)
_NAMES_TO_CODES = {name.lower(): code for code, name in COUNTRIES.items()}
# A draft whose YAML is broken is still recognisably a draft from this line (a UTF-8 byte
# order mark may precede the first line, CRLF line ends are fine)...
_STATUS_LINE_RE = re.compile(
    rb"^(?:\xef\xbb\xbf)?status:[ \t]*([\"']?)(unpublished|rejected)\1[ \t]*(?:#[^\r\n]*)?\r?$",
    re.MULTILINE,
)
# ...when it is the file's only top-level status line: with two, which one counts is a guess.
_ANY_STATUS_LINE_RE = re.compile(rb"^(?:\xef\xbb\xbf)?[\"']?status[\"']?[ \t]*:", re.MULTILINE)


class Outcome(NamedTuple):
    """What one file amounts to. Plain values only: it is cached and sent between processes."""

    status: str | None  # None when it could not be read
    # The validated fields (no score) of a valid published file; None for any other, and in
    # an outcome remembered by catalog.incremental (it keeps the listing made from it).
    record: dict[str, Any] | None
    problems: list[Problem]  # errors: the build fails if any file has one
    warnings: list[Problem]  # shown, never fatal
    slug_at: tuple[int, int] = (1, 1)  # where the slug is stated: its field, else the mapping
    # A valid published file's (network, programId, line, column) pairs of `networks`: the
    # build's map to the programme, and where each is written (a pair two files claim).
    links: tuple[tuple[str, str, int, int], ...] = ()


class InvalidValueError(Exception):
    """A field's value breaks a rule; the message says how to fix it."""


def check_file(stem: str, data: bytes) -> Outcome:
    """Read one submission and check it; never raises for bad content."""
    doc, problems = yamlstrict.load(data)
    if doc is None:
        draft = _STATUS_LINE_RE.search(data)
        if draft and len(_ANY_STATUS_LINE_RE.findall(data)) == 1:
            # Unreadable, but it says it is a draft: warn instead of blocking everyone's build.
            return Outcome(draft.group(2).decode(), None, [], problems)
        return Outcome(None, None, problems, [])
    if not isinstance(doc.value, dict):
        found = _describe(doc.value)
        problem = Problem(
            doc.line, doc.column, "(document)", f"expected field: value lines, found {found}"
        )
        return Outcome(None, None, [problem], [])
    status, status_problems = _status(doc)
    # A status stated twice (a duplicate key, reported while reading) is no status: the
    # first one would make a published file a draft, silently.
    status_problems += [p for p in problems if p.field == "status"]
    if status is None or status_problems:
        return Outcome(None, None, sorted(status_problems), [])
    if status != v.PUBLISHED:
        return Outcome(status, None, [], [], doc.position(("slug",)))
    record, field_problems = _published(doc, stem)
    problems = sorted(problems + field_problems)
    slug_at = doc.position(("slug",))
    if problems:
        return Outcome(status, None, problems, [], slug_at)
    links = tuple(
        (network, program_id, *doc.position(("networks", index)))
        for index, (network, program_id) in enumerate(record.pop("networks", ()))
    )
    return Outcome(status, record, problems, [], slug_at, links)


def duplicate_slugs(
    checked: list[tuple[str, str, str, tuple[int, int]]], others: list[tuple[str, str, str]]
) -> list[tuple[str, Problem]]:
    """Slugs claimed by two different files: (display path, problem) for each checked file.

    `checked` holds (slug, absolute path, display path, slug position) of the files checked;
    `others` (slug, absolute path, display path) of every other file of the content.
    """
    slugs = [c[0] for c in checked] + [o[0] for o in others]
    if len(set(slugs)) == len(slugs):
        return []  # every slug claimed once: the usual case, decided without the claims
    claims: dict[str, list[tuple[str, str]]] = {}
    for slug, path, display in others:
        claims.setdefault(slug, []).append((path, display))
    for slug, path, display, _ in checked:
        claims.setdefault(slug, []).append((path, display))
    out = []
    for slug, path, display, (line, column) in checked:
        if len(claims[slug]) == 1:
            continue  # the usual case, and a quick one
        rivals = sorted({d for p, d in claims[slug] if p != path})
        if rivals:
            message = (
                f'"{slug}" is also the slug of {", ".join(rivals)}; slugs are unique: rename one'
            )
            out.append((display, Problem(line, column, "slug", message)))
    return out


def duplicate_links(
    claims: list[tuple[str, tuple[tuple[str, str, int, int], ...]]],
) -> list[tuple[str, Problem]]:
    """(network, programId) pairs claimed by two different files: (display path, problem)
    for each claim. `claims` holds each published file's display path and its links
    (`Outcome.links`). A pair names one programme at one network: linked to two, a
    commission would belong to both."""
    owners: dict[tuple[str, str], list[str]] = {}
    for display, links in claims:
        for network, program_id, _, _ in links:
            owners.setdefault((network, program_id), []).append(display)
    if all(len(files) == 1 for files in owners.values()):
        return []
    out = []
    for display, links in claims:
        for network, program_id, line, column in links:
            rivals = sorted({d for d in owners[(network, program_id)] if d != display})
            if rivals:
                message = (
                    f'{network} programme "{program_id}" is also listed by '
                    f"{', '.join(rivals)}; a network's programme belongs to one programme of "
                    "the directory: keep it in one file"
                )
                out.append((display, Problem(line, column, "networks", message)))
    return out


def _status(doc: Document) -> tuple[str | None, list[Problem]]:
    if "status" not in doc.value:
        return None, [
            Problem(
                doc.line,
                doc.column,
                "status",
                f"missing; add a line status: {', '.join(v.SUBMISSION_STATUSES)}",
            )
        ]
    if doc.value["status"] is BROKEN:
        return None, []  # already reported while reading
    try:
        return _enum(doc.value["status"], STATUS), []
    except InvalidValueError as exc:
        line, column = doc.position(("status",))
        return None, [Problem(line, column, "status", str(exc))]


def _published(doc: Document, stem: str) -> tuple[dict[str, Any], list[Problem]]:
    """Every rule for a published submission; the record is complete only without problems."""
    values: dict[str, Any] = doc.value
    problems: list[Problem] = []
    record: dict[str, Any] = {}

    def fail(path: tuple[str | int, ...], message: str) -> None:
        line, column = doc.position(path)
        problems.append(Problem(line, column, yamlstrict.field_name(path), message))

    def missing(spec: FieldSpec) -> None:
        # Nothing to point at: the position of the mapping that lacks the field.
        problems.append(Problem(doc.line, doc.column, spec.name, _missing(spec)))

    for key in values:
        if key not in BY_NAME:
            line, column = doc.key_positions[key]
            problems.append(Problem(line, column, key, _unknown_field(key)))

    stem_problem = _slug_problem(stem)
    if stem_problem:
        fail(("slug",), stem_problem)

    for spec in FIELDS:
        if spec.name not in values:
            if spec.required:
                missing(spec)
            continue
        if values[spec.name] is BROKEN:
            continue  # already reported while reading
        try:
            record[spec.name] = CHECKS[spec.kind](values[spec.name], spec)
        except InvalidValueError as exc:
            fail((spec.name,), str(exc))
        except InvalidItemsError as exc:
            for index, message in exc.items:
                fail((spec.name, index), message)
        except InvalidMembersError as exc:
            for where, message in exc.members:
                fail((spec.name, *where), message)

    if "slug" in record and record["slug"] != stem:
        fail(("slug",), f'must equal the file name "{stem}" (or be left out)')
    if "host" in record and "site" in record:
        site_host = urlsplit(record["site"]).hostname or ""
        host = record["host"]
        if site_host != host and not site_host.endswith("." + host):
            fail(
                ("host",),
                f'the website is on "{site_host}", which is neither this domain nor one of its '
                "subdomains; make host and site agree",
            )
    for path, message in _terms_against_fields(record):
        fail(path, message)
    return _assemble(record, stem), problems


def _terms_against_fields(record: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """Rules between the typed terms and the other fields: (path, problem) pairs."""
    out: list[tuple[tuple[str, ...], str]] = []
    evidence, site = record.get("evidence"), record.get("site")
    if evidence is not None:
        if site is not None and _same_page(evidence, site):
            out.append(
                (
                    ("evidence",),
                    "is the website itself; give the page that states the terms (the "
                    "affiliation or partner page), not the home page",
                )
            )
        elif _is_home_page(evidence):
            out.append(
                (
                    ("evidence",),
                    "is a home page; give the page that states the terms, e.g. "
                    f"{evidence.rstrip('/')}/affiliation",
                )
            )
    terms = record.get("commissionTerms")
    if terms is not None and record.get("recurring") is False:
        for member in ("durationMonths", "lifetime"):
            if terms[member] not in (None, False):
                out.append(
                    (
                        ("commissionTerms", member),
                        "says how long a recurring commission is paid, but recurring is "
                        f"false; remove {member} or set recurring: true",
                    )
                )
    return out


def _same_page(a: str, b: str) -> bool:
    """Whether two URLs name the same page, whatever the scheme, host case, trailing slash
    and fragment."""
    return _page_of(a) == _page_of(b)


def _page_of(url: str) -> tuple[str, str, str]:
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return ("", url, "")
    return (host, parts.path.rstrip("/"), parts.query)


def _is_home_page(url: str) -> bool:
    host, path, query = _page_of(url)
    return bool(host) and path == "" and query == ""


def _assemble(record: dict[str, Any], stem: str) -> dict[str, Any]:
    """The validated record: API fields minus score, optional fields defaulted to ""."""
    out = dict(record)
    out.pop("status", None)
    out["slug"] = stem
    out.setdefault("platform", "")
    out.setdefault("image", "")
    out.setdefault("holdbackDays", None)
    out.setdefault("currency", None)
    return out


def _missing(spec: FieldSpec) -> str:
    if spec.enum:
        example = f"{spec.name}: one of {', '.join(spec.enum)}"
    elif spec.kind == "boolean":
        example = f"{spec.name}: true or false"
    elif spec.examples:
        shown = spec.examples[0]
        if isinstance(shown, list):
            shown = "[" + ", ".join(shown) + "]"
        elif isinstance(shown, str) and spec.kind in ("timestamp", "line"):
            shown = f'"{shown}"'
        example = f"{spec.name}: {shown}"
    else:
        example = f"{spec.name}: ..."
    hint = f"; {spec.hint}" if spec.hint else ""
    return f"missing required field; add a line such as {example}{hint}"


def _unknown_field(key: str) -> str:
    if key in COMPUTED:
        return COMPUTED[key]
    close = difflib.get_close_matches(key, BY_NAME, n=1, cutoff=0.6)
    lower = {name.lower(): name for name in BY_NAME}
    if key.lower() in lower:
        close = [lower[key.lower()]]
    hint = f"did you mean {close[0]}?" if close else f"the fields are: {', '.join(BY_NAME)}"
    return f"is not a submission field; {hint}"


def _slug_problem(stem: str) -> str | None:
    if stem in RESERVED_SLUGS:
        # /v1/programs/<slug> would be another endpoint's path.
        return f'"{stem}" is reserved by the API (/v1/programs/{stem}); rename the file'
    if len(stem) <= v.SLUG_MAX_LENGTH and v.SLUG_RE.fullmatch(stem):
        return None
    suggestion = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")[: v.SLUG_MAX_LENGTH]
    rename = f"; rename the file to {suggestion}.yaml" if suggestion else ""
    return (
        f'the file name "{stem}" is not a valid slug: lowercase letters, digits and single '
        f"hyphens, 1 to {v.SLUG_MAX_LENGTH} characters{rename}"
    )


RESERVED_SLUGS = frozenset(
    e.path.removeprefix("/v1/programs/")
    for e in ENDPOINTS
    if e.path.startswith("/v1/programs/") and "{" not in e.path
)


# --- checks by kind: return the normalised value or raise InvalidValueError -----------------------


def _describe(value: Any) -> str:
    if isinstance(value, Ambiguous):
        return f"{value.text} (read as {value.meaning})"
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping (field: value lines)"
    return f'"{value}"'


def _ambiguous(value: Ambiguous) -> InvalidValueError:
    return InvalidValueError(
        f"{value.text} is read as {value.meaning} by YAML 1.1 tools and differently by others; "
        f'quote it: "{value.text}"'
    )


def _string(value: Any, spec: FieldSpec) -> str:
    """Any string field: a real YAML string, within its length limit."""
    if isinstance(value, Ambiguous):
        raise _ambiguous(value)
    if not isinstance(value, str):
        if isinstance(value, bool | int | float):
            raise InvalidValueError(
                f'must be text, found {_describe(value)}; quote it: "{_scalar(value)}"'
            )
        if value is None:
            hint = "; leave the field out" if not spec.required else ""
            raise InvalidValueError(f"must be text, found nothing{hint}")
        raise InvalidValueError(f"must be text, found {_describe(value)}")
    if spec.max_length is not None and len(value) > spec.max_length:
        raise InvalidValueError(
            f"is {len(value)} characters long; at most {spec.max_length} are allowed"
        )
    return value


def _scalar(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _text(value: Any, spec: FieldSpec, *, one_line: bool = False) -> str:
    text = _string(value, spec)
    if not text.strip():
        if spec.empty_allowed and text == "":
            return text
        raise InvalidValueError("must not be empty")
    if text != text.strip():
        raise InvalidValueError("has spaces or line breaks at its start or end; remove them")
    if one_line and ("\n" in text or "\r" in text or "\t" in text):
        raise InvalidValueError("must be a single line (no line breaks or tabs)")
    bad = _CONTROL_RE.search(text)
    if bad is None and _TAG_RE.search(text) is not None:
        bad = _TAG_RE.search(_FLAG_RE.sub("", text))
    if bad:
        raise InvalidValueError(
            f"contains the invisible or control character U+{ord(bad.group()):04X}; remove it"
        )
    return text


def check_line(value: Any, spec: FieldSpec) -> str:
    """One line of text."""
    return _text(value, spec, one_line=True)


def check_text(value: Any, spec: FieldSpec) -> str:
    """Text that may span lines."""
    return _text(value, spec)


def check_enum(value: Any, spec: FieldSpec) -> str:
    """One of the vocabulary's values, exactly."""
    return _enum(value, spec)


def _enum(value: Any, spec: FieldSpec) -> str:
    allowed = spec.enum or ()
    choices = ", ".join(allowed)
    if isinstance(value, Ambiguous):
        raise _ambiguous(value)
    if not isinstance(value, str):
        raise InvalidValueError(f"must be one of {choices}; found {_describe(value)}")
    if value in allowed:
        return value
    if value.strip().lower() in allowed:
        raise InvalidValueError(
            f'write it exactly "{value.strip().lower()}" (lowercase, no spaces)'
        )
    close = difflib.get_close_matches(value.lower(), allowed, n=1, cutoff=0.5)
    hint = f'did you mean "{close[0]}"? ' if close else ""
    raise InvalidValueError(f'"{value}" is not allowed; {hint}use one of: {choices}')


def check_boolean(value: Any, spec: FieldSpec) -> bool:
    """true or false, unquoted."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Ambiguous) and value.kind == "bool":
        truth = value.meaning.rsplit(" ", 1)[-1]
        raise InvalidValueError(f"{value.text} is a boolean only in YAML 1.1; write {truth}")
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        raise InvalidValueError(
            f"must be true or false without quotes; write {value.strip().lower()}"
        )
    raise InvalidValueError(f"must be true or false; found {_describe(value)}")


def _number(value: Any, spec: FieldSpec, *, integer: bool) -> int | float:
    what = "a whole number" if integer else "a number"
    bounds = f"from {spec.minimum} to {spec.maximum}"
    if isinstance(value, Ambiguous) and value.kind == "number":
        raise InvalidValueError(
            f"{value.text} is read as {value.meaning} by YAML 1.1 tools; write {what} in plain "
            "decimal digits without leading zeros"
        )
    if isinstance(value, bool) or not isinstance(value, int | float):
        if isinstance(value, str) and _looks_numeric(value):
            raise InvalidValueError(f"must be {what} without quotes; write {value.strip()}")
        raise InvalidValueError(f"must be {what} {bounds}; found {_describe(value)}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidValueError(f"must be {what} {bounds}; found {value}")
        if integer:
            raise InvalidValueError(f"must be a whole number {bounds}; found {value}")
    if spec.minimum is not None and value < spec.minimum:
        raise InvalidValueError(f"must be {what} {bounds}; found {value}")
    if spec.maximum is not None and value > spec.maximum:
        raise InvalidValueError(f"must be {what} {bounds}; found {value}")
    return value + 0  # -0.0 is 0.0: the API should not serve a negative zero


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_integer(value: Any, spec: FieldSpec) -> int:
    """A whole number within the spec's bounds."""
    return int(_number(value, spec, integer=True))


def check_number(value: Any, spec: FieldSpec) -> int | float:
    """A finite number within the spec's bounds; ints stay ints."""
    return _number(value, spec, integer=False)


class InvalidItemsError(Exception):
    """Problems with individual items of a list: (index, message) pairs."""

    def __init__(self, items: list[tuple[int, str]]) -> None:
        super().__init__(items)
        self.items = items


def check_markets(value: Any, spec: FieldSpec) -> tuple[str, ...]:
    """A non-empty list of distinct, officially assigned ISO 3166-1 alpha-2 codes."""
    if isinstance(value, str | Ambiguous):
        text = value.text if isinstance(value, Ambiguous) else value
        raise InvalidValueError(
            f'must be a list, e.g. [FR, BE]; write [{text}] or "- {text}" lines'
        )
    if not isinstance(value, list):
        raise InvalidValueError(
            f"must be a list of country codes, e.g. [FR, BE]; found {_describe(value)}"
        )
    if not value:
        raise InvalidValueError("must list at least one market, e.g. [FR]")
    if len(value) > v.MARKETS_MAX:
        raise InvalidValueError(f"lists {len(value)} markets; at most {v.MARKETS_MAX} are allowed")
    items: list[tuple[int, str]] = []
    first_seen: dict[str, int] = {}
    for index, item in enumerate(value):
        if item is BROKEN:
            continue  # already reported while reading
        message = _market_problem(item)
        if message is None and item in first_seen:
            message = f"{item} is listed twice (also at markets[{first_seen[item]}]); keep one"
        if message:
            items.append((index, message))
        else:
            first_seen[item] = index
    if items:
        raise InvalidItemsError(items)
    return tuple(value)


def _market_problem(item: Any) -> str | None:
    if isinstance(item, Ambiguous):
        return f'{item.text} is read as {item.meaning} by YAML 1.1 tools; quote it: "{item.text}"'
    if not isinstance(item, str):
        return f"must be a two-letter country code such as FR; found {_describe(item)}"
    if item in COUNTRIES:
        return None
    upper = item.strip().upper()
    if upper in COUNTRIES:
        return f'write country codes in capitals: "{upper}"'
    if upper in NOT_ASSIGNED:
        return f"{item} is not an ISO 3166-1 code: {NOT_ASSIGNED[upper]}"
    named = _NAMES_TO_CODES.get(item.strip().lower())
    if named:
        return f"write the country's two-letter code: {named}"
    return (
        f'"{item}" is not an officially assigned ISO 3166-1 alpha-2 code '
        "(two capital letters, e.g. FR, BE, CH, CA)"
    )


def check_url(value: Any, spec: FieldSpec) -> str:
    """An absolute http(s) URL with a host (or "" where the field allows it)."""
    url = _string(value, spec)
    if url == "" and spec.empty_allowed:
        return url
    example = spec.examples[0] if spec.examples else "https://www.acme.fr/"
    expected = f'must be an absolute URL starting with https:// or http://, e.g. "{example}"'
    if not url.strip():
        raise InvalidValueError(expected)
    if _SPACE_OR_CONTROL_RE.search(url):
        raise InvalidValueError(
            "must not contain spaces or control characters; encode spaces as %20"
        )
    simple = _SIMPLE_URL_RE.fullmatch(url)
    if simple is not None and HOST_RE.fullmatch(simple.group(1)):
        return url  # the usual shape, which the general checks below accept (tested)
    return _general_url(url, expected)


def _general_url(url: str, expected: str) -> str:
    """check_url's checks of an URL without spaces or controls, by urllib's parse."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise InvalidValueError(f"is not a valid URL ({exc}); {expected}") from None
    if not url.startswith(("https://", "http://")):
        raise InvalidValueError(expected)
    if parts.username is not None or parts.password is not None:
        raise InvalidValueError("must not contain a user name or password")
    if not parts.hostname or not HOST_RE.fullmatch(parts.hostname):
        raise InvalidValueError(f"has no valid domain name after {parts.scheme}://; {expected}")
    return url


def check_host(value: Any, spec: FieldSpec) -> str:
    """A bare lowercase domain name."""
    host = _string(value, spec)
    if "://" in host:
        bare = urlsplit(host).hostname or "acme.fr"
        raise InvalidValueError(f'write the domain only, without the scheme: "{bare}"')
    if _SPACE_OR_CONTROL_RE.search(host):
        raise InvalidValueError("must not contain spaces")
    if "/" in host:
        raise InvalidValueError(f'write the domain only, without a path: "{host.split("/", 1)[0]}"')
    if ":" in host:
        raise InvalidValueError(f'write the domain only, without a port: "{host.split(":", 1)[0]}"')
    if host != host.lower():
        raise InvalidValueError(f'write it in lowercase: "{host.lower()}"')
    if not host.isascii():
        raise InvalidValueError("write internationalised domain names in punycode (xn--...)")
    if not HOST_RE.fullmatch(host):
        raise InvalidValueError(
            'must be a domain name such as "acme.fr" (letters, digits, hyphens, dots)'
        )
    return host


def check_slug(value: Any, spec: FieldSpec) -> str:
    """The optional slug field: a string (its equality with the file name is checked later)."""
    if isinstance(value, Ambiguous):
        raise _ambiguous(value)
    if not isinstance(value, str):
        raise InvalidValueError(
            f'must be text, found {_describe(value)}; quote it: "{_scalar(value)}"'
        )
    return value


def check_timestamp(value: Any, spec: FieldSpec) -> str:
    """An RFC 3339 date-time with a zone; returned in UTC as YYYY-MM-DDTHH:MM:SS[.ffffff]Z."""
    if isinstance(value, Ambiguous) and value.kind == "timestamp":
        text = value.text  # a plain timestamp is accepted as the text it is
    elif isinstance(value, Ambiguous | str):
        text = value.text if isinstance(value, Ambiguous) else value
    else:
        raise InvalidValueError(
            f'must be a date and time, e.g. "{TIMESTAMP_EXAMPLE}"; found {_describe(value)}'
        )
    match = TIMESTAMP_RE.match(text.strip())
    if not match:
        raise InvalidValueError(
            f'"{text}" is not a date and time; write it as RFC 3339, e.g. "{TIMESTAMP_EXAMPLE}"'
        )
    if not match.group("time"):
        raise InvalidValueError(
            f'"{text}" has no time; write e.g. "{match.group("date")}T09:00:00Z"'
        )
    if not match.group("zone"):
        raise InvalidValueError(
            f'"{text}" has no time zone; add Z for UTC or an offset, e.g. '
            f'"{text.strip().replace(" ", "T")}Z" or "...+01:00"'
        )
    if not STRICT_TIMESTAMP_RE.fullmatch(text):
        raise InvalidValueError(
            f'"{text}" is not in the expected form; write '
            'YYYY-MM-DDTHH:MM:SS followed by Z or +HH:MM, e.g. "' + TIMESTAMP_EXAMPLE + '"'
        )
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidValueError(f'"{text}" is not a real date and time ({exc})') from None
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:00:00-05:00 is in year 10000 in UTC
        raise InvalidValueError(f'"{text}" is out of range (1970 to 9998)') from None
    if not 1970 <= utc.year <= 9998:
        raise InvalidValueError(f'"{text}" is out of range (1970 to 9998)')
    return utc.isoformat().replace("+00:00", "Z")


# --- the typed commission ------------------------------------------------------------------


class InvalidMembersError(Exception):
    """Problems with members of a mapping field: (path below the field, message) pairs."""

    def __init__(self, members: list[tuple[tuple[str | int, ...], str]]) -> None:
        super().__init__(members)
        self.members = members


_RATE_UNIT_RE = re.compile(v.RATE_UNIT_PATTERN)
_UNITS = "percent (a share of the sale) or the ISO 4217 code of an amount's currency (EUR)"
# The members each mode allows; which of them it requires, check_terms says.
_MODE_MEMBERS: dict[str, frozenset[str]] = {
    v.PERCENTAGE: frozenset(("mode", "value", "upTo", "unit", "durationMonths", "lifetime")),
    v.FLAT: frozenset(("mode", "value", "upTo", "unit", "durationMonths", "lifetime")),
    v.TIERED: frozenset(("mode", "unit", "tiers", "durationMonths", "lifetime")),
    v.HYBRID: frozenset(("mode", "parts", "durationMonths", "lifetime")),
}
_TERMS_EXAMPLE = "commissionTerms: {mode: percentage, value: 30, unit: percent}"


def check_terms(value: Any, spec: FieldSpec) -> dict[str, Any]:
    """The typed commission: a mapping whose members depend on its mode (docs/submissions.md).

    Returns every member the API shows, in its order (absent ones null, false or empty).
    """
    if not isinstance(value, dict):
        raise InvalidValueError(
            f"must be a mapping of the commission's terms, e.g. {_TERMS_EXAMPLE}; "
            f"found {_describe(value)}"
        )
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for key in value:
        if key not in v.TERMS_MEMBERS:
            close = difflib.get_close_matches(str(key), v.TERMS_MEMBERS, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else f"use {', '.join(v.TERMS_MEMBERS)}"
            problems.append(((str(key),), f"is not a member of commissionTerms; {hint}"))
    if "mode" not in value:
        raise InvalidMembersError(
            [*problems, ((), f"has no mode; add mode: one of {', '.join(v.COMMISSION_MODES)}")]
        )
    if value["mode"] is BROKEN:
        raise InvalidMembersError(problems)  # the mode was reported while reading
    mode_spec = FieldSpec("mode", "enum", "", enum=v.COMMISSION_MODES)
    try:
        mode = _enum(value["mode"], mode_spec)
    except InvalidValueError as exc:
        raise InvalidMembersError([*problems, (("mode",), str(exc))]) from None
    for key in value:
        if key in v.TERMS_MEMBERS and key not in _MODE_MEMBERS[mode]:
            problems.append(((key,), f"does not apply to {mode} terms; remove it"))
    out: dict[str, Any] = {name: None for name in v.TERMS_MEMBERS}
    out.update(mode=mode, lifetime=False, tiers=[], parts=[])
    if mode in (v.PERCENTAGE, v.FLAT):
        rate, rate_problems = _rate(value, (), unit_for=mode)
        out.update(rate)
        problems += rate_problems
    elif mode == v.TIERED:
        unit = _unit(value, (), problems, unit_for=None)
        out["unit"] = unit
        out["tiers"] = _tiers(value, unit, problems)
    else:
        out["parts"] = _parts(value, problems)
    if "durationMonths" in value and value.get("lifetime") is True:
        problems.append((("durationMonths",), "and lifetime: true contradict; keep one"))
    if "durationMonths" in value:
        out["durationMonths"] = _member_number(
            value["durationMonths"], ("durationMonths",), problems, 1, v.DURATION_MONTHS_MAX, True
        )
    if "lifetime" in value:
        try:
            out["lifetime"] = check_boolean(value["lifetime"], spec)
        except InvalidValueError as exc:
            problems.append((("lifetime",), str(exc)))
    if problems:
        raise InvalidMembersError(problems)
    return out


def _member_number(
    value: Any,
    where: tuple[str | int, ...],
    problems: list[tuple[tuple[str | int, ...], str]],
    minimum: int,
    maximum: int,
    integer: bool = False,
) -> Any:
    if value is BROKEN:
        return None  # already reported while reading
    kind = "integer" if integer else "number"
    spec = FieldSpec(str(where[-1]), kind, "", minimum=minimum, maximum=maximum)
    try:
        return _number(value, spec, integer=integer)
    except InvalidValueError as exc:
        problems.append((where, str(exc)))
        return None


def _unit(
    value: dict[str, Any],
    where: tuple[str | int, ...],
    problems: list[tuple[tuple[str | int, ...], str]],
    unit_for: str | None,
) -> str | None:
    """The rate's unit: percent or a currency code, and the one `unit_for`'s mode needs."""
    if "unit" not in value:
        problems.append(
            (
                where,
                "a rate without its unit is ambiguous; add unit: percent for a share of "
                "the sale, or the currency of an amount, e.g. unit: EUR",
            )
        )
        return None
    unit = value["unit"]
    if unit is BROKEN:
        return None  # already reported while reading
    if (
        isinstance(unit, str)
        and unit.strip().upper() in ("%", "PERCENT", "PCT")
        and unit != v.PERCENT
    ):
        problems.append(((*where, "unit"), f'write it "{v.PERCENT}"'))
        return None
    if isinstance(unit, str) and unit.strip() in ("€", "$", "£"):
        code = {"€": "EUR", "$": "USD", "£": "GBP"}[unit.strip()]
        problems.append(((*where, "unit"), f"write the currency's ISO 4217 code: {code}"))
        return None
    code = unit.strip().upper() if isinstance(unit, str) else ""
    if unit != code and len(code) == 3 and _RATE_UNIT_RE.fullmatch(code):
        problems.append(((*where, "unit"), f'write the currency\'s code in capitals: "{code}"'))
        return None
    if not isinstance(unit, str) or not _RATE_UNIT_RE.fullmatch(unit):
        problems.append(((*where, "unit"), f"must be {_UNITS}; found {_describe(unit)}"))
        return None
    if unit_for == v.PERCENTAGE and unit != v.PERCENT:
        problems.append(
            (
                (*where, "unit"),
                f"percentage terms are a share: write unit: {v.PERCENT}, or "
                "mode: flat for an amount",
            )
        )
    if unit_for == v.FLAT and unit == v.PERCENT:
        problems.append(
            (
                (*where, "unit"),
                "flat terms are an amount: write its currency, e.g. unit: EUR, "
                "or mode: percentage for a share",
            )
        )
    return unit


def _rate(
    value: dict[str, Any], where: tuple[str | int, ...], unit_for: str | None
) -> tuple[dict[str, Any], list[tuple[tuple[str | int, ...], str]]]:
    """value, upTo and unit of a percentage, flat or hybrid-part rate."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    unit = _unit(value, where, problems, unit_for)
    top = v.PERCENT_MAX if unit == v.PERCENT else v.AMOUNT_MAX
    out: dict[str, Any] = {"value": None, "upTo": None, "unit": unit}
    if "value" not in value and "upTo" not in value:
        problems.append(
            (
                where,
                "has no rate; add value (the rate, or the lower bound of a range) and, "
                'for a range or an "up to" offer, upTo',
            )
        )
    for name in ("value", "upTo"):
        if name in value:
            out[name] = _member_number(value[name], (*where, name), problems, 0, top)
    if out["value"] is not None and out["upTo"] is not None and out["upTo"] < out["value"]:
        problems.append(
            ((*where, "upTo"), f"is below value ({out['value']}); upTo is the upper bound")
        )
    return out, problems


def _list_of_mappings(
    value: dict[str, Any],
    name: str,
    least: int,
    most: int,
    problems: list[tuple[tuple[str | int, ...], str]],
) -> list[Any]:
    items = value.get(name)
    if not isinstance(items, list) or not least <= len(items) <= most:
        found = f"{len(items)} items" if isinstance(items, list) else _describe(items)
        problems.append(
            (
                (name,) if name in value else (),
                f"{name} must list {least} to {most} rates, each a mapping; found {found}",
            )
        )
        return []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            problems.append(((name, index), f"must be a mapping; found {_describe(item)}"))
    return items


def _tiers(
    value: dict[str, Any], unit: str | None, problems: list[tuple[tuple[str | int, ...], str]]
) -> list[dict[str, Any]]:
    tiers: list[dict[str, Any]] = []
    top = v.PERCENT_MAX if unit == v.PERCENT else v.AMOUNT_MAX
    previous = None
    for index, item in enumerate(
        _list_of_mappings(value, "tiers", v.TIERS_MIN, v.TIERS_MAX, problems)
    ):
        if not isinstance(item, dict):
            continue
        where: tuple[str | int, ...] = ("tiers", index)
        for key in item:
            if key not in v.TIER_MEMBERS:
                problems.append(
                    (
                        (*where, str(key)),
                        f"is not a member of a tier; use {', '.join(v.TIER_MEMBERS)} (the tiers share the terms' unit)",
                    )
                )
        tier: dict[str, Any] = {}
        for name in v.TIER_MEMBERS:
            if name not in item:
                problems.append((where, f"has no {name}; a tier is {{from: volume, value: rate}}"))
                tier[name] = None
                continue
            tier[name] = _member_number(
                item[name], (*where, name), problems, 0, top if name == "value" else v.AMOUNT_MAX
            )
        if tier["from"] is not None:
            if previous is not None and tier["from"] <= previous:
                problems.append(
                    (
                        (*where, "from"),
                        "must be above the previous tier's; list the tiers in ascending order",
                    )
                )
            previous = tier["from"]
        tiers.append(tier)
    return tiers


def _parts(
    value: dict[str, Any], problems: list[tuple[tuple[str | int, ...], str]]
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for index, item in enumerate(
        _list_of_mappings(value, "parts", v.PARTS_MIN, v.PARTS_MAX, problems)
    ):
        if not isinstance(item, dict):
            continue
        where: tuple[str | int, ...] = ("parts", index)
        for key in item:
            if key not in v.PART_MEMBERS:
                problems.append(
                    (
                        (*where, str(key)),
                        f"is not a member of a part; use {', '.join(v.PART_MEMBERS)}",
                    )
                )
        part, part_problems = _rate(item, where, unit_for=None)
        problems += part_problems
        parts.append(part)
    return parts


_SYMBOLS = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY"}


def check_currency(value: Any, spec: FieldSpec) -> str:
    """A current ISO 4217 code in capitals (`EUR`)."""
    if not isinstance(value, str):
        raise InvalidValueError(f"must be a currency code such as EUR; found {_describe(value)}")
    if value.strip() in _SYMBOLS:
        raise InvalidValueError(f"write the currency's ISO 4217 code: {_SYMBOLS[value.strip()]}")
    code = value.strip().upper()
    if code in currencies.CURRENT and value != code:
        raise InvalidValueError(f'write the currency\'s code in capitals: "{code}"')
    if value not in currencies.CURRENT:
        raise InvalidValueError(
            f"{value!r} is not a current ISO 4217 currency code; write one such as EUR, USD, GBP"
        )
    return value


_NETWORKS_EXAMPLE = 'networks: [{network: awin, programId: "1234"}]'
_LINK_MEMBERS = ("network", "programId")


def check_networks(value: Any, spec: FieldSpec) -> list[tuple[str, str]]:
    """Where the programme runs: a list of {network, programId} mappings, each pair once;
    returned as (network, programId) pairs in the order written."""
    if not isinstance(value, list):
        raise InvalidValueError(
            f"must be a list of mappings, e.g. {_NETWORKS_EXAMPLE}; found {_describe(value)}"
        )
    if len(value) > PROGRAM_NETWORKS_MAX:
        raise InvalidValueError(
            f"lists {len(value)} entries; at most {PROGRAM_NETWORKS_MAX} are allowed"
        )
    problems: list[tuple[tuple[str | int, ...], str]] = []
    pairs: list[tuple[str, str]] = []
    seen: dict[tuple[str, str], int] = {}
    network_spec = FieldSpec("network", "enum", "", enum=NETWORKS)
    id_spec = FieldSpec("programId", "line", "", max_length=PROGRAM_ID_MAX_LENGTH)
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            problems.append(
                (
                    (index,),
                    f'must be a mapping such as {{network: awin, programId: "1234"}}; '
                    f"found {_describe(item)}",
                )
            )
            continue
        for key in item:
            if key not in _LINK_MEMBERS:
                problems.append(
                    (
                        (index, str(key)),
                        f"is not a member of a network entry; use {', '.join(_LINK_MEMBERS)}",
                    )
                )
        found: dict[str, str] = {}
        for name, member_spec, check in (
            ("network", network_spec, _network),
            ("programId", id_spec, _program_id),
        ):
            if name not in item:
                problems.append(
                    ((index,), f"has no {name}; an entry is {_NETWORKS_EXAMPLE[11:-1]}")
                )
                continue
            if item[name] is BROKEN:
                continue  # already reported while reading
            try:
                found[name] = check(item[name], member_spec)
            except InvalidValueError as exc:
                problems.append(((index, name), str(exc)))
        if len(found) == len(_LINK_MEMBERS):
            pair = (found["network"], found["programId"])
            if pair in seen:
                problems.append(
                    (
                        (index,),
                        f"repeats entry {seen[pair] + 1} ({pair[0]} {pair[1]}); list each "
                        "pair once",
                    )
                )
            else:
                seen[pair] = index
                pairs.append(pair)
    if problems:
        raise InvalidMembersError(problems)
    return pairs


def _network(value: Any, spec: FieldSpec) -> str:
    """A network id of contract.networks."""
    if isinstance(value, str) and value not in NETWORKS and value.strip().lower() not in NETWORKS:
        close = difflib.get_close_matches(value.lower(), NETWORKS, n=1, cutoff=0.6)
        hint = f'did you mean "{close[0]}"? ' if close else ""
        raise InvalidValueError(
            f'"{value}" is not a network the service knows; {hint}use one of: {", ".join(NETWORKS)}'
        )
    return _enum(value, spec)


def _program_id(value: Any, spec: FieldSpec) -> str:
    """The programme's id at its network, as text: a number unquoted is refused, since YAML
    would read 01234 or 1e3 as another id than the one written."""
    if isinstance(value, bool | int | float) and not isinstance(value, bool):
        raise InvalidValueError(
            f'must be text: a network\'s programme id is compared as written; quote it: "{value}"'
        )
    return _text(value, spec, one_line=True)


CHECKS = {
    "line": check_line,
    "text": check_text,
    "enum": check_enum,
    "boolean": check_boolean,
    "integer": check_integer,
    "number": check_number,
    "markets": check_markets,
    "currency": check_currency,
    "url": check_url,
    "host": check_host,
    "slug": check_slug,
    "timestamp": check_timestamp,
    "terms": check_terms,
    "networks": check_networks,
}
