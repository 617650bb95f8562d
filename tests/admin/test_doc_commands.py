"""Every admin and dev.py command the docs show (README.md, CONTRIBUTING.md, docs/*.md,
docs/guides/*.md) is run, or is in NOT_RUN with the reason it cannot be.

A command runs in process (tests/support/adminrun.py) against a copy of a store holding the
demo account and one webhook endpoint, in a folder holding the files the docs name
(`awin.json`, `export.csv`, an Amazon report, a backup), and must exit 0; the commands of
a page's code blocks run in order on one store (`uid=$(...)` keeps what it printed for `"$uid"`),
and the output a page shows after a command (`...` for what varies) is what it prints. The
docs' placeholders (`UID`, `ID`, `FILE`, `INSTANT`, `whk_...`) stand for the store's own.
A command in NOT_RUN is still held to the table: its words must name a command and each of
its options must be one of that command's (a dev.py command: its subcommand, benchmark
script and options, or test paths), so one whose flag is gone fails here too.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import re
import shlex
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import ModuleType

import orjson
import pytest
from support.adminrun import run_admin
from support.docexamples import DocCommand, doc_commands, shown_output_matches
from support.redisserver import free_port

from accounts.demo import DEMO_UID
from admin.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "docs" / "guides").glob("*.md")),
]
SECRET = "doc-commands-secret-" + "d" * 40
WEBHOOK_URL = "https://hooks.example.com/affdir"
# The address the getting-started guide's receiver listens on: a free port here.
GUIDE_RECEIVER = "http://127.0.0.1:9000/hook"

# The commands the docs show that no test here runs, each with why; an entry ending in " *"
# stands for every command that starts with what comes before it.
NOT_RUN: dict[str, str] = {
    "python3 dev.py serve": "serves until stopped (tests/test_quickstart.py and "
    "tests/test_first_hour.py run it)",
    "python3 dev.py test *": "runs the test suite itself (its test paths are checked)",
    "python3 dev.py bench *": "a benchmark: minutes of load on a shared machine (its "
    "script and options are checked)",
    "python -m admin [--database D] [--secret-file F | --secret-stdin] [--json] COMMAND ...": (
        "the synopsis of every command (its options are checked)"
    ),
    "python -m admin webhook test whk_...": "sends a request to the page's public host, "
    "hooks.example.com (getting-started.md's loopback test runs)",
    "affdir-admin webhook test ID": "sends a request to the endpoint's public host "
    "(getting-started.md's loopback test runs)",
    "python -m admin network sync --account UID --network ID [--since YYYY-MM-DD]": (
        "reaches the network's API with real credentials (tests/admin/"
        "test_network_commands.py runs it against fake networks)"
    ),
    "affdir-admin network connect": "names the command in prose",
    "affdir-admin webhook test": "names the command in prose",
    "affdir-admin webhook add": "names the command in prose",
    "python -m admin commissions import": "names the command in prose",
    "affdir-admin events prune --retention-days": "names the option in the settings table",
}

# The files the docs' commands name, as the folder they run in holds them.
AMAZON_REPORT = (
    "category\ttitle\tasin\tseller\ttag\tdate\tprice\tqty\trevenue\tearnings\tlinktype\tsubtag\n"
    "Books\tA Book\tB00TEST001\tAmazon.com\tshop-20\t2026-01-05\t$19.99\t1\t$19.99\t$0.90"
    "\ttext\tpost-1\n"
)
FILES = {
    "awin.json": '{"accessToken": "doc-token", "publisherId": "123456"}\n',
    "export.csv": "externalId,commissionAmount,currency,transactedAt,status\n"
    "doc-1,12.30,EUR,2026-01-05T10:00:00Z,approved\n",
    "shop-20-earnings-report-20260131.tsv": AMAZON_REPORT,
}
BACKUP = "backup.sqlite3"  # `restore FILE` restores it; `backup FILE` writes another


@dataclass(frozen=True)
class Template:
    """A store seeded once: the demo account, a key of it and an endpoint of it."""

    database: Path
    key_id: str
    endpoint: str


class Receiver:
    """A webhook endpoint on loopback that answers 204."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    database = tmp_path_factory.mktemp("doc-store") / "edge.sqlite3"
    env = {"EDGE_DATABASE": str(database), "EDGE_SECRET_KEY": SECRET}
    assert run_admin(env, "demo", "--commissions", "20").returncode == 0
    added = run_admin(env, "webhook", "add", "--account", DEMO_UID, WEBHOOK_URL, "--json")
    keys = run_admin(env, "key", "list", "--account", DEMO_UID, "--json")
    return Template(
        database,
        orjson.loads(keys.stdout)["keys"][0]["id"],
        orjson.loads(added.stdout)["id"],
    )


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    """One endpoint for the module: it keeps nothing, and closing it waits for its serving
    loop's next poll (half a second)."""
    served = Receiver()
    yield served
    served.close()


