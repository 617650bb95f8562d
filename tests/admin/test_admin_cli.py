"""The admin CLI (`python -m admin`) and the demo seeder."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg
import orjson
import pytest
from support.adminrun import run_admin
from support.slowcommit import COMMITTING, slow_commits

from accounts import apikeys
from accounts.demo import DEMO_UID, seed_demo
from admin import cli as admin
from admin.cli import build_parser, main
from edge.config import Config
from store import accounts, commissions, open_store
from store.base import CommissionQuery
from sync.connectors import CONNECTORS

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


# The commands' behaviour is tested in process (run_admin); a test about the process itself
# (signals, a real process's exit status or stdin) runs `python -m admin` and is marked `process`.
run_cli = run_admin


def run_process(
    env: dict[str, str], *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "admin", *args],
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


def export_csv(path: Path, rows: int, status: str = "pending") -> Path:
    """A CSV export of `rows` commissions E0, E1, ... (big ones take seconds to write)."""
    lines = ["externalId,status,commissionAmount,currency,transactedAt"]
    lines += [f"E{i},{status},{i % 997}.50,EUR,2026-01-01T10:00:00Z" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


async def stored_statuses(database: str) -> dict[str, int]:
    """How many commissions the database holds per status, read apart from any store."""
    sql = "SELECT status, count(*) FROM commissions GROUP BY status"
    if database.startswith("postgresql://"):
        conn = await asyncpg.connect(database)
        try:
            return {status: count for status, count in await conn.fetch(sql)}
        finally:
            await conn.close()
    with contextlib.closing(sqlite3.connect(database)) as conn:
        return dict(conn.execute(sql).fetchall())


@contextlib.asynccontextmanager
async def started_cli(env: dict[str, str], *args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """The CLI running in the background (killed if still running when the block ends:
    a test that fails must not leave it holding locks)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "admin",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, **env},
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.communicate()


def ready_for_signals(pid: int, opened: tuple[str, ...]) -> bool | None:
    """Whether the process catches SIGTERM (Python catches SIGINT from the start, SIGTERM only
    once the CLI installs its handler for both) and holds `opened` open; None without /proc."""
    proc = Path(f"/proc/{pid}")
    if not proc.is_dir():
        return None
    try:
        status = (proc / "status").read_text().splitlines()
        caught = int(next(line for line in status if line.startswith("SigCgt:")).split()[1], 16)
        held = {os.path.realpath(fd) for fd in (proc / "fd").iterdir()}
    except (OSError, StopIteration):
        return False
    wanted = {os.path.realpath(path) for path in opened}
    return bool(caught & (1 << (signal.SIGTERM - 1))) and wanted <= held


async def handling_stop_signals(process: asyncio.subprocess.Process, *opened: str) -> None:
    """Wait until the CLI is ready for a stop signal, so that one sent next meets the CLI's
    handler, not the interpreter's start-up."""
    for _ in range(600):
        ready = ready_for_signals(process.pid, opened)
        if ready is None:
            pytest.skip("needs /proc to see when the CLI is ready for a signal")
        if ready:
            return
        assert process.returncode is None, "the CLI ended before it was ready"
        await asyncio.sleep(0.05)
    raise AssertionError("the CLI never became ready for a signal")


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    for _ in range(1500):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{what} never happened")


def sqlite_write_locked(path: str) -> bool:
    with contextlib.closing(sqlite3.connect(path, timeout=0, isolation_level=None)) as conn:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return True
        conn.execute("ROLLBACK")
        return False


