"""The edge's typed configuration: defaults, then `EDGE_*` environment variables, then flags.

Every setting is one `Setting` in `SETTINGS`; the command line, the environment reader and
docs/configuration.md (checked by a test) all come from that table.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accounts.keyring import (
    Keyring,
    RefusePasswordURL,
    RefuseSecret,
    SecretError,
    check_secret,
    load_keyring,
)
from contract.version import version_line
from contract.vocabulary import (
    ANONYMOUS_PLAN,
    DEFAULT_RATE_LIMITS,
    EVENTS_RETENTION_DAYS,
    EVENTS_RETENTION_DAYS_MAX,
)
from edge.http.clientaddress import Network, parse_networks
from edge.links import valid_authority


class ConfigError(ValueError):
    """A setting has a value that cannot be used."""


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
MAX_SECONDS = 86_400.0  # a day: no timeout, cache or interval of the edge needs more


def _positive_float(text: str) -> float:
    # `not <=` also refuses nan; inf would overflow the timers and make a key cache eternal.
    value = float(text)
    if not 0 < value <= MAX_SECONDS:
        raise ConfigError(f"{text!r} must be a positive number of seconds, at most {MAX_SECONDS:g}")
    return value


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


def _secret(text: str) -> str:
    # The message never quotes the value: it is a secret, even when a bad one.
    try:
        check_secret(text)
    except SecretError as exc:
        raise ConfigError(str(exc)) from None
    return text


def _secrets(text: str) -> tuple[str, ...]:
    """Comma-separated secrets (a generated secret never holds a comma)."""
    parts = tuple(part.strip() for part in text.split(",") if part.strip())
    for number, part in enumerate(parts, 1):
        try:
            check_secret(part, f"secret {number} of the list")
        except SecretError as exc:
            raise ConfigError(str(exc)) from None
    return parts


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


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ConfigError(f"{text!r} must be a whole number >= 1")
    return value


def _retention_days(text: str) -> int:
    value = _at_least_one(text)
    if value > EVENTS_RETENTION_DAYS_MAX:
        raise ConfigError(f"{text!r} must be at most {EVENTS_RETENTION_DAYS_MAX} days")
    return value


@dataclass(frozen=True)
class Setting:
    name: str  # attribute of Config; env EDGE_<NAME>, flag --<name with dashes>
    parse: Any
    help: str
    # A secret: read from the environment (or a file) only. Its flag exists to refuse a
    # value with a clear message: a command line shows in `ps` and in shell history.
    secret: bool = False
    # Where else the value may come from, named by the refusal.
    instead: str = ""

    @property
    def env(self) -> str:
        return "EDGE_" + self.name.upper()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Config:
    """Everything the edge needs to start; immutable once made."""

    host: str = "127.0.0.1"
    port: int = 8080
    dist: Path = Path("dist")
    database: str = "var/edge.sqlite3"
    secret_key: str | None = None
    secret_file: Path = Path("var/secret.key")
    retired_secret_keys: tuple[str, ...] = ()
    rate_limit_free: tuple[int, int] = DEFAULT_RATE_LIMITS["free"]
    rate_limit_pro: tuple[int, int] = DEFAULT_RATE_LIMITS["pro"]
    rate_limit_anonymous: tuple[int, int] = DEFAULT_RATE_LIMITS[ANONYMOUS_PLAN]
    auth_failure_limit: tuple[int, int] = (30, 60)
    trusted_proxies: tuple[Network, ...] = ()
    key_cache_seconds: float = 5.0
    key_stale_seconds: float = 600.0
    reload_interval: float = 1.0
    store_timeout: float = 2.0
    retry_after: int = 5
    events_retention_days: int = EVENTS_RETENTION_DAYS
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

    def resolved_secret(self, *, create: bool = True) -> bytes:
        """The current secret (see `keyring`)."""
        return self.keyring(create=create).current

    def keyring(self, *, create: bool = True) -> Keyring:
        """The secrets: the configured one, else the secret file's (created with one new
        secret on first use, unless `create` is False: then a missing file is a
        ConfigError), then the retired ones still accepted.

        The secret file holds one secret per line, the current one first: an operator
        rotates by putting a new line in front (docs/deploy.md, "Rotating the secret")."""
        try:
            return load_keyring(
                self.secret_key, self.secret_file, self.retired_secret_keys, create=create
            )
        except SecretError as exc:
            raise ConfigError(str(exc)) from None


SETTINGS: tuple[Setting, ...] = (
    Setting("host", str, "Interface to listen on."),
    Setting("port", _port, "TCP port to listen on."),
    Setting("dist", Path, "The build output directory (written by build.py) to serve."),
    Setting(
        "database",
        str,
        "Account store: a SQLite file path (or sqlite:///path), or a postgresql:// URL.",
    ),
    Setting(
        "secret_key",
        _secret,
        "Secret for cursor signatures and credential encryption (32+ characters), from the "
        "environment only. Give every edge process the same one. Unset: read from "
        "--secret-file.",
        secret=True,
        instead="set EDGE_SECRET_KEY, or put the secret in a file named by --secret-file",
    ),
    Setting(
        "secret_file",
        Path,
        "Where the secrets are kept when EDGE_SECRET_KEY is unset, one per line, the current "
        "one first; created (mode 600, its directory 700) with one secret on first start.",
    ),
    Setting(
        "retired_secret_keys",
        _secrets,
        "Retired secrets, comma-separated, from the environment only: still accepted for "
        "cursors and stored credentials, never used to sign or encrypt. Remove one once "
        "`affdir-admin credentials reencrypt` reports nothing left under it.",
        secret=True,
        instead="set EDGE_RETIRED_SECRET_KEYS, or put them on the lines after the current "
        "secret in the file named by --secret-file",
    ),
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
        _positive_float,
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
        _positive_float,
        "Seconds between checks of dist/manifest.json for a new build.",
    ),
    Setting(
        "store_timeout",
        _positive_float,
        "Seconds before an account store call gives up (the request then answers 503).",
    ),
    Setting("retry_after", _at_least_one, "Retry-After seconds sent with 503 answers."),
    Setting(
        "events_retention_days",
        _retention_days,
        f"Days an event stays readable in GET /v1/events, 1 to {EVENTS_RETENTION_DAYS_MAX}; "
        "older ones are never answered.",
    ),
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
        _positive_float,
        "Seconds a rate-limit call to Redis may take; past it, or with Redis down, limits "
        "are counted per process until Redis answers again.",
    ),
    Setting("workers", _at_least_one, "Worker processes sharing the port."),
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


def _parse(setting: Setting, raw: str) -> Any:
    where = setting.env if setting.secret else f"{setting.flag} / {setting.env}"
    try:
        return setting.parse(raw)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except (TypeError, ValueError):
        shown = "the value" if setting.secret else repr(raw)
        raise ConfigError(f"{where}: cannot use {shown}") from None


def from_env(environ: Mapping[str, str], base: Config | None = None) -> Config:
    """Apply the EDGE_* variables present in `environ` over `base` (or the defaults)."""
    changes = {s.name: _parse(s, environ[s.env]) for s in SETTINGS if environ.get(s.env)}
    return dataclasses.replace(base or Config(), **changes)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one flag per setting; every flag defaults to None (not given). A secret's flag
    only refuses (RefuseSecret)."""
    for s in SETTINGS:
        if s.secret:
            parser.add_argument(s.flag, action=RefuseSecret, instead=s.instead)
            continue
        if s.name in URL_SETTINGS:  # a URL's password is a secret too: environment only
            parser.add_argument(
                s.flag,
                dest=s.name,
                default=None,
                metavar=s.name.upper(),
                help=s.help,
                action=RefusePasswordURL,
                env=s.env,
            )
            continue
        parser.add_argument(s.flag, dest=s.name, default=None, metavar=s.name.upper(), help=s.help)


def load(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then the environment, then command-line flags."""
    parser = argparse.ArgumentParser(prog=PROG, description="Serve the /v1 API.")
    parser.add_argument("--version", action="version", version=version_line(PROG))
    add_arguments(parser)
    args = parser.parse_args(argv)
    config = from_env(os.environ if environ is None else environ)
    given = {
        s.name: _parse(s, getattr(args, s.name))
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
