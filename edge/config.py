"""The edge's typed configuration: defaults, then `EDGE_*` environment variables, then flags.

Every setting is one `Setting` in `SETTINGS`; the command line, the environment reader and
docs/configuration.md (checked by a test) all come from that table. The account store's
settings are shared with the admin CLI and the workers (accounts.settings).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from accounts.keyring import RefusePasswordURL, RefuseSecret
from accounts.settings import (
    DATABASE,
    EVENTS_RETENTION,
    MAX_SECONDS,
    RETIRED_SECRET_KEYS,
    SECRET_FILE,
    SECRET_KEY,
    STORE_TIMEOUT,
    ConfigError,
    Setting,
    StoreConfig,
    apply_env,
    at_least_one,
    parse_setting,
    positive_float,
)
from contract.commandline import Arg, add_arguments, arg
from contract.version import version_line
from contract.vocabulary import ANONYMOUS_PLAN, DEFAULT_RATE_LIMITS
from edge.http.clientaddress import Network, parse_networks
from edge.links import valid_authority


def _rate(text: str) -> tuple[int, int]:
    """Parse `REQUESTS/SECONDS`, e.g. `60/60`."""
    try:
        count, window = (int(part) for part in text.split("/"))
    except ValueError:
        raise ConfigError(f"rate limit {text!r} is not REQUESTS/SECONDS, e.g. 60/60") from None
    if count < 1 or window < 1:
        raise ConfigError(f"rate limit {text!r} needs at least 1 request per 1 second")
    return count, window


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{text!r} is not a boolean (true/false)")


LOG_FORMATS = ("json", "text")
PROG = "affdir-edge"  # the console script; also what `python -m edge` calls itself
# Settings holding a URL that may carry a password (refused on the command line).
URL_SETTINGS = frozenset({"database", "redis_url"})


def _seconds_or_zero(text: str) -> float:
    value = float(text)
    if not 0 <= value <= MAX_SECONDS:
        raise ConfigError(f"{text!r} must be a number of seconds from 0 to {MAX_SECONDS:g}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise ConfigError(f"port {text!r} is not in 0..65535")
    return value


def _networks(text: str) -> tuple[Network, ...]:
    try:
        return parse_networks(text)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _public_url(text: str) -> str:
    """`scheme://host[:port]` of the API as clients reach it: no path, query or fragment."""
    url = text.strip().rstrip("/")
    scheme, sep, authority = url.partition("://")
    if not sep or scheme.lower() not in {"http", "https"} or not valid_authority(authority):
        raise ConfigError(
            f"{text!r} is not an http(s) origin such as https://api.example.com (no path)"
        )
    return f"{scheme.lower()}://{authority}"


def _log_format(text: str) -> str:
    value = text.strip().lower()
    if value not in LOG_FORMATS:
        raise ConfigError(f"{text!r} is not one of: {', '.join(LOG_FORMATS)}")
    return value


@dataclass(frozen=True)
class Config(StoreConfig):
    """Everything the edge needs to start; immutable once made. The account store's
    settings (`database`, the secrets, `store_timeout`, `events_retention_days`) are those
    of every process that opens it (accounts.settings)."""

    host: str = "127.0.0.1"
    port: int = 8080
    dist: Path = Path("dist")
    rate_limit_free: tuple[int, int] = DEFAULT_RATE_LIMITS["free"]
    rate_limit_pro: tuple[int, int] = DEFAULT_RATE_LIMITS["pro"]
    rate_limit_anonymous: tuple[int, int] = DEFAULT_RATE_LIMITS[ANONYMOUS_PLAN]
    auth_failure_limit: tuple[int, int] = (30, 60)
    trusted_proxies: tuple[Network, ...] = ()
    key_cache_seconds: float = 5.0
    key_stale_seconds: float = 600.0
    reload_interval: float = 1.0
    retry_after: int = 5
    cors_origins: str = "*"
    public_url: str | None = None
    serve_site: bool = False
    access_log: bool = True
    log_level: str = "INFO"
    redis_url: str | None = None
    redis_timeout: float = 0.5
    workers: int = 1
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    log_format: str | None = None  # None: json, or text when stderr is a terminal

    def rate_limit(self, plan: str) -> tuple[int, int]:
        """(requests, window seconds) for a plan."""
        return self._rate_limits[plan]

    @functools.cached_property
    def _rate_limits(self) -> dict[str, tuple[int, int]]:
        # Derived once per Config (immutable): rate_limit runs on every counted request.
        # Not a field, so equality, repr and dataclasses.replace are unchanged.
        return {
            "free": self.rate_limit_free,
            "pro": self.rate_limit_pro,
            ANONYMOUS_PLAN: self.rate_limit_anonymous,
        }


SETTINGS: tuple[Setting, ...] = (
    Setting("host", str, "Interface to listen on."),
    Setting("port", _port, "TCP port to listen on."),
    Setting("dist", Path, "The build output directory (written by build.py) to serve."),
    DATABASE,
    SECRET_KEY,
    SECRET_FILE,
    RETIRED_SECRET_KEYS,
    Setting("rate_limit_free", _rate, "Rate limit of free-plan keys, REQUESTS/SECONDS."),
    Setting("rate_limit_pro", _rate, "Rate limit of pro-plan keys, REQUESTS/SECONDS."),
    Setting(
        "rate_limit_anonymous",
        _rate,
        "Rate limit of directory requests without an Authorization header, per client "
        "address (see --trusted-proxies), REQUESTS/SECONDS.",
    ),
    Setting(
        "auth_failure_limit",
        _rate,
        "Requests with a refused key (unknown, revoked, malformed) allowed per client "
        "address, REQUESTS/SECONDS; past it, 429 instead of a key lookup until it recovers.",
    ),
    Setting(
        "trusted_proxies",
        _networks,
        "Reverse proxies (addresses or CIDR blocks, comma-separated) whose X-Forwarded-For "
        "gives the client address of --auth-failure-limit and --rate-limit-anonymous; "
        "unset: the peer address.",
    ),
    Setting(
        "key_cache_seconds",
        positive_float,
        "How long an API key lookup is cached; a revoked key stops working within this bound.",
    ),
    Setting(
        "key_stale_seconds",
        _seconds_or_zero,
        "While the account store is unreachable, how long after its last successful check "
        "a key keeps working on the directory endpoints (0: not at all).",
    ),
    Setting(
        "reload_interval",
        positive_float,
        "Seconds between checks of dist/manifest.json for a new build.",
    ),
    STORE_TIMEOUT,
    Setting("retry_after", at_least_one, "Retry-After seconds sent with 503 answers."),
    EVENTS_RETENTION,
    Setting("cors_origins", str, "Allowed CORS origins: * or a comma-separated list."),
    Setting(
        "public_url",
        _public_url,
        "Origin of the API as clients reach it (e.g. https://api.example.com): Link headers "
        "start with it. Unset: with each request's own Host (if well-formed).",
    ),
    Setting("serve_site", _bool, "Also serve the HTML directory in dist/ as static files."),
    Setting("access_log", _bool, "Write one JSON access-log line per request to stderr."),
    Setting("log_level", str, "Logging level: DEBUG, INFO, WARNING or ERROR."),
    Setting("redis_url", str, "redis:// URL of a shared rate-limit store; unset: in memory."),
    Setting(
        "redis_timeout",
        positive_float,
        "Seconds a rate-limit call to Redis may take; past it, or with Redis down, limits "
        "are counted per process until Redis answers again.",
    ),
    Setting("workers", at_least_one, "Worker processes sharing the port."),
    Setting(
        "metrics_port",
        _port,
        "TCP port of GET /metrics (Prometheus); unset: no metrics. Worker N of --workers "
        "serves its own on this port + N.",
    ),
    Setting("metrics_host", str, "Interface the metrics port listens on."),
    Setting(
        "log_format",
        _log_format,
        "json (one JSON object per line) or text; unset: text when stderr is a terminal, "
        "json otherwise.",
    ),
)


def from_env(environ: Mapping[str, str], base: Config | None = None) -> Config:
    """Apply the EDGE_* variables present in `environ` over `base` (or the defaults)."""
    return apply_env(base or Config(), environ, SETTINGS)


def argument(setting: Setting) -> Arg:
    """A setting's flag; it defaults to None (not given). A secret's flag only refuses
    (RefuseSecret)."""
    if setting.secret:
        return arg(setting.flag, action=RefuseSecret, instead=setting.instead)
    flag = arg(setting.flag, dest=setting.name, default=None, metavar=setting.name.upper())
    if setting.name in URL_SETTINGS:  # a URL's password is a secret too: environment only
        return arg(
            *flag.flags,
            **flag.options,
            help=setting.help,
            action=RefusePasswordURL,
            env=setting.env,
        )
    return arg(*flag.flags, **flag.options, help=setting.help)


def load(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then the environment, then command-line flags."""
    parser = argparse.ArgumentParser(prog=PROG, description="Serve the /v1 API.")
    parser.add_argument("--version", action="version", version=version_line(PROG))
    add_arguments(parser, map(argument, SETTINGS))
    args = parser.parse_args(argv)
    config = from_env(os.environ if environ is None else environ)
    given = {
        s.name: parse_setting(s, getattr(args, s.name))
        for s in SETTINGS
        if not s.secret and getattr(args, s.name)
    }
    config = dataclasses.replace(config, **given)
    if config.log_level.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ConfigError(f"log level {config.log_level!r} is not DEBUG, INFO, WARNING or ERROR")
    if config.metrics_port and config.metrics_port + config.workers - 1 > 65535:
        raise ConfigError(
            f"--metrics-port / EDGE_METRICS_PORT: worker {config.workers - 1} would serve its "
            f"metrics on port {config.metrics_port + config.workers - 1}, past 65535"
        )
    if config.workers > 1 and not config.redis_url:
        raise ConfigError(
            f"--workers / EDGE_WORKERS: {config.workers} workers need --redis-url / "
            "EDGE_REDIS_URL: a key's rate limit holds across all workers, and counts kept in "
            "one worker's memory cannot; run Redis, or one worker"
        )
    return config


__all__ = ["SETTINGS", "Config", "ConfigError", "Setting", "argument", "from_env", "load"]
