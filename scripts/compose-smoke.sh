#!/usr/bin/env bash
# Smoke test of the container deployment (compose.yaml), as CI runs it and as an operator can:
#
#   bash scripts/compose-smoke.sh          # KEEP=1 leaves the stack running afterwards
#
# It builds the image, starts the whole service (PostgreSQL, Redis, the build job, two edges,
# the sync worker, nginx), waits until every service is healthy, creates an account and a
# key, then asks through nginx for /v1/programs and /v1/me, and from the compose network for
# the edges' and the sync worker's /metrics. It scales the edges to 3 and checks that nginx
# answers and sends requests to every edge, the new one included (nginx re-resolves `edge`).
#
# It runs as its own compose project with its own image tag, volumes, secret and port, so it
# never touches a deployment on the same host, and removes all of it when it ends.
# Needs: docker with the compose plugin, curl, python3.
set -euo pipefail
cd "$(dirname "$0")/.."

project=${AFFDIR_SMOKE_PROJECT:-affdir-smoke}
port=${AFFDIR_SMOKE_PORT:-18080}
base="http://127.0.0.1:${port}"
timeout=${AFFDIR_SMOKE_TIMEOUT:-300} # seconds for the services to become healthy

work=$(mktemp -d "${TMPDIR:-/tmp}/affdir-smoke.XXXXXX") # mode 0700: only we enter it
status=1

compose() {
  docker compose --file compose.yaml --project-name "$project" --env-file "$work/env" "$@"
}

say() { printf 'smoke: %s\n' "$*"; }

finish() {
  if [ "$status" -ne 0 ]; then
    say "FAILED; the services and their last log lines:"
    compose ps --all || true
    compose logs --no-color --tail 80 || true
  fi
  if [ "${KEEP:-0}" = 1 ]; then
    say "left running: docker compose --project-name $project --env-file $work/env ..."
  else
    compose down --volumes --remove-orphans --timeout 20 >/dev/null 2>&1 || true
    rm -rf "$work"
  fi
}
trap finish EXIT

# --- settings and secrets of this run only ---------------------------------------------------

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -n 1)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
mkdir -m 0700 "$work/secrets"
python3 -c 'import secrets; print(secrets.token_urlsafe(48))' >"$work/secrets/edge_secret.key"
# The containers' user's (uid 10001) and no one else's: a secret file its group or others
# may open is refused at start. The directory keeps everyone else out.
chmod 0400 "$work/secrets/edge_secret.key"
sudo chown 10001:10001 "$work/secrets/edge_secret.key"
cat >"$work/env" <<EOF
POSTGRES_PASSWORD=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
AFFDIR_PUBLIC_URL=http://localhost:${port}
AFFDIR_HTTP_PORT=${port}
AFFDIR_SECRETS_DIR=${work}/secrets
AFFDIR_IMAGE=${project}:latest
AFFDIR_VERSION=${version}
AFFDIR_REVISION=${revision}
AFFDIR_WEB_SUBNET=${AFFDIR_SMOKE_SUBNET:-172.30.254.0/24}
EOF

# --- helpers -------------------------------------------------------------------------------

