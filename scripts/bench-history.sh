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
bench="$build/bench_history_append"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }

. "$(dirname "$0")/throwaway-pg.sh"

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
