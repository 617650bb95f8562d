"""The account store's schema: one ordered history of steps, for both databases.

Each step is a module `vNNN_name.py` here (v001_accounts.py, v002_sync_state.py, ...),
numbered from 1 without a gap, holding `STEP`: its statements in SQLite's and PostgreSQL's
spelling side by side (store.schema.step). Version N of a database is the first N steps
applied; `schema_migrations` records each with its time. Opening a store
(store.open_store, `affdir-admin migrate`) applies the missing steps through
store.schema.runner, on either database.

Adding a step is adding one file: `v007_what_it_adds.py` with its `STEP`. A step that has
shipped is never edited: stores made by an earlier release are at its version already and
would never see the change (tests/store/test_schema_history.py pins their text).

PostgreSQL's spelling keeps SQLite's tables, columns, constraints and index names in its
own types: booleans for the 0/1 flags, bigint identities for the integer keys, bytea for
the ciphertext. Timestamps and amounts stay text on both, so the conventions of store.base
hold unchanged. Text that is sorted or range-compared (timestamps, ids, network names) is
declared `COLLATE "C"` there: byte order, as SQLite compares, whatever collation the
database was created with (an `en_US` collation would order `a-b` after `ab`, and costs
more per comparison).
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from store.schema.step import Engine, Step

STEP_MODULE = re.compile(r"v(\d{3})_[a-z0-9_]+")


def _load() -> tuple[Step, ...]:
    """The steps of this package's vNNN_ modules, in order; numbered 1, 2, ... or refused."""
    found: dict[int, str] = {}
    for module in pkgutil.iter_modules(__path__):
        match = STEP_MODULE.fullmatch(module.name)
        if match is None:
            continue
        number = int(match.group(1))
        if number in found:
            raise ImportError(f"schema steps {found[number]} and {module.name} share a number")
        found[number] = module.name
    if sorted(found) != list(range(1, len(found) + 1)):
        raise ImportError(f"schema steps must be numbered 1 to N without a gap: {sorted(found)}")
    steps = []
    for number in sorted(found):
        step = importlib.import_module(f"{__name__}.{found[number]}").STEP
        if not isinstance(step, Step):
            raise ImportError(f"{found[number]}.STEP is not a Step")
        steps.append(step)
    return tuple(steps)


# Every step, version N at index N - 1.
HISTORY: tuple[Step, ...] = _load()
# The schema version this code writes.
LATEST = len(HISTORY)


def statements(engine: Engine, upto: int = LATEST) -> tuple[tuple[str, ...], ...]:
    """The statements of versions 1 to `upto` on `engine`, one tuple per version."""
    if not 0 <= upto <= LATEST:
        raise ValueError(f"no schema version {upto}: this code has 0 to {LATEST}")
    return tuple(step.sql(engine) for step in HISTORY[:upto])
