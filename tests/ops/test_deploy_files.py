"""The container and systemd files, checked without Docker or systemd: every project command
they run exists here and takes its flags (`--help` exits 0 and names them), the image runs
as a numeric user that is not root, with a health check, OCI labels and bases pinned by
digest (hadolint clean), compose's services are hardened (read-only, no capability, limits,
health checks) and use only defined volumes and networks, no secret is on a command line,
metrics are reachable on the compose network only, nginx re-resolves the edges and serves
the build the build job writes, and the smoke test CI runs passes shellcheck."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from opskit import (
    COMMANDS,
    ROOT,
    Stage,
    command_name,
    dockerfile_stages,
    exec_argv,
    exec_form,
    flags,
    load_yaml,
    nginx_config,
    run_tool,
    schema_errors,
    tool,
    unit_sections,
)

DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "compose.yaml"
NGINX = ROOT / "deploy" / "nginx.conf"
UNITS = ROOT / "deploy" / "systemd"
IMAGE = "affdir"  # compose's name for the image the Dockerfile builds


def compose() -> dict:
    return load_yaml(COMPOSE)


def our_services() -> dict[str, dict]:
    """The compose services that run the project's image (the others run stock images)."""
    return {
        name: service
        for name, service in compose()["services"].items()
        if "build" in service or str(service.get("image", "")).split(":")[0] == IMAGE
    }


def final_stage() -> Stage:
    return dockerfile_stages(DOCKERFILE)[-1]


def command_lines() -> list[tuple[str, list[str]]]:
    """(where, argv) of every project command the deployment files run."""
    found: list[tuple[str, list[str]]] = []
    for keyword in ("ENTRYPOINT", "CMD"):
        found += [(f"Dockerfile {keyword}", exec_form(a)) for a in final_stage().all(keyword)]
    for name, service in our_services().items():
        command = service.get("command")
        if command is not None:
            argv = command if isinstance(command, list) else shlex.split(command)
            found.append((f"compose.yaml {name}", [str(a) for a in argv]))
    for unit in sorted(UNITS.glob("*.service")):
        for key, value in unit_sections(unit).get("Service", []):
            if key in ("ExecStart", "ExecStartPre", "ExecStartPost", "ExecStop"):
                argv = exec_argv(value)
                if not argv[0].startswith("/bin/"):  # kill, for ExecReload: not ours
                    found.append((f"{unit.name} {key}", argv))
    return found


COMMAND_LINES = command_lines()


def test_the_files_run_commands() -> None:
    where = {w.split()[0] for w, _ in COMMAND_LINES}
    assert {"Dockerfile", "compose.yaml", "affdir-edge.service", "affdir-sync.service"} <= where
    names = {command_name(argv) for _, argv in COMMAND_LINES}
    # The image's three jobs: the edge, the build and the sync worker.
    assert {"affdir-edge", "affdir-build", "affdir-sync"} <= names


@pytest.mark.parametrize(("where", "argv"), COMMAND_LINES, ids=[w for w, _ in COMMAND_LINES])
@pytest.mark.process
def test_every_command_exists_and_takes_its_flags(
    where: str, argv: list[str], command_help: Callable[[str], subprocess.CompletedProcess[str]]
) -> None:
    name = command_name(argv)
    assert name in COMMANDS, f"{where} runs {name!r}: add it to opskit.COMMANDS"
    done = command_help(name)
    assert done.returncode == 0, f"{name} --help: {done.stderr}"
    for flag in flags(argv):
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", done.stdout), (
            f"{where}: {name} has no {flag} option"
        )


# --- Dockerfile ---------------------------------------------------------------------------------


def test_a_builder_stage_builds_the_wheel() -> None:
    stages = dockerfile_stages(DOCKERFILE)
    assert len(stages) >= 2
    builder = stages[0]
    assert builder.name == "builder"
    assert any("pip wheel" in run for run in builder.all("RUN"))


