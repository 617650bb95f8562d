"""A strict, safe YAML reader that keeps the position of every value.

PyYAML reads YAML 1.1, where `NO` is false, `0755` is 493, `1:30` is 90 and `2024-01-01` a
date, while YAML 1.2 tools read most of those as strings or other numbers. A submission
must mean the same thing to every reader, so here plain (unquoted) scalars are typed by the
YAML 1.2 core schema, and any plain scalar that a YAML 1.1 reader would type differently is
kept as an `Ambiguous` value: the validator turns it into an error that says how to quote
or rewrite it (`createdAt` alone accepts a plain timestamp, as its text).

Only parsing and composing use PyYAML (libyaml's C parser when available); values are built
here, so no tag can construct an object, aliases are refused (no "billion laughs"),
duplicate keys are reported rather than silently overwritten.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import yaml
from yaml.composer import Composer
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    MappingStartEvent,
    NodeEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from catalog.errors import Problem

CParser: type | None
try:
    from yaml.cyaml import CParser  # type: ignore[attr-defined, no-redef]
except ImportError:  # PyYAML built without libyaml: the same rules, in pure Python
    CParser = None


class _PyParser(Reader, Scanner, Parser, Composer):
    """PyYAML's pure-Python reader, scanner, parser and composer in one object."""

    def __init__(self, stream: bytes) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)


class _PyEvents(Reader, Scanner, Parser):
    """PyYAML's pure-Python parser, for event scans without libyaml."""

    def __init__(self, stream: bytes) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)


EVENTS: type = CParser if CParser is not None else _PyEvents

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
SEQ = "tag:yaml.org,2002:seq"
MAP = "tag:yaml.org,2002:map"
AMBIGUOUS = "tag:affdir,2024:ambiguous"  # never written by people; see _plain_tag

# YAML 1.2 core schema.
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_TRUE = frozenset(("true", "True", "TRUE"))
_FALSE = frozenset(("false", "False", "FALSE"))
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)\Z")
_SPECIAL_FLOATS = {
    ".inf": float("inf"),
    ".Inf": float("inf"),
    ".INF": float("inf"),
    "+.inf": float("inf"),
    "+.Inf": float("inf"),
    "+.INF": float("inf"),
    "-.inf": float("-inf"),
    "-.Inf": float("-inf"),
    "-.INF": float("-inf"),
    ".nan": float("nan"),
    ".NaN": float("nan"),
    ".NAN": float("nan"),
}

# What YAML 1.1 readers (PyYAML, Ruby's Psych, older Go yaml) make of other plain scalars.
_YAML11_TRUE = frozenset(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"))
_YAML11_FALSE = frozenset(("n", "N", "no", "No", "NO", "off", "Off", "OFF"))
_LEADING_ZERO = re.compile(r"[-+]?0[0-9_]+\Z")
_BASED_INT = re.compile(r"[-+]?0(?:[xX][0-9a-fA-F_]+|[oO][0-7_]+|[bB][01_]+)\Z")
_UNDERSCORED = re.compile(r"[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?\Z")
_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")
# YAML 1.1 readers disagree even among themselves on exponents (PyYAML wants a dot and a sign).
_EXPONENT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+\Z")
# PyYAML's own timestamp pattern.
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z|"
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?\Z"
)


# No field nests deeper than a list in a mapping; the limit leaves room for mistakes to be
# reported as such, and keeps libyaml's recursive composer (which overflows the C stack
# near 100,000 levels) and this module's builder far from any stack limit.
MAX_DEPTH = 32
# Brackets, braces and "- " / "? " entries: the only ways to nest without indenting further,
# so a file with fewer of them cannot nest deeper than its indentation allows.
_SAME_LINE_NESTING = (b"[", b"{", b"- ", b"-\t", b"? ", b"?\t")
# Indentation that deep, after any of YAML's line breaks (LF, CR, NEL, U+2028...), is a run
# of that many spaces: looked for as such, it needs no knowledge of line breaks.
_DEEP_INDENT = b" " * MAX_DEPTH
MAX_DIGITS = 100  # a longer number is no field's value (and int() refuses 4,300 digits)
MAX_BYTES = 256 * 1024  # a submission is a few kB; this bounds the work one file can cause
# What YAML allows in a stream (YAML 1.1 and 1.2, section 5.1), comments included.
_NOT_YAML = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# The same test on valid UTF-8 bytes, in C-speed steps (a regex over every character of a
# file cost 6 us of a file's 180): allowed ASCII bytes, then the non-ASCII code points YAML
# forbids, C1 controls but NEL (U+0080 to U+009F) and U+FFFE/U+FFFF.
_YAML_ASCII = bytes([9, 10, 13, *range(0x20, 0x7F)])
_NON_ASCII = bytes(range(0x80, 0x100))
_NOT_YAML_UTF8 = re.compile(rb"\xc2[\x80-\x84\x86-\x9f]|\xef\xbf[\xbe\xbf]")


