#!/bin/sh
# bench-append-anatomy.sh - what one history append costs PostgreSQL, beside
# pgbench's one-row INSERT on the same throwaway server (15, fsync on), in
# figures a loaded machine does not bend much: per transaction, the CPU of
# the backend (log_statement_stats: getrusage around each statement, which
# includes its commit's wait for the WAL flush only as CPU spent), the WAL written (bytes, records, full-page images; from
# pg_stat_wal), the WAL flushes, and the wall time. Each is also run with
# synchronous_commit=off, a measurement only, to tell the commit's wait for
# its WAL flush from the rest.
#
# usage: scripts/bench-append-anatomy.sh [BUILD_DIR] [SECONDS]  (default: build 3)
#
# Runs: bench_history_append's "single" (one event a transaction) and
# "step" (the six events of an activity step and its outbox row, one
# transaction, the decider's statement); the same with the hash chain's
# trigger held off (a measurement only); "step20" (20 executions' steps a
# transaction) and "batch100" (one event for each of 100 executions); the
# steps and batch100 again with the chain's trigger in C (history/pgext,
# when the server has the extension swf_chain: the same hashes); the same
# six events by a plain INSERT ... SELECT (the floor of those rows, see
# floor_setup); and pgbench -M prepared of `INSERT INTO t (v) VALUES ('x')`,
# all at one client. Each line gives the CPU a transaction and an event.
set -eu
build=${1:-build}
secs=${2:-3}
bench="$build/bench_history_append"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
. "$(dirname "$0")/throwaway-pg.sh"
P="$bindir/psql"
q() { "$P" "$conn" -Atc "$1"; }
q "ALTER SYSTEM SET track_wal_io_timing = on" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
q "CREATE TABLE t (id bigserial PRIMARY KEY, v text)" >/dev/null
echo "INSERT INTO t (v) VALUES ('x');" >"$dir/insert.sql"
# The executions of bench_history_append, created once (its own set-up).
SWF_DATABASE_URL="$conn" SWF_BENCH_SECONDS=1 SWF_BENCH_MODES=single "$bench" >/dev/null

# The backend's CPU: log_statement_stats logs each statement's getrusage
# ("! u.uuu s user, s.sss s system, ..."); summed from the server's log.
cpu_mark() { wc -l <"$dir/server.log"; }
cpu_since() {
    tail -n +"$(($1 + 1))" "$dir/server.log" |
        awk '/s user, .* s system, .* s elapsed/ { gsub(/!/, ""); u += $1; s += $4 } END { printf "%.6f", u + s }'
}

