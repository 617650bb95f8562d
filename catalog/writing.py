"""Stage 6: put the new build in place of dist/ in one atomic step.

1. Under an exclusive lock on dist/'s parent directory (one build at a time), remove the
   staging directories that a killed build left behind.
2. Assemble the whole new build in a directory beside dist/ (same file system, so it can be
   renamed):
   - normally the *spare*, `.<name>-spare`: the build that dist/ held before the current
     one, kept by the last build instead of deleted. Known byte for byte (`cache.Outputs`),
     it is updated in place: only files whose bytes differ are replaced, directories
     created or removed as needed. Its manifest is removed first and written last, so a
     spare whose update was interrupted is recognisably unknown and gets deleted;
   - else a fresh `.<name>-staging-XXXX`, filled with hard links to dist/'s files whose
     bytes are unchanged and new files for the rest.
   Either way no file is ever modified in place: a changed path gets a new inode, so files
   shared through hard links are never altered under the other tree.
3. Flush the tree to disk (syncfs, one call for the whole tree), then exchange it with
   dist/ atomically: Linux renameat2(RENAME_EXCHANGE). Readers that opened dist/ keep the
   old tree through their directory descriptor; new readers get the new one; nobody sees a
   mix. Where exchange is unavailable: rename dist/ aside, rename the new tree in.
4. The previous build is now beside dist/: it becomes the spare (deleting a tree of tens of
   thousands of entries costs more than the rest of a rebuild; recycling it costs in
   proportion to what changed). With `keep_spare=False` it is deleted. When it has the new
   build's manifest (only the site changed), the cache, which knows trees by their
   manifest, could not tell it from dist/: its manifest is removed, and the next build
   deletes it.

When dist/ already holds exactly the new build's bytes, nothing is written or swapped.
Any exception or interrupt before the exchange deletes the tree being assembled and leaves
dist/ exactly as it was.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from catalog import cache
from catalog.model import Existing
from contract import shardformat

RENAME_EXCHANGE = 2  # from <linux/fs.h>
AT_FDCWD = -100
FILE_MODE = 0o644
DIR_MODE = 0o755
WRITE_THREADS = 2


class WriteError(Exception):
    """The output directory cannot be replaced (locked by another build, not a directory...)."""


class LiveFileChangedError(WriteError):
    """A file the build meant to take from dist/ as it is (`Existing`) is gone or changed
    there: what the cache says dist/ holds is wrong, and the caller must forget it."""


@dataclass(frozen=True)
class WriteStats:
    """What the writing stage did."""

    files: int
    bytes: int
    written: int  # files written anew
    linked: int  # files hard-linked from dist/
    kept: int  # files of the recycled spare that were already right
    swap: str  # exchange | rename | rename-aside | unchanged
    assembled_in: str  # spare | staging | -
    seconds_to_swap: float  # from the start of the stage to the new build being live
    outputs: cache.Outputs  # what the output trees now hold, for the next build


@contextlib.contextmanager
def _exact_modes() -> Iterator[None]:
    """Files get FILE_MODE and directories DIR_MODE whatever the caller's umask (a umask of
    077 would make a served tree unreadable to the web server): 022 while writing."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def staging_prefix(out: Path) -> str:
    """Name prefix of the staging directories of `out` (gitignored as /.dist-*/)."""
    return f".{out.name}-staging-"


def spare_path(out: Path) -> Path:
    """Where the previous build is kept for recycling (gitignored as /.dist-*/)."""
    return out.parent / f".{out.name}-spare"


def write(
    files: Mapping[str, bytes | Existing],
    out: Path,
    previous: cache.Outputs,
    *,
    sync: bool = True,
    keep_spare: bool = True,
) -> WriteStats:
    """Replace `out` with a directory holding exactly `files`; atomic, see the module doc."""
    started = time.perf_counter()
    out = Path(os.path.abspath(out))
    parent, spare = out.parent, spare_path(out)
    parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and not out.is_dir():
        raise WriteError(f"{out} exists and is not a directory")
    digests = {
        path: data.digest if isinstance(data, Existing) else cache.output_digest(data)
        for path, data in files.items()
    }
    manifest = digests[shardformat.MANIFEST]
    size = sum(data.size if isinstance(data, Existing) else len(data) for data in files.values())
    stats = partial(WriteStats, files=len(files), bytes=size)
    with _locked(parent), _exact_modes():
        _remove_stale(parent, staging_prefix(out))
        live_tree = previous.of_tree(out)
        live = live_tree[1] if live_tree else {}
        spare_tree = previous.of_tree(spare) if keep_spare and spare.is_dir() else None
        if live_tree is not None and live == digests:
            # dist/ already holds exactly these bytes (builds are reproducible): keep it.
            both = dict([live_tree, spare_tree] if spare_tree else [live_tree])
            return stats(
                written=0, linked=0, kept=len(files), swap="unchanged", assembled_in="-",
                seconds_to_swap=0.0, outputs=cache.Outputs(both),
            )  # fmt: skip
        if spare_tree is None and os.path.lexists(spare):
            remove_tree(spare)  # unknown or half-updated: not worth trusting
        target = spare if spare_tree is not None else _new_staging(out)
        try:
            present = spare_tree[1] if spare_tree else {}
            counts = _assemble(target, present, files, digests, out, live)
            if sync:
                _sync_tree(target)
            swap = _swap(target, out)
            if sync:
                _fsync_dir(parent)  # make the rename itself durable
            seconds = time.perf_counter() - started
        except BaseException:
            remove_tree(target)
            raise
        # The previous build (if any) is now at `target`: keep it as the spare, or delete it.
        builds = {manifest: digests}
        if swap == "rename" or not keep_spare or live_tree is None:
            remove_tree(target)  # nothing there, not wanted, or not known byte for byte
        else:
            if target != spare:
                os.rename(target, spare)
            if live_tree[0] != manifest:
                builds[live_tree[0]] = live_tree[1]
            else:
                # Only the site changed: the two trees have the same manifest, by which the
                # cache tells them apart. Unknown from now on (the next build deletes it), or
                # it would be taken for dist/ and dist/ for it.
                os.unlink(spare / shardformat.MANIFEST)
    written, linked, kept = counts
    return stats(
        written=written, linked=linked, kept=kept, swap=swap,
        assembled_in="spare" if spare_tree is not None else "staging",
        seconds_to_swap=seconds, outputs=cache.Outputs(builds),
    )  # fmt: skip