class Broken:
    """A value already reported as a problem while reading; checks skip it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "BROKEN"


BROKEN = Broken()


class Ambiguous(NamedTuple):
    """A plain scalar that YAML 1.1 and YAML 1.2 readers do not read alike."""

    text: str  # exactly as written
    meaning: str  # what a YAML 1.1 reader makes of it, for the message
    kind: str  # bool | number | timestamp


def _ambiguity(value: str) -> Ambiguous | None:
    """How a YAML 1.1 reader would misread this plain scalar, if it would."""
    if value in _YAML11_TRUE or value in _YAML11_FALSE:
        truth = "true" if value in _YAML11_TRUE else "false"
        return Ambiguous(value, f"the boolean {truth}", "bool")
    if _LEADING_ZERO.match(value):
        return Ambiguous(value, "an octal number", "number")
    if _BASED_INT.match(value):
        return Ambiguous(value, "a hexadecimal, octal or binary number", "number")
    if _SEXAGESIMAL.match(value):
        return Ambiguous(value, "a base-60 number", "number")
    if "_" in value and any(c.isdigit() for c in value) and _UNDERSCORED.match(value):
        return Ambiguous(value, "a number with its underscores dropped", "number")
    if _EXPONENT.match(value):
        return Ambiguous(value, "a number in exponent notation, or a string", "number")
    if value[:1].isdigit() and _TIMESTAMP.match(value):
        return Ambiguous(value, "a date", "timestamp")
    return None


# Memoised: a submission's keys and enum values are the same words in every file, and this
# runs for every plain scalar, keys included (37 calls a file).
@functools.lru_cache(maxsize=1024)
def _plain_tag(value: str) -> str:
    """The tag of a plain scalar under the YAML 1.2 core schema, or AMBIGUOUS."""
    if value in _NULLS:
        return NULL
    if value in _TRUE or value in _FALSE:
        return BOOL
    if value in _YAML11_TRUE or value in _YAML11_FALSE:
        return AMBIGUOUS
    first = value[:1]
    # Most scalars are words, which only YAML 1.1's booleans above can trip on.
    if not (first.isdigit() or first in "+-."):
        return STR
    if _DECIMAL.match(value):
        return INT
    if _FLOAT.match(value) or value in _SPECIAL_FLOATS:
        return FLOAT
    return STR if _ambiguity(value) is None else AMBIGUOUS


class _StrictResolver(BaseResolver):
    """Tags plain scalars with `_plain_tag`; quoted ones are strings."""

    def resolve(self, kind: type, value: str | None, implicit: Any) -> str:
        if kind is ScalarNode:
            return _plain_tag(value) if implicit[0] else STR  # type: ignore[arg-type]
        return SEQ if kind is SequenceNode else MAP

    # Path-based resolvers are not used: skip PyYAML's bookkeeping for them.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


class PyComposer(_PyParser, _StrictResolver):
    """The strict composer in pure Python."""


if CParser is not None:

    class CComposer(CParser, _StrictResolver):  # type: ignore[valid-type, misc]
        """The strict composer on libyaml's C parser (about five times faster)."""

    COMPOSER: type = CComposer
else:
    COMPOSER = PyComposer


Path = tuple[str | int, ...]


@dataclass(slots=True)
class Document:
    """A submission's values and where each was written."""

    value: Any
    line: int  # position of the top-level node
    column: int
    positions: dict[Path, tuple[int, int]] = field(default_factory=dict)  # value nodes
    key_positions: dict[str, tuple[int, int]] = field(default_factory=dict)  # top-level keys

    def position(self, path: Path) -> tuple[int, int]:
        """Where the value at `path` was written; its parent's position when it is absent."""
        while path not in self.positions and path:
            path = path[:-1]
        return self.positions.get(path, (self.line, self.column))


def _pos(node: Node) -> tuple[int, int]:
    mark = node.start_mark
    return (mark.line + 1, mark.column + 1)


