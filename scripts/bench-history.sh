#!/bin/sh
# bench-history.sh - the history append rate next to pgbench's one-row insert
# rate, both at one client on the same throwaway server (fsync on).
#
# usage: scripts/bench-history.sh [BUILD_DIR]   (default: build)
# SWF_BENCH_SECONDS (default 5) sets the length of each bench_history_append
# run; pgbench runs for PGBENCH_SECONDS (default 10). Runs as root too: the
# server then runs as the postgres user.
set -eu
build=${1:-build}
bindir=${SWF_PG_BINDIR:-/usr/lib/postgresql/15/bin}
[ -x "$bindir/initdb" ] || bindir=$(dirname "$(command -v initdb)")
bench="$build/bench_history_append"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }

dir=$(mktemp -d /tmp/swf-bench-XXXXXX)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$dir"
cleanup() {
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

as_pg "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale -N >/dev/null
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = on
CONF
as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
conn="host=$dir port=5432 user=postgres dbname=postgres"

echo "== swf history appends (one connection)"
out=$(SWF_DATABASE_URL="$conn" "$bench")
echo "$out"
single=$(echo "$out" | awk '$1 == "single" { print $2 }')

echo "== pgbench: one-row INSERT per transaction, 1 client, prepared"
"$bindir/psql" "$conn" -qc "CREATE TABLE t (id bigserial PRIMARY KEY, v text)"
echo "INSERT INTO t (v) VALUES ('x');" >"$dir/insert.sql"
pg=$("$bindir/pgbench" -n -M prepared -c 1 -T "${PGBENCH_SECONDS:-10}" -f "$dir/insert.sql" \
    -h "$dir" -U postgres postgres 2>/dev/null | awk '/^tps/ { print $3; exit }')
echo "pgbench      $pg tx/s"
echo "== single-event appends / pgbench inserts: $(awk -v a="$single" -v b="$pg" \
    'BEGIN { printf "%.2f", a / b }')"
