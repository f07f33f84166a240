#!/usr/bin/env bash
# Runs COMMAND… with two throwaway PostgreSQL servers on 127.0.0.1, for the
# PostgreSQL registration store's tests:
#
#   scripts/with-postgres.sh swift test
#
# - main: TLS on (a self-signed certificate for localhost and 127.0.0.1),
#   scram-sha-256 passwords over TCP, trust on its unix socket.
# - restart: a copy without TLS, reserved for the test that stops and
#   starts its server (so no other test loses its server meanwhile).
#
# Exported to COMMAND:
#   PASSFORGE_TEST_POSTGRES_URL          postgres://passforge:PASSWORD@127.0.0.1:PORT/passforge?sslmode=disable
#                                        (the user may CREATE DATABASE: each test makes its own)
#   PASSFORGE_TEST_POSTGRES_SOCKET_DIR   main's unix socket folder
#   PASSFORGE_TEST_POSTGRES_CA           main's certificate (for sslmode=verify-full&sslrootcert=…)
#   PASSFORGE_TEST_POSTGRES_RESTART_URL  the same user on the restart server
#   PASSFORGE_TEST_POSTGRES_RESTART_DATA its data folder (for pg_ctl -D)
#   PASSFORGE_TEST_PG_CTL                a pg_ctl that runs as the servers' owner
#
# The servers are stopped and their folder deleted however COMMAND ends; the
# script exits with COMMAND's status. Run as root, the servers run as the
# `postgres` user (or `nobody`): initdb and postgres refuse root. Missing
# binaries are installed with apt-get (root, or sudo without a password).
# PASSFORGE_PG_BINDIR names another folder holding initdb, pg_ctl and psql.
set -uo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGUMENT…]   (e.g. $0 swift test)" >&2
    exit 2
fi

log() { echo "with-postgres: $*" >&2; }