class _Builder:
    """Turns composed nodes into Python values, recording positions and problems.

    It never sees an alias: a file with a `*` or `&` in it is scanned for them before it is
    composed (`_before_composing`), and an alias cannot be written without a `*`. So every
    node is visited once, a tree, and "billion laughs" cannot expand here.
    """

    def __init__(self, doc: Document, problems: list[Problem]) -> None:
        self.doc = doc
        self.problems = problems
        self.too_deep = False

    def build(self, node: Node, path: Path) -> Any:
        if len(path) > MAX_DEPTH:
            # Reported once, at the first such node in the document: what the event scan
            # reports when it runs (_scan_events).
            if not self.too_deep:
                self.too_deep = True
                self._fail(node, path[:1], f"nested more than {MAX_DEPTH} levels deep")
            return BROKEN
        self.doc.positions[path] = _pos(node)
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if isinstance(node, SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, MappingNode)  # the composer makes no other kind
        return self._mapping(node, path)

    def _mapping(self, node: MappingNode, path: Path) -> dict[str, Any]:
        result: dict[str, Any] = {}
        key_lines: dict[str, int] = {}  # where each key was written, at every level
        for key_node, value_node in node.value:
            key = key_node.value
            if not (isinstance(key_node, ScalarNode) and key_node.tag == STR):
                label = key if isinstance(key, str) else "?"
                self._fail(key_node, (*path, label), "is not a field name; write a plain name")
                continue
            if key in key_lines:
                self._fail(
                    key_node,
                    (*path, key),
                    f"duplicate key (first set on line {key_lines[key]}); keep only one",
                )
                continue
            key_lines[key] = key_node.start_mark.line + 1
            if not path:
                self.doc.key_positions[key] = _pos(key_node)
            result[key] = self.build(value_node, (*path, key))
        return result

    def _scalar(self, node: ScalarNode, path: Path) -> Any:
        tag, value = node.tag, node.value
        if tag == STR:
            return value
        if tag == AMBIGUOUS:
            return _ambiguity(value)
        if tag == NULL and value in _NULLS:
            return None
        if tag == BOOL and (value in _TRUE or value in _FALSE):
            return value in _TRUE
        if tag in (INT, FLOAT) and len(value) > MAX_DIGITS:
            self._fail(node, path, f"a number of {len(value)} characters is no value of a field")
            return BROKEN
        if tag == INT and _DECIMAL.match(value):
            return int(value)
        if tag == FLOAT and (_FLOAT.match(value) or value in _SPECIAL_FLOATS):
            return _SPECIAL_FLOATS[value] if value in _SPECIAL_FLOATS else float(value)
        shown = tag.replace("tag:yaml.org,2002:", "!!")
        self._fail(node, path, f"the tag {shown} is not supported; write a plain value")
        return BROKEN

    def _fail(self, node: Node, path: Path, message: str) -> None:
        line, column = _pos(node)
        self.problems.append(Problem(line, column, _field_name(path), message))


def _field_name(path: Path) -> str:
    """`markets[2]`-style name of a value's place in the document."""
    if not path:
        return "(document)"
    name = str(path[0])
    for part in path[1:]:
        name += f"[{part}]" if isinstance(part, int) else f".{part}"
    return name


field_name = _field_name


def load(data: bytes, composer_class: type = COMPOSER) -> tuple[Document | None, list[Problem]]:
    """Parse one YAML document strictly; (None, [the problems]) when it cannot be read."""
    early = _before_composing(data, composer_class)
    if early:
        return None, early
    problems: list[Problem] = []
    composer = composer_class(data)
    try:
        node = composer.get_single_node()
    except yaml.MarkedYAMLError as exc:
        return None, [_syntax_problem(exc, data)]
    except yaml.YAMLError as exc:
        return None, [Problem(1, 1, "(yaml)", f"cannot be read: {_one_line(str(exc))}")]
    finally:
        composer.dispose()
    if node is None:
        return None, [Problem(1, 1, "(document)", "the file is empty; expected field: value lines")]
    line, column = _pos(node)
    doc = Document(value=None, line=line, column=column)
    doc.value = _Builder(doc, problems).build(node, ())
    return doc, problems


def _one_line(text: str) -> str:
    return " ".join(text.split())


# The line breaks both parsers count lines by (a CR alone is one, CRLF is one).
_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")
_TAB_HINT = (
    "a tab here, where YAML takes spaces only (tabs cannot indent); replace the tab with spaces"
)
_INDENT_HINT = (
    "this line is indented {how}; start it in the same column as the fields it belongs with "
    "(top-level fields start in column 1, with spaces)"
)
_QUOTE_HINT = (
    "the {quote} opened here is never closed; end the value with a closing {quote} "
    "(and write {escaped} for a {quote} inside it)"
)