@contextlib.asynccontextmanager
async def import_held_in_its_write(database: str) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """Keeps the next import of E0.. inside its write transaction (for as long as the
    block runs); `await inside()` returns once it is there."""
    if database.startswith("postgresql://"):
        # A row the import updates, locked: the import waits in its transaction.
        locker, watcher = await asyncpg.connect(database), await asyncpg.connect(database)
        try:
            async with locker.transaction():
                await locker.execute(
                    "SELECT 1 FROM commissions WHERE external_id = 'E50' FOR UPDATE"
                )

                async def blocked() -> bool:
                    # (Not asked in the locker's transaction: it would see one snapshot.)
                    return bool(
                        await watcher.fetchval(
                            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                            "'Lock' AND query LIKE '%INSERT INTO commissions%'"
                        )
                    )

                yield lambda: until(blocked, "the import waiting on the locked row")
        finally:
            await locker.close()
            await watcher.close()
        return
    # SQLite has no row locks: each new row costs the import a square of the table (it
    # would take hours), and the test sees it at work by its write lock, held for seconds
    # on end (opening the store holds it for milliseconds).
    with contextlib.closing(sqlite3.connect(database)) as conn:
        conn.execute(
            "CREATE TRIGGER slow_insert AFTER INSERT ON commissions "
            "BEGIN SELECT count(*) FROM commissions a, commissions b; END"
        )
        conn.commit()

    async def writing() -> bool:
        for _ in range(10):
            if not sqlite_write_locked(database):
                return False
            await asyncio.sleep(0.02)
        return True

    yield lambda: until(writing, "the import holding the write lock")


def new_publisher(env: dict[str, str], *networks: str) -> str:
    """A new pro account, through the CLI, with `networks` connected (imports need them)."""
    created = run_cli(env, "account", "create", "--plan", "pro")
    assert created.returncode == 0, created.stderr
    uid = created.stdout.decode().strip()
    for network in networks:
        connected = run_cli(
            env, "network", "connect", "--account", uid, "--network", network,
            "--currency", "EUR", "--credentials-file", "-", stdin=credentials_for(network),
        )  # fmt: skip
        assert connected.returncode == 0, connected.stderr
    return uid


def import_args(uid: str, export: Path) -> list[str]:
    return ["commissions", "import", "--account", uid, "--network", "awin", str(export)]


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


def credentials_for(network: str) -> bytes:
    """Credentials with every field the network's connector requires (any text will do)."""
    connector = CONNECTORS.get(network)
    fields = connector.spec.required_credentials if connector else ("token",)
    return json.dumps({name: f"{name}-value" for name in fields}).encode()


@pytest.mark.parametrize(
    ("network", "stdin", "extra", "message"),
    [
        ("awin", b'{"accessToken": "secret-token-1"}', (), "awin credentials lack publisherId"),
        ("awin", b'{"accessToken": " ", "publisherId": 7}', (), "lack accessToken, publisherId"),
        (
            "impact",
            b"AccountSid=x",
            (),
            "impact credentials must be a JSON object with: accountSid",
        ),
        ("effiliation", b'["apiKey"]', (), "effiliation credentials must be a JSON object"),
        ("cj", None, (), "cj records carry no currency: give the account's with --currency"),
        ("cj", None, ("--currency", "usd"), "must be an ISO 4217 code"),
    ],
)
def test_network_connect_requires_what_the_connector_needs(
    env, capsys, network, stdin, extra, message
):
    uid = new_publisher(env)
    done = run_cli(
        env, "network", "connect", "--account", uid, "--network", network, *extra,
        "--credentials-file", "-", stdin=stdin or credentials_for(network),
    )  # fmt: skip
    assert done.returncode != 0 and message in done.stderr.decode(), done.stderr
    assert b"secret-token-1" not in done.stderr + done.stdout


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
        stdin=b'{"accessToken": "PLAINTEXT-TOKEN-123", "publisherId": "4242"}',
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
    status, out, _ = cli(capsys, "account", "show", "--account", uid, "--json")
    shown = json.loads(out)
    assert shown["networks"][0]["status"] == "ok" and "PLAINTEXT" not in out