def not_run_reason(command: DocCommand) -> str | None:
    for shown, reason in NOT_RUN.items():
        stem = shown.removesuffix(" *")
        if command.text == shown or (
            stem != shown and (command.text == stem or command.text.startswith(stem + " "))
        ):
            return reason
    return None


# --- The command table, for the commands that are not run -----------------------------


def subparsers_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def command_parser(words: list[str]) -> tuple[list[str], argparse.ArgumentParser]:
    """The words that name a command of the table and its parser (the program's own when
    they name none)."""
    parser, named = build_parser(), []
    for word in words:
        sub = subparsers_of(parser).get(word)
        if sub is None:
            break
        parser, named = sub, [*named, word]
    return named, parser


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def check_admin_words(command: DocCommand) -> None:
    """The words of an admin command not run: a command of the table (or the program's
    synopsis), and options it has."""
    words = [w.strip("[]") for w in shlex.split(command.args)]
    named, parser = command_parser([w for w in words if not w.startswith("-")])
    assert named or words[0].startswith("-"), f"{command.text}: names no command"
    assert not subparsers_of(parser) or not named, f"{command.text}: a group, not a command"
    unknown = {w for w in words if w.startswith("--")} - options_of(parser)
    assert not unknown, f"{command.text}: no option {sorted(unknown)} in the table"


def dev_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_dev_words(command: DocCommand) -> None:
    """A dev.py command not run: a subcommand dev.py documents, and for `bench` a script of
    bench/ taking each option shown, for `test` paths that exist."""
    words = shlex.split(command.args)
    documented = set(re.findall(r"python3 dev\.py (\w+)", dev_module().__doc__ or ""))
    assert words and words[0] in documented, f"{command.text}: dev.py has no {words[:1]}"
    if words[0] == "bench" and len(words) > 1 and not words[1].isupper():
        script = ROOT / "bench" / f"{words[1]}.py"
        assert script.is_file(), f"{command.text}: no {script.relative_to(ROOT)}"
        source = script.read_text("utf-8")
        gone = [w for w in words[2:] if w.startswith("--") and f'"{w}"' not in source]
        assert not gone, f"{command.text}: {script.name} takes no {gone}"
    if words[0] == "test":
        paths = [w for w in words[1:] if not w.startswith("-") and "<" not in w]
        assert all((ROOT / p).exists() for p in paths), f"{command.text}: no such path"


# --- Running what the docs show -------------------------------------------------------


@dataclass
class Folder:
    """Where one block's commands run: its store, its files, what they printed."""

    path: Path
    env: dict[str, str]
    values: dict[str, str]
    receiver_url: str


def folder_for(template: Template, root: Path, receiver: Receiver) -> Folder:
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, "utf-8")
    shutil.copyfile(template.database, root / "edge.sqlite3")
    shutil.copyfile(template.database, root / BACKUP)
    env = {
        "EDGE_DATABASE": str(root / "edge.sqlite3"),
        "EDGE_SECRET_KEY": SECRET,
        "EDGE_SECRET_FILE": "",
    }
    values = {"uid": DEMO_UID, "endpoint": template.endpoint, "key": template.key_id}
    return Folder(root, env, values, receiver.url)


PLACEHOLDERS = {
    "INSTANT": "2026-01-01T00:00:00Z",
    "YYYY-MM-DD": "2026-01-01",
    "N": "20",
    "DAYS": "30",
    "HOURS": "1",
    "TEXT": "maintenance",
    "S": "5",
    "URL": WEBHOOK_URL,
}


def admin_words(command: DocCommand, folder: Folder) -> list[str]:
    """The command's words as the shell gives them, its placeholders made real."""
    shown = [w.strip("[]") for w in shlex.split(command.args)]
    words: list[str] = []
    for i, word in enumerate(w for w in shown if w):
        before = words[i - 1] if i else ""
        word = re.sub(r"\$(\w+)", lambda m: folder.values[m[1]], word)
        word = word.replace(GUIDE_RECEIVER, folder.receiver_url)
        if word in ("UID", "acc_…", "acc_..."):
            word = folder.values["uid"]
        elif word == "whk_...":
            word = folder.values["endpoint"]
        elif word == "ID_OR_PREFIX":
            word = folder.values["key"]
        elif word == "ID":
            word = "awin" if before == "--network" else folder.values["endpoint"]
        elif word == "FILE":
            word = {"--credentials-file": "awin.json", "backup": "new-" + BACKUP}.get(
                before, BACKUP
            )
        else:
            word = PLACEHOLDERS.get(word, word)
        words.append(word)
    return words


