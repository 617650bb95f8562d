"""Check the links every published programme gives readers: `signupUrl` and `evidence`.

`affdir-verify` reads the content the way the build does (load, validate, partition),
requests each link (HEAD, then GET where HEAD is refused), follows redirects one hop at a
time up to a bound, keeps to one request at a time and a pause per host, and writes a
report. It changes nothing: a broken link is for a person to look at (docs/build.md).

Exit status: 0 every link answered, 1 some did not (the report says which), 2 bad command
line or invalid content.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import enum
import ipaddress
import os
import socket
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from yarl import URL

from catalog import loading
from catalog.errors import BuildError, sort_diagnostics
from catalog.incremental import Incremental
from catalog.partition import partition
from contract.commandline import Arg, add_arguments, arg, number
from contract.version import VERSION

PROG = "affdir-verify"
USER_AGENT = f"{PROG}/{VERSION} (affiliate programme directory link check)"
# The fields of a submission that send a reader somewhere to act on the terms.
LINK_FIELDS = ("signupUrl", "evidence")
REDIRECTS = frozenset({301, 302, 303, 307, 308})
# HEAD answers after which a GET is tried: many servers refuse or mishandle HEAD.
HEAD_REFUSED = frozenset({400, 403, 404, 405, 406, 429, 500, 501, 502, 503})


class Outcome(enum.StrEnum):
    """What became of one link; the report counts links per outcome."""

    OK = "ok"  # a 2xx answer, after any redirects
    HOMEPAGE = "homepage"  # answered, but by the advertiser's homepage: not a specific page
    HTTP_ERROR = "http_error"  # a final answer outside 2xx
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"  # no answer: name resolution, connection, TLS
    TOO_MANY_REDIRECTS = "too_many_redirects"
    REDIRECT_LOOP = "redirect_loop"
    BAD_REDIRECT = "bad_redirect"  # a Location that is missing or not http(s)
    INVALID_URL = "invalid_url"


@dataclass(frozen=True)
class Limits:
    """How hard the check may press on the sites it visits."""

    timeout_seconds: float = 15.0  # per request (each hop of a redirect chain)
    max_redirects: int = 5
    per_host_seconds: float = 1.0  # pause between two requests to one host
    concurrency: int = 8  # hosts visited at once


@dataclass(frozen=True)
class Target:
    """One link of one programme."""

    slug: str
    field: str
    url: str
    site: str


@dataclass(frozen=True)
class LinkResult:
    """The report's line for one link."""

    slug: str
    field: str
    url: str
    outcome: Outcome
    status: int | None = None
    final_url: str | None = None
    redirects: int = 0
    method: str | None = None
    reason: str = ""


def targets(records: Iterable[dict[str, Any]]) -> list[Target]:
    """The links to check, in slug then field order; a link stated twice is checked once."""
    found: list[Target] = []
    for record in records:
        for name in LINK_FIELDS:
            value = record.get(name)
            url = value.get("url") if isinstance(value, dict) else value
            if isinstance(url, str) and url:
                found.append(Target(record["slug"], name, url, str(record.get("site", ""))))
    return sorted(found, key=lambda t: (t.slug, LINK_FIELDS.index(t.field)))


def is_homepage(url: URL, site: str) -> bool:
    """Whether `url` is the site's front page (same host, "www." aside; root path; no query)."""
    if not site:
        return False
    home = URL(site)

    def bare(host: str | None) -> str:
        host = (host or "").lower()
        return host.removeprefix("www.")

    return bare(url.host) == bare(home.host) and url.path in ("", "/") and not url.query_string


def next_hop(current: URL, location: str | None) -> URL | None:
    """Where a redirect leads, or None when its Location is missing or not http(s)."""
    if not location:
        return None
    try:
        target = current.join(URL(location))
    except ValueError:
        return None
    return target if target.scheme in ("http", "https") and target.host else None


class HostPacer:
    """One request at a time per host, `interval` seconds apart (a polite crawler's rule)."""

    def __init__(
        self,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.interval = interval
        self._clock = clock
        self._sleep = sleep
        self._locks: dict[str, asyncio.Lock] = {}
        self._last: dict[str, float] = {}

    async def request(self, host: str, send: Callable[[], Awaitable[Any]]) -> Any:
        """`send()` once this host's previous request is `interval` behind."""
        lock = self._locks.setdefault(host, asyncio.Lock())
        async with lock:
            wait = self._last.get(host, -self.interval) + self.interval - self._clock()
            if wait > 0:
                await self._sleep(wait)
            try:
                return await send()
            finally:
                self._last[host] = self._clock()


class PinnedResolver(AbstractResolver):
    """Names pinned to addresses (`--resolve`, as curl's), every other name as usual: to
    check a catalogue against a staging server before its DNS changes."""

    def __init__(self, pinned: dict[str, str]) -> None:
        self._pinned = {host.lower(): address for host, address in pinned.items()}
        self._usual = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        address = self._pinned.get(host.lower())
        if address is None:
            return await self._usual.resolve(host, port, family)
        kind = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [
            ResolveResult(hostname=host, host=address, port=port, family=kind, proto=0, flags=0)
        ]

    async def close(self) -> None:
        await self._usual.close()


async def _status_of(
    session: aiohttp.ClientSession, pacer: HostPacer, method: str, url: URL, seconds: float
) -> tuple[int, str | None]:
    """One request, redirects not followed, body not read: its status and Location."""

    async def send() -> tuple[int, str | None]:
        async with session.request(
            method,
            url,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=seconds),
        ) as response:
            return response.status, response.headers.get("Location")

    return await pacer.request(url.host or "", send)


