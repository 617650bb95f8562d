"""The HTTP client of the MCP server: GET requests to the /v1 API, bounded in time and size.

Every call ends as an `Answer` (the API answered, whatever its status) or an `ApiError`
(no usable answer: unreachable, too slow, too big, not JSON). Messages never quote the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import aiohttp
import orjson
from yarl import URL

# A page holds at most 100 items; the largest answer of the API is far below this.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
DEFAULT_TIMEOUT = 15.0
USER_AGENT = "affdir-mcp"


class ApiError(Exception):
    """No usable answer from the API; `code` names why (`api_unreachable`, `api_timeout`,
    `api_answer_invalid`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Answer:
    """What the API answered: its status, its body as sent and as parsed JSON."""

    status: int
    body: bytes
    document: Any
    retry_after: int | None


def _retry_after(value: str | None) -> int | None:
    return int(value) if value is not None and value.isascii() and value.isdigit() else None


class ApiClient:
    """One aiohttp session to the API at `base_url`; `key` (or None) is sent as a Bearer
    token. Use as `async with ApiClient(...) as api:`."""

    def __init__(
        self,
        base_url: URL,
        key: str | None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        self._base = base_url
        self._key = key
        self._timeout = timeout
        self._max_answer_bytes = max_answer_bytes
        self._session: aiohttp.ClientSession | None = None

    @property
    def has_key(self) -> bool:
        return self._key is not None

    @property
    def base_url(self) -> URL:
        return self._base

    async def __aenter__(self) -> ApiClient:
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self._timeout),
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "application/json",
                "Accept-Encoding": "gzip",
            },
            raise_for_status=False,
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def url(self, path: str) -> URL:
        """The API's `path` (e.g. /v1/programs) under the base URL, whose own path is kept
        as a prefix (an API served under /api answers /api/v1/programs)."""
        return self._base.with_path(self._base.path.rstrip("/") + path, encoded=False)

    async def get(
        self, path: str, query: Sequence[tuple[str, str]], *, key: str | None = None
    ) -> Answer:
        """GET `path` with `query`, sending `key` (else the client's own, if any); the
        answer, or ApiError when there is no usable one."""
        if self._session is None:
            raise RuntimeError("ApiClient used outside `async with`")
        bearer = key if key is not None else self._key
        headers = {"Authorization": f"Bearer {bearer}"} if bearer is not None else {}
        where = str(self.url(path).with_query(None))
        try:
            async with self._session.get(
                self.url(path).with_query(list(query)),
                headers=headers,
                allow_redirects=False,
            ) as response:
                body = await self._read(response)
                retry_after = _retry_after(response.headers.get("Retry-After"))
                content_type = response.content_type
                status = response.status
        except TimeoutError:
            raise ApiError(
                "api_timeout", f"no answer from the API at {where} within {self._timeout:g} s"
            ) from None
        except aiohttp.ClientError as exc:
            # The exception's own text may quote the request; its class name says enough.
            raise ApiError(
                "api_unreachable", f"cannot reach the API at {where} ({type(exc).__name__})"
            ) from None
        if content_type != "application/json":
            raise ApiError(
                "api_answer_invalid",
                f"the API at {where} answered {status} with {content_type or 'no type'}, not JSON",
            )
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise ApiError(
                "api_answer_invalid", f"the API at {where} answered {status} with invalid JSON"
            ) from None
        return Answer(status, body, document, retry_after)

    async def _read(self, response: aiohttp.ClientResponse) -> bytes:
        """The (decompressed) body, refused past the size bound before it is all read."""
        limit = self._max_answer_bytes
        if response.content_length is not None and response.content_length > limit:
            raise ApiError("api_answer_invalid", f"the API's answer exceeds {limit} bytes")
        parts: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_chunked(64 * 1024):
            size += len(chunk)
            if size > limit:
                raise ApiError("api_answer_invalid", f"the API's answer exceeds {limit} bytes")
            parts.append(chunk)
        return b"".join(parts)
