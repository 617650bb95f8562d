# One image for every process of the service, chosen by the command:
#
#   docker run IMAGE                     the edge (affdir-edge: the /v1 API)
#   docker run IMAGE affdir-build ...    the build (content/ -> dist/)
#   docker run IMAGE affdir-sync         the commission sync worker
#   docker run IMAGE affdir-admin ...    the operator CLI (accounts, keys, networks)
#
# Settings come from EDGE_* variables and flags (docs/configuration.md); compose.yaml and
# docs/deploy.md show a whole deployment. `RUN --mount` needs BuildKit, Docker's builder
# since Docker 23, whose built-in Dockerfile frontend reads it (no `# syntax=` image to pull).
#
# Base images are pinned by digest (the tag beside it says which release the digest is):
# a rebuild gets the same bytes, and Dependabot (.github/dependabot.yml) proposes new digests.

# --- builder: the project's wheel and the wheels of everything it needs ---------------------
# The full image has a compiler, for any dependency that ships no wheel for this platform.
FROM python:3.11.15-bookworm@sha256:a8f8fbe1a0edc9e4dddafa64ba73f7e04be7be5ebc23f332362e779e0a2e4e52 AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
# Everything the wheel is made of; .dockerignore keeps out what is not (tests, .git, dist...).
# The wheel carries the site's templates as the package catalog.templates (pyproject.toml).
COPY . .
RUN python -m pip wheel --wheel-dir /wheels .

# --- final: the runtime only, no compiler, no source tree, not root -------------------------
FROM python:3.11.15-slim-bookworm@sha256:d29f48a31a8b408ed19272ca1e7b10ebae13b240a27e862d3d4217c528e2e0c3

# What the image is (OCI annotations); CI passes the version and the commit it built.
ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="affdir" \
      org.opencontainers.image.description="Affiliate programme directory and commission reporting API: the edge, the build, the sync worker and the admin CLI" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11.15-slim-bookworm"

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# Installed from the builder's wheels only (--no-index): nothing is fetched or compiled here.
# hadolint DL3013 (pin versions in pip): --no-index with one wheel per package pins them all.
# hadolint ignore=DL3013
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    python -m pip install --no-index --find-links=/wheels affdir

# A fixed uid/gid, so volumes can be owned by it on the host (systemd, bind mounts).
RUN groupadd --system --gid 10001 affdir \
    && useradd --system --uid 10001 --gid affdir --home-dir /srv/affdir --shell /usr/sbin/nologin affdir \
    && mkdir -p /srv/affdir/public /srv/affdir/content /srv/affdir/var \
    && chown -R affdir:affdir /srv/affdir
WORKDIR /srv/affdir
# Numeric, not the name: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 10001:10001

# The edge's defaults for a container: listen on every interface, serve the shared build.
# hadolint DL3064 (sensitive data in ENV) is about EDGE_SECRET_FILE: a path, not a secret.
# hadolint ignore=DL3064
ENV EDGE_HOST=0.0.0.0 \
    EDGE_PORT=8080 \
    EDGE_DIST=/srv/affdir/public/dist \
    EDGE_SECRET_FILE=/srv/affdir/var/secret.key \
    EDGE_DATABASE=/srv/affdir/var/edge.sqlite3
EXPOSE 8080

# The edge's readiness (a build loaded, the store answering): 200, or the check fails. The
# image has no curl; its Python asks. Another command (the sync worker) is given its own
# check by whatever runs it (compose.yaml does).
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('EDGE_PORT', '8080'), timeout=2)"]

CMD ["affdir-edge"]