def run_shown(command: DocCommand, folder: Folder) -> None:
    """Run one admin command as a page shows it; exit status 0 and the output shown."""
    words = admin_words(command, folder)
    stdin = b""
    if command.stdin is not None:
        stdin = command.stdin.encode()
    elif command.stdin_file is not None:
        stdin = (folder.path / command.stdin_file).read_bytes()
    done = run_admin(folder.env, *words, stdin=stdin)
    printed, errors = done.stdout.decode(), done.stderr.decode()
    where = f"line {command.line}: {command.text}"
    assert done.returncode == 0, f"{where}\nexit {done.returncode}: {errors}{printed}"
    if command.sets:
        folder.values[command.sets] = printed.strip()
    added = re.match(r"(whk_[0-9a-z]{16})\s", printed)
    if added:
        folder.values["endpoint"] = added[1]
    if command.output is not None:
        shown = command.output.replace(GUIDE_RECEIVER, folder.receiver_url)
        assert shown_output_matches(shown, printed), f"{where}\nprinted:\n{printed}"


def run_page(text: str, template: Template, tmp_path: Path, receiver: Receiver) -> list[str]:
    """Run every command of a page (its blocks' in order, on one store); the ones not run are
    checked against the table. Returns what was run, as shown."""
    ran: list[str] = []
    groups: dict[DocCommand | str, list[DocCommand]] = {}
    for command in doc_commands(text):
        # A page's code blocks are one session, read in order; a command in the prose stands
        # alone.
        key = "blocks" if command.block is not None else command
        groups.setdefault(key, []).append(command)
    for number, commands in enumerate(groups.values()):
        folder = folder_for(template, tmp_path / f"run{number}", receiver)
        with contextlib.chdir(folder.path):  # the docs name their files from where they run
            for command in commands:
                if not_run_reason(command) is not None:
                    (check_dev_words if command.program == "dev" else check_admin_words)(command)
                    continue
                assert command.program == "admin", (
                    f"line {command.line}: {command.text} is neither run nor in NOT_RUN"
                )
                run_shown(command, folder)
                ran.append(command.text)
    return ran


def test_the_docs_show_commands():
    shown = [c for page in PAGES for c in doc_commands(page.read_text("utf-8"))]
    assert len(shown) >= 60
    assert any(c.output for c in shown) and any(c.sets for c in shown)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_of_the_docs_runs_as_shown(page, template, tmp_path, receiver):
    run_page(page.read_text("utf-8"), template, tmp_path, receiver)


def test_every_entry_of_not_run_is_shown_somewhere():
    shown = [c for page in PAGES for c in doc_commands(page.read_text("utf-8"))]
    reasons = {not_run_reason(c) for c in shown}
    unused = [text for text, reason in NOT_RUN.items() if reason not in reasons]
    assert unused == []


@pytest.mark.parametrize(
    "page",
    [
        # A flag the command no longer has, in a block and in prose.
        "```sh\npython -m admin key list --account UID --all\n```\n",
        "Run `affdir-admin events prune --days 30` from cron.\n",
        # A command not run whose option is gone.
        "`affdir-admin events prune --retention`\n",
        "`python3 dev.py bench bench_directory --gzip --no-such-flag`\n",
        # A refusal.
        "```sh\naffdir-admin account show --account acc_nobody00000000000\n```\n",
        # Output other than shown.
        "```text\naffdir-admin account list\n```\n\n```text\nacc_x  pro\n```\n",
    ],
    ids=["block-flag", "prose-flag", "not-run-flag", "bench-flag", "refused", "output"],
)
def test_a_command_that_no_longer_works_fails(page, template, tmp_path, receiver):
    with pytest.raises(AssertionError):
        run_page(page, template, tmp_path, receiver)


def reference_rows() -> list[str]:
    """The commands of accounts.md's table of admin commands, as its first column shows
    them (several in a cell are separated by ` / `)."""
    text = (ROOT / "docs" / "accounts.md").read_text("utf-8")
    table = text.split("| command | does |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    cells = [row.split(" | ", 1)[0].removeprefix("| ") for row in table.splitlines()]
    return [span.replace("\\|", "|") for cell in cells for span in re.findall(r"`([^`]+)`", cell)]


def alternatives(shown: str) -> list[str]:
    """`capability enable|disable --account UID x|y` as one line per command it names (the
    first choice of every other alternative)."""
    words = shown.split()
    heads = [words[:1]]
    if len(words) > 1 and not words[1].startswith("-"):
        heads = [[words[0], choice] for choice in words[1].split("|")]
    rest = [w.split("|")[0] if not w.startswith("[") else w for w in words[len(heads[0]) :]]
    return [" ".join([*head, *rest]) for head in heads]


def test_the_reference_table_lists_every_command_with_its_options():
    named = set()
    for shown in reference_rows():
        for line in alternatives(shown):
            command = DocCommand(0, "admin", f"affdir-admin {line}", line, None)
            check_admin_words(command)
            named.add(tuple(command_parser(line.split())[0]))
    walked = {
        (group, *([action] if action else []))
        for group, parser in subparsers_of(build_parser()).items()
        for action in (subparsers_of(parser) or {"": parser})
    }
    assert walked - named == set()
