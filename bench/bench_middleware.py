#!/usr/bin/env python3
"""In-process micro-benchmark of the edge's middleware stack (not a test).

    python3 dev.py bench bench_middleware [--requests 20000] [--rounds 5]

Each request is made with `aiohttp.test_utils.make_mocked_request` and handled by the
application's own `_handle` (routing, the middleware chain, the handler); no socket, no
response serialisation. Figures are CPU µs per request, best of `--rounds` (interleaved):

- `bare`: an application without middlewares answering a constant page (the floor: routing
  and the handler; the mocked requests are made before the clock starts);
- `before`: the same steps as five separate aiohttp middlewares (a frozen reference below,
  `_before_middlewares`), around the same constant page;
- `after`: the stack `edge.app.create_app` installs (one middleware calling the steps),
  around the same constant page;
- `/v1/programs` through `create_app` (page cache hit) when bench/out/directory/dist exists
  (made by bench_directory.py);
- `real auth` rows: the same two paths with a well-formed key checked by the real
  `edge.auth.authenticator.CachedAuthenticator` (cache hit; a stub store behind it), as the
  edge serves bench_directory.py's wrk load.

The stack's own cost is the row minus `bare`; the ratio is after / before of that.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import secrets
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from aiohttp import web  # noqa: E402
from aiohttp.test_utils import make_mocked_request  # noqa: E402

from edge import appkeys  # noqa: E402
from edge.auth.authenticate import Principal  # noqa: E402
from edge.config import Config  # noqa: E402

KEY = "aff_bench_0123456789abcdef0123456789abcdef"
DIST = ROOT / "bench" / "out" / "directory" / "dist"
PAGE = (
    (ROOT / "bench" / "out" / "directory" / "first-page.json").read_bytes()
    if (ROOT / "bench" / "out" / "directory" / "first-page.json").exists()
    else b'{"data":[]}' * 2000
)
HEADERS = {
    "Host": "127.0.0.1:8080",
    "Authorization": f"Bearer {KEY}",
    "Accept-Encoding": "identity",
    "User-Agent": "bench",
}

PRINCIPAL = Principal(
    key_id="key_bench",
    account_uid="acct_bench",
    plan="pro",
    prefix=KEY[:13],
    label="bench",
    scopes=("read",),
)


REAL_KEY = "afk_DirectoryBench0123456789abcdefgh"  # + its checksum, below


def _real_authenticator() -> Any:
    from accounts import apikeys
    from accounts.store.base import AccountView, KeyRecord, KeyView
    from edge.auth.authenticator import CachedAuthenticator

    record = KeyRecord(
        key=KeyView("key_bench", "acct_bench", REAL_KEY[:12], "bench", ("read",), "", None),
        account=AccountView("acct_bench", None, "pro", False, "", {}, ()),
    )
    digest = apikeys.key_hash(_real_key())

    class Store:
        async def lookup_key(self, key_hash: str) -> KeyRecord | None:
            return record if key_hash == digest else None

    return CachedAuthenticator(Store(), ttl=3600.0)  # type: ignore[arg-type]


def _real_key() -> str:
    from accounts import apikeys

    random_part = REAL_KEY.removeprefix(apikeys.MARKER)
    return REAL_KEY + apikeys.checksum(random_part)


class BenchAuthenticator:
    async def authenticate(self, key: str) -> Principal | None:
        return PRINCIPAL if key == KEY else None

    def cached(self, key: str) -> Principal | None:
        return PRINCIPAL if key == KEY else None


async def constant(request: web.Request) -> web.Response:
    return web.Response(body=PAGE, content_type="application/json")


# --- `before`: the same steps as five aiohttp middlewares (a frozen reference) ----------


def _before_middlewares() -> list[Any]:
    from accounts.store.base import StoreUnavailable
    from edge.auth.authenticate import bearer_token, requires_key, unverifiable
    from edge.http.cors import is_preflight as _is_preflight
    from edge.http.cors import policy, preflight_response
    from edge.http.errors import ApiError, response_for

    expose = (
        "ETag, Link, X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, "
        "Retry-After"
    )

    @web.middleware
    async def request_id_middleware(request, handler):  # type: ignore[no-untyped-def]
        request[appkeys.REQUEST_ID] = rid = "req_" + secrets.token_hex(12)
        response = await handler(request)
        response.headers["X-Request-Id"] = rid
        return response

    @web.middleware
    async def error_middleware(request, handler):  # type: ignore[no-untyped-def]
        try:
            return await handler(request)
        except Exception as exc:  # response_for tells the three cases apart
            return response_for(request, exc)

    def add_vary(response, name):  # type: ignore[no-untyped-def]
        vary = response.headers.get("Vary")
        response.headers["Vary"] = f"{vary}, {name}" if vary else name

    def add_cors_headers(response, cors, origin):  # type: ignore[no-untyped-def]
        allowed = cors.allowed(origin)
        if allowed is not None:
            response.headers["Access-Control-Allow-Origin"] = allowed
            response.headers["Access-Control-Expose-Headers"] = expose
        if not cors.any_origin:
            add_vary(response, "Origin")

    @web.middleware
    async def cors_middleware(request, handler):  # type: ignore[no-untyped-def]
        cors = policy(request.app[appkeys.CONFIG].cors_origins)
        origin = request.headers.get("Origin")
        if _is_preflight(request):
            return preflight_response(cors, origin)
        response = await error_middleware(request, handler)
        add_cors_headers(response, cors, origin)
        return response

    @web.middleware
    async def auth_middleware(request, handler):  # type: ignore[no-untyped-def]
        if request.method == "OPTIONS" or not requires_key(request):
            return await handler(request)
        token = bearer_token(request.headers.get("Authorization"))
        try:
            principal = await request.app[appkeys.AUTHENTICATOR].authenticate(token)
        except StoreUnavailable:
            raise unverifiable(request) from None
        if principal is None:
            raise ApiError("invalid_api_key", "the API key is unknown or revoked")
        request[appkeys.PRINCIPAL] = principal
        return await handler(request)

    def rate_headers(state):  # type: ignore[no-untyped-def]
        return {
            "RateLimit-Limit": str(state.limit),
            "RateLimit-Remaining": str(state.remaining),
            "RateLimit-Reset": str(state.reset_seconds),
        }

    @web.middleware
    async def ratelimit_middleware(request, handler):  # type: ignore[no-untyped-def]
        principal = request.get(appkeys.PRINCIPAL)
        if principal is None or request.method == "OPTIONS":
            return await handler(request)
        limit, window = request.app[appkeys.CONFIG].rate_limit(principal.plan)
        state = await request.app[appkeys.LIMITER].hit(principal.key_id, limit, window)
        headers = rate_headers(state)
        if not state.allowed:
            raise ApiError("rate_limited", "over", headers=headers)
        request[appkeys.RATE_STATE] = state
        try:
            response = await handler(request)
        except ApiError as error:
            error.headers.update(headers)
            raise
        except web.HTTPException as exc:
            exc.headers.update(headers)
            raise
        response.headers.update(headers)
        return response

    return [
        request_id_middleware,
        error_middleware,
        cors_middleware,
        auth_middleware,
        ratelimit_middleware,
    ]


# --- running ---------------------------------------------------------------------------


def _config() -> Config:
    return Config(
        dist=DIST,
        secret_key="bench-secret-" + "b" * 40,
        rate_limit_free=(10**9, 1),
        rate_limit_pro=(10**9, 1),
        access_log=False,
    )


def _install(app: web.Application, config: Config) -> None:
    from edge.http.limiter import MemoryLimiter

    app[appkeys.CONFIG] = config
    app[appkeys.AUTHENTICATOR] = BenchAuthenticator()
    app[appkeys.LIMITER] = MemoryLimiter()
    app[appkeys.SECRET] = config.keyring()


async def _time(
    app: web.Application, path: str, n: int, rounds: int, auth: Any = None
) -> tuple[float, Any]:
    """Best-of-`rounds` CPU µs per request of `app` answering GET `path`.

    With `auth`, that authenticator is installed and its key sent (the real one).
    """
    headers = HEADERS
    with warnings.catch_warnings():  # swapping it in a started app is "deprecated"
        warnings.simplefilter("ignore", DeprecationWarning)
        if auth is not None:
            app[appkeys.AUTHENTICATOR] = auth
            headers = {**HEADERS, "Authorization": f"Bearer {_real_key()}"}
        elif appkeys.AUTHENTICATOR in app:
            app[appkeys.AUTHENTICATOR] = BenchAuthenticator()
    best = math.inf
    response = None
    for _ in range(rounds):
        # A mocked request is slow to make (~1 ms, mocks): clones of one are cheaper (~25 µs
        # of mocks still) and fresh (no cached properties carried over); they are made
        # before the clock starts, so the figures are the app's own work.
        template = make_mocked_request("GET", path, headers=headers, app=app)
        requests = [template.clone() for _ in range(n)]
        started = time.process_time()
        for request in requests:
            response = await app._handle(request)
        best = min(best, (time.process_time() - started) / n * 1e6)
    return best, response


async def main(n: int, rounds: int) -> None:
    from edge.app import create_app

    config = _config()
    bare = web.Application()
    bare.router.add_get("/v1/bench-constant", constant)
    before = web.Application(middlewares=_before_middlewares())
    before.router.add_get("/v1/bench-constant", constant)
    _install(before, config)
    after = create_app(config)
    after.router.add_get("/v1/bench-constant", constant)
    _install(after, config)

    async def install(app: web.Application) -> None:  # after the account half's startup
        app[appkeys.AUTHENTICATOR] = BenchAuthenticator()

    after.on_startup.append(install)
    runner = None
    if DIST.exists():
        runner = web.AppRunner(after)
        await runner.setup()  # startup: loads the build
    else:
        print(f"(no {DIST}: /v1/programs skipped; run bench_directory.py once)")
    for app in (bare, before):
        app.freeze()
        await app.startup()

    real = _real_authenticator()
    cases: list[tuple[str, web.Application, str, Any]] = [
        ("bare", bare, "/v1/bench-constant", None),
        ("before", before, "/v1/bench-constant", None),
        ("after", after, "/v1/bench-constant", None),
        ("after, real auth", after, "/v1/bench-constant", real),
    ]
    if runner is not None:
        cases.append(("/v1/programs, after", after, "/v1/programs", None))
        cases.append(("/v1/programs, real auth", after, "/v1/programs", real))
    # Rounds interleave the cases, so that the machine's other load hits them alike.
    results = dict.fromkeys([label for label, _, _, _ in cases], math.inf)
    headers: dict[str, list[str]] = {}
    for _label, app, path, auth in cases:
        _, response = await _time(app, path, max(1, n // 10), 1, auth)  # warm-up
        assert response.status == 200, (_label, response.status)
    for _ in range(rounds):
        for label, app, path, auth in cases:
            took, response = await _time(app, path, n, 1, auth)
            results[label] = min(results[label], took)
            headers[label] = sorted(response.headers)
    for label, took in results.items():
        print(f"{label:24} {took:7.2f} µs/request (best of {rounds})", flush=True)
    old = results["before"] - results["bare"]
    new = results["after"] - results["bare"]
    print(f"\nstack alone: before {old:.2f} µs, after {new:.2f} µs, after/before {new / old:.2f}")
    if headers["before"] != headers["after"]:
        print("header NAMES differ:", headers["before"], headers["after"])
    if runner is not None:
        await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.rounds))