def test_the_final_stage_is_slim_python_311_without_build_tools() -> None:
    stage = final_stage()
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?(@sha256:[0-9a-f]{64})?", stage.base)
    runs = " ".join(stage.all("RUN"))
    for build_tool in ("gcc", "build-essential", "make ", "pip wheel", "apt-get install"):
        assert build_tool not in runs, build_tool
    # What it installs comes from the builder, not from an index.
    assert "--no-index" in runs and "from=builder" in runs


def test_the_final_stage_runs_as_a_numeric_user_that_is_not_root() -> None:
    users = final_stage().all("USER")
    assert users, "the final stage has no USER: it would run as root"
    # Numeric: Kubernetes' runAsNonRoot cannot tell whether a user name is root.
    match = re.fullmatch(r"(\d+):(\d+)", users[-1])
    assert match, f"USER {users[-1]}: write uid:gid as numbers"
    uid, gid = match.groups()
    assert uid != "0" and gid != "0"
    # The user is made in the image with those ids, before it is switched to.
    runs = " ".join(final_stage().all("RUN"))
    assert f"--uid {uid}" in runs and f"--gid {gid}" in runs


def test_every_base_image_is_pinned_by_digest() -> None:
    for stage in dockerfile_stages(DOCKERFILE):
        assert re.fullmatch(r"[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}", stage.base), (
            f"FROM {stage.base}: pin the digest (and keep the tag beside it)"
        )


def test_the_builder_and_the_final_stage_have_the_same_python() -> None:
    builder, final = (dockerfile_stages(DOCKERFILE)[i].base for i in (0, -1))
    version = re.compile(r"python:(\d+\.\d+(?:\.\d+)?)-")
    assert version.match(builder)[1] == version.match(final)[1]  # type: ignore[index]


def test_the_image_checks_the_edges_readiness() -> None:
    (check,) = final_stage().all("HEALTHCHECK")
    options, _, command = check.partition("CMD ")
    assert "--interval=" in options and "--timeout=" in options
    argv = exec_form(command)
    assert argv[0] == "python"  # the image has no curl or wget
    assert "/readyz" in argv[-1] and "EDGE_PORT" in argv[-1]
    assert any(env.startswith("EDGE_PORT=") for env in " ".join(final_stage().all("ENV")).split())


def _labels() -> dict[str, str]:
    """The final stage's labels, KEY="VALUE" pairs as the shell reads them."""
    pairs = shlex.split(" ".join(final_stage().all("LABEL")))
    return dict(pair.split("=", 1) for pair in pairs)


def test_the_image_has_oci_labels_with_version_and_revision_from_build_args() -> None:
    labels = _labels()
    prefix = "org.opencontainers.image."
    for name in ("title", "description", "licenses", "version", "revision"):
        assert labels.get(prefix + name), f"no {prefix}{name} label"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert labels[prefix + "licenses"] == project["license"]["text"]
    args = {a.split("=", 1)[0] for a in final_stage().all("ARG")}
    assert labels[prefix + "version"] == "${VERSION}" and "VERSION" in args
    assert labels[prefix + "revision"] == "${REVISION}" and "REVISION" in args
    # compose.yaml passes both when it builds the image.
    assert set(compose()["x-app"]["build"]["args"]) == {"VERSION", "REVISION"}


def test_the_image_installs_the_wheel_only() -> None:
    # The wheel carries the site's templates (catalog.templates): nothing else is copied
    # into site-packages beside it.
    for stage in dockerfile_stages(DOCKERFILE):
        for keyword, args in stage.instructions:
            assert "site-packages" not in args, f"{keyword} {args}"
            assert "templates" not in args, f"{keyword} {args}"
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-data"]
    assert package_data["catalog.templates"] == ["**/*"]


@pytest.mark.process
def test_hadolint_finds_nothing() -> None:
    done = run_tool([tool("hadolint"), "--no-color", str(DOCKERFILE)])
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_hadolint_exception_says_why() -> None:
    lines = DOCKERFILE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if line.startswith("# hadolint ignore="):
            rules = line.split("=", 1)[1].split(",")
            reason = lines[number - 1]
            assert reason.startswith("# hadolint ") and all(r in reason for r in rules), (
                f"Dockerfile line {number + 1}: say on the line before why {rules} are ignored"
            )


