"""Reading a file that holds a secret (the service's secret file, an API key file): refused,
as ssh refuses a private key, when anyone besides its owner may open it.

In contract/ because every process reads such files: the edge and its workers (the secret
file) and the MCP server (its key file), which imports nothing else of the service.
"""

from __future__ import annotations

import os
from pathlib import Path


class NotPrivate(PermissionError):  # noqa: N818 - reads as the refusal it reports
    """A secret's file that someone besides its owner may read or write; the message says
    how to fix it, as ssh's does."""


def read_private(path: Path, limit: int = 1 << 20) -> bytes:
    """At most `limit` bytes of a file holding a secret, or NotPrivate when its mode gives
    its group or others any permission (checked on the open file, so a swap of the file
    between the check and the read is caught too); OSError when it cannot be read."""
    with path.open("rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if mode & 0o077:
            raise NotPrivate(
                f"permissions {mode & 0o7777:04o} for {path} are too open: it holds a secret, "
                f"which only its owner may read; fix it with `chmod 600 {path}`"
            )
        return file.read(limit)
