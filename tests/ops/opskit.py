"""Readers for the deployment files (YAML as GitHub and Compose read it, Dockerfiles, systemd
units, nginx.conf) and the table of the project's commands those files run.

No __init__.py beside it on purpose, like tests/catalog/buildkit.py: pytest puts this folder on
sys.path, so the tests import it as `opskit`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = Path(__file__).resolve().parent / "schemas"


# --- the project's commands -----------------------------------------------------------------


class Command(NamedTuple):
    """How a command written in a deployment file is found in this checkout."""

    script: str | None = None  # a console script of pyproject's [project.scripts]
    module: str | None = None  # `python -m MODULE`


# Every project command a Dockerfile, compose.yaml or systemd unit may run, by the name the
# file writes (a console script, or `python -m MODULE`). A command missing here fails the
# tests: add it, with where it comes from.
COMMANDS: dict[str, Command] = {
    "affdir-edge": Command(script="affdir-edge"),
    "affdir-build": Command(script="affdir-build"),
    "affdir-sync": Command(script="affdir-sync"),
    "affdir-admin": Command(script="affdir-admin"),
    "affdir-webhooks": Command(script="affdir-webhooks"),
    "python -m edge": Command(module="edge"),
    "python -m catalog": Command(module="catalog"),
    "python -m sync": Command(module="sync"),
    "python -m admin": Command(module="admin"),
    "python -m webhooks": Command(module="webhooks"),
}


def command_name(argv: list[str]) -> str:
    """The COMMANDS key of a command line: `python -m X` or the program's file name."""
    program = Path(argv[0]).name
    if re.fullmatch(r"python(3(\.\d+)?)?", program) and len(argv) > 2 and argv[1] == "-m":
        return f"python -m {argv[2]}"
    return program


def help_argv(name: str) -> list[str]:
    """The argv that asks `name` for its --help here; skips the test when it does not exist
    in this checkout yet (the package layout is reorganised in parallel)."""
    command = COMMANDS[name]
    if command.script is not None:
        # The venv's own bin first: the test may run without the venv on PATH.
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        found = shutil.which(command.script, path=path)
        if found is None:
            pytest.skip(f"console script {command.script} not installed")
        return [found, "--help"]
    assert command.module is not None
    try:
        spec = importlib.util.find_spec(f"{command.module}.__main__")
    except ImportError:
        spec = None
    if spec is None:
        pytest.skip(f"module {command.module} not importable (no {command.module}/__main__.py)")
    return [sys.executable, "-m", command.module, "--help"]


def run_help(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        help_argv(name),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )


def flags(argv: list[str]) -> list[str]:
    """The long options a command line passes (`--out DIR` and `--out=DIR` alike)."""
    return [arg.split("=", 1)[0] for arg in argv if arg.startswith("--") and len(arg) > 2]


# --- linters that come as binaries -------------------------------------------------------------


def tool(name: str) -> str:
    """The path of the linter `name` (hadolint, shellcheck, actionlint): the venv's own bin
    first (the test extras install hadolint and shellcheck there), then PATH; skips the test
    when it is not installed on this machine."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which(name, path=path)
    if found is None:
        pytest.skip(f"{name} is not installed here")
    return found


def run_tool(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=120, cwd=ROOT, stdin=subprocess.DEVNULL
    )


# --- YAML as GitHub Actions and Compose read it ---------------------------------------------


class _Yaml12Loader(yaml.SafeLoader):
    """Booleans are only true/false (YAML 1.2), so GitHub's `on:` stays a string key."""


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Yaml12Loader)


def schema_errors(document: Any, schema_name: str) -> list[str]:
    """Every way `document` breaks the vendored schema, as `path: message` lines."""
    schema = json.loads((SCHEMAS / schema_name).read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    ]


# --- Dockerfile -------------------------------------------------------------------------------


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)  # (KEYWORD, arguments)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def dockerfile_stages(path: Path) -> list[Stage]:
    """The stages of a Dockerfile, each with its instructions (continuations joined; comment
    lines dropped, as Docker drops them even inside a continued instruction)."""
    stages: list[Stage] = []
    logical = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        keyword, _, args = logical.partition(" ")
        keyword, args, logical = keyword.upper(), args.strip(), ""
        if keyword == "FROM":
            words = args.split()
            words = [w for w in words if not w.startswith("--")]
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base=words[0], name=name))
        elif stages:
            stages[-1].instructions.append((keyword, args))
    return stages


def exec_form(args: str) -> list[str]:
    """CMD/ENTRYPOINT arguments as argv (the JSON form, or the shell form split)."""
    if args.startswith("["):
        return json.loads(args)
    return shlex.split(args)


# --- systemd units ------------------------------------------------------------------------------


def unit_sections(path: Path) -> dict[str, list[tuple[str, str]]]:
    """A unit file's sections, each a list of (key, value): keys may repeat in units."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    logical = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        line, logical = logical + line, ""
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        assert current is not None, f"{path}: {line!r} outside a section"
        key, sep, value = line.partition("=")
        assert sep, f"{path}: {line!r} is not key=value"
        current.append((key.strip(), value.strip()))
    return sections


def exec_argv(value: str) -> list[str]:
    """An Exec*= line as argv, without systemd's prefixes (-, @, :, +, !)."""
    argv = shlex.split(value)
    argv[0] = argv[0].lstrip("-@:+!")
    return argv


# --- nginx.conf ---------------------------------------------------------------------------------


@dataclass
class Directive:
    name: str
    args: list[str]
    block: list[Directive] | None = None

    def find(self, name: str) -> Iterator[Directive]:
        """Every directive called `name` inside this block, at any depth."""
        for child in self.block or []:
            if child.name == name:
                yield child
            yield from child.find(name)


_NGINX_TOKEN = re.compile(r"""#[^\n]*|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[{};]|[^\s{};"'#]+""")


def nginx_config(path: Path) -> Directive:
    """nginx.conf as a tree of directives (enough of nginx's syntax for these files)."""
    tokens = [t for t in _NGINX_TOKEN.findall(path.read_text(encoding="utf-8")) if t[0] != "#"]
    root = Directive("(main)", [], [])
    stack = [root]
    words: list[str] = []
    for token in tokens:
        if token == ";":
            stack[-1].block.append(Directive(words[0], words[1:]))  # type: ignore[union-attr]
            words = []
        elif token == "{":
            directive = Directive(words[0], words[1:], [])
            stack[-1].block.append(directive)  # type: ignore[union-attr]
            stack.append(directive)
            words = []
        elif token == "}":
            assert not words, f"{path}: {' '.join(words)} lacks its ;"
            stack.pop()
        else:
            words.append(token.strip("\"'"))
    assert len(stack) == 1 and not words, f"{path}: unbalanced braces"
    return root
