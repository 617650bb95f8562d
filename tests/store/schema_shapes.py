"""The logical schema of an account store, read back from the database itself: tables,
columns (logical type, nullability, default), primary and unique keys, foreign keys,
CHECK constraints (by the columns they test) and the indexes a step made, in one shape for
both databases so that a SQLite file and a PostgreSQL database compare with `==`.

Types are mapped between the dialects: SQLite INTEGER / PostgreSQL bigint or integer are
`integer`, a SQLite INTEGER with `CHECK (x IN (0, 1))` and a PostgreSQL boolean are `flag`,
TEXT / text `text`, BLOB / bytea `bytes`. SQLite's `CHECK (typeof(x) = 'integer')` (a guard
against its integers overflowing into REAL) and the 0/1 checks of its flags have no
PostgreSQL counterpart (the types hold them) and are left out of the checks.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

Shape = dict[str, Any]

SQLITE_TYPES = {"INTEGER": "integer", "TEXT": "text", "BLOB": "bytes"}
PG_TYPES = {
    "bigint": "integer",
    "integer": "integer",
    "boolean": "flag",
    "text": "text",
    "bytea": "bytes",
}
IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")


def _checks(create_sql: str) -> list[str]:
    """The expressions of every CHECK in a CREATE TABLE text, parentheses balanced."""
    found = []
    for match in re.finditer(r"CHECK\s*\(", create_sql, re.IGNORECASE):
        depth, start = 1, match.end()
        for i in range(start, len(create_sql)):
            depth += {"(": 1, ")": -1}.get(create_sql[i], 0)
            if depth == 0:
                found.append(create_sql[start:i])
                break
    return found


def _default(value: str | None) -> str | None:
    """A column default in one spelling: PostgreSQL's casts and booleans as SQLite's."""
    if value is None:
        return None
    value = re.sub(r"::[a-z ]+$", "", value)
    return {"false": "0", "true": "1"}.get(value, value)


def sqlite_shape(path: Path) -> Shape:
    """The logical schema of the SQLite file at `path`."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out: Shape = {"tables": {}, "indexes": {}}
        tables = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'"
        ).fetchall()
        for table, create_sql in tables:
            info = conn.execute(f"PRAGMA table_info({table})").fetchall()
            names = {row[1] for row in info}
            flags, checks = set(), []
            for expression in _checks(create_sql):
                flag = re.fullmatch(r"\s*(\w+) IN \(0, 1\)\s*", expression)
                if flag:
                    flags.add(flag.group(1))
                elif "typeof(" not in expression:
                    checks.append(frozenset(set(IDENTIFIER.findall(expression)) & names))
            columns = [
                (
                    name,
                    "flag" if name in flags else SQLITE_TYPES[declared.upper()],
                    bool(notnull or pk),
                    _default(default),
                )
                for _, name, declared, notnull, default, pk in info
            ]
            pk = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
            uniques = {pk}
            for _, index, unique, origin, _ in conn.execute(f"PRAGMA index_list({table})"):
                if unique and origin == "u":
                    uniques.add(tuple(r[2] for r in conn.execute(f"PRAGMA index_info({index})")))
            fks: dict[int, list[Any]] = {}
            for fid, seq, parent, src, dst, _, on_delete, _ in conn.execute(
                f"PRAGMA foreign_key_list({table})"
            ):
                fks.setdefault(fid, [parent, [], [], on_delete])
                fks[fid][1].append((seq, src))
                fks[fid][2].append((seq, dst))
            out["tables"][table] = {
                "columns": columns,
                "primary_key": pk,
                "uniques": uniques,
                "foreign_keys": {
                    (p, tuple(c for _, c in sorted(s)), tuple(c for _, c in sorted(d)), od)
                    for p, s, d, od in fks.values()
                },
                "checks": sorted(sorted(c) for c in checks),
            }
        for name, table, create_sql in conn.execute(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        ):
            keys = [
                f"{col}{' DESC' if desc else ''}"
                for _, _, col, desc, _, key in conn.execute(f"PRAGMA index_xinfo({name})")
                if key
            ]
            unique = create_sql.upper().startswith("CREATE UNIQUE")
            out["indexes"][name] = (table, keys, unique)
        return out
    finally:
        conn.close()


async def pg_shape(conn: Any) -> Shape:
    """The logical schema of the PostgreSQL database of the asyncpg connection `conn`."""
    out: Shape = {"tables": {}, "indexes": {}}
    tables = [
        r[0]
        for r in await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND tablename <> 'schema_migrations'"
        )
    ]
    on_delete = {"c": "CASCADE", "a": "NO ACTION"}
    for table in tables:
        columns = [
            (name, PG_TYPES[data_type], nullable == "NO", _default(default))
            for name, data_type, nullable, default in await conn.fetch(
                "SELECT column_name, data_type, is_nullable, column_default "
                "FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = $1 ORDER BY ordinal_position",
                table,
            )
        ]
        constraints = await conn.fetch(
            """SELECT c.contype::text, c.confdeltype::text, p.relname,
                   ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n
                         ORDER BY k.i),
                   ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                         JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n
                         ORDER BY k.i)
               FROM pg_constraint c LEFT JOIN pg_class p ON p.oid = c.confrelid
               WHERE c.conrelid = $1::regclass""",
            table,
        )
        (pk,) = [tuple(r[3]) for r in constraints if r[0] == "p"]
        out["tables"][table] = {
            "columns": columns,
            "primary_key": pk,
            "uniques": {tuple(r[3]) for r in constraints if r[0] in ("p", "u")},
            "foreign_keys": {
                (r[2], tuple(r[3]), tuple(r[4]), on_delete[r[1]])
                for r in constraints
                if r[0] == "f"
            },
            "checks": sorted(sorted(r[3]) for r in constraints if r[0] == "c"),
        }
    for name, table, unique, definition in await conn.fetch(
        """SELECT i.relname, t.relname, x.indisunique, pg_get_indexdef(x.indexrelid)
           FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
           JOIN pg_class t ON t.oid = x.indrelid
           WHERE t.relnamespace = current_schema()::regnamespace
             AND t.relname <> 'schema_migrations'
             AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)"""
    ):
        keys = re.search(r"\((.*)\)$", definition)
        assert keys is not None, definition
        out["indexes"][name] = (table, [k.strip() for k in keys.group(1).split(",")], unique)
    return out


def differences(expected: Shape, actual: Shape) -> list[str]:
    """What differs between two shapes, one line per table or index (empty: the same)."""
    lines = []
    for table in sorted(set(expected["tables"]) | set(actual["tables"])):
        want, got = expected["tables"].get(table), actual["tables"].get(table)
        if want is None or got is None:
            lines.append(f"table {table}: {'missing' if got is None else 'unexpected'}")
            continue
        lines += [
            f"{table}.{part}: {want[part]} != {got[part]}"
            for part in want
            if want[part] != got[part]
        ]
    for index in sorted(set(expected["indexes"]) | set(actual["indexes"])):
        want, got = expected["indexes"].get(index), actual["indexes"].get(index)
        if want != got:
            lines.append(f"index {index}: {want} != {got}")
    return lines
