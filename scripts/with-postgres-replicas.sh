#!/usr/bin/env bash
# Runs COMMAND… with a throwaway PostgreSQL primary and a streaming standby on
# 127.0.0.1, for the failover and partition tests:
#
#   scripts/with-postgres-replicas.sh swift test --skip-build --filter PostgresFaultTests
#
# - primary: wal_level=replica, synchronous replication to the standby
#   (synchronous_standby_names = '*' once it streams, synchronous_commit = on): a commit is
#   acknowledged once the standby has it, so a failover loses nothing acknowledged.
# - standby: pg_basebackup -R of the primary, hot standby; once promoted it
#   waits for no standby of its own (synchronous_standby_names = '').
# Both trust connections on loopback (throwaway servers, nothing to protect).
#
# Exported to COMMAND:
#   PASSFORGE_TEST_REPLICA_URL           postgres://passforge@127.0.0.1:P1,127.0.0.1:P2/passforge?target_session_attrs=read-write&sslmode=disable
#   PASSFORGE_TEST_REPLICA_PRIMARY_URL   the primary alone (the same user and database)
#   PASSFORGE_TEST_REPLICA_STANDBY_URL   the standby alone
#   PASSFORGE_TEST_REPLICA_PRIMARY_PORT, PASSFORGE_TEST_REPLICA_STANDBY_PORT
#   PASSFORGE_TEST_REPLICA_PRIMARY_DATA, PASSFORGE_TEST_REPLICA_STANDBY_DATA   their data folders (pg_ctl -D)
#   PASSFORGE_TEST_REPLICA_PG_CTL        a pg_ctl that runs as the servers' owner
#
# Both servers are stopped and their folder deleted however COMMAND ends; the
# script exits with COMMAND's status. Run as root, the servers run as the
# `postgres` user (or `nobody`): initdb and postgres refuse root.
# PASSFORGE_PG_BINDIR names another folder holding initdb, pg_ctl, pg_basebackup and psql.
set -uo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGUMENT…]" >&2
    exit 2
fi

log() { echo "with-postgres-replicas: $*" >&2; }

