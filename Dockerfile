# syntax=docker/dockerfile:1
# passforge in a container: the binary of the release archive (`make dist`) on Debian slim,
# with only the shared libraries the archive's debian-packages lists (read off ldd).
#
#   docker build -t passforge .                               # builds the archive inside (10+ min)
#   make dist && docker build --build-arg ARCHIVE=dist -t passforge .   # packs the archive you built
#
#   docker run -d -p 127.0.0.1:8080:8080 -v /srv/passforge:/srv/passforge passforge   # serve, to this host only
#   docker run --rm -v "$PWD":/srv/passforge passforge build --development-signing
#
# The project (passforge.yml, output/, state/) is mounted at /srv/passforge, the working
# directory; it must be writable by uid 10001 (the passforge user), or run with
# --user "$(id -u):$(id -g)". The build and runtime images must be the same Debian release:
# the libraries' sonames (libzint.so.2.11, libzip.so.4) are the release's.
#
# Publish the port on 127.0.0.1 (as above), for nginx or Caddy on the host in front: `-p 8080:8080`
# would open it on every interface of the host, past the TLS terminator and its limits.

# source: `make dist` inside the official Swift image; ARCHIVE=dist takes ./dist instead.
ARG ARCHIVE=source

FROM swift:6.3-bookworm AS archive-source
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       libssl-dev libzip-dev libsqlite3-dev pkg-config zlib1g-dev libzint-dev libxml2-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# PASSFORGE_BUILD_COMMIT: the commit to show in --version (the context has no .git).
ARG PASSFORGE_BUILD_COMMIT=
RUN rm -rf dist && PASSFORGE_BUILD_COMMIT="$PASSFORGE_BUILD_COMMIT" scripts/dist.sh \
    && mkdir /archive && mv dist/passforge-*-linux-*.tar.gz /archive/

FROM scratch AS archive-dist
COPY dist/passforge-*-linux-*.tar.gz /archive/

FROM archive-${ARCHIVE} AS archive

# The runtime base, pinned by digest (the multi-architecture index's), so a rebuild gets the same
# bytes. To move to a newer Debian 12 slim image (security updates): run
#   docker buildx imagetools inspect debian:bookworm-slim
# put the "Digest:" it prints after the @ below, rebuild, and run make image-check.
FROM debian:bookworm-slim@sha256:e899040a73d36e2b36fa33216943539d9957cba8172b858097c2cabcdb20a3e2
# One archive, mounted (not copied: it would stay in a layer): unpack it to /opt/passforge,
# install the libraries its debian-packages names.
RUN --mount=type=bind,from=archive,source=/archive,target=/tmp/archive \
    set -eu; \
    [ "$(ls /tmp/archive | wc -l)" = 1 ] || { echo "expected one archive in dist/, found: $(ls /tmp/archive)" >&2; exit 1; }; \
    mkdir /opt/passforge; \
    tar -xzf /tmp/archive/*.tar.gz -C /opt/passforge --strip-components=1; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive xargs apt-get install -y --no-install-recommends < /opt/passforge/debian-packages; \
    apt-get clean; rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin; \
    ln -s /opt/passforge/bin/passforge /usr/local/bin/passforge; \
    passforge --version; \
    useradd --uid 10001 --user-group --home-dir /srv/passforge --no-create-home --shell /usr/sbin/nologin passforge; \
    install -d -o passforge -g passforge /srv/passforge

USER passforge:passforge
WORKDIR /srv/passforge
# Listens on every address of the container (the published port reaches the container's own
# interface, not its loopback); `docker run -p 127.0.0.1:8080:8080` keeps it on the host's
# loopback. The store defaults to state/registrations.sqlite
# in the mounted project (PASSFORGE_DATABASE_URL chooses another, e.g. postgres://...).
EXPOSE 8080
ENTRYPOINT ["passforge"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]

# GET /health with bash alone (no curl in the image). When webServiceURL has a path, the
# server answers under it: set PASSFORGE_HEALTH_PATH=/passes/health.
ENV PASSFORGE_HEALTH_PATH=/health
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET %s HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' \"$PASSFORGE_HEALTH_PATH\" >&3 && read -r _ status _ <&3 && [ \"$status\" = 200 ]"]
