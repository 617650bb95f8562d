"""The shared rate limiter: the same GCRA as `edge.http.ratelimit`, one Redis key per API key.

Every edge process of every machine pointed at one Redis counts against the same TATs, so a
key's limit holds across workers and machines (docs/deploy.md).

- One round trip, atomic: a Lua script (EVALSHA; redis-py loads it again after NOSCRIPT,
  e.g. once Redis restarted) reads the key's TAT, applies GCRA and writes the new TAT, with
  nothing else able to run in between. The key expires (`PX`) when its bucket is full again,
  so idle keys cost Redis nothing.
- The Redis server's clock (`TIME`): machines whose clocks drift apart still agree on every
  key's TAT, since only one clock is ever read. (Tests pass their own clock instead.)
- The script returns the TAT it read and the `now` it used, and `hit` rebuilds the decision
  with the very `gcra` function of the in-memory limiter: the script's test mirrors its
  arithmetic (same IEEE doubles, same epsilon), so both limiters give the same decisions
  and headers (tests/edge/scale compares them request by request).
- Redis unreachable, slow or failing: the request is never refused for it and never waits
  past `timeout`. The limiter falls back to a per-process in-memory GCRA (so a key is still
  limited, by each process separately). After `trip_after` failures in a row it stops
  trying Redis for `cooldown` seconds, so an outage costs a few timeouts per cooldown, not
  one per request; then it tries again and returns to Redis by itself. /v1/programs/{slug}
  and /v1/me may not answer 503, and a 503 would wrongly say the data is unreadable, so
  failing open is the answer everywhere.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from edge.config import ConfigError
from edge.http.limiter import _EPSILON, MemoryLimiter, RateState, gcra, gcra_refund

log = logging.getLogger("edge.http.ratelimit")

KEY_PREFIX = "affdir:ratelimit:"
DEFAULT_TIMEOUT = 0.5
DEFAULT_COOLDOWN = 1.0  # seconds without trying Redis once it failed DEFAULT_TRIP_AFTER times
DEFAULT_TRIP_AFTER = 3
# Connections per process. A call holds one for a single round trip (well under a
# millisecond on a LAN), so a few dozen serve more requests than a process can answer.
MAX_CONNECTIONS = 32

# Both scripts start the same: their arguments, the clock, and the key's stored TAT.
_READ_ARGS = """local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now
if ARGV[3] then
  now = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local stored = redis.call('GET', KEYS[1])
local tat = stored and tonumber(stored)
"""

# KEYS[1]: the API key's TAT, seconds since the epoch as text. ARGV: limit, window, and
# optionally the caller's `now` (tests); without it the server's clock is read.
# Numbers go out as %.17g text: a Lua number returned as a reply would be truncated to an
# integer, and %.17g round-trips a double exactly.
GCRA_SCRIPT = f"""
{_READ_ARGS}local interval = window / limit
local start = now
if tat and tat > now then start = tat end
local new_tat = start + interval
if new_tat - now <= window + {_EPSILON!r} then
  local ttl = math.max(1, math.ceil((new_tat - now) * 1000))
  redis.call('SET', KEYS[1], string.format('%.17g', new_tat), 'PX', ttl)
end
return {{stored or '', string.format('%.17g', now)}}
"""


# The refund of one request (a 304 Not Modified): the TAT moves back by one request's cost,
# and the key is deleted once its bucket would be full; same arguments and reply as above.
REFUND_SCRIPT = f"""
{_READ_ARGS}if tat then
  local new_tat = tat - window / limit
  if new_tat - now > {_EPSILON!r} then
    local ttl = math.max(1, math.ceil((new_tat - now) * 1000))
    redis.call('SET', KEYS[1], string.format('%.17g', new_tat), 'PX', ttl)
  else
    redis.call('DEL', KEYS[1])
  end
end
return {{stored or '', string.format('%.17g', now)}}
"""


def refund_decision(reply: list[object], limit: int, window: int) -> RateState:
    """The RateState of the refund script's reply [TAT it read, now it used]."""
    stored, now = (_text(part) for part in reply)
    return gcra_refund(float(stored) if stored else None, float(now), limit, window)[1]


def decision(reply: list[object], limit: int, window: int) -> RateState:
    """The RateState of the script's reply [TAT it read ('' for none), now it used]."""
    stored, now = (_text(part) for part in reply)
    return gcra(float(stored) if stored else None, float(now), limit, window)[1]


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def connect(url: str, timeout: float, max_connections: int = MAX_CONNECTIONS) -> aioredis.Redis:
    """A lazy client (no connection until the first command); ConfigError for a bad URL.

    No socket timeout: the limiter bounds each whole call with asyncio.timeout instead, which
    also covers the wait for a connection, and redis-py's per-read timeout costs about a
    quarter of its CPU per call. Connecting is bounded by `timeout` all the same.
    """
    try:
        return aioredis.Redis.from_url(
            url,
            max_connections=max_connections,
            socket_timeout=None,
            socket_connect_timeout=timeout,
            # One immediate retry on a broken connection (a pooled socket that Redis closed
            # when it restarted); none on a timeout, which would double the wait.
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
            retry_on_timeout=False,
        )
    except ValueError as exc:
        raise ConfigError(f"--redis-url / EDGE_REDIS_URL: {exc}") from None


