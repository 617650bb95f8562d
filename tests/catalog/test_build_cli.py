"""build.py as people and CI run it: exit codes, messages, --check, annotations, schema."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from buildkit import VALID, CliRunner, Content, leftovers, snapshot, submission

import build
from catalog import cli, schema, sharding


def test_build_succeeds_with_progress_and_summary(content: Content, run_cli: CliRunner) -> None:
    content.add("acme", VALID)
    content.add("draft", "status: unpublished\n")
    done = run_cli("--content", "content", "--out", "dist", cwd=content.root)
    assert done.returncode == 0, done.stderr
    stages = [line.split()[0] for line in done.stderr.splitlines() if line.startswith("  ")]
    assert stages == ["load", "validate", "partition", "score", "shard", "write"]
    summary = done.stderr.splitlines()[-1]
    assert summary.startswith("built dist: 1 published, 1 unpublished, 0 rejected; ")
    assert " shards, " in summary and " files, " in summary and summary.endswith(" s")
    assert (content.out / "manifest.json").is_file()


def test_quiet_prints_nothing(content: Content, run_cli: CliRunner) -> None:
    content.add("acme", VALID)
    done = run_cli("--quiet", "--content", "content", cwd=content.root)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_invalid_content_exits_1_lists_every_error_and_keeps_dist(
    content: Content, run_cli: CliRunner
) -> None:
    content.add("acme", VALID)
    assert run_cli("--quiet", cwd=content.root).returncode == 0
    before = snapshot(content.out)
    content.add("acme", submission(cookieDays="-1", markets="[FR, NO]"))
    content.add("beta", submission(payout="daily"))
    done = run_cli("--content", "content", cwd=content.root)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("content/")]
    assert [line.split(": ", 2)[0] + ": " + line.split(": ", 2)[1] for line in errors] == [
        "content/programs/acme.yaml:12:13: cookieDays",
        "content/programs/acme.yaml:15:15: markets[1]",
        "content/programs/beta.yaml:13:9: payout",
    ]
    assert done.stderr.splitlines()[-1] == "build failed: 3 errors; dist left as it was"
    assert snapshot(content.out) == before
    assert leftovers(content.root) == []


def test_check_writes_nothing(content: Content, run_cli: CliRunner) -> None:
    content.add("acme", VALID)
    done = run_cli("--check", cwd=content.root)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        "check passed: 1 submission (1 published, 0 unpublished, 0 rejected)"
    )
    assert sorted(p.name for p in content.root.iterdir()) == ["content"]


def test_check_reports_errors_with_exit_1(content: Content, run_cli: CliRunner) -> None:
    content.add("acme", submission(vertical="sass"))
    done = run_cli("--check", cwd=content.root)
    assert done.returncode == 1
    assert [line for line in done.stderr.splitlines() if not line.startswith("  ")] == [
        'content/programs/acme.yaml:8:11: vertical: "sass" is not allowed; did you mean "saas"? '
        "use one of: saas, ecommerce, infoproduit, finance, sante, voyage, mode, maison, jeux, "
        "services, immobilier, autre",
        "check failed: 1 error",
    ]
    assert sorted(p.name for p in content.root.iterdir()) == ["content"]


def test_check_files_only_those_but_slugs_against_the_content(
    content: Content, run_cli: CliRunner
) -> None:
    content.add("acme", VALID)
    content.add("broken", submission(cookieDays="-1"))  # not checked: not named
    new = content.root / "incoming" / "acme.yaml"
    new.parent.mkdir()
    new.write_text(VALID)
    done = run_cli("--check", "incoming/acme.yaml", "content/programs/acme.yaml", cwd=content.root)
    assert done.returncode == 1
    assert [line for line in done.stderr.splitlines() if not line.startswith("  ")][:2] == [
        'content/programs/acme.yaml:1:1: slug: "acme" is also the slug of incoming/acme.yaml; '
        "slugs are unique: rename one",
        'incoming/acme.yaml:1:1: slug: "acme" is also the slug of content/programs/acme.yaml; '
        "slugs are unique: rename one",
    ]
    ok = run_cli("--check", "content/programs/acme.yaml", cwd=content.root)
    assert ok.returncode == 0, ok.stderr
    assert "1 submissions" in ok.stderr


def test_github_actions_annotations(content: Content, run_cli: CliRunner) -> None:
    content.add("acme", submission(cookieDays="0755"))
    done = run_cli("--check", cwd=content.root, env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "::error file=content/programs/acme.yaml,line=12,col=13::cookieDays: 0755 is read as an "
        "octal number by YAML 1.1 tools; write a whole number in plain decimal digits without "
        "leading zeros"
    ]
    plain = run_cli("--check", cwd=content.root)
    assert plain.stdout == ""


def test_write_schema(content: Content, run_cli: CliRunner) -> None:
    done = run_cli("--write-schema", "--content", "content", cwd=content.root)
    assert done.returncode == 0, done.stderr
    written = content.content / "schema" / "program.schema.json"
    assert written.read_text(encoding="utf-8") == schema.render()


@pytest.mark.parametrize(
    "url",
    ["example.com", "https://x.example/?q", "https://x.example/#f", "https://u:p@x.example",
     "https://x.example:99999", 'https://x.example/"><script>', "http://exa_mple.com",
     "http://a..example", "http://-a.example", "http://x.example:0", "http://%41.example",
     "http://999.1.1.1", "http://[::g]", "http://bü\u200bcher.example", "http://bücher\xad.example",
     "http://\uff42ücher.example", "http://bücher.example\u3002com"],
)  # fmt: skip
def test_bad_base_url_is_a_usage_error(content: Content, run_cli: CliRunner, url: str) -> None:
    done = run_cli("--base-url", url, cwd=content.root)
    assert done.returncode == 2
    assert "--base-url must be an absolute http(s) URL" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("url", "written"),
    [("http://localhost:8080/", "http://localhost:8080"), ("http://intranet", "http://intranet"),
     ("http://127.0.0.1:8080", "http://127.0.0.1:8080"), ("https://[::1]:8443/d/", "https://[::1]:8443/d"),
     ("HTTPS://affiliates.example/dir/", "https://affiliates.example/dir"),
     ("https://bücher.example/", "https://bücher.example"), ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
     ("https://faß.de", "https://faß.de"), ("https://ελληνικός.gr", "https://ελληνικός.gr"), ("https://bücher.xn--p1ai", "https://bücher.xn--p1ai"),
     ("https://пример.рф/", "https://пример.рф")],
)  # fmt: skip
def test_good_base_urls_are_kept_without_the_trailing_slash(url: str, written: str) -> None:
    from catalog.site.meta import normalise_base_url

    assert normalise_base_url(url) == written


def test_missing_content_directory(tmp_path: Path, run_cli: CliRunner) -> None:
    done = run_cli("--content", "nowhere", cwd=tmp_path)
    assert done.returncode == 1
    assert "nowhere/programs:1:1: (content): no programs/ directory" in done.stderr
    assert not (tmp_path / "dist").exists()


def test_write_schema_and_check_together_is_a_usage_error(
    content: Content, run_cli: CliRunner
) -> None:
    done = run_cli("--write-schema", "--check", "--content", "content", cwd=content.root)
    assert done.returncode == 2
    assert "give one" in done.stderr
    assert not (content.content / "schema").exists()


def test_a_file_named_through_dotdot_is_not_its_own_duplicate(
    content: Content, run_cli: CliRunner
) -> None:
    content.add("acme", VALID)
    done = run_cli("--check", "content/programs/../programs/acme.yaml", cwd=content.root)
    assert done.returncode == 0, done.stderr


def test_a_yaml_name_that_cannot_be_read_is_an_error(content: Content, run_cli: CliRunner) -> None:
    content.add("acme", VALID)
    (content.programs / "gone.yaml").symlink_to(content.root / "nowhere.yaml")
    (content.programs / "folder.yaml").mkdir()
    (content.programs / "elsewhere.yaml").symlink_to(content.root)  # a link to a directory
    done = run_cli("--content", "content", cwd=content.root)
    assert done.returncode == 1
    assert [line for line in done.stderr.splitlines() if line.startswith("content/")] == [
        "content/programs/elsewhere.yaml:1:1: (file): cannot be read: not a regular file",
        "content/programs/folder.yaml:1:1: (file): cannot be read: not a regular file",
        "content/programs/gone.yaml:1:1: (file): cannot be read: a link to nothing",
    ]


@pytest.mark.parametrize("stage", ["shard", "report"])
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.usefixtures("sigint_delivered")
def test_an_interrupted_build_says_so_and_keeps_dist(
    content: Content, monkeypatch: pytest.MonkeyPatch, capsys, signum: int, status: int, stage: str
) -> None:
    content.add("acme", VALID)
    paths = ["--content", str(content.content), "--out", str(content.out), "--no-sync"]
    assert build.main(["--quiet", *paths]) == 0
    before = snapshot(content.out)
    content.add("beta", submission(name="Beta"))
    if stage == "report":  # while the problems are printed: after the build failed
        content.add("gamma", submission(cookieDays="-1"))
    module, name = (sharding, "shard") if stage == "shard" else (cli, "report")
    real = getattr(module, name)

    def interrupted(*args):  # the signal arrives in the middle of the run
        os.kill(os.getpid(), signum)
        return real(*args)

    monkeypatch.setattr(module, name, interrupted)
    try:
        assert build.main(["--quiet", *paths]) == status
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    assert capsys.readouterr().err.endswith("never part of one\n")
    assert snapshot(content.out) == before
    assert leftovers(content.root) == []


def test_diagnostics_escape_what_would_drive_or_reorder_a_terminal() -> None:
    from catalog.errors import Diagnostic, Problem

    diagnostic = Diagnostic("a\x1b[31m.yaml", Problem(1, 2, "x\u202e", "m\nz"))
    assert str(diagnostic) == "a\\x1b[31m.yaml:1:2: x\\u202e: m\\nz"
    assert diagnostic.github() == "::error file=a\\x1b[31m.yaml,line=1,col=2::x\\u202e: m\\nz"


def test_no_site_builds_the_apis_files_alone(content: Content, run_cli: CliRunner) -> None:
    """--no-site: the API's files, byte for byte those of a build with the site; the site
    goes with the new build, and the next build with it renders it again."""
    content.add("acme", VALID)
    content.add("other", submission(name="Other", cookieDays="90"))
    paths = ["--content", "content", "--out", "dist", "--no-sync"]
    assert run_cli(*paths, cwd=content.root).returncode == 0
    with_site = snapshot(content.out)
    api = {path: data for path, data in with_site.items() if path.startswith("api/")}
    # The API's docs are written with or without the site: the edge serves them.
    docs = {path for path in with_site if path.startswith("docs/")}
    assert "docs/reference/index.html" in docs and "docs/index.html" in docs
    assert "index.html" in with_site
    assert set(api) == {
        "api/rows.jsonl", "api/keys.json", "api/shards.jsonl", "api/search.json",
        "api/search.bin", "api/programs/acme.json", "api/programs/other.json",
        "api/program-links.json",
    }  # fmt: skip
    done = run_cli(*paths, "--no-site", cwd=content.root)
    assert done.returncode == 0, done.stderr
    assert "skipped (--no-site)" in done.stderr
    alone = snapshot(content.out)
    assert set(alone) == {"manifest.json", "openapi.json", *docs, *api}
    assert {path: with_site[path] for path in alone if path != "manifest.json"} == {
        path: data for path, data in alone.items() if path != "manifest.json"
    }
    manifest, full = (orjson.loads(files["manifest.json"]) for files in (alone, with_site))
    assert manifest["buildId"] == full["buildId"] and manifest["shards"] == full["shards"]
    assert manifest["counts"] == {**full["counts"], "files": len(alone)}
    assert run_cli(*paths, cwd=content.root).returncode == 0
    assert snapshot(content.out) == with_site


def test_every_option_is_documented(run_cli: CliRunner) -> None:
    """docs/build.md's table names every option `build.py --help` lists, and no other."""
    import re

    helped = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", run_cli("--help").stdout)) - {"--help"}
    docs = (Path(build.__file__).parent / "docs" / "build.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `(--[a-z][a-z-]+)", docs, flags=re.MULTILINE))
    assert "--no-site" in helped
    assert helped == table


@pytest.mark.process
def test_the_interrupt_tests_hold_when_the_suite_runs_with_sigint_ignored(tmp_path) -> None:
    """As under a background job or nohup: the children inherit SIGINT ignored."""

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'inner'}",
            f"{__file__}::test_an_interrupted_build_says_so_and_keeps_dist",
        ],
        capture_output=True,
        text=True,
        preexec_fn=ignore_sigint,
        cwd=Path(__file__).resolve().parents[2],
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "4 passed" in result.stdout
