#!/bin/sh
# `make image-check`: the container image, built from the archive `make dist` wrote
# (docker build --build-arg ARCHIVE=dist), works: in it, as its own non-root user,
# `passforge init` and `build --development-signing` on a mounted project, then the default
# command `passforge serve` answers GET /health with 200 and the image's HEALTHCHECK passes.
#
#   scripts/test-image.sh            docker when its daemon answers, else podman
#   CONTAINER_ENGINE=podman scripts/test-image.sh
#
# Needs debian:bookworm-slim at the digest the Dockerfile pins (pulled, or already in the engine's images).
set -eu

cd "$(dirname "$0")/.."
engine=${CONTAINER_ENGINE:-}
if [ -z "$engine" ]; then
    if docker info >/dev/null 2>&1; then engine=docker
    elif podman info >/dev/null 2>&1; then engine=podman
    else
        echo "test-image: neither docker nor podman can run containers here; make dist-check tests the archive the image is made of" >&2
        exit 1
    fi
fi
count=$(ls dist/passforge-*-linux-*.tar.gz 2>/dev/null | wc -l)
[ "$count" = 1 ] || { echo "test-image: the Dockerfile takes the one archive in dist/, found $count; run make dist (and remove older ones)" >&2; exit 1; }

tag=passforge-image-test:$$
name=passforge-image-test-$$
project=$(mktemp -d)
cleanup() {
    $engine rm -f "$name" >/dev/null 2>&1 || true
    # Files the container's user wrote: removed from inside, as that user.
    $engine run --rm --entrypoint sh -v "$project:/srv/passforge" "$tag" -c 'rm -rf /srv/passforge/* /srv/passforge/.[!.]*' >/dev/null 2>&1 || true
    $engine rmi -f "$tag" >/dev/null 2>&1 || true
    rm -rf "$project"
}
trap cleanup EXIT

# podman keeps HEALTHCHECK only in the docker image format.
format=""; [ "$engine" = podman ] && format="--format docker"
echo "== $engine build --build-arg ARCHIVE=dist"
$engine build $format --build-arg ARCHIVE=dist -t "$tag" .

# The project folder belongs to the image's user (uid 10001) when we may give it away, as on a
# host; otherwise the containers run as the caller.
user=""
if [ "$(id -u)" = 0 ]; then chown 10001:10001 "$project"; else user="--user $(id -u):$(id -g)"; fi

echo "== passforge init, build --development-signing in the image"
$engine run --rm $user -v "$project:/srv/passforge" "$tag" init
$engine run --rm $user -v "$project:/srv/passforge" "$tag" build --development-signing

echo "== passforge serve (the default command)"
$engine run -d --name "$name" $user -p 127.0.0.1::8080 -v "$project:/srv/passforge" "$tag" >/dev/null
port=$($engine port "$name" 8080 | head -n1 | sed 's/.*://')
status=""
for _ in $(seq 1 100); do   # until the server listens (bounded: 100 tries)
    status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health" || true)
    [ "$status" = 200 ] && break
    $engine ps --format '{{.Names}}' | grep -qx "$name" || break   # it exited
    sleep 0.2
done
if [ "$status" != 200 ]; then
    echo "test-image: GET /health answered '${status:-nothing}', not 200; the server's output:" >&2
    $engine logs "$name" >&2 || true
    exit 1
fi
echo "ok    GET /health: 200"

uid=$($engine exec "$name" id -u)
[ "$uid" != 0 ] || { echo "test-image: the server runs as root" >&2; exit 1; }
echo "ok    serve runs as uid $uid"

if [ "$engine" = podman ]; then
    podman healthcheck run "$name" || { echo "test-image: the image's HEALTHCHECK failed" >&2; exit 1; }
else
    health=""
    for _ in $(seq 1 100); do   # the first check runs at the start of its interval
        health=$(docker inspect --format '{{.State.Health.Status}}' "$name")
        [ "$health" = starting ] || break
        sleep 0.5
    done
    [ "$health" = healthy ] || { echo "test-image: HEALTHCHECK says $health" >&2; exit 1; }
fi
echo "ok    the image's HEALTHCHECK passes"

if $engine run --rm --entrypoint sh "$tag" -c 'command -v swift || ls -d /usr/lib/swift /opt/swift' 2>/dev/null; then
    echo "test-image: the image holds a Swift toolchain" >&2; exit 1
fi
echo "ok    no Swift toolchain in the image"
echo "test-image: the image serves /health and builds a mounted project"
