"""One attempt: a signed POST, its answer read as an outcome.

Redirects are never followed (a 3xx is a failure: the endpoint's URL is what the operator
registered). At most `max_body` bytes of the answer are read, then ignored: only its status
counts. Every failure comes back as an Attempt with its reason, never as an exception.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiohttp

from contract.webhooks import MAX_RESPONSE_BYTES, REQUEST_TIMEOUT
from store.webhooks import Attempt
from webhooks.targets import Gate, TargetRefused

MAX_BODY = MAX_RESPONSE_BYTES
GONE = 410


@dataclass(frozen=True, slots=True)
class SendSettings:
    gate: Gate  # checks the URL, resolves it and pins what the connector may reach
    timeout: float = REQUEST_TIMEOUT  # seconds for the whole request, answer included
    max_body: int = MAX_BODY


def describe(attempt: Attempt) -> str:
    """An attempt's outcome in a few words, for the operator."""
    if attempt.status is not None:
        words = f"HTTP {attempt.status}"
        return words if attempt.reason is None else f"{words} ({attempt.reason})"
    return attempt.reason or "no answer"


async def send(
    session: aiohttp.ClientSession,
    url: str,
    headers: dict[str, str],
    body: bytes,
    settings: SendSettings,
) -> Attempt:
    """POST `body` to `url` once and say how it went. The URL is checked and its name
    resolved now, every time: `session` must connect through `settings.gate.connector()`."""
    try:
        target = await settings.gate.admit(url)
    except TargetRefused as exc:
        return Attempt(None, f"refused: {exc}", False)
    try:
        async with session.post(
            target.url,
            data=body,
            headers=headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=settings.timeout),
        ) as response:
            # Read, bounded, so the connection can be used again; what it says is ignored.
            await response.content.read(settings.max_body)
            status = response.status
    except TargetRefused as exc:
        return Attempt(None, f"refused: {exc}", False)
    except aiohttp.ClientConnectorError as exc:
        cause = exc.os_error
        if isinstance(cause, TargetRefused):
            return Attempt(None, f"refused: {cause}", False)
        return Attempt(None, f"cannot connect: {cause.strerror or cause}", False)
    except TimeoutError:
        return Attempt(None, f"no answer within {settings.timeout:g} s", False)
    except aiohttp.ClientError as exc:
        return Attempt(None, f"HTTP failure: {type(exc).__name__}: {exc}"[:200], False)
    if 200 <= status < 300:
        return Attempt(status, None, True)
    if 300 <= status < 400:
        return Attempt(status, "redirect, not followed", False)
    return Attempt(status, None, False)
