"""The flags of a worker that opens the account store with the edge's secrets (the sync
worker, the webhook delivery worker): one definition, so both read and refuse them alike."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from accounts.keyring import RefusePasswordURL, RefuseSecret
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
