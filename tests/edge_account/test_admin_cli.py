"""The admin CLI (`python -m edge.admin`) and the demo seeder."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from edge import apikeys
from edge.admin import build_parser, main
from edge.config import Config
from edge.demo import DEMO_UID, seed_demo
from edge.store import open_store
from edge.store.base import CommissionQuery

ROOT = Path(__file__).resolve().parents[2]
SECRET = "cli-secret-" + "y" * 40


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: str) -> dict[str, str]:
    values = {
        "EDGE_DATABASE": database,
        "EDGE_SECRET_KEY": SECRET,
        "EDGE_SECRET_FILE": str(tmp_path / "secret.key"),
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def run_cli(
    env: dict[str, str], *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "edge.admin", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=60,
    )


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_keys_are_printed_once_and_listed_without_the_key(env, stored_bytes):
    created = run_cli(
        env, "account", "create", "--email", "a@example.com", "--plan", "free", "--json"
    )
    assert created.returncode == 0, created.stderr
    uid = json.loads(created.stdout)["uid"]
    issued = run_cli(env, "--json", "key", "create", "--account", uid, "--label", "ci")
    assert issued.returncode == 0, issued.stderr
    key = json.loads(issued.stdout)
    assert apikeys.is_well_formed(key["key"]) and key["prefix"] == key["key"][:12]
    assert key["scopes"] == ["read"] and key["state"] == "active"
    listed = run_cli(env, "key", "list", "--account", uid, "--json")
    assert listed.returncode == 0
    assert (
        key["key"] not in listed.stdout.decode() and key["key"][12:] not in listed.stdout.decode()
    )
    (entry,) = json.loads(listed.stdout)["keys"]
    assert (entry["id"], entry["prefix"], entry["label"]) == (key["id"], key["prefix"], "ci")
    text = run_cli(env, "key", "list", "--account", uid)
    assert key["prefix"] in text.stdout.decode() and "active" in text.stdout.decode()
    raw = stored_bytes()
    assert key["key"].encode() not in raw


def test_credentials_come_from_stdin_and_are_stored_encrypted(env, capsys, tmp_path, stored_bytes):
    status, uid, _ = cli(capsys, "account", "create", "--plan", "pro")
    uid = uid.strip()
    done = run_cli(
        env,
        "network",
        "connect",
        "--account",
        uid,
        "--network",
        "awin",
        "--credentials-file",
        "-",
        stdin=b'{"token": "PLAINTEXT-TOKEN-123"}',
    )
    assert done.returncode == 0, done.stderr
    assert b"PLAINTEXT-TOKEN-123" not in done.stdout + done.stderr
    raw = stored_bytes()
    assert b"PLAINTEXT-TOKEN-123" not in raw
    empty = tmp_path / "empty"
    empty.write_text("  \n")
    status, _, err = cli(
        capsys,
        "network",
        "connect",
        "--account",
        uid,
        "--network",
        "cj",
        "--credentials-file",
        str(empty),
    )
    assert status == 1 and "empty" in err
    status, _, err = cli(
        capsys,
        "network",
        "record-sync",
        "--account",
        uid,
        "--network",
        "awin",
        "--status",
        "ok",
        "--accounts",
        "1",
        "--programs",
        "2",
        "--transactions",
        "3",
        "--json",
    )
    assert status == 0
    status, out, _ = cli(capsys, "account", "show", uid, "--json")
    shown = json.loads(out)
    assert shown["networks"][0]["status"] == "ok" and "PLAINTEXT" not in out


def test_account_commands(env, capsys):
    _, uid, _ = cli(capsys, "account", "create", "--plan", "free")
    uid = uid.strip()
    assert cli(capsys, "account", "set-plan", uid, "pro")[0] == 0
    assert cli(capsys, "account", "suspend", uid)[0] == 0
    status, out, _ = cli(capsys, "--json", "capability", "enable", "--account", uid, "monetisation")
    assert status == 0 and json.loads(out)["enabled"] is True and json.loads(out)["enabled_at"]
    assert cli(capsys, "account", "unsuspend", uid)[0] == 0
    status, out, _ = cli(capsys, "account", "show", uid, "--json")
    shown = json.loads(out)
    assert (shown["plan"], shown["suspended"]) == ("pro", False)
    assert shown["capabilities"]["monetisation"]["enabled"] is True
    status, _, err = cli(capsys, "account", "set-plan", "acc_nobody", "pro")
    assert status == 1 and "no account" in err
    status, _, err = cli(capsys, "key", "revoke", "afk_unknown1")
    assert status == 1 and "no key" in err


def test_import_rejects_a_bad_file_whole_then_imports_and_reimports(env, capsys, tmp_path):
    _, uid, _ = cli(capsys, "account", "create", "--plan", "pro")
    uid = uid.strip()
    good = tmp_path / "export.csv"
    good.write_text(
        "externalId,status,commissionAmount,currency,transactedAt\n"
        "A,En attente,1.50,EUR,2026-01-01T10:00:00Z\n"
        "B,Validée,2.00,GBP,2026-01-02T10:00:00+01:00\n"
    )
    bad = tmp_path / "bad.csv"
    bad.write_text(good.read_text() + "C,Validée,2.0.0,GBP,2026-01-02\nD,x,1,EUR,whenever\n")
    failed = run_cli(
        env, "commissions", "import", "--account", uid, "--network", "effiliation", str(bad)
    )
    assert failed.returncode == 1
    err = failed.stderr.decode()
    assert f"{bad}:4: commissionAmount:" in err and f"{bad}:5: transactedAt:" in err
    assert "nothing imported" in err

    status, out, _ = cli(
        capsys,
        "commissions",
        "import",
        "--account",
        uid,
        "--network",
        "effiliation",
        str(good),
        "--json",
    )
    assert status == 0 and json.loads(out) == {
        "file": str(good),
        "rows": 2,
        "inserted": 2,
        "updated": 0,
        "unchanged": 0,
    }
    good.write_text(good.read_text().replace("En attente", "Payée"))
    status, out, _ = cli(
        capsys,
        "commissions",
        "import",
        "--account",
        uid,
        "--network",
        "effiliation",
        str(good),
        "--json",
    )
    assert json.loads(out)["updated"] == 1 and json.loads(out)["unchanged"] == 1

    jsonl = tmp_path / "export.ndjson"
    jsonl.write_text(
        '{"externalId": "J", "commissionAmount": 0.10, "currency": "usd", "transactedAt": "2026-02-03 04:05:06", "status": "approved"}\n'
    )
    status, _, err = cli(
        capsys, "commissions", "import", "--account", uid, "--network", "impact", str(jsonl)
    )
    assert status == 1 and "no UTC offset" in err
    status, out, _ = cli(
        capsys,
        "commissions",
        "import",
        "--account",
        uid,
        "--network",
        "impact",
        "--timezone",
        "America/New_York",
        str(jsonl),
    )
    assert status == 0, out
    unknown = tmp_path / "export.txt"
    unknown.write_text("x")
    status, _, err = cli(
        capsys, "commissions", "import", "--account", uid, "--network", "impact", str(unknown)
    )
    assert status == 1 and "--format" in err


def test_every_command_has_help(capsys):
    parser = build_parser()
    commands = [
        ["account", "create"],
        ["account", "set-plan"],
        ["account", "suspend"],
        ["account", "unsuspend"],
        ["capability", "enable"],
        ["capability", "disable"],
        ["key", "create"],
        ["key", "list"],
        ["key", "revoke"],
        ["network", "connect"],
        ["network", "record-sync"],
        ["commissions", "import"],
        ["demo"],
    ]
    for words in commands:
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args([*words, "--help"])
        assert exit_.value.code == 0
        assert "usage:" in capsys.readouterr().out


async def test_demo_seeding_is_repeatable(database: str):
    first = await asyncio.to_thread(seed_demo, database, SECRET.encode(), 400)
    second = await asyncio.to_thread(seed_demo, database, SECRET.encode(), 400)
    assert first != second and apikeys.is_well_formed(first)
    store = await open_store(database)
    try:
        for key in (first, second):
            record = await store.lookup_key(apikeys.key_hash(key))
            assert record is not None and record.account.uid == DEMO_UID
        account = record.account
        assert {n.status for n in account.networks} == {"ok", "partial", "auth_failed", "never"}
        rows = await store.list_commissions(CommissionQuery(DEMO_UID, 1000))
        assert len(rows) == 400
        assert len({r.currency for r in rows}) >= 4
        assert any(r.sale_amount is None for r in rows) and any(r.clicked_at is None for r in rows)
        assert any(r.status == "unknown" for r in rows) or len(rows) < 100
        assert {r.status for r in rows} >= {"pending", "approved", "declined", "paid"}
    finally:
        await store.close()


def test_seed_demo_takes_a_config(tmp_path):
    config = Config(database=f"sqlite:///{tmp_path}/q.sqlite3", secret_key=SECRET)
    assert apikeys.is_well_formed(seed_demo(config, n=30))
    assert (tmp_path / "q.sqlite3").exists()


def test_demo_command_prints_a_key(env, capsys):
    status, out, _ = cli(capsys, "demo", "--commissions", "50", "--json")
    assert status == 0
    result = orjson.loads(out)
    assert result["uid"] == DEMO_UID and apikeys.is_well_formed(result["key"])
