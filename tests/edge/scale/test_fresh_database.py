"""Several processes opening one new SQLite database at once (the workers of one edge)."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from pathlib import Path

import pytest

from store import open_store


def _open(path: str, start: float, results: multiprocessing.Queue) -> None:
    while time.time() < start:  # all at the same moment
        pass

    async def go() -> None:
        store = await open_store(path, timeout=2.0)
        await store.close()

    try:
        asyncio.run(go())
        results.put("ok")
    except Exception as exc:  # reported to the test, which fails on it
        results.put(repr(exc))


@pytest.mark.process
@pytest.mark.slow
def test_processes_opening_a_new_database_at_once_all_succeed(tmp_path: Path):
    # Switching a new file to WAL can fail with "database is locked" at once, without the
    # busy timeout's wait, when another process does the same: one of two workers of a
    # fresh edge then died at start (seen in CI). About one round in five failed before.
    context = multiprocessing.get_context("fork")
    for round_ in range(12):
        path = str(tmp_path / f"edge-{round_}.sqlite3")
        results = context.Queue()
        start = time.time() + 0.3
        processes = [context.Process(target=_open, args=(path, start, results)) for _ in range(4)]
        for process in processes:
            process.start()
        outcomes = [results.get(timeout=30) for _ in processes]
        for process in processes:
            process.join(10)
        assert outcomes == ["ok"] * 4, (round_, outcomes)
