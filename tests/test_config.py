"""Configuration: defaults, then EDGE_* variables, then flags; every setting documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.config import SETTINGS, Config, ConfigError, load

DOC = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def test_flags_override_environment_which_overrides_defaults():
    config = load(["--port", "9001"], {"EDGE_PORT": "9000", "EDGE_HOST": "0.0.0.0"})
    assert (config.host, config.port) == ("0.0.0.0", 9001)
    assert load([], {}) == Config()


def test_rate_limits_parse_as_requests_per_window():
    config = load(["--rate-limit-pro", "1200/30"], {"EDGE_RATE_LIMIT_FREE": "10/1"})
    assert config.rate_limit("pro") == (1200, 30)
    assert config.rate_limit("free") == (10, 1)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"EDGE_PORT": "http"}, "--port / EDGE_PORT"),
        ({"EDGE_PORT": "70000"}, "not in 0..65535"),
        ({"EDGE_RATE_LIMIT_FREE": "60"}, "REQUESTS/SECONDS"),
        ({"EDGE_RATE_LIMIT_PRO": "0/60"}, "at least 1 request"),
        ({"EDGE_SERVE_SITE": "maybe"}, "not a boolean"),
        ({"EDGE_RELOAD_INTERVAL": "-1"}, "positive"),
        ({"EDGE_LOG_LEVEL": "LOUD"}, "log level"),
        ({"EDGE_RETRY_AFTER": "0"}, ">= 1"),
        ({"EDGE_STORE_TIMEOUT": "inf"}, "at most 86400"),
        ({"EDGE_STORE_TIMEOUT": "1e400"}, "at most 86400"),
        ({"EDGE_KEY_CACHE_SECONDS": "nan"}, "positive number"),
        ({"EDGE_KEY_CACHE_SECONDS": "86401"}, "at most 86400"),
        ({"EDGE_REDIS_TIMEOUT": "-inf"}, "positive number"),
        ({"EDGE_WORKERS": "0"}, ">= 1"),
        ({"EDGE_EVENTS_RETENTION_DAYS": "0"}, ">= 1"),
        ({"EDGE_EVENTS_RETENTION_DAYS": "3651"}, "at most 3650 days"),
        ({"EDGE_WORKERS": "2"}, "2 workers need --redis-url"),
        ({"EDGE_PUBLIC_URL": "api.example.com"}, "--public-url / EDGE_PUBLIC_URL"),
        ({"EDGE_PUBLIC_URL": "ftp://api.example.com"}, "not an http"),
        ({"EDGE_PUBLIC_URL": "https://api.example.com/v1"}, "no path"),
        ({"EDGE_PUBLIC_URL": "https://user@api.example.com"}, "no path"),
        ({"EDGE_PUBLIC_URL": "https://api.example.com?x=1"}, "no path"),
        ({"EDGE_AUTH_FAILURE_LIMIT": "0/60"}, "--auth-failure-limit / EDGE_AUTH_FAILURE_LIMIT"),
        ({"EDGE_TRUSTED_PROXIES": "10.0.0.1, proxy"}, "'proxy' is not an IP address or CIDR"),
    ],
)
def test_bad_values_name_the_setting(env, message):
    with pytest.raises(ConfigError, match=message):
        load([], env)


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("https://api.example.com", "https://api.example.com"),
        ("HTTPS://api.example.com/", "https://api.example.com"),
        ("http://10.0.0.5:8080", "http://10.0.0.5:8080"),
        ("https://[2001:db8::1]:443", "https://[2001:db8::1]:443"),
    ],
)
def test_a_public_url_is_kept_as_an_origin(given, kept):
    assert load(["--public-url", given], {}).public_url == kept


def test_a_short_secret_is_refused(tmp_path):
    (tmp_path / "s").write_text("short")
    (tmp_path / "s").chmod(0o600)
    with pytest.raises(ConfigError, match="at least 32"):
        Config(secret_file=tmp_path / "s").resolved_secret()


@pytest.mark.parametrize("given", ["abc", "s3cret-but-only-31-characters-x", " " * 40])
def test_a_short_secret_key_is_refused_without_being_shown(given):
    with pytest.raises(ConfigError, match=r"^EDGE_SECRET_KEY: .*at least 32") as caught:
        load([], {"EDGE_SECRET_KEY": given})
    assert given.strip() not in str(caught.value) or not given.strip()
    assert load([], {"EDGE_SECRET_KEY": "k" * 32}).secret_key == "k" * 32


SECRET_FLAGS = [s for s in SETTINGS if s.secret]


def test_the_secret_settings_are_the_secret_key_and_the_retired_ones():
    assert {s.name for s in SECRET_FLAGS} == {"secret_key", "retired_secret_keys"}


@pytest.mark.parametrize("setting", SECRET_FLAGS, ids=lambda s: s.name)
@pytest.mark.parametrize("form", ["separate", "equals", "bare"])
def test_a_secret_on_the_command_line_is_refused_naming_the_alternatives(setting, form, capsys):
    given = "k" * 40
    argv = {
        "separate": [setting.flag, given],
        "equals": [f"{setting.flag}={given}"],
        "bare": [setting.flag],
    }[form]
    with pytest.raises(SystemExit) as exit_:
        load(argv, {})
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert given not in err
    assert f"{setting.flag} takes no value on the command line" in err
    assert setting.env in err and "--secret-file" in err


@pytest.mark.parametrize(
    ("flag", "url"),
    [
        ("--database", "postgresql://affdir:pw-on-argv@db.internal/affdir"),
        ("--database", "postgresql://affdir@db.internal/affdir?password=pw-on-argv"),
        ("--redis-url", "redis://:pw-on-argv@cache.internal:6379/0"),
    ],
)
def test_a_url_with_a_password_on_the_command_line_is_refused(flag, url, capsys):
    with pytest.raises(SystemExit) as exit_:
        load([flag, url], {})
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "pw-on-argv" not in err
    assert f"{flag}: a password in the URL shows in `ps`" in err
    assert ("PGPASSWORD" in err) is (flag == "--database")
    env = "EDGE_DATABASE" if flag == "--database" else "EDGE_REDIS_URL"
    assert env in err
    assert getattr(load([], {env: url}), flag[2:].replace("-", "_")) == url  # env: fine


def test_a_url_without_a_password_is_taken_from_the_command_line():
    config = load(["--database", "postgresql://affdir@db/affdir", "--redis-url", "redis://r"], {})
    assert (config.database, config.redis_url) == ("postgresql://affdir@db/affdir", "redis://r")


def test_the_secret_file_is_made_once_and_private(tmp_path):
    path = tmp_path / "var" / "secret.key"
    first = Config(secret_file=path).resolved_secret()
    assert Config(secret_file=path).resolved_secret() == first
    assert path.stat().st_mode & 0o777 == 0o600
    assert Config(secret_key="k" * 40, secret_file=path).resolved_secret() == b"k" * 40


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_every_setting_is_documented(setting):
    text = DOC.read_text()
    assert f"`{setting.flag}`" in text and f"`{setting.env}`" in text


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["--database", "mysql://x"], 1, "edge: cannot start: unknown database URL scheme"),
        (["--database", "{tmp}/not-a-db.sqlite3"], 1, "file is not a database"),
        (["--redis-url", "notredis"], 2, "edge: --redis-url / EDGE_REDIS_URL:"),
        (["--secret-file", "{tmp}/short"], 2, "at least 32 characters"),
        (["--secret-file", "{tmp}/shared"], 2, "are too open: it holds a secret"),
        (["--secret-file", "/proc/nope/secret"], 1, "edge: cannot start: [Errno 2]"),
    ],
)
@pytest.mark.process
def test_a_setting_found_unusable_at_start_is_one_line_not_a_traceback(
    tmp_path, args, status, message
):
    import os
    import subprocess
    import sys

    (tmp_path / "not-a-db.sqlite3").write_text("not a database")
    (tmp_path / "short").write_text("short")
    (tmp_path / "short").chmod(0o600)
    (tmp_path / "shared").write_text("s" * 40)
    (tmp_path / "shared").chmod(0o644)
    argv = [sys.executable, "-m", "edge", "--port", "0", "--dist", str(tmp_path / "dist")]
    argv += ["--database", str(tmp_path / "edge.sqlite3")]
    argv += [a.format(tmp=tmp_path) for a in args]
    # EDGE_SECRET_KEY set, except where the case is about the secret file.
    env = {**os.environ, "EDGE_SECRET_KEY": "" if "--secret-file" in args else "k" * 40}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert done.returncode == status, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_trusted_proxies_and_the_failure_limit_parse():
    config = load(
        ["--trusted-proxies", "127.0.0.1, 10.0.0.0/8", "--auth-failure-limit", "5/10"], {}
    )
    assert [str(n) for n in config.trusted_proxies] == ["127.0.0.1/32", "10.0.0.0/8"]
    assert config.auth_failure_limit == (5, 10)
    assert load([], {}).trusted_proxies == ()


def test_several_workers_with_redis_are_fine():
    config = load(["--workers", "3", "--redis-url", "redis://127.0.0.1:6379/0"], {})
    assert config.workers == 3


def test_a_missing_secret_file_is_made_only_when_asked(tmp_path):
    config = Config(secret_file=tmp_path / "typo" / "secret.key")
    with pytest.raises(ConfigError, match=r"no secret at .*typo/secret\.key: use the edge's"):
        config.resolved_secret(create=False)
    assert not (tmp_path / "typo").exists()
    made = config.resolved_secret()
    assert config.resolved_secret(create=False) == made


def test_the_secret_file_holds_the_current_secret_first_then_retired_ones(tmp_path):
    path = tmp_path / "secret.key"
    path.write_text("c" * 40 + "\n\n" + "r" * 40 + "\n")
    path.chmod(0o600)
    keyring = Config(secret_file=path).keyring(create=False)
    assert keyring.secrets == (b"c" * 40, b"r" * 40) and keyring.current == b"c" * 40


def test_retired_secrets_come_after_the_configured_one():
    config = load(
        [], {"EDGE_SECRET_KEY": "k" * 40, "EDGE_RETIRED_SECRET_KEYS": "a" * 40 + ", " + "b" * 40}
    )
    assert config.keyring().secrets == (b"k" * 40, b"a" * 40, b"b" * 40)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"EDGE_RETIRED_SECRET_KEYS": "short"}, "secret 1 of the list must be at least 32"),
        ({"EDGE_RETIRED_SECRET_KEYS": "a" * 40 + ",tiny"}, "secret 2 of the list"),
    ],
)
def test_bad_retired_secrets_are_named_but_never_quoted(env, message):
    with pytest.raises(ConfigError, match=message) as caught:
        load([], env)
    assert "tiny" not in str(caught.value) and "short" not in str(caught.value)


def test_a_secret_file_line_too_short_is_named_by_its_line(tmp_path):
    path = tmp_path / "secret.key"
    path.write_text("c" * 40 + "\nshort\n")
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="line 2 must be at least 32"):
        Config(secret_file=path).keyring()


def test_a_retired_copy_of_the_current_secret_adds_nothing():
    config = load([], {"EDGE_SECRET_KEY": "k" * 40, "EDGE_RETIRED_SECRET_KEYS": "k" * 40})
    assert config.keyring().secrets == (b"k" * 40,)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o660, 0o444, 0o610])
def test_a_secret_file_others_may_open_is_refused_with_its_fix(tmp_path, mode):
    path = tmp_path / "secret.key"
    path.write_text("c" * 40 + "\n")
    path.chmod(mode)
    with pytest.raises(ConfigError) as caught:
        Config(secret_file=path).keyring(create=False)
    message = str(caught.value)
    assert f"permissions {mode:04o} for {path} are too open" in message
    assert f"chmod 600 {path}" in message and "c" * 40 not in message
    path.chmod(0o400)  # the owner's only: read-only is fine
    assert Config(secret_file=path).keyring(create=False).current == b"c" * 40
