"""Requests to a network: rate limit, timeout, retries with backoff and jitter, Retry-After,
and recognition of refused credentials.

Errors leave this module as `SyncError`s built from the network's id and HTTP statuses
only: aiohttp's own exceptions name the URL, whose query may carry a key, so they are
never re-raised, chained or logged.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy

from sync.clock import Clock
from sync.errors import (
    AuthRejected,
    NetworkTimeout,
    NetworkUnavailable,
    RateLimited,
    RateLimitReached,
    ResponseTooLarge,
    RunDeadline,
    SyncError,
)
from sync.events import SyncEvents, Unobserved
from sync.formats import is_soap_fault
from sync.logs import logger
from sync.ratelimit import Reserve, SlidingLimiter
from sync.spec import RESPONSE_CAP_PAGED

log = logger("sync.http")

RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
AUTH_STATUSES = frozenset({401, 403})
# A wait for the rate limit shorter than this is lock contention, not a limit: not reported.
LIMIT_WAIT_NOTED = 0.001
_CHUNK = 2**16  # bytes read at a time from an answer


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One request, built by a connector. Its repr never shows headers, query or body."""

    method: str
    url: str = field(repr=False)
    params: Sequence[tuple[str, str]] = field(default=(), repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    json: Any = field(default=None, repr=False)
    form: Mapping[str, str] | None = field(default=None, repr=False)
    # A body sent as it is (a SOAP envelope), with its content type.
    body: bytes | None = field(default=None, repr=False)
    content_type: str | None = None
    # A SOAP call: a 500 whose body is a SOAP Fault is the service's answer (SOAP 1.1 sends
    # every fault with 500), returned for the connector to read; any other 500 is retried.
    soap: bool = False

    def __post_init__(self) -> None:
        bodies = sum(b is not None for b in (self.json, self.form, self.body))
        if bodies > 1:
            raise ValueError("a request has one body: json, form or raw")
        if (self.body is None) != (self.content_type is None):
            raise ValueError("a raw body is sent with its content type, and only it has one")


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    headers: CIMultiDictProxy[str] | CIMultiDict[str] = field(repr=False)
    body: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try: attempts per request, exponential backoff with jitter, and the
    longest Retry-After honoured (a longer one fails the window as rate_limited)."""

    attempts: int = 5
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    max_retry_after: float = 900.0


def backoff_delay(attempt: int, policy: RetryPolicy, rand: Callable[[], float]) -> float:
    """Exponential backoff with "equal jitter": half fixed, half random, capped."""
    ceiling = min(policy.backoff_cap, policy.backoff_base * 2**attempt)
    return ceiling / 2 + ceiling / 2 * rand()


def retry_after_seconds(headers: Mapping[str, str], now: dt.datetime) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date), None when absent or unreadable."""
    value = headers.get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass
class NetworkClient:
    """Sends connectors' requests through one aiohttp session."""

    session: aiohttp.ClientSession
    clock: Clock
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    rand: Callable[[], float] = field(default_factory=lambda: random.random)
    events: SyncEvents = field(default_factory=Unobserved)

    async def send(
        self,
        network: str,
        request: HttpRequest,
        limiter: SlidingLimiter,
        time_limit: float,
        *,
        max_bytes: int = RESPONSE_CAP_PAGED,
        cutoff: float | None = None,
        attempted: Callable[[], None] | None = None,
        max_wait: float | None = None,
        reserve: Reserve | None = None,
    ) -> HttpResponse:
        """The network's answer to `request`, after retries. Raises AuthRejected on 401/403,
        RateLimited, NetworkUnavailable or NetworkTimeout when retries run out, and
        ResponseTooLarge for an answer over `max_bytes` (not retried: the rest is never
        read). Any other answer (2xx, other 4xx) is returned for the connector to read.

        A 429 is waited out: by its Retry-After, else by the shortest period of the
        limiter's documented rates (a network that counts calls per minute has room again
        a minute later; backing off seconds would only spend more of its count).

        `cutoff` (on clock.monotonic()): no attempt, wait or backoff runs past it, and an
        attempt's time limit ends there; RunDeadline when nothing more may be tried.
        `max_wait`: the longest one wait for the rate limit or a 429 may last; past it
        RateLimitReached says when the limit opens again (the run resumes then).
        `attempted` is called once per request sent: a run counts its own, as runs of one
        worker share the client. `reserve` counts each attempt in the store (the documented
        rates over every worker's requests) before it is sent."""
        failure: SyncError = NetworkUnavailable(f"{network}: no attempt made")
        for attempt in range(self.policy.attempts):
            queued = self.clock.monotonic()
            waits_end = _earliest(cutoff, None if max_wait is None else queued + max_wait)
            if not await limiter.acquire(waits_end, reserve):
                opens = limiter.opens_at()
                if cutoff is not None and opens > cutoff:
                    raise RunDeadline(
                        f"{network}: the rate limit's next slot is past the time limit"
                    )
                raise RateLimitReached(
                    f"{network}: its documented limit is reached; the sync resumes when it "
                    "opens again",
                    opens - self.clock.monotonic(),
                )
            if (waited := self.clock.monotonic() - queued) > LIMIT_WAIT_NOTED:
                self.events.waited(network, "limit", waited)
            limit = time_limit
            if cutoff is not None:
                limit = min(time_limit, cutoff - self.clock.monotonic())
                if limit <= 0:
                    raise RunDeadline(f"{network}: the run reached its time limit")
            if attempted is not None:
                attempted()
            try:
                async with limiter.flight():
                    response = await self._once(request, limit, max_bytes, network)
            except TimeoutError:
                self.events.answered(network, "timeout")
                failure = NetworkTimeout(f"{network}: no answer within {limit:g}s")
            except (aiohttp.ClientError, OSError) as exc:
                self.events.answered(network, "unreachable")
                # The exception's text names the URL: keep only its type.
                failure = NetworkUnavailable(f"{network}: connection failed ({type(exc).__name__})")
            else:
                self.events.answered(network, str(response.status))
                if response.status in AUTH_STATUSES:
                    raise AuthRejected(
                        f"{network} refused the credentials (HTTP {response.status})"
                    )
                if response.status not in RETRIED_STATUSES and response.status < 500:
                    return response
                if request.soap and response.status == 500 and is_soap_fault(response.body):
                    return response
                wait = retry_after_seconds(response.headers, self.clock.now())
                if response.status == 429:
                    failure = RateLimited(f"{network}: rate limited (HTTP 429)")
                    if wait is None:
                        # No Retry-After: the documented window, not a backoff of seconds.
                        wait = min(r.seconds for r in limiter.rates)
                else:
                    failure = NetworkUnavailable(f"{network}: HTTP {response.status}")
                if wait is not None:
                    await self._wait_out(network, response.status, wait, limiter, cutoff, max_wait)
                    if attempt + 1 < self.policy.attempts:
                        self.events.retrying(network, failure.code)
                    continue
            if attempt + 1 < self.policy.attempts:
                self.events.retrying(network, failure.code)
                delay = backoff_delay(attempt, self.policy, self.rand)
                if cutoff is not None and self.clock.monotonic() + delay > cutoff:
                    break  # the wait would outlive the run's time limit: fail as it stands
                log.info("%s: %s; retrying in %.1fs", network, failure.code, delay)
                await self.clock.sleep(delay)
        raise failure

    async def _wait_out(
        self,
        network: str,
        status: int,
        wait: float,
        limiter: SlidingLimiter,
        cutoff: float | None,
        max_wait: float | None,
    ) -> None:
        """Wait as the network asked, or stop the run until then when that is too long."""
        longest = self.policy.max_retry_after if max_wait is None else max_wait
        if wait > longest:
            raise RateLimitReached(
                f"{network} asked to wait {wait:g}s (HTTP {status}), longer than a run waits "
                f"({longest:g}s); the sync resumes then",
                wait,
            )
        if cutoff is not None and self.clock.monotonic() + wait > cutoff:
            raise RateLimitReached(
                f"{network} asked to wait {wait:g}s, past the run's time limit", wait
            )
        log.info("%s: HTTP %s, waiting %.1fs as asked", network, status, wait)
        await limiter.hold_off(wait)
        self.events.waited(network, "retry_after", wait)

    async def _once(
        self, request: HttpRequest, time_limit: float, max_bytes: int, network: str
    ) -> HttpResponse:
        async with (
            asyncio.timeout(time_limit),
            self.session.request(
                request.method,
                request.url,
                params=list(request.params) or None,
                headers=_headers(request),
                json=request.json,
                data=request.body if request.body is not None else _form(request),
                allow_redirects=False,
            ) as resp,
        ):
            too_large = ResponseTooLarge(
                f"{network}: the answer is larger than {max_bytes} bytes (HTTP {resp.status})"
            )
            if resp.content_length is not None and resp.content_length > max_bytes:
                resp.close()  # the connection goes, with the rest of the body unread
                raise too_large
            # Read as it comes (decompressed), never past the cap.
            chunks: list[bytes] = []
            size = 0
            async for chunk in resp.content.iter_chunked(_CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    chunks.clear()
                    resp.close()
                    raise too_large
                chunks.append(chunk)
            return HttpResponse(resp.status, CIMultiDict(resp.headers), b"".join(chunks))


def _earliest(*moments: float | None) -> float | None:
    known = [m for m in moments if m is not None]
    return min(known) if known else None


def _headers(request: HttpRequest) -> dict[str, str]:
    headers = dict(request.headers)
    if request.content_type is not None:
        headers["Content-Type"] = request.content_type
    return headers


def _form(request: HttpRequest) -> dict[str, str] | None:
    return dict(request.form) if request.form is not None else None