def test_the_image_runs_the_edge_by_default() -> None:
    (cmd,) = final_stage().all("CMD")
    assert command_name(exec_form(cmd)) == "affdir-edge"


def test_dockerignore_keeps_local_state_and_secrets_out() -> None:
    ignored = set((ROOT / ".dockerignore").read_text(encoding="utf-8").split())
    assert {".git", ".venv", "tests", "dist", "*.secret", "*.sqlite3", ".env"} <= ignored


# --- compose.yaml ------------------------------------------------------------------------------


def test_compose_matches_the_compose_specification() -> None:
    assert schema_errors(compose(), "compose-spec.json") == []


LONG_RUNNING = ["postgres", "redis", "edge", "sync", "nginx"]
EDGE_METRICS_PORT = 9100
SYNC_METRICS_PORT = 9101


@pytest.mark.parametrize("name", [*LONG_RUNNING, "build"])
def test_every_container_is_hardened_and_limited(name: str) -> None:
    service = compose()["services"][name]
    assert service["read_only"] is True, f"{name}: read_only: true"
    assert service["cap_drop"] == ["ALL"], name
    assert "no-new-privileges:true" in service["security_opt"], name
    limits = service["deploy"]["resources"]["limits"]
    assert {"cpus", "memory", "pids"} <= set(limits), f"{name}: limits {limits}"
    # A read-only container still has a writable /tmp (Python's tempfile, nginx's pid).
    assert "/tmp" in service["tmpfs"], name


@pytest.mark.parametrize("name", LONG_RUNNING)
def test_every_service_has_a_health_check(name: str) -> None:
    check = compose()["services"][name]["healthcheck"]
    assert not check.get("disable")
    assert check["test"][0] == "CMD" and len(check["test"]) > 1


@pytest.mark.parametrize("name", LONG_RUNNING)
def test_every_container_runs_as_a_numeric_user_that_is_not_root(name: str) -> None:
    service = compose()["services"][name]
    if name in our_services():
        assert "user" not in service  # the image's USER 10001:10001
    else:
        match = re.fullmatch(r"(\d+):(\d+)", str(service.get("user", "")))
        assert match and "0" not in match.groups(), f"{name}: user: UID:GID, not root"


def test_every_stock_image_is_pinned_by_digest() -> None:
    for name, service in compose()["services"].items():
        if name not in our_services():
            image = service["image"]
            assert re.fullmatch(r"[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}", image), name


def _argv(name: str) -> list[str]:
    return [str(a) for a in compose()["services"][name]["command"]]


@pytest.mark.parametrize(
    ("name", "port"), [("edge", EDGE_METRICS_PORT), ("sync", SYNC_METRICS_PORT)]
)
def test_metrics_listen_on_the_compose_network_only(name: str, port: int) -> None:
    argv = _argv(name)
    assert _option(argv, "--metrics-host") == "0.0.0.0"  # not only the container's loopback
    assert _option(argv, "--metrics-port") == str(port)
    assert _option(argv, "--log-format") == "json"
    # Published ports: nginx's, and nothing else.
    for other, service in compose()["services"].items():
        published = [str(p) for p in service.get("ports", [])]
        assert other == "nginx" or not published, f"{other} publishes {published}"
        assert not any(p.endswith(f":{port}") for p in published)


