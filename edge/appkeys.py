"""Typed keys for what the application and each request carry: one place to look.

Every type named here comes from a module that imports no other part of the edge at
run time (config, the store's protocol, the principal, the limiter, the directory, the
metrics), so that every module can import this one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web

from accounts.keyring import Keyring
from edge.auth.failures import AuthFailures
from edge.auth.principal import Authenticator, Principal
from edge.auth.public import PublicCallers
from edge.config import Config
from edge.directory.pages import DirectoryState
from edge.http.limiter import Limiter, RateState
from edge.metrics import Metrics
from store.core import AccountStore

CONFIG = web.AppKey("config", Config)
SECRET = web.AppKey("secret", Keyring)  # the current secret signs; all configured verify
STORE = web.AppKey("store", AccountStore)
AUTHENTICATOR = web.AppKey("authenticator", Authenticator)  # API key -> Principal
AUTH_FAILURES = web.AppKey("auth_failures", AuthFailures)  # refused keys per client address
PUBLIC_CALLERS = web.AppKey("public_callers", PublicCallers)  # keyless callers by address
DIRECTORY = web.AppKey("directory", DirectoryState)  # the loaded build, swapped whole
LIMITER = web.AppKey("limiter", Limiter)  # per-key limiter (memory or Redis)
METRICS = web.AppKey("metrics", Metrics)  # this app's registry, when --metrics-port is set
DRAINING = web.AppKey("draining", asyncio.Event)  # set once a graceful shutdown begins
# Tests put a fake clock here before the app starts: key cache expiry without sleeping.
AUTH_CLOCK: web.AppKey[Callable[[], float]] = web.AppKey("auth_clock")

REQUEST_ID = web.RequestKey("request_id", str)
PRINCIPAL = web.RequestKey("principal", Principal)  # of the calling key
RATE_STATE = web.RequestKey("rate_state", RateState)  # the limiter's decision: headers, /v1/me