def _new_staging(out: Path) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=staging_prefix(out), dir=out.parent))
    os.chmod(staging, DIR_MODE)  # mkdtemp makes it private; dist/ is served
    return staging


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive flock on `directory` (two builds into one place would collide)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WriteError(f"another build is writing into {directory}; try again") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _remove_stale(parent: Path, prefix: str) -> None:
    # Under the lock no other build runs, so every staging directory here is left over.
    for entry in os.scandir(parent):
        if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
            remove_tree(Path(entry.path))


def remove_tree(root: Path) -> None:
    """Delete a tree, its big directories in parallel (like creating, deleting is kernel
    work under each parent directory's lock); never raises."""
    try:
        subtrees = _subtrees(root)
    except OSError:
        subtrees = []
    with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
        list(pool.map(partial(shutil.rmtree, ignore_errors=True), subtrees))
    shutil.rmtree(root, ignore_errors=True)


def _subtrees(root: Path, small: int = 16) -> list[str]:
    """Independent sub-directories of a tree: its own, small ones opened one level down."""
    parts: list[str] = []
    for entry in os.scandir(root):
        if entry.is_dir(follow_symlinks=False):
            children = list(os.scandir(entry.path))
            if len(children) > small:
                parts.append(entry.path)
            else:
                parts += [child.path for child in children if child.is_dir(follow_symlinks=False)]
    return parts


# --- assembling a tree ----------------------------------------------------------------


def _assemble(
    root: Path,
    present: Mapping[str, str],
    files: Mapping[str, bytes | Existing],
    digests: Mapping[str, str],
    out: Path,
    live: Mapping[str, str],
) -> tuple[int, int, int]:
    """Make `root`, which holds `present` ({path: digest}), hold exactly `files`.

    Files come from, in order of preference: `root` itself (kept), dist/ (hard-linked, when
    `live` says its bytes are right), or `files` (written). Returns (written, linked, kept).
    Creating and removing entries is kernel work under the parent directory's lock, so it
    runs in two threads (os calls release the GIL), each taking whole directories.
    """
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    out_fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY) if live else None
    try:
        if shardformat.MANIFEST in present:
            # First change to a recycled tree: from here on it is recognisably unfinished.
            os.unlink(shardformat.MANIFEST, dir_fd=root_fd)
        with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
            gone = [path for path in present if path not in files]
            _run_all(pool, [partial(_unlink_all, root_fd, g) for g in _by_parent(gone)])
            old_dirs, new_dirs = _directories(present), _directories(files)
            for level in _levels(old_dirs - new_dirs, deepest_first=True):
                _run_all(pool, [partial(_remove_dirs, root_fd, group) for group in level])
            for level in _levels(new_dirs - old_dirs, deepest_first=False):
                _run_all(pool, [partial(_make_dirs, root_fd, group) for group in level])
            todo = [
                path
                for path in files
                if path != shardformat.MANIFEST and present.get(path) != digests[path]
            ]
            place = partial(_place, root_fd, out_fd, files, digests, live, present)
            linked = sum(_run_all(pool, [partial(place, g) for g in _by_parent(todo)]))
        # Last: the manifest makes the tree complete (and a recycled tree known again).
        manifest_bytes = files[shardformat.MANIFEST]
        assert isinstance(manifest_bytes, bytes)  # made by this build, never reused
        _write_file(root_fd, shardformat.MANIFEST, manifest_bytes)
    finally:
        os.close(root_fd)
        if out_fd is not None:
            os.close(out_fd)
    written = len(todo) + 1 - linked
    return written, linked, len(files) - len(todo) - 1


