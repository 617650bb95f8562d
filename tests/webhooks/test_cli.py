"""`affdir-webhooks` refuses what it cannot use before it starts: exit status 2 and a message
that names the flag, never quoting a secret."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from webhooks.cli import parse_args

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--secret-key", "s3cr3t-value"], "--secret-key takes no value on the command line"),
        (["--lease-seconds", "5", "--timeout-seconds", "10"], "must be longer than --timeout"),
        (["--per-endpoint", "0"], "must be from 1 to 1000"),
        (["--max-endpoints", "many"], "must be a whole number"),
        (["--timeout-seconds", "inf"], "must be more than 0 and at most 86400 seconds"),
        (["--timeout-seconds", "nan"], "must be more than 0 and at most 86400 seconds"),
        (["--poll-seconds", "-1"], "must be more than 0 and at most 86400 seconds"),
        (["--database", "postgresql://u:pw@db/affdir"], "set EDGE_DATABASE instead"),
    ],
)
def test_bad_flags_are_refused(capsys, argv, message):
    with pytest.raises(SystemExit) as exited:
        parse_args(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "s3cr3t-value" not in err and "pw@" not in err


def test_defaults():
    args = parse_args([])
    assert (args.per_endpoint, args.max_endpoints, args.timeout_seconds) == (4, 64, 10.0)
    assert (args.lease_seconds, args.poll_seconds, args.allow_loopback) == (60.0, 1.0, False)


@pytest.mark.process
def test_without_the_edge_secret_it_does_not_start(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    done = subprocess.run(
        [sys.executable, "-m", "webhooks", "--database", str(tmp_path / "s.sqlite3"),
         "--secret-file", str(tmp_path / "missing.key")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "no secret at" in done.stderr and not (tmp_path / "missing.key").exists()