def test_the_health_checks_ask_what_each_service_serves() -> None:
    services = compose()["services"]
    edge = services["edge"]["healthcheck"]["test"][-1]
    assert f"127.0.0.1:{_option(_argv('edge'), '--port')}/readyz" in edge
    sync = services["sync"]["healthcheck"]["test"][-1]
    assert f"127.0.0.1:{SYNC_METRICS_PORT}/healthz" in sync  # 503 when the worker stalls
    nginx = services["nginx"]["healthcheck"]["test"]
    url = re.fullmatch(r"http://127\.0\.0\.1:(\d+)(/\S*)", nginx[-1])
    assert url, nginx
    listens = [d.args[0] for d in nginx_config(NGINX).find("listen")]
    assert url[1] in listens
    (location,) = [d for d in nginx_config(NGINX).find("location") if d.args == ["=", url[2]]]
    (answer,) = list(location.find("return"))
    assert answer.args[0] == "200"


def test_the_image_name_and_tag_can_be_chosen() -> None:
    # scripts/compose-smoke.sh builds its own tag: a deployment's image stays as it is.
    assert compose()["x-app"]["image"] == "${AFFDIR_IMAGE:-affdir:latest}"


def test_compose_has_every_part_of_the_service() -> None:
    services = compose()["services"]
    assert {"postgres", "redis", "nginx", "edge", "sync", "build"} <= set(services)
    images = {name: str(s.get("image", "")) for name, s in services.items()}
    assert images["postgres"].startswith("postgres:")
    assert images["redis"].startswith("redis:")
    assert images["nginx"].startswith("nginx:")
    assert services["edge"]["deploy"]["replicas"] == 2
    assert services["build"]["restart"] == "no"  # a job: it runs, then exits


def _volume_source(entry: str | dict) -> str:
    return entry["source"] if isinstance(entry, dict) else entry.split(":", 1)[0]


def test_services_use_only_defined_volumes_networks_and_services() -> None:
    spec = compose()
    volumes, networks = set(spec.get("volumes") or {}), set(spec.get("networks") or {})
    services = spec["services"]
    for name, service in services.items():
        for entry in service.get("volumes", []):
            source = _volume_source(entry)
            if source.startswith((".", "/", "~")):
                assert (ROOT / source).exists(), f"{name} mounts {source}, which is not here"
            else:
                assert source in volumes, f"{name} uses the undefined volume {source}"
        used = service.get("networks", [])
        assert set(used) <= networks, f"{name} uses undefined networks {set(used) - networks}"
        if "network_mode" not in service:
            assert used, f"{name} joins no network"
        assert set(service.get("depends_on", {})) <= set(services), name
    used_volumes = {_volume_source(v) for s in services.values() for v in s.get("volumes", [])}
    assert volumes <= used_volumes, f"volumes defined but unused: {volumes - used_volumes}"


def test_the_data_stores_have_no_way_out_and_no_public_port() -> None:
    spec = compose()
    for name in ("postgres", "redis"):
        service = spec["services"][name]
        assert "ports" not in service
        assert all(spec["networks"][n].get("internal") for n in service["networks"]), name


def _mount_point(service: dict, volume: str) -> str:
    for entry in service.get("volumes", []):
        if _volume_source(entry) == volume:
            return entry["target"] if isinstance(entry, dict) else entry.split(":")[1]
    raise AssertionError(f"{volume} is not mounted")