def _run_all(pool: ThreadPoolExecutor, tasks: list[Callable[[], int]]) -> list[int]:
    """Run the tasks on the pool and return their results; the first failure is raised."""
    futures = [pool.submit(task) for task in tasks]
    try:
        return [future.result() for future in futures]
    finally:
        for future in futures:
            future.cancel()  # after a failure, do not start what is left


def _by_parent(paths: Iterable[str]) -> list[list[str]]:
    """Paths grouped by directory, biggest group first (it bounds the wall time)."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(_parent(path), []).append(path)
    return sorted(groups.values(), key=len, reverse=True)


def _parent(path: str) -> str:
    # Build paths are relative, normalised and "/"-separated (rendering checks the site's),
    # so this is os.path.dirname at a third of its cost (a build has 38,000 paths).
    return path.rpartition("/")[0]


def _directories(paths: Iterable[str]) -> set[str]:
    """Every directory the paths need, ancestors included."""
    directories: set[str] = set()
    for parent in {_parent(path) for path in paths}:
        while parent and parent not in directories:
            directories.add(parent)
            parent = _parent(parent)
    return directories


def _levels(directories: set[str], *, deepest_first: bool) -> list[list[list[str]]]:
    """Directories by depth (parents before children, or the reverse), grouped by parent."""
    levels: dict[int, list[str]] = {}
    for directory in sorted(directories):
        levels.setdefault(directory.count("/"), []).append(directory)
    order = sorted(levels, reverse=deepest_first)
    return [_by_parent(levels[depth]) for depth in order]


def _make_dirs(root_fd: int, directories: list[str]) -> int:
    for directory in directories:
        os.mkdir(directory, DIR_MODE, dir_fd=root_fd)
    return 0


def _remove_dirs(root_fd: int, directories: list[str]) -> int:
    for directory in directories:
        os.rmdir(directory, dir_fd=root_fd)
    return 0


def _unlink_all(root_fd: int, paths: list[str]) -> int:
    for path in paths:
        _unlink(root_fd, path)
    return 0


def _unlink(root_fd: int, path: str) -> None:
    # Already gone is as good as removed: a file deleted from dist/ by hand is missing from
    # that tree when it comes back as the spare.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path, dir_fd=root_fd)


def _place(
    root_fd: int,
    out_fd: int | None,
    files: Mapping[str, bytes | Existing],
    digests: Mapping[str, str],
    live: Mapping[str, str],
    present: Mapping[str, str],
    paths: list[str],
) -> int:
    """Link or write the files of one directory; returns how many were linked."""
    linked = 0
    for path in paths:
        if path in present:
            _unlink(root_fd, path)  # a new inode, never a rewrite: see module doc
        if out_fd is not None and live.get(path) == digests[path]:
            try:
                os.link(path, path, src_dir_fd=out_fd, dst_dir_fd=root_fd)
                linked += 1
                continue
            except OSError:
                pass  # gone, or not linkable (another file system): write it instead
        data = files[path]
        _write_file(
            root_fd, path, _live_bytes(out_fd, path, data) if isinstance(data, Existing) else data
        )
    return linked


def _live_bytes(out_fd: int | None, path: str, existing: Existing) -> bytes:
    """The bytes of a file that dist/ holds (where it cannot be linked: copied instead).

    Only ever asked for a file dist/ held when the build started, as far as the cache knows;
    LiveFileChangedError when it is gone or no longer those bytes (someone changed dist/).
    """
    data = None
    if out_fd is not None:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY, dir_fd=out_fd)
            with os.fdopen(fd, "rb") as fh:
                data = fh.read()
    if data is None or cache.output_digest(data) != existing.digest:
        raise LiveFileChangedError(f"{path} changed in dist/ during the build; build again")
    return data


def _write_file(root_fd: int, path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE, dir_fd=root_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


# --- durability and the swap ----------------------------------------------------------


def _sync_tree(root: Path) -> None:
    """Flush every file of the tree: syncfs on Linux (one call), sync elsewhere."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        libc = _libc()
        syncfs = getattr(libc, "syncfs", None) if libc else None
        if syncfs is None or syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _swap(tree: Path, out: Path) -> str:
    """Put `tree` at `out`; afterwards the old build, if any, is at `tree`'s path."""
    if not out.exists():
        os.rename(tree, out)
        return "rename"
    if exchange(tree, out):
        return "exchange"
    # No atomic exchange here: for a moment `out` does not exist (readers retry).
    aside = Path(tempfile.mkdtemp(prefix=staging_prefix(out), dir=out.parent))
    os.rmdir(aside)
    os.rename(out, aside)
    try:
        os.rename(tree, out)
    except BaseException:
        os.rename(aside, out)
        raise
    os.rename(aside, tree)
    return "rename-aside"


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    libc = _libc()
    renameat2 = getattr(libc, "renameat2", None) if libc else None
    if renameat2 is None:
        return False
    result = renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # old kernel or a file system without exchange support
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