def _syntax_problem(exc: yaml.MarkedYAMLError, data: bytes) -> Problem:
    """A syntax error where the author can fix it, saying how: the parsers' own words
    ("found character that cannot start any token", "found unexpected end of stream") name
    neither the tab, the indentation nor the quote at fault, nor always the line."""
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    what = exc.problem or exc.context or "invalid YAML"
    hint = _hint(exc, data) if mark else None
    if hint is not None:
        return Problem(hint[0], hint[1], "(yaml)", hint[2])
    return Problem(line, column, "(yaml)", f"{_one_line(what)}; this is not valid YAML")


def _hint(exc: yaml.MarkedYAMLError, data: bytes) -> tuple[int, int, str] | None:
    """(line, column, message) for a tab, a bad indent or an unclosed quote, else None.

    libyaml and PyYAML word these differently; both are recognised, so a file gets the
    same hint whichever parser read it."""
    problem, context = exc.problem or "", exc.context or ""
    mark, opened = exc.problem_mark, exc.context_mark
    if "quoted scalar" in context and "end of stream" in problem and opened is not None:
        # The quote ran to the end of the file: point at where it opened, not the end.
        lines = _lines(data)
        quote = _char_at(lines, opened.line, opened.column)
        if quote not in ("'", '"'):
            return None
        return opened.line + 1, opened.column + 1, _quote_hint(quote)
    if mark is None:
        return None
    lines = _lines(data)
    text = lines[mark.line] if mark.line < len(lines) else ""
    indent = len(text) - len(text.lstrip(" \t"))
    if "\t" in text[:indent] or _char_at(lines, mark.line, mark.column) == "\t":
        tab = text.find("\t", 0, indent) if "\t" in text[:indent] else mark.column
        return mark.line + 1, tab + 1, _TAB_HINT
    spaces = len(text) - len(text.lstrip(" "))
    key = text[: mark.column]
    # `  host: x` under a field: read as the rest of the value above, which cannot hold
    # "key:". A colon further along a value (`name: A: B`) is another mistake.
    if problem.startswith("mapping values are not allowed") and spaces > 0 and ": " not in key:
        return mark.line + 1, spaces + 1, _INDENT_HINT.format(how="deeper than the field above it")
    # libyaml: "did not find expected key" (or "'-' indicator"); PyYAML: "expected <block end>".
    if not ("expected key" in problem or "'-'" in problem or "<block end>" in problem):
        return None
    if mark.column == spaces > 0:
        # The line starts at a column no open block uses: between two levels.
        how = f"by {spaces} space{'s' if spaces != 1 else ''}, a depth no field above it uses"
        return mark.line + 1, spaces + 1, _INDENT_HINT.format(how=how)
    return _reopened_quote(lines, mark.line, text[: mark.column].rstrip())


def _reopened_quote(lines: list[str], line: int, before: str) -> tuple[int, int, str] | None:
    """An unclosed quote that the next quote of its kind closed, lines later: the parser
    stops just after that one (`commission: "8%"` read as `...commission: ` then `8%"`), so
    the error is reported far from the quote that was left open."""
    quote = before[-1:]
    if quote not in ("'", '"') or before.find(quote) != len(before) - 1 or line == 0:
        return None
    for number in range(line - 1, -1, -1):
        opened = lines[number].rfind(quote)
        if opened >= 0:
            return number + 1, opened + 1, _quote_hint(quote)
    return None


def _quote_hint(quote: str) -> str:
    # Inside "...", \" is a quote; inside '...', '' is one (YAML has no \' escape).
    return _QUOTE_HINT.format(quote=quote, escaped="''" if quote == "'" else '\\"')


def _lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    return _LINE_BREAK.split(text[1:] if text.startswith("\ufeff") else text)


def _char_at(lines: list[str], line: int, column: int) -> str:
    return lines[line][column : column + 1] if line < len(lines) else ""


def _before_composing(data: bytes, composer_class: type) -> list[Problem]:
    """What must stop a file before it is composed: too big, not UTF-8, characters YAML
    forbids, and (found by a scan of the parser's events, run only when the bytes could
    hold them) tags, anchors, aliases and nesting deeper than MAX_DEPTH."""
    if len(data) > MAX_BYTES:
        return [
            Problem(1, 1, "(file)", f"is {len(data):,} bytes; a submission is at most "
                    f"{MAX_BYTES // 1024} KiB")
        ]  # fmt: skip
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position_of_byte(data, exc.start)
        message = f"byte 0x{data[exc.start]:02X} is not UTF-8; save the file as UTF-8"
        return [Problem(line, column, "(file)", message)]
    bad = _NOT_YAML.search(text) if _has_forbidden_characters(data) else None
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        message = (
            f"the character U+{ord(bad.group()):04X} is not allowed in YAML, even in a comment"
        )
        return [Problem(line, column, "(yaml)", message)]
    if b"!" in data or b"&" in data or b"*" in data or _nests(data):
        return _scan_events(data, EVENTS if composer_class is COMPOSER else _PyEvents)
    return []