def test_account_commands(env, capsys):
    _, uid, _ = cli(capsys, "account", "create", "--plan", "free")
    uid = uid.strip()
    assert cli(capsys, "account", "set-plan", "--account", uid, "--plan", "pro")[0] == 0
    assert cli(capsys, "account", "suspend", "--account", uid)[0] == 0
    status, out, _ = cli(capsys, "--json", "capability", "enable", "--account", uid, "monetisation")
    assert status == 0 and json.loads(out)["enabled"] is True and json.loads(out)["enabled_at"]
    assert cli(capsys, "account", "unsuspend", "--account", uid)[0] == 0
    status, out, _ = cli(capsys, "account", "show", "--account", uid, "--json")
    shown = json.loads(out)
    assert (shown["plan"], shown["suspended"]) == ("pro", False)
    assert shown["capabilities"]["monetisation"]["enabled"] is True
    status, _, err = cli(capsys, "account", "set-plan", "--account", "acc_nobody", "--plan", "pro")
    assert status == 1 and "no account" in err
    status, _, err = cli(capsys, "key", "revoke", "afk_unknown1")
    assert status == 1 and "no key" in err


def test_import_rejects_a_bad_file_whole_then_imports_and_reimports(env, capsys, tmp_path):
    uid = new_publisher(env, "effiliation", "impact")
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


@pytest.mark.slow
def test_an_import_slower_than_the_store_timeout_is_done_and_reported_done(
    env, capsys, tmp_path, monkeypatch, database
):
    # The store timeout bounds the edge's reads. An import of millions of rows takes minutes:
    # cut at a timeout it could be reported failed, yet committed. The admin CLI's writes
    # have no deadline (Ctrl-C stops them), so an import slower than any timeout is done, and
    # the report says so.
    uid = new_publisher(env, "awin")
    monkeypatch.setattr(admin, "ADMIN_TIMEOUT", 0.2)
    monkeypatch.setenv("EDGE_STORE_TIMEOUT", "0.2")
    export = export_csv(tmp_path / "big.csv", 40_000)
    status, out, err = cli(capsys, *import_args(uid.strip(), export), "--json")
    assert (status, err) == (0, "")
    assert json.loads(out)["inserted"] == 40_000
    assert asyncio.run(stored_statuses(database)) == {"pending": 40_000}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.process
async def test_a_stop_signal_mid_import_rolls_it_back_and_says_so(env, database, tmp_path, signum):
    # Ctrl-C (or a supervisor's SIGTERM) while the rows are being written: the transaction
    # is rolled back before the CLI says so: no traceback, and no import committing after
    # the CLI has gone.
    uid = new_publisher(env, "awin")
    first = export_csv(tmp_path / "first.csv", 100)
    assert run_cli(env, *import_args(uid, first)).returncode == 0
    second = export_csv(tmp_path / "second.csv", 5_000, status="approved")  # 100 updates
    async with (
        import_held_in_its_write(database) as inside,
        started_cli(env, *import_args(uid, second)) as cli_,
    ):
        await inside()
        cli_.send_signal(signum)
        out, err = await asyncio.wait_for(cli_.communicate(), 60)
    assert cli_.returncode == 128 + signum, err
    assert err.decode().endswith("affdir-admin: interrupted; nothing imported\n"), err
    assert out == b""
    assert await stored_statuses(database) == {"pending": 100}


