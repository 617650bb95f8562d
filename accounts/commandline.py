"""The flags of a worker that opens the account store with the edge's secrets (the sync
worker, the webhook delivery worker): one definition, so both read and refuse them alike."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from accounts.keyring import Keyring, RefusePasswordURL, RefuseSecret, keyring_from_env
from contract.commandline import Arg, arg


def store_arguments(environ: Mapping[str, str]) -> tuple[Arg, ...]:
    """--database (default EDGE_DATABASE), --secret-file, and --secret-key refused."""
    return (
        arg(
            "--database",
            action=RefusePasswordURL,  # a URL with a password: in EDGE_DATABASE only
            env="EDGE_DATABASE",
            default=environ.get("EDGE_DATABASE") or "var/edge.sqlite3",
            help="the account store: a SQLite path or a postgresql:// URL (EDGE_DATABASE)",
        ),
        arg(
            "--secret-file",
            type=Path,
            help="the edge's secret file (EDGE_SECRET_FILE); EDGE_SECRET_KEY takes precedence",
        ),
        arg(  # never on argv: `ps` and shell history would show it
            "--secret-key",
            action=RefuseSecret,
            instead="set EDGE_SECRET_KEY, or name the edge's secret file with --secret-file",
        ),
    )


def keyring_of(
    args: argparse.Namespace, environ: Mapping[str, str], *, create: bool = False
) -> Keyring:
    """The edge's secrets as `store_arguments` and the EDGE_* variables name them
    (`--secret-file` over EDGE_SECRET_FILE); SecretError when they cannot be used."""
    if args.secret_file is not None:
        environ = {**environ, "EDGE_SECRET_FILE": str(args.secret_file)}
    return keyring_from_env(environ, create=create)