find_bindir() {
    local candidate
    for candidate in "${PASSFORGE_PG_BINDIR:-}" /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
        if [ -n "$candidate" ] && [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/psql" ]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

install_postgres() {
    local sudo=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            log "PostgreSQL's server binaries are missing; install them (apt-get install postgresql) or set PASSFORGE_PG_BINDIR"
            return 1
        fi
    fi
    log "installing PostgreSQL with apt-get…"
    # No cluster of the package's own: the tests make theirs.
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
        $sudo mkdir -p /etc/postgresql-common
        echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null
    fi
    $sudo apt-get update -qq >&2 &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql openssl >&2
}

BINDIR=$(find_bindir) || { install_postgres && BINDIR=$(find_bindir); } || {
    log "cannot find or install PostgreSQL's initdb, pg_ctl and psql"
    exit 1
}

# Who runs the servers.
if [ "$(id -u)" = 0 ]; then
    if getent passwd postgres >/dev/null; then OWNER=postgres; else OWNER=nobody; fi
    as_owner() { runuser -u "$OWNER" -- "$@"; }
else
    OWNER=$(id -un)
    as_owner() { "$@"; }
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/passforge-postgres.XXXXXX") || exit 1
chmod 755 "$WORK"

stop_server() { # DATA
    local data=$1 pid
    [ -f "$data/postmaster.pid" ] || return 0
    as_owner "$BINDIR/pg_ctl" -D "$data" -m fast -w -t 20 stop >/dev/null 2>&1 && return 0
    as_owner "$BINDIR/pg_ctl" -D "$data" -m immediate -w -t 20 stop >/dev/null 2>&1 && return 0
    # Last resort: the postmaster we started, by its id.
    pid=$(head -1 "$data/postmaster.pid" 2>/dev/null)
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    return 0
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM HUP
    for data in "$WORK"/*/data; do
        [ -d "$data" ] && stop_server "$data"
    done
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null && return
    fi
    echo $((20000 + RANDOM % 40000))
}

random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

PASSWORD=$(random_hex 12)
SUPERPASSWORD=$(random_hex 12)

# One cluster, copied for the restart server: a single initdb.
mkdir -p "$WORK/main" "$WORK/restart" "$WORK/main/socket" "$WORK/restart/socket" "$WORK/bin" "$WORK/tls"
printf '%s\n' "$SUPERPASSWORD" > "$WORK/superpassword"
chown -R "$OWNER" "$WORK/main" "$WORK/restart" "$WORK/superpassword" 2>/dev/null || true
if ! as_owner "$BINDIR/initdb" -D "$WORK/main/data" -U postgres --pwfile="$WORK/superpassword" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-locale --no-sync >"$WORK/initdb.log" 2>&1; then
    log "initdb failed:"; cat "$WORK/initdb.log" >&2
    exit 1
fi
rm -f "$WORK/superpassword"
cat >> "$WORK/main/data/postgresql.conf" <<EOF

# with-postgres.sh: a throwaway test server.
listen_addresses = '127.0.0.1'
max_connections = 400
shared_buffers = 32MB
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
log_line_prefix = '%m [%p] '
EOF
as_owner cp -a "$WORK/main/data" "$WORK/restart/data"
# The restart test stops its server in immediate mode (a crash, to the server): a commit must be in the WAL when it
# is acknowledged, or the crash loses it (with synchronous_commit off, the tables the store's migration had just
# made were gone after the restart). fsync may stay off: the machine does not crash, only the server.
printf "synchronous_commit = on\n" >> "$WORK/restart/data/postgresql.conf"

# TLS for main: a certificate for localhost and 127.0.0.1, trusted through PASSFORGE_TEST_POSTGRES_CA.
if ! openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$WORK/main/data/server.key" -out "$WORK/main/data/server.crt" >"$WORK/openssl.log" 2>&1; then
    log "openssl could not make the test certificate:"; cat "$WORK/openssl.log" >&2
    exit 1
fi
chown "$OWNER" "$WORK/main/data/server.key" "$WORK/main/data/server.crt" 2>/dev/null || true
chmod 600 "$WORK/main/data/server.key"
cp "$WORK/main/data/server.crt" "$WORK/tls/ca.crt"
chmod 644 "$WORK/tls/ca.crt"
printf "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n" >> "$WORK/main/data/postgresql.conf"

start_server() { # NAME → prints the port
    local name=$1 data="$WORK/$1/data" port attempt
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        printf "port = %s\nunix_socket_directories = '%s'\n" "$port" "$WORK/$name/socket" >> "$data/postgresql.conf"
        if as_owner "$BINDIR/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start >/dev/null 2>&1; then
            echo "$port"
            return 0
        fi
        log "$name did not start on port $port (attempt $attempt)"
    done
    log "$name server log:"; cat "$data/server.log" >&2
    return 1
}

MAIN_PORT=$(start_server main) || exit 1
RESTART_PORT=$(start_server restart) || exit 1

for name in main restart; do
    port=$MAIN_PORT
    [ "$name" = restart ] && port=$RESTART_PORT
    if ! "$BINDIR/psql" -h "$WORK/$name/socket" -p "$port" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 \
            -c "CREATE ROLE passforge LOGIN CREATEDB PASSWORD '$PASSWORD'" \
            -c "CREATE DATABASE passforge OWNER passforge" >"$WORK/psql.log" 2>&1; then
        log "cannot create the test user on $name:"; cat "$WORK/psql.log" >&2
        exit 1
    fi
done

# pg_ctl as the servers' owner, for the restart test.
# It closes every descriptor but 0-2 first: a postmaster it starts would keep
# them open, and a caller waiting for one to close (Foundation's Process
# watches a socket its child inherits) would wait for the server's end.
cat > "$WORK/bin/pg_ctl" <<EOF
#!/usr/bin/env bash
for fd in \$(ls /proc/\$\$/fd 2>/dev/null); do
    [ "\$fd" -gt 2 ] && eval "exec \$fd>&-" 2>/dev/null
done
if [ "\$(id -u)" = 0 ]; then exec runuser -u "$OWNER" -- "$BINDIR/pg_ctl" "\$@"; fi
exec "$BINDIR/pg_ctl" "\$@"
EOF
chmod 755 "$WORK/bin/pg_ctl"

export PASSFORGE_TEST_POSTGRES_URL="postgres://passforge:$PASSWORD@127.0.0.1:$MAIN_PORT/passforge?sslmode=disable"
export PASSFORGE_TEST_POSTGRES_SOCKET_DIR="$WORK/main/socket"
export PASSFORGE_TEST_POSTGRES_CA="$WORK/tls/ca.crt"
export PASSFORGE_TEST_POSTGRES_RESTART_URL="postgres://passforge:$PASSWORD@127.0.0.1:$RESTART_PORT/passforge?sslmode=disable"
export PASSFORGE_TEST_POSTGRES_RESTART_DATA="$WORK/restart/data"
export PASSFORGE_TEST_PG_CTL="$WORK/bin/pg_ctl"
log "PostgreSQL $("$BINDIR/postgres" --version | awk '{print $3}') on 127.0.0.1:$MAIN_PORT (restart test: $RESTART_PORT), as $OWNER, in $WORK"

"$@"