@pytest.mark.process
async def test_a_stop_signal_once_the_commit_is_under_way_reports_the_import_done(pg_url, tmp_path):
    # Too late to roll back: the CLI waits for the server's word, then reports the import
    # done, as it is, and says the signal came too late.
    env = {"EDGE_DATABASE": pg_url, "EDGE_SECRET_KEY": SECRET}
    uid = new_publisher(env, "awin")
    export = export_csv(tmp_path / "export.csv", 3)
    conn = await asyncpg.connect(pg_url)
    try:
        async with (
            slow_commits(conn, seconds=0.5),
            started_cli(env, *import_args(uid, export), "--json") as cli_,
        ):

            async def committing() -> bool:
                return bool(await conn.fetchval(COMMITTING))

            await until(committing, "the import's COMMIT")
            cli_.send_signal(signal.SIGINT)
            out, err = await asyncio.wait_for(cli_.communicate(), 60)
    finally:
        await conn.close()
    assert cli_.returncode == 0, err
    assert json.loads(out)["inserted"] == 3
    assert err.decode().endswith("affdir-admin: the SIGINT came too late to stop it: done\n")
    assert await stored_statuses(pg_url) == {"pending": 3}


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
        # A new run's key replaces the one before: demo keys do not pile up.
        assert await store.read(accounts.lookup_key, apikeys.key_hash(first)) is None
        record = await store.read(accounts.lookup_key, apikeys.key_hash(second))
        assert record is not None and record.account.uid == DEMO_UID
        account = record.account
        assert {n.status for n in account.networks} == {"ok", "partial", "auth_failed", "never"}
        rows = await store.read(commissions.page, CommissionQuery(DEMO_UID, 1000))
        assert len(rows) == 400
        assert len({r.currency for r in rows}) >= 4
        assert any(r.sale_amount is None for r in rows) and any(r.clicked_at is None for r in rows)
        assert any(r.status == "unknown" for r in rows) or len(rows) < 100
        assert {r.status for r in rows} >= {"pending", "approved", "declined", "paid"}
    finally:
        await store.close()


def test_seed_demo_takes_a_config(tmp_path):
    config = Config(database=f"sqlite:///{tmp_path}/q.sqlite3", secret_key=SECRET)
    assert apikeys.is_well_formed(seed_demo(config.database, config.resolved_secret(), n=30))
    assert (tmp_path / "q.sqlite3").exists()


def test_demo_command_prints_a_key(env, capsys):
    status, out, _ = cli(capsys, "demo", "--commissions", "50", "--json")
    assert status == 0
    result = orjson.loads(out)
    assert result["uid"] == DEMO_UID and apikeys.is_well_formed(result["key"])


def test_the_admin_never_makes_a_secret_of_its_own(env, tmp_path):
    # A typo in the secret file's path, or another working directory, would make a new
    # secret and encrypt the credentials with it: the edge could not open them.
    uid = new_publisher(env, "awin")
    typo = tmp_path / "secrte.key"
    env = {**env, "EDGE_SECRET_KEY": "", "EDGE_SECRET_FILE": str(typo)}
    done = run_cli(
        env, "network", "connect", "--account", uid, "--network", "cj", "--currency", "USD",
        "--credentials-file", "-", stdin=credentials_for("cj"),
    )  # fmt: skip
    assert done.returncode == 1
    assert f"no secret at {typo}: use the edge's" in done.stderr.decode()
    assert not typo.exists()
    assert run_cli(env, "demo").returncode == 1 and not typo.exists()


def test_an_import_for_a_network_not_connected_is_refused(env, tmp_path, database):
    uid = new_publisher(env, "awin")
    export = export_csv(tmp_path / "export.csv", 3)
    done = run_cli(env, "commissions", "import", "--account", uid, "--network", "awn", str(export))
    assert done.returncode == 1
    assert f"{uid} has not connected awn: connect it first" in done.stderr.decode()
    assert asyncio.run(stored_statuses(database)) == {}
    assert run_cli(env, *import_args(uid, export)).returncode == 0


def new_key(env: dict[str, str], uid: str, label: str = "k") -> dict[str, str]:
    created = run_cli(env, "key", "create", "--account", uid, "--label", label, "--json")
    return json.loads(created.stdout)


def test_a_key_is_revoked_by_its_id_or_its_prefix(env):
    uid = new_publisher(env)
    by_id, by_prefix = new_key(env, uid), new_key(env, uid)
    for given in (by_id["id"], by_prefix["prefix"]):
        done = run_cli(env, "key", "revoke", given)
        assert done.returncode == 0, done.stderr
        assert "revoked at" in done.stdout.decode()
    listed = json.loads(run_cli(env, "key", "list", "--account", uid, "--json").stdout)
    states = {k["id"]: k["state"] for k in listed["keys"]}
    assert states == {by_id["id"]: "revoked", by_prefix["id"]: "revoked"}


