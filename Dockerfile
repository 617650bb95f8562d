# syntax=docker/dockerfile:1
#
# One image for every process of the service, chosen by the command:
#
#   docker run IMAGE                     the edge (affdir-edge: the /v1 API)
#   docker run IMAGE affdir-build ...    the build (content/ -> dist/)
#   docker run IMAGE affdir-sync         the commission sync worker
#   docker run IMAGE affdir-admin ...    the operator CLI (accounts, keys, networks)
#
# Settings come from EDGE_* variables and flags (docs/configuration.md); compose.yaml and
# docs/deploy.md show a whole deployment.

# --- builder: the project's wheel and the wheels of everything it needs ---------------------
# The full image has a compiler, for any dependency that ships no wheel for this platform.
FROM python:3.11-bookworm AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
# Everything the wheel is made of; .dockerignore keeps out what is not (tests, .git, dist...).
COPY . .
# The build renders the site from templates/ beside the catalog package, which the wheel
# does not carry: /extra ships it where the installed package looks (site-packages/templates).
RUN python -m pip wheel --wheel-dir /wheels . \
    && mkdir -p /extra \
    && if [ -d templates ]; then cp -r templates /extra/templates; fi

# --- final: the runtime only, no compiler, no source tree, not root -------------------------
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# Installed from the builder's wheels only (--no-index): nothing is fetched or compiled here.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    python -m pip install --no-index --find-links=/wheels affdir
COPY --from=builder /extra/ /usr/local/lib/python3.11/site-packages/

# A fixed uid/gid, so volumes can be owned by it on the host (systemd, bind mounts).
RUN groupadd --system --gid 10001 affdir \
    && useradd --system --uid 10001 --gid affdir --home-dir /srv/affdir --shell /usr/sbin/nologin affdir \
    && mkdir -p /srv/affdir/public /srv/affdir/content /srv/affdir/var \
    && chown -R affdir:affdir /srv/affdir
WORKDIR /srv/affdir
USER affdir:affdir

# The edge's defaults for a container: listen on every interface, serve the shared build.
ENV EDGE_HOST=0.0.0.0 \
    EDGE_PORT=8080 \
    EDGE_DIST=/srv/affdir/public/dist \
    EDGE_SECRET_FILE=/srv/affdir/var/secret.key \
    EDGE_DATABASE=/srv/affdir/var/edge.sqlite3
EXPOSE 8080

CMD ["affdir-edge"]