def _nests(data: bytes) -> bool:
    """Whether the file could nest past MAX_DEPTH: enough brackets and entries, or a run of
    spaces as long as a line indented that far (each level is at least one more space)."""
    if _DEEP_INDENT in data:
        return True
    # One C pass bounds them all ("- " needs a "-"); most files stop here.
    if len(data) - len(data.translate(None, b"[{-?")) <= MAX_DEPTH:
        return False
    return sum(data.count(token) for token in _SAME_LINE_NESTING) > MAX_DEPTH


def _has_forbidden_characters(data: bytes) -> bool:
    """Whether valid UTF-8 `data` holds a character YAML forbids (then _NOT_YAML finds it)."""
    rest = data.translate(None, _YAML_ASCII)
    if not rest:
        return False  # allowed ASCII only: the usual case
    if rest.translate(None, _NON_ASCII):
        return True  # a C0 control or DEL
    # Only the non-ASCII bytes are left, in order: each character's bytes stay together, so
    # the byte patterns match exactly where the file holds such a character.
    return _NOT_YAML_UTF8.search(rest) is not None


@dataclass
class _Frame:
    """A collection being read in an event scan: its place, and where its next node goes."""

    path: Path
    is_map: bool
    key: str | int = "?"
    expects_key: bool = True
    index: int = 0

    def place(self, event: NodeEvent) -> Path:
        """The path of the node `event` starts (keys are named by their text)."""
        if not self.is_map:
            self.index += 1
            return (*self.path, self.index - 1)
        if self.expects_key:
            self.expects_key = False
            value = getattr(event, "value", None)
            self.key = value if isinstance(value, str) else "?"
            return (*self.path, self.key)
        self.expects_key = True
        return (*self.path, self.key)


def _scan_events(data: bytes, parser_class: type) -> list[Problem]:
    """Tags other than !!str, anchors and aliases, and nesting past MAX_DEPTH, from the
    parser's events (which come without recursion), each at its field; syntax errors are
    left to composing."""
    problems: list[Problem] = []
    parser = parser_class(data)
    stack: list[_Frame] = []

    def fail(event: NodeEvent, path: Path, message: str) -> None:
        line, column = _mark(event)
        problems.append(Problem(line, column, _field_name(path), message))

    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, CollectionEndEvent):
                stack.pop()
                continue
            if not isinstance(event, NodeEvent):
                continue
            frame = stack[-1] if stack else None
            is_key = frame is not None and frame.is_map and frame.expects_key
            path = frame.place(event) if frame is not None else ()
            if len(path) > MAX_DEPTH and not is_key:  # the builder's rule (values), once
                fail(event, path[:1], f"nested more than {MAX_DEPTH} levels deep")
                break
            if isinstance(event, AliasEvent):
                fail(event, path, f"the alias *{event.anchor} is not allowed; write the value")
                continue
            if event.anchor is not None:
                fail(event, path, f"the anchor &{event.anchor} is not allowed (nor aliases)")
            tag = getattr(event, "tag", None)  # aliases have none; checked above
            if tag is not None and (tag != STR or isinstance(event, CollectionStartEvent)):
                shown = _printable(tag.replace("tag:yaml.org,2002:", "!!"))
                fail(event, path, f"the tag {shown} is not supported; write a plain value")
            if isinstance(event, CollectionStartEvent):
                stack.append(_Frame(path, isinstance(event, MappingStartEvent)))
    except yaml.YAMLError:
        pass  # composing reports it, with its position
    finally:
        if hasattr(parser, "dispose"):
            parser.dispose()
    return problems


def _printable(text: str) -> str:
    """`text` with what is not printable escaped (a tag may hold an escape sequence)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _mark(event: Any) -> tuple[int, int]:
    return (event.start_mark.line + 1, event.start_mark.column + 1)


def _position_of_byte(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of the byte at `offset`."""
    start = data.rfind(b"\n", 0, offset) + 1
    line = data.count(b"\n", 0, offset) + 1
    column = len(data[start:offset].decode("utf-8", "replace")) + 1
    return line, column