# wait_healthy SERVICE COUNT: until COUNT containers of SERVICE report `healthy`.
wait_healthy() {
  local service=$1 want=$2 deadline=$((SECONDS + timeout)) healthy id state
  while :; do
    healthy=0
    for id in $(compose ps --quiet "$service"); do
      state=$(docker inspect --format '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$id")
      if [ "$state" = healthy ]; then healthy=$((healthy + 1)); fi
    done
    if [ "$healthy" -ge "$want" ]; then
      say "$service: $healthy healthy"
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      say "$service: $healthy of $want healthy after ${timeout}s"
      return 1
    fi
    sleep 2
  done
}

# expect STATUS PATH [curl options...]: GET PATH through nginx answers STATUS; prints the body.
expect() {
  local want=$1 path=$2 got
  shift 2
  got=$(curl --silent --show-error --max-time 10 --output "$work/body" --write-out '%{http_code}' "$@" "$base$path")
  if [ "$got" != "$want" ]; then
    say "GET $path: $got, expected $want"
    head -c 500 "$work/body" >&2 || true
    return 1
  fi
  cat "$work/body"
}

# The last line of a command's output as JSON, and one field of it.
field() { python3 -c 'import json, sys; print(json.loads(sys.stdin.read().splitlines()[-1])[sys.argv[1]])' "$1"; }

# Requests to /v1/me this edge container answered with 200, from its own /metrics.
answered_by() {
  docker exec "$1" python -c '
import urllib.request
text = urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=5).read().decode()
print(int(sum(
    float(line.rsplit(" ", 1)[1])
    for line in text.splitlines()
    if line.startswith("edge_requests_total{")
    and "route=\"/v1/me\"" in line and "status=\"200\"" in line
)))'
}

# --- the run ---------------------------------------------------------------------------------

say "building the image ${project}:latest (version ${version}, revision ${revision})"
compose build
image_field() { docker image inspect --format "$1" "${project}:latest"; }
if [ "$(image_field '{{.Config.User}}')" != 10001:10001 ] \
  || [ "$(image_field '{{index .Config.Labels "org.opencontainers.image.revision"}}')" != "$revision" ] \
  || [ "$(image_field '{{index .Config.Labels "org.opencontainers.image.version"}}')" != "$version" ] \
  || [ -z "$(image_field '{{if .Config.Healthcheck}}{{.Config.Healthcheck.Test}}{{end}}')" ]; then
  say "the image lacks its user 10001:10001, its labels or its health check"
  image_field '{{json .Config}}'
  exit 1
fi
say "starting the service"
compose up --detach
for service in postgres redis sync nginx; do wait_healthy "$service" 1; done
wait_healthy edge 2

say "an account and a key"
uid=$(compose run --rm --no-deps -T edge affdir-admin --json account create --plan pro | field uid)
key=$(compose run --rm --no-deps -T edge affdir-admin --json key create --account "$uid" --label smoke | field key)
auth=(--header "Authorization: Bearer ${key}")

say "the API through nginx"
expect 200 '/v1/programs?limit=1' "${auth[@]}" | python3 -c 'import json, sys; assert isinstance(json.load(sys.stdin)["data"], list)'
expect 200 /v1/me "${auth[@]}" | grep "$uid" >/dev/null
expect 401 /v1/me >/dev/null
expect 200 /openapi.json >/dev/null
say "the site through nginx, without the API's files"
expect 200 / >/dev/null
expect 404 /manifest.json >/dev/null

say "metrics and health from the compose network (not published)"
compose exec -T nginx wget -q -O - http://edge:9100/metrics | grep '^edge_requests_total{' >/dev/null
compose exec -T nginx wget -q -O - http://sync:9101/metrics | grep '^# TYPE ' >/dev/null
compose exec -T nginx wget -q -O /dev/null http://sync:9101/healthz
for target in edge:9100 sync:9101; do
  if compose port "${target%%:*}" "${target##*:}" >/dev/null 2>&1; then
    say "$target is published on the host: metrics must stay on the compose network"
    exit 1
  fi
done

say "scaling the edges to 3"
compose up --detach --no-deps --no-recreate --scale edge=3 edge
wait_healthy edge 3
# nginx asks Docker's DNS again once its answer is 5 s old (deploy/nginx.conf, valid=5s).
sleep 7
for _ in $(seq 30); do expect 200 /v1/me "${auth[@]}" >/dev/null; done
for id in $(compose ps --quiet edge); do
  count=$(answered_by "$id")
  say "edge container ${id:0:12} answered ${count} requests to /v1/me"
  if [ "$count" -lt 1 ]; then
    say "nginx sends nothing to edge container ${id:0:12}: it did not re-resolve edge"
    exit 1
  fi
done

status=0
say "passed"