async def check(
    session: aiohttp.ClientSession, pacer: HostPacer, target: Target, limits: Limits
) -> LinkResult:
    """Follow one link to its final answer and classify it; never raises for the site's sake."""
    try:
        url = URL(target.url)
    except ValueError:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        return LinkResult(target.slug, target.field, target.url, Outcome.INVALID_URL)
    method = "HEAD"
    seen = {url}
    hops = 0
    while True:
        try:
            status, location = await _status_of(session, pacer, method, url, limits.timeout_seconds)
            if method == "HEAD" and status in HEAD_REFUSED:
                method = "GET"
                status, location = await _status_of(
                    session, pacer, method, url, limits.timeout_seconds
                )
        except TimeoutError:
            return _result(target, Outcome.TIMEOUT, url, hops, method, "no answer in time")
        except (aiohttp.ClientError, ValueError, OSError) as exc:
            reason = str(exc) or type(exc).__name__
            return _result(target, Outcome.UNREACHABLE, url, hops, method, reason[:200])
        if status not in REDIRECTS:
            break
        following = next_hop(url, location)
        if following is None:
            reason = f"Location {location!r:.200}" if location else "no Location"
            return _result(target, Outcome.BAD_REDIRECT, url, hops, method, reason, status)
        if following in seen:
            return _result(target, Outcome.REDIRECT_LOOP, following, hops + 1, method, "", status)
        if hops == limits.max_redirects:
            reason = f"more than {limits.max_redirects}"
            return _result(target, Outcome.TOO_MANY_REDIRECTS, url, hops, method, reason, status)
        seen.add(following)
        url, hops = following, hops + 1
    if not 200 <= status < 300:
        return _result(target, Outcome.HTTP_ERROR, url, hops, method, f"HTTP {status}", status)
    if is_homepage(url, target.site):
        return _result(
            target, Outcome.HOMEPAGE, url, hops, method, "the advertiser's homepage", status
        )
    return _result(target, Outcome.OK, url, hops, method, "", status)


def _result(
    target: Target,
    outcome: Outcome,
    final: URL,
    hops: int,
    method: str,
    reason: str,
    status: int | None = None,
) -> LinkResult:
    return LinkResult(
        target.slug, target.field, target.url, outcome, status, str(final), hops, method, reason
    )


async def check_all(
    found: Sequence[Target],
    limits: Limits,
    pacer: HostPacer | None = None,
    pinned: dict[str, str] | None = None,
) -> list[LinkResult]:
    """Every target checked, in the targets' order: one host's links one after another,
    at most `limits.concurrency` hosts at once (so one slow host holds up only its own)."""
    pacer = pacer or HostPacer(limits.per_host_seconds)
    gate = asyncio.Semaphore(limits.concurrency)
    by_host: dict[str, list[int]] = defaultdict(list)
    for index, target in enumerate(found):
        by_host[_host(target.url)].append(index)
    results: list[LinkResult | None] = [None] * len(found)
    connector = aiohttp.TCPConnector(resolver=PinnedResolver(pinned or {}))
    async with aiohttp.ClientSession(
        connector=connector, headers={"User-Agent": USER_AGENT}
    ) as session:

        async def visit(indexes: list[int]) -> None:
            async with gate:
                for index in indexes:
                    results[index] = await check(session, pacer, found[index], limits)

        await asyncio.gather(*(visit(indexes) for indexes in by_host.values()))
    return [result for result in results if result is not None]


def _host(url: str) -> str:
    try:
        return (URL(url).host or "").lower()
    except ValueError:
        return ""


def published_records(content: Path) -> list[dict[str, Any]]:
    """The published submissions' records, as the build validates them; BuildError if any
    submission is invalid (the links of a catalogue that would not build are not checked)."""
    sources, misnamed = loading.discover(content)
    parts = partition(Incremental(None).validate(sources))
    errors = [d for d in misnamed + parts.problems if d.severity == "error"]
    if errors:
        raise BuildError(sort_diagnostics(errors))
    return [item.outcome.record for item in parts.published if item.outcome.record is not None]


