"""Files holding accounts or secrets are made owner-only, whatever the usual umask lets
others read: the SQLite store and its -wal/-shm, the directories made for them, the secret
file, backups and a database made by a restore."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from accounts import backup as backup_files
from accounts.keyring import file_secrets
from store import SCHEMA_VERSION, accounts, open_store
from store.privatefiles import make_private_dirs, touch_private


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """0o022, the usual default: without care, new files come out 0644 and directories 0755."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def a_store_file(path: Path) -> None:
    store = await open_store(str(path), writable=True, readers=1, timeout=10.0)
    try:
        await store.write(accounts.create, "owner@example.com", "pro")
        # -wal and -shm exist while a connection is open on a WAL database.
        assert path.with_name(path.name + "-wal").exists()
        assert path.with_name(path.name + "-shm").exists()
        for suffix in ("", "-wal", "-shm"):
            assert mode(path.with_name(path.name + suffix)) == 0o600, suffix
    finally:
        await store.close()


async def test_a_new_store_and_its_wal_and_shm_are_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "var" / "data" / "edge.sqlite3"
    await a_store_file(path)
    assert mode(tmp_path / "var") == 0o700
    assert mode(tmp_path / "var" / "data") == 0o700


async def test_an_existing_directory_and_store_file_are_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o750)
    path = shared / "edge.sqlite3"
    path.touch(mode=0o640)
    store = await open_store(str(path), writable=True, readers=1, timeout=10.0)
    await store.close()
    assert (mode(shared), mode(path)) == (0o750, 0o640)


def test_the_secret_file_and_its_directory_are_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "var" / "secret.key"
    assert len(file_secrets(path, create=True)) == 1
    assert (mode(path), mode(path.parent)) == (0o600, 0o700)


async def test_a_backup_and_a_restored_database_are_owner_only(tmp_path: Path) -> None:
    live = tmp_path / "live.sqlite3"
    await a_store_file(live)
    target = tmp_path / "backups" / "nightly" / "copy.sqlite3"
    backup_files.backup(live, target)
    assert mode(target) == 0o600
    assert mode(target.parent) == mode(target.parent.parent) == 0o700
    restored = tmp_path / "elsewhere" / "restored.sqlite3"
    backup_files.restore(target, restored, latest_schema=SCHEMA_VERSION)
    assert (mode(restored), mode(restored.parent)) == (0o600, 0o700)


def test_the_helpers_make_what_is_missing_and_keep_what_exists(tmp_path: Path) -> None:
    make_private_dirs(tmp_path / "a" / "b")
    make_private_dirs(tmp_path / "a" / "b")  # twice: nothing to do
    assert mode(tmp_path / "a") == mode(tmp_path / "a" / "b") == 0o700
    touch_private(tmp_path / "a" / "b" / "f")
    (tmp_path / "a" / "b" / "f").write_text("kept")
    touch_private(tmp_path / "a" / "b" / "f")
    assert (tmp_path / "a" / "b" / "f").read_text() == "kept"
    assert mode(tmp_path / "a" / "b" / "f") == 0o600
