"""Online backup and restore of the embedded SQLite account store.

Both go through SQLite's online backup API, never a file copy: a copy of a live database in
WAL mode can miss committed pages that are still in the -wal file, and a file renamed over a
database that other processes hold open leaves them reading the old one. The backup API takes
a consistent snapshot while readers and writers go on, and a restore writes into the live
database under SQLite's own locks, so a running edge sees the restored data on its next read.

PostgreSQL stores are backed up with `pg_dump`/`pg_restore` (docs/deploy.md, "Backing up and
restoring the account store").
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from store.privatefiles import make_private_dirs, touch_private

SCHEMA_TABLES = ("accounts", "api_keys", "commissions", "schema_migrations")


class BackupError(Exception):
    """A backup or restore that cannot be made; nothing was changed."""


class BackupExists(BackupError):  # noqa: N818 - reads as the outcome it reports
    """The backup's file exists already (and replacing it was not asked)."""


@dataclass(frozen=True)
class BackupInfo:
    """What a backup file holds."""

    path: Path
    schema_version: int
    accounts: int
    commissions: int
    bytes: int


def _describe(conn: sqlite3.Connection, path: Path) -> BackupInfo:
    """Check that `conn` is a whole account store and say what it holds."""
    (verdict,) = conn.execute("PRAGMA integrity_check").fetchone()
    if verdict != "ok":
        raise BackupError(f"{path}: the database is damaged ({verdict})")
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [t for t in SCHEMA_TABLES if t not in tables]
    if missing:
        raise BackupError(f"{path}: not an account store (no {', '.join(missing)} table)")
    (version,) = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    (accounts,) = conn.execute("SELECT count(*) FROM accounts").fetchone()
    (commissions,) = conn.execute("SELECT count(*) FROM commissions").fetchone()
    return BackupInfo(path, int(version), int(accounts), int(commissions), path.stat().st_size)


def _open_read_only(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise BackupError(f"{path}: no such file")
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()  # a file refused leaves no connection open
        raise BackupError(f"{path}: not a SQLite database ({exc})") from None
    return conn


def backup(database: Path, target: Path, *, overwrite: bool = False) -> BackupInfo:
    """Write a consistent copy of the live `database` to `target`, atomically: `target`
    appears whole (checked, synced) or not at all."""
    if target.absolute() == database.absolute():
        raise BackupError(f"{target}: is the database itself")
    if target.exists() and not overwrite:
        raise BackupExists(f"{target}: exists")
    source = _open_read_only(database)
    make_private_dirs(target.parent)
    # mkstemp makes the file 0600: a backup holds what the store holds.
    fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    os.close(fd)
    try:
        with contextlib.closing(sqlite3.connect(partial)) as copy:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            info = _describe(copy, Path(partial))
        with open(partial, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(partial, target)
        _fsync_dir(target.parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
        raise
    finally:
        source.close()
    return BackupInfo(target, info.schema_version, info.accounts, info.commissions, info.bytes)


def inspect(path: Path) -> BackupInfo:
    """Check a backup file and say what it holds, changing nothing."""
    with contextlib.closing(_open_read_only(path)) as conn:
        return _describe(conn, path)


def restore(source: Path, database: Path, *, latest_schema: int) -> BackupInfo:
    """Replace the contents of `database` with the backup `source`, in one step under
    SQLite's locks (processes holding it open see the restored data on their next read).

    A backup of a newer schema than this code knows is refused; an older one is migrated
    when the store is next opened."""
    info = inspect(source)
    if info.schema_version > latest_schema:
        raise BackupError(
            f"{source}: schema version {info.schema_version} is newer than this code "
            f"({latest_schema}); restore it with the version that made it"
        )
    touch_private(database)  # a new database is owner-only, as the store makes it
    with (
        contextlib.closing(_open_read_only(source)) as src,
        contextlib.closing(sqlite3.connect(database, timeout=30.0)) as live,
    ):
        try:
            src.backup(live)
        except sqlite3.OperationalError as exc:
            raise BackupError(f"{database}: cannot write the restore ({exc})") from None
    return info


def _fsync_dir(path: Path) -> None:
    # The rename itself must survive a crash, not only the file's bytes.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
