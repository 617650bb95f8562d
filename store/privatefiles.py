"""Files and directories only their owner can read: the account store (emails, commissions,
key hashes, sealed credentials), its backups and the secret file.

The mode is given when the file or directory is made, never fixed afterwards: a chmod after
creation leaves a moment in which another user can open it, and an open descriptor keeps
working after the chmod. The umask can only take bits away from these modes, so they hold
under any umask. What exists already is left as its owner made it; a secret's file that its
group or others may open is refused when read (`contract.secretfiles`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

FILE_MODE = 0o600
DIRECTORY_MODE = 0o700


def make_private_dirs(path: Path) -> None:
    """Make `path` and each missing parent, each 0700; existing ones are left alone."""
    missing: list[Path] = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            directory.mkdir(mode=DIRECTORY_MODE)


def touch_private(path: Path) -> None:
    """Make `path` an empty 0600 file unless it exists (its directories 0700).

    SQLite gives a database's -wal and -shm files the database file's own mode, so making
    the database file this way before SQLite opens it keeps all three private."""
    make_private_dirs(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)
