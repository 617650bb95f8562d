"""The container and systemd files, checked without Docker or systemd: every project command
they run exists here and takes its flags (`--help` exits 0 and names them), the image runs
as a user that is not root, compose's services use only defined volumes and networks, and
nginx serves the build the build job writes and proxies /v1 to the edges."""

from __future__ import annotations

import re
import shlex
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
    run_help,
    schema_errors,
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
def test_every_command_exists_and_takes_its_flags(where: str, argv: list[str]) -> None:
    name = command_name(argv)
    assert name in COMMANDS, f"{where} runs {name!r}: add it to opskit.COMMANDS"
    done = run_help(name)
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
    for tool in ("gcc", "build-essential", "make ", "pip wheel", "apt-get install"):
        assert tool not in runs, tool
    # What it installs comes from the builder, not from an index.
    assert "--no-index" in runs and "from=builder" in runs


def test_the_final_stage_runs_as_a_user_that_is_not_root() -> None:
    users = final_stage().all("USER")
    assert users, "the final stage has no USER: it would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    # The user is made in the image, before it is switched to.
    assert any("useradd" in run and user in run for run in final_stage().all("RUN"))


def test_the_image_runs_the_edge_by_default() -> None:
    (cmd,) = final_stage().all("CMD")
    assert command_name(exec_form(cmd)) == "affdir-edge"


def test_dockerignore_keeps_local_state_and_secrets_out() -> None:
    ignored = set((ROOT / ".dockerignore").read_text(encoding="utf-8").split())
    assert {".git", ".venv", "tests", "dist", "*.secret", "*.sqlite3", ".env"} <= ignored


# --- compose.yaml ------------------------------------------------------------------------------


def test_compose_matches_the_compose_specification() -> None:
    assert schema_errors(compose(), "compose-spec.json") == []


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


def test_the_build_timer_starts_the_build_unit() -> None:
    timer = dict(unit_sections(UNITS / "affdir-build.timer")["Timer"])
    unit = UNITS / timer.get("Unit", "affdir-build.service")
    assert unit.is_file()
    assert dict(unit_sections(unit)["Service"])["Type"] == "oneshot"


def test_units_write_only_where_the_build_goes() -> None:
    build = dict(unit_sections(UNITS / "affdir-build.service")["Service"])
    out = Path(_option(exec_argv(build["ExecStart"]), "--out"))
    assert out.parent == Path(build["ReadWritePaths"])  # the rename and the cache beside it
    edge = dict(unit_sections(UNITS / "affdir-edge.service")["Service"])
    assert edge["Environment"] == f"EDGE_DIST={out}"