class RedisLimiter:
    """`Limiter` over Redis, falling back to memory while Redis cannot be reached.

    Use it as an async context manager (the edge's cleanup context does): entering loads
    the script and opens a first connection, so the first burst of requests does not pay
    for them; leaving closes the connections.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        cooldown: float = DEFAULT_COOLDOWN,
        trip_after: int = DEFAULT_TRIP_AFTER,
        prefix: str = KEY_PREFIX,
        clock: Callable[[], float] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._script = client.register_script(GCRA_SCRIPT)
        self._refund_script = client.register_script(REFUND_SCRIPT)
        self._timeout = timeout
        self._cooldown = cooldown
        self._trip_after = trip_after
        self._prefix = prefix
        self._clock = clock  # None: the Redis server's clock
        self._monotonic = monotonic
        self._fallback = MemoryLimiter()
        # At most as many calls at once as the pool has connections: a burst queues here
        # (within the timeout) instead of failing with "too many connections". redis-py's
        # blocking pool would do the same at twice the CPU per call.
        self._slots = asyncio.Semaphore(client.connection_pool.max_connections)
        self._failures = 0  # in a row; a success resets it
        self._retry_at = 0.0  # while monotonic() < this, Redis is not tried
        self._tripped = False  # logged once per outage, not once per request

    @property
    def degraded(self) -> bool:
        """True while decisions come from the per-process fallback."""
        return self._tripped

    async def __aenter__(self) -> RedisLimiter:
        try:
            async with asyncio.timeout(self._timeout):
                await self._client.script_load(GCRA_SCRIPT)
                await self._client.script_load(REFUND_SCRIPT)
        except Exception as exc:
            # Starting anyway: limits are per process until Redis answers (see hit).
            self._failures = self._trip_after - 1
            self._failed(exc)
        else:
            log.info("rate limits are shared through Redis")
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._client.aclose()

    async def hit(self, key: str, limit: int, window: int) -> RateState:
        tripped = self.hit_now(key, limit, window)
        if tripped is not None:
            return tripped
        args: list[int | str] = [limit, window]
        if self._clock is not None:
            args.append(repr(float(self._clock())))
        try:
            async with asyncio.timeout(self._timeout), self._slots:
                reply = await self._script(keys=[self._prefix + key], args=args)
            state = decision(reply, limit, window)
        except Exception as exc:  # whatever fails, the API keeps answering
            self._failed(exc)
            return await self._fallback.hit(key, limit, window)
        self._failures = 0
        if self._tripped:
            self._tripped = False
            log.warning("rate limiting: Redis is back; limits are shared again")
        return state

    async def refund(self, key: str, limit: int, window: int) -> RateState:
        """`hit`'s counterpart: the same Redis key, the same fallback while Redis fails
        (a refund Redis missed costs the key one request, never lets it make more)."""
        if self._monotonic() < self._retry_at:
            return self._fallback.refund_now(key, limit, window)
        args: list[int | str] = [limit, window]
        if self._clock is not None:
            args.append(repr(float(self._clock())))
        try:
            async with asyncio.timeout(self._timeout), self._slots:
                reply = await self._refund_script(keys=[self._prefix + key], args=args)
        except Exception as exc:  # whatever fails, the API keeps answering
            self._failed(exc)
            return self._fallback.refund_now(key, limit, window)
        self._failures = 0
        return refund_decision(reply, limit, window)

    def hit_now(self, key: str, limit: int, window: int) -> RateState | None:
        """While Redis is tripped, the per-process decision `hit` would make; else None."""
        if self._monotonic() < self._retry_at:
            return self._fallback.hit_now(key, limit, window)
        return None

    def _failed(self, exc: BaseException) -> None:
        """Count a failure; after `trip_after` in a row, stop trying for `cooldown` s.

        One failure alone does not trip: a single slow answer (an event loop busy for a
        moment counts against the timeout too) should not make a whole process count on
        its own. A dead or frozen Redis fails every call, and trips within `trip_after`.
        """
        self._failures += 1
        reason = type(exc).__name__ if isinstance(exc, TimeoutError) else exc
        if self._failures < self._trip_after:
            log.debug("rate limiting: one Redis call failed (%s)", reason)
            return
        self._retry_at = self._monotonic() + self._cooldown
        if self._tripped:
            return
        self._tripped = True
        log.error(
            "rate limiting: Redis failed (%s); limiting per process until it answers again",
            reason,
            exc_info=not isinstance(exc, RedisError | OSError | TimeoutError),
        )


def create_redis_limiter(url: str, timeout: float = DEFAULT_TIMEOUT) -> RedisLimiter:
    """The limiter for `--redis-url`; ConfigError for a URL redis-py cannot use."""
    return RedisLimiter(connect(url, timeout), timeout=timeout)