@pytest.mark.parametrize(
    "shape",
    ["{key}", "Bearer {key}", " {key}\n", "{bare}", "{key},{other}"],
    ids=["whole", "bearer", "spaces", "no-marker", "two"],
)
def test_a_whole_key_on_the_command_line_is_refused_and_never_echoed(env, shape):
    uid = new_publisher(env)
    key = new_key(env, uid)["key"]
    given = shape.format(key=key, bare=key.removeprefix("afk_"), other=apikeys.generate_key().key)
    done = run_cli(env, "key", "revoke", given)
    assert done.returncode == 1
    err = done.stderr.decode()
    assert "a whole key is refused on the command line" in err
    assert "with: affdir-admin key revoke -" in err and "id or prefix" in err
    assert key[: apikeys.PREFIX_LENGTH] not in err + done.stdout.decode()
    # Still active: nothing was looked up or revoked.
    listed = json.loads(run_cli(env, "key", "list", "--account", uid, "--json").stdout)
    assert [k["state"] for k in listed["keys"]] == ["active"]


@pytest.mark.process
def test_a_whole_key_from_stdin_revokes_itself_and_is_never_printed(env):
    uid = new_publisher(env)
    key = new_key(env, uid, "leaked")["key"]
    # Through a real process's stdin (a pipe) once; the refusals below in process.
    revoked = run_process(env, "key", "revoke", "-", stdin=f"Bearer {key}\n".encode())
    assert revoked.returncode == 0, revoked.stderr
    assert key not in (revoked.stdout + revoked.stderr).decode()
    assert "revoked at" in revoked.stdout.decode()
    # Again, and an unknown key: refused by prefix, the key itself never shown.
    for attempt in (key, apikeys.generate_key().key):
        again = run_cli(env, "key", "revoke", "-", stdin=attempt.encode())
        assert again.returncode == 1
        err = again.stderr.decode()
        assert attempt not in err and f"no active key is {attempt[:12]}..." in err
    # Longer than a prefix, not a key: not echoed past what a prefix shows.
    for partial in (key[:-3], key.removeprefix("afk_")[:-3]):
        for done in (
            run_cli(env, "key", "revoke", partial),
            run_cli(env, "key", "revoke", "-", stdin=partial.encode()),
        ):
            assert done.returncode == 1 and "is not a key id (key_...)" in done.stderr.decode()
            assert key[12:16] not in done.stderr.decode()  # past the prefix: the secret part
    two = run_cli(env, "key", "revoke", "-", stdin=f"{key},{apikeys.generate_key().key}".encode())
    assert two.returncode == 1 and "give one key to revoke, not several" in two.stderr.decode()
    big = run_cli(env, "key", "revoke", "-", stdin=b"x" * 5000)
    assert big.returncode == 1 and "more than 4096 bytes" in big.stderr.decode()


@pytest.mark.parametrize(
    "argv",
    [
        ["--secret-key", SECRET, "account", "show", "--account", "acc_x"],
        ["account", "show", "--account", "acc_x", "--secret-key=" + SECRET],
        ["--secret-key", "account", "show", "--account", "acc_x"],
    ],
    ids=["before", "after-with-equals", "bare"],
)
def test_a_secret_on_the_admin_command_line_is_refused(env, argv):
    done = run_cli(env, *argv)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert SECRET not in err
    assert "--secret-key takes no value on the command line" in err
    for alternative in ("EDGE_SECRET_KEY", "--secret-file", "--secret-stdin"):
        assert alternative in err


@pytest.mark.process
def test_a_database_url_with_a_password_on_the_command_line_is_refused(env):
    # A real process: argparse's usage error is the process's exit status 2.
    done = run_process(
        env, "account", "show", "--account", "acc_x", "--database", "postgresql://u:pw-x@h/db"
    )
    assert done.returncode == 2
    err = done.stderr.decode()
    assert "pw-x" not in err and "--database: a password in the URL shows in `ps`" in err
    assert "EDGE_DATABASE" in err and "PGPASSWORD" in err