# measure NAME EVENTS_PER_TX TX_COMMAND...: the command prints its
# transaction count last.
measure() {
    name=$1
    per=$2
    shift 2
    q "SELECT pg_stat_reset_shared('wal')" >/dev/null
    m=$(cpu_mark)
    t0=$(date +%s.%N)
    n=$("$@")
    t1=$(date +%s.%N)
    c=$(cpu_since "$m")
    q "SELECT wal_bytes, wal_records, wal_fpi, wal_sync, round(wal_sync_time::numeric, 1) FROM pg_stat_wal" |
        awk -F'|' -v name="$name" -v n="$n" -v t0="$t0" -v t1="$t1" -v c="$c" -v per="$per" '{
            printf "%-40s %7d tx, %6.3f ms wall, %6.3f ms PostgreSQL CPU (%5.1f us an event), %6.0f WAL bytes, %5.1f records, %5.2f full pages, %4.2f flushes (%5.3f ms) a transaction\n",
                name, n, (t1 - t0) * 1000 / n, c * 1000 / n, c * 1e6 / n / per, $1 / n, $2 / n, $3 / n, $4 / n, $5 / n }'
}
swf_run() { # MODE OPTIONS
    SWF_DATABASE_URL="$conn" PGOPTIONS="$2 -c log_statement_stats=on" SWF_BENCH_EXECUTIONS=10 SWF_BENCH_SECONDS="$secs" SWF_BENCH_MODES="$1" "$bench" |
        sed -n 's/.*(\s*\([0-9]*\) tx\/s.* in \([0-9.]*\) s.*/\1 \2/p' | awk '{ printf "%d\n", $1 * $2 }'
}
pgb_run() { # OPTIONS
    PGOPTIONS="$1 -c log_statement_stats=on" "$bindir/pgbench" -n -M prepared -c 1 -T "$secs" -f "$dir/insert.sql" \
        -h "$dir" -U postgres postgres 2>/dev/null | awk '/number of transactions actually processed/ { print $NF; exit }' |
        cut -d/ -f1
}
# The floor of a step's rows: the six events of one step as the decider
# sent them (taken from the history once a step run has written some), put
# by one plain INSERT ... SELECT FROM jsonb_to_recordset into a copy of the
# events table (its key, no trigger), the document a constant of the
# prepared statement, so parsed once; ids from a sequence; the hash column
# (migration 7) a constant 32 bytes, so the floor writes the same bytes a
# row without computing the chain (the trigger is left out). pgbench takes
# ":name" for a variable: a colon before a letter in the document is
# doubled (pgbench leaves "::" alone), which adds a few bytes.
floor_setup() {
    q "CREATE TABLE ev2 (LIKE events INCLUDING INDEXES); CREATE SEQUENCE ev2_seq" >/dev/null
    doc=$(q "SELECT jsonb_agg(jsonb_build_object('x', execution_id, 'i', event_id, 't', event_type,
                 'ms', (extract(epoch FROM event_time) * 1000)::bigint, 'a', attributes) ORDER BY event_id)
             FROM (SELECT * FROM events WHERE execution_id = (SELECT execution_id FROM events
                   WHERE event_type = 'ActivityTaskCompleted' LIMIT 1)
                   AND event_type NOT IN ('WorkflowExecutionStarted') ORDER BY event_id LIMIT 6) e")
    printf "INSERT INTO ev2 SELECT r.x, nextval('ev2_seq'), r.t, timestamptz 'epoch' + r.ms * interval '1 millisecond', r.a, '\\\\x%s'::bytea FROM jsonb_to_recordset('%s'::jsonb) AS r(x text, i bigint, t text, ms bigint, a jsonb);\n" \
        "$(printf '%064d' 0)" "$(echo "$doc" | sed -e "s/'/''/g" -e 's/:\([A-Za-z_]\)/::\1/g')" >"$dir/floor.sql"
}
floor_run() { # OPTIONS
    PGOPTIONS="$1 -c log_statement_stats=on" "$bindir/pgbench" -n -M prepared -c 1 -T "$secs" -f "$dir/floor.sql" \
        -h "$dir" -U postgres postgres 2>/dev/null | awk '/number of transactions actually processed/ { print $NF; exit }' |
        cut -d/ -f1
}
# The chain's share (history/CHAIN.md): the events table with its BEFORE
# INSERT trigger held off and a constant 32-byte hash as the column's
# default, a measurement only (the owner's session; swf never runs so).
chain() { # on|off
    if [ "$1" = off ]; then
        q "ALTER TABLE events DISABLE TRIGGER events_chain;
           ALTER TABLE events ALTER COLUMN hash SET DEFAULT '\\x$(printf '%064d' 0)'" >/dev/null
    else
        q "ALTER TABLE events ENABLE TRIGGER events_chain; ALTER TABLE events ALTER COLUMN hash DROP DEFAULT" >/dev/null
    fi
}
# The chain's trigger in C (history/pgext/swf_chain.c), where the server
# has the extension: `swf db migrate`'s switch, done here in SQL (the
# owner's session). trigger FUNCTION points events_chain at it.
c_chain=$(q "SELECT count(*) FROM pg_available_extensions WHERE name = 'swf_chain'")
[ "$c_chain" = 0 ] || q "CREATE EXTENSION IF NOT EXISTS swf_chain" >/dev/null
[ "$c_chain" != 0 ] || echo "(no extension swf_chain on this server: no C chain rows)"
trigger() {
    q "CREATE OR REPLACE TRIGGER events_chain BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION $1()" >/dev/null
}
# both NAME EVENTS_PER_TX MODE OPTIONS: MODE with the plpgsql chain, with
# the C chain, and with none (the chain's trigger held off, as below).
both() {
    measure "$1" "$2" swf_run "$3" "$4"
    if [ "$c_chain" != 0 ]; then
        trigger swf_chain_events
        measure "$1, C chain" "$2" swf_run "$3" "$4"
        trigger swf_events_chain
    fi
    chain off
    measure "$1, no chain" "$2" swf_run "$3" "$4"
    chain on
}
for sc in on off; do
    o="-c synchronous_commit=$sc"
    measure "swf single (synchronous_commit $sc)" 1 swf_run single "$o"
    both "swf step (synchronous_commit $sc)" 6 step "$o"
    both "swf step20 (synchronous_commit $sc)" 120 step20 "$o"
    both "swf batch100 (synchronous_commit $sc)" 100 batch100 "$o"
    [ -f "$dir/floor.sql" ] || floor_setup
    measure "6 event rows, plain (synchronous_commit $sc)" 6 floor_run "$o"
    measure "pgbench INSERT (synchronous_commit $sc)" 1 pgb_run "$o"
done
