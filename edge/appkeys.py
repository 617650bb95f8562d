"""Typed keys for what the application and each request carry: one place to look."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from edge.config import Config

CONFIG = web.AppKey("config", Config)
SECRET = web.AppKey("secret", bytes)
# Set by the part that owns each; typed loosely here so that imports stay one-way.
STORE = web.AppKey("store", Any)  # accounts.store: the account store
AUTHENTICATOR = web.AppKey("authenticator", Any)  # edge.auth.authenticate: API key -> Principal
DIRECTORY = web.AppKey("directory", Any)  # edge.directory: the loaded build
LIMITER = web.AppKey("limiter", Any)  # edge.http.ratelimit: per-key limiter
CORS = web.AppKey("cors", Any)  # edge.http.cors.CorsPolicy of config.cors_origins

REQUEST_ID = web.RequestKey("request_id", str)
PRINCIPAL = web.RequestKey("principal", Any)  # edge.auth.authenticate.Principal of the calling key
RATE_STATE = web.RequestKey("rate_state", Any)  # edge.http.ratelimit decision: headers, /v1/me