find_bindir() {
    local candidate
    for candidate in "${PASSFORGE_PG_BINDIR:-}" /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
        if [ -n "$candidate" ] && [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/pg_basebackup" ]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

BINDIR=$(find_bindir) || {
    log "cannot find PostgreSQL's initdb, pg_ctl and pg_basebackup; run scripts/with-postgres.sh once (it installs them) or set PASSFORGE_PG_BINDIR"
    exit 1
}

if [ "$(id -u)" = 0 ]; then
    if getent passwd postgres >/dev/null; then OWNER=postgres; else OWNER=nobody; fi
    as_owner() { runuser -u "$OWNER" -- "$@"; }
else
    OWNER=$(id -un)
    as_owner() { "$@"; }
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/passforge-replicas.XXXXXX") || exit 1
chmod 755 "$WORK"

stop_server() { # DATA
    local data=$1 pid
    [ -f "$data/postmaster.pid" ] || return 0
    as_owner "$BINDIR/pg_ctl" -D "$data" -m immediate -w -t 20 stop >/dev/null 2>&1 && return 0
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
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

mkdir -p "$WORK/primary/socket" "$WORK/standby/socket" "$WORK/bin"
chown -R "$OWNER" "$WORK/primary" "$WORK/standby" 2>/dev/null || true
if ! as_owner "$BINDIR/initdb" -D "$WORK/primary/data" -U postgres --auth=trust -E UTF8 --no-locale --no-sync \
        >"$WORK/initdb.log" 2>&1; then
    log "initdb failed:"; cat "$WORK/initdb.log" >&2
    exit 1
fi
cat >> "$WORK/primary/data/postgresql.conf" <<CONF

# with-postgres-replicas.sh: a throwaway primary with a synchronous standby.
listen_addresses = '127.0.0.1'
max_connections = 200
shared_buffers = 32MB
wal_level = replica
max_wal_senders = 5
hot_standby = on
synchronous_commit = on
# The machine does not crash, only the servers (immediate stops): the OS keeps what was written.
fsync = off
full_page_writes = off
log_min_messages = warning
log_line_prefix = '%m [%p] '
CONF
printf "host replication all 127.0.0.1/32 trust\n" >> "$WORK/primary/data/pg_hba.conf"

start_server() { # NAME → prints the port
    local name=$1 data="$WORK/$1/data" port attempt
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        printf "port = %s\nunix_socket_directories = '%s'\n" "$port" "$WORK/$name/socket" >> "$data/postgresql.conf"
        if as_owner "$BINDIR/pg_ctl" -D "$data" -l "$WORK/$name/server.log" -w -t 60 start >/dev/null 2>&1; then
            echo "$port"
            return 0
        fi
        log "$name did not start on port $port (attempt $attempt)"
    done
    log "$name server log:"; cat "$WORK/$name/server.log" >&2
    return 1
}

PRIMARY_PORT=$(start_server primary) || exit 1
if ! "$BINDIR/psql" -h "$WORK/primary/socket" -p "$PRIMARY_PORT" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE passforge LOGIN CREATEDB" -c "CREATE DATABASE passforge OWNER passforge" >"$WORK/psql.log" 2>&1; then
    log "cannot create the test user:"; cat "$WORK/psql.log" >&2
    exit 1
fi

# The standby: a base backup with the settings to follow the primary (-R writes primary_conninfo and standby.signal).
if ! as_owner "$BINDIR/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$WORK/standby/data" \
        -R -X stream -c fast --no-sync >"$WORK/basebackup.log" 2>&1; then
    log "pg_basebackup failed:"; cat "$WORK/basebackup.log" >&2
    exit 1
fi
# Once promoted, the standby has no standby of its own: it must not wait for one.
printf "\nsynchronous_standby_names = ''\n" >> "$WORK/standby/data/postgresql.conf"
STANDBY_PORT=$(start_server standby) || exit 1

# Synchronous from here (set only now: until a standby streams, every commit would wait for one).
if ! "$BINDIR/psql" -h "$WORK/primary/socket" -p "$PRIMARY_PORT" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 \
        -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >"$WORK/psql.log" 2>&1; then
    log "cannot turn synchronous replication on:"; cat "$WORK/psql.log" >&2
    exit 1
fi
for _ in $(seq 1 100); do
    state=$("$BINDIR/psql" -h "$WORK/primary/socket" -p "$PRIMARY_PORT" -U postgres -d postgres -X -q -t -A \
        -c "SELECT sync_state FROM pg_stat_replication" 2>/dev/null)
    [ "$state" = sync ] && break
    sleep 0.1
done
if [ "${state:-}" != sync ]; then
    log "the standby did not become synchronous (pg_stat_replication: '${state:-}')"; cat "$WORK/standby/server.log" >&2
    exit 1
fi

# pg_ctl as the servers' owner, closing every descriptor but 0-2 first (see scripts/with-postgres.sh).
cat > "$WORK/bin/pg_ctl" <<SCRIPT
#!/usr/bin/env bash
for fd in \$(ls /proc/\$\$/fd 2>/dev/null); do
    [ "\$fd" -gt 2 ] && eval "exec \$fd>&-" 2>/dev/null
done
if [ "\$(id -u)" = 0 ]; then exec runuser -u "$OWNER" -- "$BINDIR/pg_ctl" "\$@"; fi
exec "$BINDIR/pg_ctl" "\$@"
SCRIPT
chmod 755 "$WORK/bin/pg_ctl"

export PASSFORGE_TEST_REPLICA_URL="postgres://passforge@127.0.0.1:$PRIMARY_PORT,127.0.0.1:$STANDBY_PORT/passforge?target_session_attrs=read-write&sslmode=disable"
export PASSFORGE_TEST_REPLICA_PRIMARY_URL="postgres://passforge@127.0.0.1:$PRIMARY_PORT/passforge?sslmode=disable"
export PASSFORGE_TEST_REPLICA_STANDBY_URL="postgres://passforge@127.0.0.1:$STANDBY_PORT/passforge?sslmode=disable"
export PASSFORGE_TEST_REPLICA_PRIMARY_PORT=$PRIMARY_PORT
export PASSFORGE_TEST_REPLICA_STANDBY_PORT=$STANDBY_PORT
export PASSFORGE_TEST_REPLICA_PRIMARY_DATA="$WORK/primary/data"
export PASSFORGE_TEST_REPLICA_STANDBY_DATA="$WORK/standby/data"
export PASSFORGE_TEST_REPLICA_PG_CTL="$WORK/bin/pg_ctl"
log "primary on 127.0.0.1:$PRIMARY_PORT, synchronous standby on 127.0.0.1:$STANDBY_PORT, as $OWNER, in $WORK"

"$@"
