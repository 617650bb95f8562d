"""One step of the schema history: its statements, each in SQLite's and PostgreSQL's
spelling side by side, or once where both databases take the same text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# The databases a step is written for (the store's engines).
Engine = Literal["sqlite", "postgres"]
ENGINES: tuple[Engine, ...] = ("sqlite", "postgres")


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a step: its text on each database, None where that database has
    no such statement (a PostgreSQL trigger's function, a SQLite trigger PostgreSQL writes
    as one with the next)."""

    sqlite: str | None
    postgres: str | None

    def on(self, engine: Engine) -> str | None:
        """The statement's text on `engine`, None if it has none there."""
        return self.sqlite if engine == "sqlite" else self.postgres


def both(sql: str) -> Statement:
    """A statement both databases run as written."""
    return Statement(sql, sql)


def each(*, sqlite: str | None = None, postgres: str | None = None) -> Statement:
    """A statement spelled for each database (or for one only)."""
    if sqlite is None and postgres is None:
        raise ValueError("a statement needs the text of at least one database")
    return Statement(sqlite, postgres)


@dataclass(frozen=True, slots=True, init=False)
class Step:
    """One version of the schema: statements applied in order, in one transaction with the
    version's row in `schema_migrations`."""

    statements: tuple[Statement, ...]

    def __init__(self, *statements: Statement) -> None:
        object.__setattr__(self, "statements", statements)

    def sql(self, engine: Engine) -> tuple[str, ...]:
        """The step's statements on `engine`, in order."""
        return tuple(text for s in self.statements if (text := s.on(engine)) is not None)
