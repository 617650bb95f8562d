"""`affdir-mcp`: the MCP server over stdio (the default) or streamable HTTP.

    affdir-mcp [--api-url URL] [--key-file PATH] [--transport stdio|http]
               [--host HOST] [--port PORT] [--allowed-hosts HOSTS] [--timeout SECONDS]

Over stdio the API key comes from the environment (AFFDIR_API_KEY) or from a file
(--key-file, which wins), never from the command line, where other users of the machine
could read it; without one, only the directory's tools answer. Over HTTP every client sends
its own key (`Authorization: Bearer`), checked by the edge, and the server holds none.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import ipaddress
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from yarl import URL

from agents.apiclient import DEFAULT_TIMEOUT, ApiClient
from agents.httpauth import LOOPBACK_HOSTS, parse_allowed_hosts
from contract.commandline import add_arguments, arg
from contract.secretfiles import NotPrivate, read_private
from contract.version import VERSION

KEY_VARIABLE = "AFFDIR_API_KEY"
HOSTS_VARIABLE = "AFFDIR_MCP_ALLOWED_HOSTS"
KEY_PREFIX = "afk_"  # what every key of the API starts with (docs/api.md, Authentication)
DEFAULT_API_URL = "http://127.0.0.1:8080"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8090
MCP_PATH = "/mcp"
TRANSPORTS = ("stdio", "http")
MAX_KEY_FILE_BYTES = 4096
MAX_TIMEOUT = 300.0
# A key is printable ASCII without spaces (the API's keys are `afk_` and 38 more); anything
# else could not travel in an Authorization header.
KEY_RE = re.compile(r"[\x21-\x7e]{1,256}")


class UsageError(ValueError):
    """A flag, the key file or the key cannot be used."""


@dataclass(frozen=True)
class Settings:
    api_url: URL
    key: str | None
    transport: str
    host: str
    port: int
    timeout: float
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS


def parse_api_url(text: str) -> URL:
    """An http(s) URL with a host, and neither credentials, query nor fragment."""
    url = URL(text)
    if url.scheme not in {"http", "https"} or not url.host:
        raise UsageError(f"--api-url {text!r} is not an http:// or https:// URL with a host")
    if url.user is not None or url.password is not None or url.query_string or url.fragment:
        raise UsageError(f"--api-url {text!r} must not carry credentials, a query or a fragment")
    return url


def check_key(key: str, where: str) -> str:
    """`key` if it can be sent as a Bearer token; the error never quotes it."""
    if not KEY_RE.fullmatch(key):
        raise UsageError(
            f"the API key in {where} is not 1 to 256 printable ASCII characters without spaces"
        )
    return key


def read_key_file(path: Path) -> str:
    if path.name.startswith(KEY_PREFIX):
        # Someone passed the key itself: say so without writing it to a terminal or a log.
        raise UsageError("--key-file takes the path of a file holding the key, not the key")
    try:
        raw = read_private(path, MAX_KEY_FILE_BYTES + 1)
    except NotPrivate as exc:
        raise UsageError(f"--key-file: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read --key-file {path}: {exc.strerror}") from None
    if len(raw) > MAX_KEY_FILE_BYTES:
        raise UsageError(f"--key-file {path} is longer than {MAX_KEY_FILE_BYTES} bytes")
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise UsageError(f"--key-file {path} is not ASCII text") from None
    return check_key(text, str(path))


def load_key(key_file: Path | None, environ: Mapping[str, str]) -> str | None:
    """The key of --key-file, else of AFFDIR_API_KEY (empty counts as unset), else None."""
    if key_file is not None:
        return read_key_file(key_file)
    value = environ.get(KEY_VARIABLE, "").strip()
    return check_key(value, KEY_VARIABLE) if value else None


def _timeout(text: str) -> float:
    value = float(text)
    if not 0 < value <= MAX_TIMEOUT:  # `not <=` also refuses nan
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {MAX_TIMEOUT:g} seconds")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be from 1 to 65535")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # "unrecognized arguments: --key afk_..." would copy a key into the client's logs.
        super().error(re.sub(KEY_PREFIX + r"\S*", KEY_PREFIX + "...", message))


# The server's command line, read by `load_settings`.
ARGUMENTS = (
    arg("--version", action="version", version=f"%(prog)s {VERSION}"),
    arg(
        "--api-url",
        default=DEFAULT_API_URL,
        help=f"where the API is (default {DEFAULT_API_URL})",
    ),
    arg(
        "--key-file",
        type=Path,
        help=f"a file holding the API key (default: the key in ${KEY_VARIABLE}, if any)",
    ),
    arg(
        "--transport",
        choices=TRANSPORTS,
        default="stdio",
        help="stdio (one client, the process that started this one) or http "
        f"(streamable HTTP at http://HOST:PORT{MCP_PATH}); default stdio",
    ),
    arg(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on with --transport http (default {DEFAULT_HOST})",
    ),
    arg(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"port to listen on with --transport http (default {DEFAULT_PORT})",
    ),
    arg(
        "--allowed-hosts",
        metavar="HOSTS",
        help="with --transport http, the names clients reach this server by, comma-separated "
        f"(HOST or HOST:PORT; default ${HOSTS_VARIABLE}, else the loopback names when "
        "--host is a loopback address, else --host itself); requests naming another Host "
        "or Origin are refused",
    ),
    arg(
        "--timeout",
        type=_timeout,
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for each API answer (default {DEFAULT_TIMEOUT:g})",
    ),
)


def parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="affdir-mcp",
        # Else `--key afk_...` would be read as `--key-file afk_...`.
        allow_abbrev=False,
        description="An MCP server whose tools read the affdir API over HTTP. The API key "
        f"comes from ${KEY_VARIABLE} or --key-file, never from the command line.",
    )
    add_arguments(parser, ARGUMENTS)
    return parser


def load_settings(argv: Sequence[str] | None, environ: Mapping[str, str]) -> Settings:
    """Settings from the flags and the environment; UsageError if one cannot be used."""
    args = parser().parse_args(argv)
    key = load_key(args.key_file, environ)
    hosts: tuple[str, ...] = ()
    if args.transport == "http":
        if key is not None:
            raise UsageError(
                "--transport http uses each client's own key (Authorization: Bearer), checked "
                f"by the API: unset {KEY_VARIABLE} and --key-file, which would answer anyone"
            )
        hosts = allowed_hosts(args.allowed_hosts or environ.get(HOSTS_VARIABLE, ""), args.host)
    return Settings(
        api_url=parse_api_url(args.api_url),
        key=key,
        transport=args.transport,
        host=args.host,
        port=args.port,
        timeout=args.timeout,
        allowed_hosts=hosts,
    )


def allowed_hosts(text: str, listen: str) -> tuple[str, ...]:
    """The Host names accepted over HTTP: those given, else the loopback names on a
    loopback address, else the listening address itself; UsageError if none can be told."""
    try:
        given = parse_allowed_hosts(text)
    except ValueError as exc:
        raise UsageError(f"--allowed-hosts: {exc}") from None
    if given:
        return given
    if is_loopback(listen):
        return LOOPBACK_HOSTS
    try:
        address = ipaddress.ip_address(listen)
    except ValueError:
        return (listen.lower(),)  # a name to listen on is the name clients use
    if address.is_unspecified:
        raise UsageError(
            f"--host {listen} listens on every interface: name the hosts clients reach this "
            f"server by with --allowed-hosts (or {HOSTS_VARIABLE})"
        )
    return (f"[{address}]" if address.version == 6 else str(address),)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def run(settings: Settings) -> None:
    # Imported here: without the `mcp` extra, main() says what to install.
    from agents.server import serve_http, serve_stdio

    async with ApiClient(settings.api_url, settings.key, timeout=settings.timeout) as api:
        if settings.transport == "stdio":
            await serve_stdio(api)
            return
        print(
            f"affdir-mcp: MCP over streamable HTTP at "
            f"http://{settings.host}:{settings.port}{MCP_PATH}, API {settings.api_url}",
            file=sys.stderr,
            flush=True,
        )
        await serve_http(api, settings.host, settings.port, MCP_PATH, settings.allowed_hosts)


def main(argv: Sequence[str] | None = None) -> int:
    # stdout carries the MCP messages over stdio: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        settings = load_settings(argv, os.environ)
    except UsageError as exc:
        print(f"affdir-mcp: {exc}", file=sys.stderr)
        return 2
    if importlib.util.find_spec("mcp") is None:
        print(
            "affdir-mcp: the MCP SDK is not installed; install the extra: pip install 'affdir[mcp]'",
            file=sys.stderr,
        )
        return 2
    try:
        asyncio.run(run(settings))
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # the port is taken, for instance
        print(f"affdir-mcp: cannot start: {exc}", file=sys.stderr)
        return 1
    return 0