@pytest.mark.process
def test_the_secret_can_come_from_stdin(env):
    # The stdin of a real process (a pipe), as an operator's `... | affdir-admin` gives it.
    uid = new_publisher(env, "awin")
    stdin_env = {**env, "EDGE_SECRET_KEY": ""}
    done = run_process(
        stdin_env, "--secret-stdin", "demo", "--commissions", "5", stdin=f"{SECRET}\n".encode()
    )
    assert done.returncode == 0, done.stderr
    short = run_process(stdin_env, "--secret-stdin", "demo", stdin=b"short\n")
    assert short.returncode == 1
    assert "--secret-stdin: the secret must be at least 32 characters" in short.stderr.decode()
    both = run_process(
        stdin_env, "--secret-stdin", "network", "connect", "--account", uid, "--network", "cj",
        "--currency", "USD", "--credentials-file", "-", stdin=credentials_for("cj"),
    )  # fmt: skip
    assert both.returncode == 1 and "both want standard input" in both.stderr.decode()


@pytest.mark.process
@pytest.mark.sqlite_only
async def test_a_second_ctrl_c_quits_at_once_and_says_the_outcome_is_unknown(env, tmp_path):
    # The first SIGINT cannot cut the read of an export short (it takes effect when the read
    # ends); the second quits now. A KeyboardInterrupt raised into asyncio.run would wait for
    # the read and print a traceback. The export is a pipe this test holds open, so the
    # import is still reading when each signal comes, however fast or loaded the machine.
    uid = new_publisher(env, "awin")
    export = tmp_path / "export.csv"
    os.mkfifo(export)
    rows = export_csv(tmp_path / "rows.csv", 20_000).read_bytes()
    async with started_cli(env, *import_args(uid, export)) as cli_:
        await handling_stop_signals(cli_)
        # Opened once the CLI opens it; written through once the CLI has read all but a
        # pipe's buffer of it: the import is inside its read, waiting for more.
        pipe = await asyncio.wait_for(asyncio.to_thread(open, export, "wb", buffering=0), 60)
        try:
            await asyncio.wait_for(asyncio.to_thread(pipe.write, rows), 60)
            cli_.send_signal(signal.SIGINT)
            said = await asyncio.wait_for(cli_.stderr.readline(), 60)
            assert b"SIGINT: stopping" in said, said
            assert cli_.returncode is None
            cli_.send_signal(signal.SIGINT)
            out, err = await asyncio.wait_for(cli_.communicate(), 60)
        finally:
            pipe.close()
    assert cli_.returncode == 130, err
    assert b"SIGINT again: quitting; the import may or may not have been applied" in err
    assert b"Traceback" not in err and out == b""


async def seed_key_free(database: str) -> None:
    """Make the database exist (migrated) before another connection locks it."""
    store = await open_store(database, writable=True, readers=1)
    await store.close()


@pytest.mark.process
@pytest.mark.sqlite_only
async def test_ctrl_c_stops_a_command_waiting_for_the_write_lock(env, database):
    # SQLite's own wait for a lock sleeps through an interrupt: left to it, the first Ctrl-C
    # would take effect only once the lock came free, up to a minute later.
    await seed_key_free(database)
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        async with started_cli(env, "account", "create", "--plan", "free") as cli_:
            await handling_stop_signals(cli_, database)
            await asyncio.sleep(0.3)  # waiting for the lock
            started = time.monotonic()
            cli_.send_signal(signal.SIGINT)
            out, err = await asyncio.wait_for(cli_.communicate(), 20)
            elapsed = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # Seconds, against the minute of SQLite's own wait for the lock.
    assert cli_.returncode == 130 and elapsed < 10, (elapsed, err)
    assert err.decode().endswith("interrupted; nothing changed\n"), err
    assert out == b""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        assert conn.execute("SELECT count(*) FROM accounts").fetchone() == (0,)
