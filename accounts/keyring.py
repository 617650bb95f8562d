"""The service's secrets: the current one signs and encrypts, every configured one verifies
and decrypts.

Several secrets make rotation possible without losing anything: add a new secret in front,
re-encrypt the stored credentials under it (`affdir-admin credentials reencrypt`), wait for
the cursors signed with the old one to age out, then remove the old one (docs/deploy.md,
"Rotating the secret").
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets as random_secrets
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.secretfiles import NotPrivate, read_private
from store.privatefiles import make_private_dirs

SECRET_MIN = 32  # characters of a secret: cursor signatures and credential encryption
KEY_ID_BYTES = 4


class SecretError(ValueError):
    """A secret that cannot be used; the message never quotes it."""


def key_id(secret: bytes) -> bytes:
    """A short public name of a secret, stored beside what it sealed so that decryption
    picks the right secret at once. One-way: it reveals nothing of the secret."""
    return hashlib.sha256(b"affdir/key-id\x00" + secret).digest()[:KEY_ID_BYTES]


def check_secret(text: str, where: str = "the secret") -> bytes:
    """`text` as a secret's bytes, or SecretError if it is too short to be one."""
    value = text.strip()
    if len(value) < SECRET_MIN:
        raise SecretError(f"{where} must be at least {SECRET_MIN} characters")
    return value.encode()


@dataclass(frozen=True)
class Keyring:
    """The configured secrets, the current one first; never empty, no repeats."""

    secrets: tuple[bytes, ...]

    def __post_init__(self) -> None:
        if not self.secrets:
            raise SecretError("at least one secret is needed")
        if len(set(self.secrets)) != len(self.secrets):
            raise SecretError("the same secret is configured twice")
        if len({key_id(s) for s in self.secrets}) != len(self.secrets):
            raise SecretError("two configured secrets share a key id; replace one of them")

    @classmethod
    def of(cls, current: bytes, retired: Iterable[bytes] = ()) -> Keyring:
        """The current secret and the retired ones still accepted, in that order."""
        return cls((current, *(s for s in retired if s != current)))

    @property
    def current(self) -> bytes:
        """The secret that signs and encrypts."""
        return self.secrets[0]

    def by_id(self, kid: bytes) -> bytes | None:
        """The configured secret with this key id, if any."""
        for secret in self.secrets:
            if key_id(secret) == kid:
                return secret
        return None

    def __repr__(self) -> str:  # never the secrets themselves
        return f"Keyring({len(self.secrets)} secrets)"


def file_secrets(path: Path, *, create: bool) -> list[bytes]:
    """The secrets of a secret file, one per line, the current one first. A missing file is
    made with one new secret when `create` (the edge's first start), else SecretError."""
    if not path.exists() and not create:
        # The admin CLI and the sync worker must use the edge's secret: one made up here (a
        # typo in the path, another working directory) would seal what the edge cannot open.
        raise SecretError(
            f"no secret at {path.absolute()}: use the edge's (--secret-file / "
            "EDGE_SECRET_FILE where the edge keeps it, or EDGE_SECRET_KEY); "
            "the edge makes the file on its first start"
        )
    if not path.exists():
        make_private_dirs(path.parent)
        # O_EXCL: two processes starting at once must end up with one secret, not two.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(random_secrets.token_urlsafe(48) + "\n")
    try:
        text = read_private(path).decode()
    except NotPrivate as exc:
        raise SecretError(str(exc)) from None
    except UnicodeDecodeError:
        raise SecretError(f"{path}: is not text") from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise SecretError(f"{path}: holds no secret")
    return [check_secret(line, f"{path}: line {n}") for n, line in enumerate(lines, 1)]


def load_keyring(
    secret_key: str | None,
    secret_file: Path,
    retired: Iterable[str] = (),
    *,
    create: bool = False,
) -> Keyring:
    """The configured secrets: `secret_key`, else the secret file's, then the retired ones."""
    found = [secret_key.encode()] if secret_key else file_secrets(secret_file, create=create)
    return Keyring.of(found[0], [*found[1:], *(s.encode() for s in retired)])


def keyring_from_env(environ: Mapping[str, str], *, create: bool = False) -> Keyring:
    """The keyring the EDGE_* variables configure, as the edge reads them (for the
    processes beside it: the sync worker)."""
    secret_key = environ.get("EDGE_SECRET_KEY") or None
    if secret_key is not None:
        check_secret(secret_key, "EDGE_SECRET_KEY")
    retired = [
        part.strip()
        for part in environ.get("EDGE_RETIRED_SECRET_KEYS", "").split(",")
        if part.strip()
    ]
    for number, part in enumerate(retired, 1):
        check_secret(part, f"EDGE_RETIRED_SECRET_KEYS: secret {number} of the list")
    path = Path(environ.get("EDGE_SECRET_FILE") or "var/secret.key")
    return load_keyring(secret_key, path, retired, create=create)


def refusal(flag: str, instead: str) -> str:
    """Why a secret given on the command line is refused, and where it goes instead (never
    quoting what was given)."""
    return (
        f"{flag} takes no value on the command line, where `ps` and shell history show it: "
        f"{instead}"
    )


class RefuseSecret(argparse.Action):
    """A flag that would carry a secret: using it is a usage error naming the alternatives.

    It takes an optional value so that `--flag VALUE`, `--flag=VALUE` and a bare `--flag`
    all get this message rather than argparse's, which would quote the value."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        self.instead = kwargs.pop("instead")
        # Out of --help and usage: it is there only to refuse.
        kwargs["help"] = argparse.SUPPRESS
        super().__init__(option_strings, dest, nargs="?", default=None, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        parser.error(refusal(option_string or self.option_strings[0], self.instead))


def has_password(url: str) -> bool:
    """Whether a database or Redis URL carries a password (`user:PASSWORD@` or
    `?password=`)."""
    try:
        parts = urllib.parse.urlsplit(url)
        in_query = "password" in urllib.parse.parse_qs(parts.query)
        return parts.password is not None or in_query
    except ValueError:  # not a URL: a file path
        return False


class RefusePasswordURL(argparse.Action):
    """A URL flag (`--database`, `--redis-url`) that refuses a URL holding a password, which
    the command line would show; the environment variable `env` may hold it. A URL without
    one is stored as given."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        self.env = kwargs.pop("env")
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if isinstance(values, str) and has_password(values):
            flag = option_string or self.option_strings[0]
            postgres = values.startswith(("postgres://", "postgresql://"))
            parser.error(
                f"{flag}: a password in the URL shows in `ps` and shell history: set {self.env} "
                "instead"
                + (", or leave it out and give it by PGPASSWORD or ~/.pgpass" if postgres else "")
            )
        setattr(namespace, self.dest, values)