def _option(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_the_build_writes_where_the_edges_and_nginx_read() -> None:
    services = compose()["services"]
    build = [str(a) for a in services["build"]["command"]]
    out = Path(_option(build, "--out"))
    # The build renames its output into place beside it: the volume holds dist/, it is not it.
    (volume,) = [
        _volume_source(v) for v in services["build"]["volumes"]
        if out.is_relative_to(_mount_point(services["build"], _volume_source(v)))
    ]  # fmt: skip
    assert out != Path(_mount_point(services["build"], volume))
    for reader in ("edge", "nginx"):
        assert _mount_point(services[reader], volume) == _mount_point(services["build"], volume)
        entry = next(v for v in services[reader]["volumes"] if _volume_source(v) == volume)
        assert str(entry).endswith(":ro"), f"{reader} must not write the build"
    assert services["edge"]["environment"]["EDGE_DIST"] == str(out)
    http = nginx_config(NGINX)
    (root,) = [d.args[0] for d in http.find("root")]
    assert Path(root) == out


def test_edge_settings_are_edge_settings() -> None:
    from edge.config import SETTINGS

    known = {setting.env for setting in SETTINGS}
    spec = compose()
    for name in ("edge", "sync", "build"):
        unknown = {
            k for k in spec["services"][name].get("environment", {}) if k.startswith("EDGE_")
        }
        assert unknown <= known, f"{name}: {unknown - known}"


# --- nginx.conf ----------------------------------------------------------------------------------


def _locations(config) -> dict[str, object]:
    return {" ".join(d.args): d for d in config.find("location")}


def test_nginx_proxies_v1_and_the_openapi_document_to_the_edges() -> None:
    config = nginx_config(NGINX)
    locations = _locations(config)
    # `^~`: a prefix no regex location can take over (`/v1/x.html` is the API's, not a page).
    v1 = locations["^~ /v1"]
    (target,) = [d.args[0] for d in v1.find("proxy_pass")]
    (openapi,) = [d.args[0] for d in locations["= /openapi.json"].find("proxy_pass")]
    assert target == openapi == "http://edge"
    (upstream,) = [d for d in config.find("upstream") if d.args == ["edge"]]
    servers = [d.args[0] for d in upstream.find("server")]
    edge = compose()["services"]["edge"]
    port = _option([str(a) for a in edge["command"]], "--port")
    assert servers == [f"edge:{port}"]  # compose's service name: every replica
    assert "web" in edge["networks"] and "web" in compose()["services"]["nginx"]["networks"]


def test_nginx_re_resolves_the_edges() -> None:
    config = nginx_config(NGINX)
    # Docker's DNS, asked again when an answer is older than valid=.
    (resolver,) = list(config.find("resolver"))
    assert resolver.args[0] == "127.0.0.11"
    assert any(re.fullmatch(r"valid=\d+s", a) for a in resolver.args)
    (upstream,) = [d for d in config.find("upstream") if d.args == ["edge"]]
    (server,) = list(upstream.find("server"))
    assert "resolve" in server.args[1:]
    (zone,) = list(upstream.find("zone"))  # `resolve` needs the shared zone
    assert zone.args[0] == "edge"
    # Open-source nginx has `resolve` from 1.27.3 on: the image compose runs must have it.
    image = compose()["services"]["nginx"]["image"]
    version = re.match(r"nginx:(\d+)\.(\d+)(?:\.(\d+))?", image)
    assert version, image
    assert tuple(int(v or 0) for v in version.groups()) >= (1, 27, 3), image


def test_nginx_accepts_the_configuration(tmp_path: Path) -> None:
    nginx = tool("nginx")
    version = run_tool([nginx, "-v"]).stderr
    found = re.search(r"nginx/(\d+)\.(\d+)\.(\d+)", version)
    assert found, version
    text = NGINX.read_text(encoding="utf-8")
    if tuple(map(int, found.groups())) < (1, 27, 3):
        # An older nginx (Debian 12 has 1.22) knows no `resolve` and looks the name up while
        # it reads the file: the rest of the file is checked with the edges on loopback.
        text = text.replace("server edge:8080 resolve;", "server 127.0.0.1:8080;")
    if not Path("/etc/nginx/mime.types").is_file():  # another layout than Debian's and the image's
        (tmp_path / "mime.types").write_text("types { }\n", encoding="utf-8")
        text = text.replace("/etc/nginx/mime.types", str(tmp_path / "mime.types"))
    config = tmp_path / "nginx.conf"
    config.write_text(text, encoding="utf-8")
    done = run_tool(
        [nginx, "-t", "-q", "-e", "/dev/stderr", "-p", str(tmp_path), "-c", str(config)]
    )
    assert done.returncode == 0, done.stderr


def test_nginx_never_serves_the_api_files_of_the_build() -> None:
    locations = _locations(nginx_config(NGINX))
    for blocked in ("= /manifest.json", "^~ /api/", "~ /\\."):
        (ret,) = list(locations[blocked].find("return"))
        assert ret.args == ["404"], blocked


def test_nginx_caches_pages_and_fingerprinted_files_as_documented() -> None:
    locations = _locations(nginx_config(NGINX))

    def cache_control(location: str) -> str:
        (header,) = [
            d for d in locations[location].find("add_header") if d.args[0] == "Cache-Control"
        ]
        return header.args[1]

    assert (
        cache_control(r"~ ^/static/site\.[0-9a-f]+\.css$") == "public, max-age=31536000, immutable"
    )
    assert cache_control(r"~ (\.html|/)$") == "no-cache"
    assert cache_control("/") == "public, max-age=300"
    (page,) = [d.args for d in nginx_config(NGINX).find("error_page")]
    assert page == ["404", "/404.html"]


def test_compose_mounts_this_nginx_conf() -> None:
    nginx = compose()["services"]["nginx"]
    assert "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro" in nginx["volumes"]


# --- systemd ---------------------------------------------------------------------------------------


UNIT_FILES = sorted(UNITS.glob("*.service"))


@pytest.mark.parametrize("unit", UNIT_FILES, ids=[u.name for u in UNIT_FILES])
def test_units_run_as_the_service_user_with_their_settings(unit: Path) -> None:
    service = dict(unit_sections(unit)["Service"])
    assert service.get("User") not in (None, "root", "0")
    assert service["NoNewPrivileges"] == "yes" and service["ProtectSystem"] == "strict"


def test_the_edge_unit_signals_the_supervisor_only() -> None:
    service = dict(unit_sections(UNITS / "affdir-edge.service")["Service"])
    assert service["KillMode"] == "mixed"
    assert exec_argv(service["ExecReload"])[-2:] == ["-HUP", "$MAINPID"]
    assert service["EnvironmentFile"].startswith("/etc/")  # the secret stays out of the unit


@pytest.mark.process
def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = tool("systemd-analyze")
    # The units run the console scripts of a virtualenv at /opt/affdir: here, this one's.
    here = f"{Path(sys.executable).parent}/"
    for unit in UNITS.iterdir():
        text = unit.read_text(encoding="utf-8").replace("/opt/affdir/bin/", here)
        (tmp_path / unit.name).write_text(text, encoding="utf-8")
    units = sorted(str(u) for u in tmp_path.iterdir())
    done = run_tool([analyze, "verify", "--man=no", *units])
    # A unit's problems are printed with its path (specifiers, keys, missing programs).
    problems = [line for line in done.stderr.splitlines() if str(tmp_path) in line]
    assert done.returncode == 0 and problems == [], done.stderr


def test_the_build_timer_starts_the_build_unit() -> None:
    timer = dict(unit_sections(UNITS / "affdir-build.timer")["Timer"])
    unit = UNITS / timer.get("Unit", "affdir-build.service")
    assert unit.is_file()
    assert dict(unit_sections(unit)["Service"])["Type"] == "oneshot"


def test_units_write_only_where_the_build_goes() -> None:
    build = dict(unit_sections(UNITS / "affdir-build.service")["Service"])
    out = Path(_option(exec_argv(build["ExecStart"]), "--out"))
    assert out.parent == Path(build["ReadWritePaths"])  # the rename and the cache beside it
    edge = unit_sections(UNITS / "affdir-edge.service")["Service"]
    assert f"EDGE_DIST={out}" in [value for key, value in edge if key == "Environment"]


@pytest.mark.parametrize("unit", ["affdir-edge.service", "affdir-sync.service"])
def test_units_read_the_secret_as_a_credential_file(unit: str) -> None:
    service = unit_sections(UNITS / unit)["Service"]
    credentials = [v.split(":", 1) for k, v in service if k == "LoadCredential"]
    assert credentials == [["edge_secret", "/etc/affdir/secret.key"]]
    environment = [v for k, v in service if k == "Environment"]
    assert "EDGE_SECRET_FILE=%d/edge_secret" in environment  # %d: the credentials directory
    assert dict(service)["EnvironmentFile"].startswith("/etc/")


def test_the_sync_unit_logs_json_and_serves_its_metrics_and_health() -> None:
    service = dict(unit_sections(UNITS / "affdir-sync.service")["Service"])
    argv = exec_argv(service["ExecStart"])
    assert _option(argv, "--log-format") == "json"
    assert _option(argv, "--metrics-port") == str(SYNC_METRICS_PORT)
    assert "--metrics-host" in argv


def test_the_edge_units_metrics_ports_miss_the_sync_workers() -> None:
    # Worker N serves its metrics on --metrics-port + N; up to 64 workers on one machine.
    edge = exec_argv(dict(unit_sections(UNITS / "affdir-edge.service")["Service"])["ExecStart"])
    sync = exec_argv(dict(unit_sections(UNITS / "affdir-sync.service")["Service"])["ExecStart"])
    first = int(_option(edge, "--metrics-port"))
    assert int(_option(sync, "--metrics-port")) not in range(first, first + 64)
    assert _option(edge, "--log-format") == "json"


# --- secrets: never on a command line --------------------------------------------------------

# Flags whose value is a secret (a path to a secret file is not one).
SECRET_FLAG = re.compile(r"--[\w-]*(secret-key|password|token)[\w-]*", re.IGNORECASE)
SECRET_VARIABLE = re.compile(r"\$\{?\w*(SECRET|PASSWORD|TOKEN)", re.IGNORECASE)


@pytest.mark.parametrize(("where", "argv"), COMMAND_LINES, ids=[w for w, _ in COMMAND_LINES])
def test_no_secret_is_on_a_command_line(where: str, argv: list[str]) -> None:
    for arg in argv:
        assert not SECRET_FLAG.match(arg), f"{where}: {arg}: a secret on the command line"
        assert not SECRET_VARIABLE.search(arg), f"{where}: {arg}: a secret on the command line"


def test_compose_hands_the_secret_over_as_a_docker_secret_file() -> None:
    spec = compose()
    (name,) = spec["secrets"]
    assert set(spec["secrets"][name]) == {"file"}
    for service_name in ("edge", "sync"):
        service = spec["services"][service_name]
        environment = service["environment"]
        assert not {"EDGE_SECRET_KEY", "EDGE_RETIRED_SECRET_KEYS"} & set(environment)
        assert service["secrets"] == [name]
        assert environment["EDGE_SECRET_FILE"] == f"/run/secrets/{name}"
    # The build needs no secret.
    assert not spec["services"]["build"].get("secrets")
    assert "secrets" in (ROOT / ".dockerignore").read_text(encoding="utf-8").split()


# --- the smoke test CI runs ------------------------------------------------------------------

SMOKE = ROOT / "scripts" / "compose-smoke.sh"


def test_the_smoke_test_is_an_executable_bash_script() -> None:
    assert SMOKE.read_text(encoding="utf-8").startswith("#!/usr/bin/env bash\n")
    assert os.access(SMOKE, os.X_OK)
    assert "set -euo pipefail" in SMOKE.read_text(encoding="utf-8")


def test_the_smoke_test_tries_what_ci_promises() -> None:
    text = SMOKE.read_text(encoding="utf-8")
    for part in ("/v1/programs", "/v1/me", "/metrics", "--scale edge=3", "compose build"):
        assert part in text, part
    # It asks the metrics ports the compose file sets.
    assert f"edge:{EDGE_METRICS_PORT}/metrics" in text and f"sync:{SYNC_METRICS_PORT}" in text


@pytest.mark.parametrize(
    "script", [*sorted((ROOT / "scripts").glob("*.sh")), ROOT / ".ci" / "run"], ids=str
)
@pytest.mark.process
def test_shellcheck_finds_nothing(script: Path) -> None:
    done = run_tool([tool("shellcheck"), "--format=gcc", str(script)])
    assert done.returncode == 0, done.stdout + done.stderr