@dataclass
class Report:
    """What the check found, as written to the report file."""

    generated_at: str
    limits: Limits
    results: list[LinkResult] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, int]:
        counts = Counter(r.outcome for r in self.results)
        return {outcome.value: counts[outcome] for outcome in Outcome}

    @property
    def problems(self) -> list[LinkResult]:
        return [r for r in self.results if r.outcome is not Outcome.OK]

    def to_json(self) -> bytes:
        return orjson.dumps(
            {
                "generatedAt": self.generated_at,
                "limits": asdict(self.limits),
                "summary": self.summary,
                "results": [asdict(r) for r in self.results],
            },
            option=orjson.OPT_INDENT_2,
        )

    def to_markdown(self) -> str:
        lines = [
            "# Link check",
            "",
            f"{len(self.results)} links of published programmes checked at "
            f"{self.generated_at}; {len(self.problems)} need a look.",
            "",
            "| outcome | links |",
            "|---|---:|",
            *(f"| {name} | {count} |" for name, count in self.summary.items() if count),
        ]
        if self.problems:
            lines += [
                "",
                "| programme | field | outcome | detail | link |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| {r.slug} | {r.field} | {r.outcome} | {_cell(r)} | {_escape(r.url)} |"
                for r in self.problems
            ]
        return "\n".join(lines) + "\n"


def _cell(result: LinkResult) -> str:
    detail = result.reason or (f"HTTP {result.status}" if result.status else "")
    if result.redirects:
        detail += f" after {result.redirects} redirect{'s' * (result.redirects != 1)}"
    return _escape(detail.strip())


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step: a reader sees the old report or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _pin(text: str) -> tuple[str, str]:
    host, _, address = text.partition("=")
    try:
        ipaddress.ip_address(address)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST=IP-ADDRESS, got {text!r}") from None
    if not host:
        raise argparse.ArgumentTypeError(f"expected HOST=IP-ADDRESS, got {text!r}")
    return host, address


def link_arguments(defaults: Limits) -> tuple[Arg, ...]:
    """The verifier's command line, its limits' defaults from `defaults`."""
    return (
        arg("--version", action="version", version=f"%(prog)s {VERSION}"),
        arg("--content", type=Path, default=Path("content"), metavar="DIR"),
        arg(
            "--report",
            type=Path,
            default=Path("link-report.json"),
            metavar="FILE",
            help="where the JSON report is written (default: link-report.json)",
        ),
        arg(
            "--markdown",
            type=Path,
            metavar="FILE",
            help="also append a Markdown summary here (a CI job summary, for one)",
        ),
        arg("--only", nargs="+", metavar="SLUG", help="check these programmes only"),
        arg(
            "--timeout",
            type=number(float, 0, 300, above=True, unit="seconds"),
            default=defaults.timeout_seconds,
            metavar="SECONDS",
        ),
        arg(
            "--max-redirects",
            type=number(int, 0, 20),
            default=defaults.max_redirects,
            metavar="N",
        ),
        arg(
            "--per-host-seconds",
            type=number(float, 0, 3600, above=True, unit="seconds"),
            default=defaults.per_host_seconds,
            metavar="SECONDS",
            help="pause between two requests to one host",
        ),
        arg(
            "--concurrency",
            type=number(int, 1, 256),
            default=defaults.concurrency,
            metavar="N",
        ),
        arg(
            "--resolve",
            type=_pin,
            action="append",
            default=[],
            metavar="HOST=ADDRESS",
            help="send requests for HOST to this IP address (a staging server); repeatable",
        ),
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    add_arguments(parser, link_arguments(Limits()))
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    limits = Limits(args.timeout, args.max_redirects, args.per_host_seconds, args.concurrency)
    try:
        records = published_records(args.content)
    except BuildError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        print(
            f"{PROG}: the content does not build ({exc.summary}); nothing checked", file=sys.stderr
        )
        return 2
    found = targets(records)
    if args.only:
        wanted = set(args.only)
        unknown = wanted - {r["slug"] for r in records}
        if unknown:
            print(f"{PROG}: no published programme {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        found = [t for t in found if t.slug in wanted]
    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    results = asyncio.run(check_all(found, limits, pinned=dict(args.resolve)))
    report = Report(now, limits, results)
    write_atomically(args.report, report.to_json())
    if args.markdown:
        with args.markdown.open("a", encoding="utf-8") as fh:
            fh.write(report.to_markdown())
    for problem in report.problems:
        print(f"{problem.slug}: {problem.field} {problem.url}: {problem.outcome} {_cell(problem)}")
    print(
        f"{PROG}: {len(report.results)} links checked, {len(report.problems)} need a look; "
        f"report in {args.report}"
    )
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
