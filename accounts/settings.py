"""The settings of every process that opens the account store: where it is, the secrets
that open what it holds, how long a call may take, how long events are kept.

The edge reads them among its own (`edge.config`), the admin CLI and the workers read
only these: one `Setting` each, one parser each, so every process accepts and refuses a
value alike (and names it alike: `--database / EDGE_DATABASE`). `start_store` is how a
long-lived process opens the store these settings name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from accounts.keyring import Keyring, SecretError, check_secret, load_keyring
from contract.vocabulary import EVENTS_RETENTION_DAYS, EVENTS_RETENTION_DAYS_MAX
from store import open_store, reached_over_network
from store.handle import StoreHandle

MAX_SECONDS = 86_400.0  # a day: no timeout, cache or interval of the store needs more


class ConfigError(ValueError):
    """A setting has a value that cannot be used."""


def positive_float(text: str) -> float:
    """Seconds above 0, at most a day."""
    # `not <=` also refuses nan; inf would overflow the timers and make a key cache eternal.
    value = float(text)
    if not 0 < value <= MAX_SECONDS:
        raise ConfigError(f"{text!r} must be a positive number of seconds, at most {MAX_SECONDS:g}")
    return value


def at_least_one(text: str) -> int:
    """A whole number >= 1."""
    value = int(text)
    if value < 1:
        raise ConfigError(f"{text!r} must be a whole number >= 1")
    return value


def _retention_days(text: str) -> int:
    value = at_least_one(text)
    if value > EVENTS_RETENTION_DAYS_MAX:
        raise ConfigError(f"{text!r} must be at most {EVENTS_RETENTION_DAYS_MAX} days")
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


@dataclass(frozen=True)
class Setting:
    """One setting: attribute `name`, environment variable EDGE_<NAME>, flag --<name>."""

    name: str
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


def parse_setting(setting: Setting, raw: str) -> Any:
    """`raw` as `setting`'s value; ConfigError naming the setting (never a secret's value)."""
    where = setting.env if setting.secret else f"{setting.flag} / {setting.env}"
    try:
        return setting.parse(raw)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except (TypeError, ValueError):
        shown = "the value" if setting.secret else repr(raw)
        raise ConfigError(f"{where}: cannot use {shown}") from None


DATABASE = Setting(
    "database",
    str,
    "Account store: a SQLite file path (or sqlite:///path), or a postgresql:// URL.",
)
SECRET_KEY = Setting(
    "secret_key",
    _secret,
    "Secret for cursor signatures and credential encryption (32+ characters), from the "
    "environment only. Give every edge process the same one. Unset: read from "
    "--secret-file.",
    secret=True,
    instead="set EDGE_SECRET_KEY, or put the secret in a file named by --secret-file",
)
SECRET_FILE = Setting(
    "secret_file",
    Path,
    "Where the secrets are kept when EDGE_SECRET_KEY is unset, one per line, the current "
    "one first; created (mode 600, its directory 700) with one secret on first start.",
)
RETIRED_SECRET_KEYS = Setting(
    "retired_secret_keys",
    _secrets,
    "Retired secrets, comma-separated, from the environment only: still accepted for "
    "cursors and stored credentials, never used to sign or encrypt. Remove one once "
    "`affdir-admin credentials reencrypt` reports nothing left under it.",
    secret=True,
    instead="set EDGE_RETIRED_SECRET_KEYS, or put them on the lines after the current "
    "secret in the file named by --secret-file",
)
STORE_TIMEOUT = Setting(
    "store_timeout",
    positive_float,
    "Seconds before an account store call gives up (the request then answers 503).",
)
EVENTS_RETENTION = Setting(
    "events_retention_days",
    _retention_days,
    f"Days an event stays readable in GET /v1/events, 1 to {EVENTS_RETENTION_DAYS_MAX}; "
    "older ones are never answered.",
)
STORE_SETTINGS: tuple[Setting, ...] = (
    DATABASE,
    SECRET_KEY,
    SECRET_FILE,
    RETIRED_SECRET_KEYS,
    STORE_TIMEOUT,
    EVENTS_RETENTION,
)


@dataclass(frozen=True)
class StoreConfig:
    """The account store and its secrets, as every process that opens it is configured."""

    database: str = "var/edge.sqlite3"
    secret_key: str | None = None
    secret_file: Path = Path("var/secret.key")
    retired_secret_keys: tuple[str, ...] = ()
    store_timeout: float = 2.0
    events_retention_days: int = EVENTS_RETENTION_DAYS

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


C = TypeVar("C", bound=StoreConfig)


def apply_env(
    base: C, environ: Mapping[str, str], settings: tuple[Setting, ...] = STORE_SETTINGS
) -> C:
    """`base` with the EDGE_* variables of `settings` present in `environ` applied."""
    changes = {s.name: parse_setting(s, environ[s.env]) for s in settings if environ.get(s.env)}
    return dataclasses.replace(base, **changes)


def store_config_from_env(environ: Mapping[str, str]) -> StoreConfig:
    """The store's settings from the EDGE_* variables present in `environ` (else defaults)."""
    return apply_env(StoreConfig(), environ)


async def start_store(
    database: str,
    *,
    timeout: float,  # noqa: ASYNC109 - the bound of each later store call, kept by the store
    writable: bool = False,
) -> StoreHandle:
    """The account store at `database`, for a long-lived process: open now, or, when a
    store reached over the network does not answer yet (a database restarting during a
    deploy), as soon as it does (store.handle). Any other failure raises StoreError: a
    setting to fix, and the process refuses to start. A writable store (a worker's) has one
    reader: its reads are few and beside its writes."""
    readers = 1 if writable else 2
    handle = StoreHandle(
        partial(open_store, database, timeout=timeout, writable=writable, readers=readers),
        retry=reached_over_network(database),
    )
    await handle.start()
    return handle


__all__ = [
    "DATABASE",
    "EVENTS_RETENTION",
    "MAX_SECONDS",
    "RETIRED_SECRET_KEYS",
    "SECRET_FILE",
    "SECRET_KEY",
    "STORE_SETTINGS",
    "STORE_TIMEOUT",
    "ConfigError",
    "Setting",
    "StoreConfig",
    "apply_env",
    "at_least_one",
    "parse_setting",
    "positive_float",
    "start_store",
    "store_config_from_env",
]
