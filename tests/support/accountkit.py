"""Helpers of the account tests: contract-driven shape checks, seeding, raw reads."""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass
from typing import Any

from accounts import apikeys
from contract.resources import BY_NAME, Field, Resource
from store import AccountStore, Session, accounts
from store.base import NewCommission, format_timestamp

DATE_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def check_resource(value: Any, resource: Resource, where: str = "") -> None:
    """`value` has exactly the resource's members, in spec order, each of its type: a
    member omitted when empty may be absent, and is not empty when present; the details
    (`include`) all absent or present."""
    where = where or resource.name
    assert isinstance(value, dict), f"{where}: not an object"
    omitted = {f.name for f in resource.fields if f.omitted_when_empty and f.name not in value}
    wanted = [name for name in resource.names if name not in omitted]
    assert list(value) in (wanted, [m for m in wanted if m in resource.listed]), (
        f"{where}: members {list(value)}"
    )
    for field in resource.fields:
        if field.name in omitted or field.name not in value:
            continue
        if field.omitted_when_empty:
            assert value[field.name] not in (None, False, []), f"{where}.{field.name}: empty"
        check_field(value[field.name], field, f"{where}.{field.name}")


def check_field(value: Any, field: Field, where: str) -> None:
    if value is None:
        assert field.nullable, f"{where}: null but not nullable"
        return
    if field.type == "string":
        check_scalar(value, "string", where)
        if field.enum:
            assert value in field.enum, f"{where}: {value!r} not in {field.enum}"
        if field.format == "date-time":
            assert DATE_TIME.fullmatch(value), f"{where}: {value!r} is not a UTC timestamp"
        if field.pattern:
            assert re.search(field.pattern, value), f"{where}: {value!r} !~ {field.pattern}"
    elif field.type in {"integer", "number", "boolean"}:
        check_scalar(value, field.type, where)
        if field.minimum is not None:
            assert value >= field.minimum, where
        if field.maximum is not None:
            assert value <= field.maximum, where
    elif field.type == "array":
        assert isinstance(value, list), f"{where}: not an array"
        for index, item in enumerate(value):
            if field.items in BY_NAME:
                check_resource(item, BY_NAME[field.items], f"{where}[{index}]")
            else:
                check_scalar(item, field.items or "string", f"{where}[{index}]")
                if field.enum:
                    assert item in field.enum, f"{where}[{index}]: {item!r}"
    elif field.type == "object" and field.any_of is not None:
        shapes = [BY_NAME[name] for name in field.any_of]
        assert any(list(value) == list(r.names) for r in shapes), f"{where}: members {list(value)}"
        check_resource(value, next(r for r in shapes if list(value) == list(r.names)), where)
    elif field.type == "object":
        assert field.ref is not None
        check_resource(value, BY_NAME[field.ref], where)
    else:  # pragma: no cover - a new type in the contract needs a check here
        raise AssertionError(f"{where}: unknown type {field.type}")


def check_scalar(value: Any, kind: str, where: str) -> None:
    expected = {
        "string": lambda x: isinstance(x, str),
        "integer": lambda x: type(x) is int,
        "number": lambda x: type(x) in (int, float),
        "boolean": lambda x: type(x) is bool,
    }[kind]
    assert expected(value), f"{where}: {value!r} is not a {kind}"


async def fetch_rows(s: Session, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """An operation: the rows of one statement (`?` placeholders), as tuples."""
    return [tuple(r) for r in await s.fetch(sql, *params)]


async def execute_sql(s: Session, sql: str, *params: Any) -> int:
    """An operation: one statement, the number of rows it touched."""
    return await s.execute(sql, *params)


async def sleep_in(s: Session, seconds: float) -> None:
    """An operation that holds its connection for `seconds` without a statement (a long
    lock or a slow disk, as its caller sees it)."""
    time.sleep(seconds)  # noqa: ASYNC251 - runs in a store thread (PostgreSQL: blocks on purpose)


async def read_all(store: AccountStore, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run one statement (`?` placeholders) on a read connection of either store."""
    return await store.read(fetch_rows, sql, *params)


@dataclass(frozen=True)
class Seeded:
    uid: str
    key: str
    key_id: str
    prefix: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


async def new_account(
    store: AccountStore,
    *,
    plan: str = "pro",
    email: str | None = "pub@example.com",
    label: str = "tests",
) -> Seeded:
    uid = await store.write(accounts.create, email, plan)
    return await new_key(store, uid, label=label)


async def new_key(store: AccountStore, uid: str, *, label: str = "tests") -> Seeded:
    issued = apikeys.generate_key()
    view = await store.write(
        accounts.create_key, uid, issued.key_hash, issued.prefix, label, ("read",)
    )
    return Seeded(uid=uid, key=issued.key, key_id=view.id, prefix=issued.prefix)


class StepClock:
    """A store's clock that moves only when a test moves it (from 2026-03-01 12:00 UTC)."""

    def __init__(self, start: dt.datetime = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)) -> None:
        self.moment = start

    def __call__(self) -> dt.datetime:
        return self.moment

    def now(self) -> str:
        """The moment as the store writes it."""
        return format_timestamp(self.moment)

    def advance(self, seconds: float) -> str:
        """Move on by `seconds`; the new moment as the store writes it."""
        self.moment += dt.timedelta(seconds=seconds)
        return self.now()


def new_commission(external_id: str, **changes: str | None) -> NewCommission:
    """A pending EUR commission of 4.26 on a sale of 85.20, transacted 2026-01-03, with
    `changes` (any other field of contract.commission.FIELDS but external_id and
    transacted_at)."""
    values: dict[str, str | None] = {
        "status": "pending",
        "raw_status": "pending",
        "commission_amount": "4.26",
        "currency": "EUR",
        "sale_amount": "85.20",
        "sub_id": "a",
        "program_name": None,
    }
    values.update(changes)
    return NewCommission(
        external_id=external_id,
        transacted_at="2026-01-03T10:12:00Z",
        **{
            **values,
            "status": values["status"] or "unknown",
            "commission_amount": values["commission_amount"] or "0",
            "currency": values["currency"] or "EUR",
        },
    )
