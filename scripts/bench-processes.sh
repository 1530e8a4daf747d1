#!/bin/sh
# bench-processes.sh - the shipped programs, timed as a new user runs them:
# `swf start` commands and `swf-worker --echo` processes on `swf dev`.
#
# usage: scripts/bench-processes.sh [BUILD_DIR] [EXECUTIONS] [CONCURRENCY...]
#   default: build 400 1 4 16
#
# For each CONCURRENCY, on a fresh `swf dev` (one decider; SWF_BENCH_DECIDERS
# for more):
#   1. `swf start` throughput: EXECUTIONS commands, 8 at a time
#      (SWF_BENCH_START_PARALLEL), with no worker running yet, so the
#      commands share the machine with the system only; the time of all of
#      them, and the commands per second.
#   2. workers: two `swf-worker --echo --concurrency N` processes
#      (SWF_BENCH_WORKERS) serve the executions' ten Tasks each. The rate is
#      the ActivityTaskCompleted events over the time from the first of them
#      to the last execution's close, both read from the history, so the
#      workers' group join is not counted. Every execution must succeed.
# SWF_BENCH_ONE_DEV=1 runs every CONCURRENCY on one `swf dev`, one after the
# other (librdkafka's mock cluster slows as its logs grow: see README.md).
# SWF_BENCH_WORKERS_FIRST=S starts the workers S seconds before the
# `swf start` commands, so that they serve the executions as they start.
# SWF_BENCH_KAFKA=HOST:PORT runs `swf dev --kafka` on that cluster instead
# of the mock one (each round on topics of its own; scripts/real-kafka.sh
# starts one; the clients keep librdkafka's session timeout there).
# Each line of output is one figure; nothing is asserted about time. The
# longest pause is the longest time between two ActivityTaskCompleted
# events of the run: a consumer group's rebalance shows there (README.md,
# "A whole run stalled for 44 s").
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
[ $# -gt 0 ] && shift
execs=${1:-400}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 1 4 16
parallel=${SWF_BENCH_START_PARALLEL:-8}
nworkers=${SWF_BENCH_WORKERS:-2}
deciders=${SWF_BENCH_DECIDERS:-1}
for p in swf swf-worker; do
    [ -x "$build/$p" ] || { echo "no $build/$p: build first" >&2; exit 2; }
done
command -v psql >/dev/null || { echo "bench-processes.sh: needs psql" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/swf-bench-proc.XXXXXX")
dev_pid='' worker_pids=''
. "$root/scripts/bench-dev.sh"
stop_all() {
    for p in $worker_pids; do kill "$p" 2>/dev/null || true; done
    for p in $worker_pids; do wait "$p" 2>/dev/null || true; done
    worker_pids=''
    dev_stop
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Ten Tasks in a row on one task list.
python3 - >"$work/ten.json" <<'EOF'
import json
states = {}
for i in range(10):
    states["T%d" % i] = {"Type": "Task", "Resource": "arn:aws:states:::activity:bench",
                         **({"Next": "T%d" % (i + 1)} if i < 9 else {"End": True})}
print(json.dumps({"StartAt": "T0", "States": states}))
EOF

now() { python3 -c 'import time; print(time.monotonic())'; }

start_workers() {
    i=0
    while [ $i -lt "$nworkers" ]; do
        "$build/swf-worker" --task-list bench --echo --concurrency "$conc" \
            --identity "bench-$i" 2>"$work/worker$i.err" &
        worker_pids="$worker_pids $!"
        i=$((i + 1))
    done
}

round=0
for conc in "$@"; do
    round=$((round + 1))
    sm="ten$round"
    [ -n "$dev_pid" ] || dev_start
    "$build/swf" register "$sm" "$work/ten.json" >/dev/null

    if [ -n "${SWF_BENCH_WORKERS_FIRST:-}" ]; then
        start_workers
        sleep "$SWF_BENCH_WORKERS_FIRST"
    fi
    t0=$(now)
    seq "$execs" | xargs -P "$parallel" -I{} "$build/swf" start "$sm" --input '{"n": {}}' \
        >"$work/ids" 2>"$work/start.err"
    t1=$(now)
    started=$(wc -l <"$work/ids")
    python3 -c "import sys; n, t = int(sys.argv[1]), float(sys.argv[3]) - float(sys.argv[2]); \
print('swf start: %d commands, %s at a time: %.2f s, %.0f commands/s, %.1f ms each' % (n, sys.argv[4], t, n / t, t * 1000 * int(sys.argv[4]) / n))" \
        "$started" "$t0" "$t1" "$parallel"

    [ -n "${SWF_BENCH_WORKERS_FIRST:-}" ] || start_workers
    closed_wait "$sm"
    psql "$SWF_DATABASE_URL" -Atc "
        SELECT format('swf-worker --echo --concurrency %s, %s processes: %s executions (%s succeeded), %s steps in %s s = %s steps/s',
            $conc, $nworkers, (SELECT count(*) FROM executions WHERE state_machine = '$sm'),
            (SELECT count(*) FROM executions WHERE status = 'succeeded' AND state_machine = '$sm'),
            n, round(s::numeric, 2), round((n / nullif(s, 0))::numeric))
        FROM (SELECT count(*) AS n,
                     extract(epoch FROM (SELECT max(close_time) FROM executions
                                         WHERE state_machine = '$sm') - min(event_time)) AS s
              FROM events e JOIN executions x USING (execution_id)
              WHERE e.event_type = 'ActivityTaskCompleted' AND x.state_machine = '$sm') c"
    psql "$SWF_DATABASE_URL" -Atc "
        SELECT format('  the longest pause between two tasks completed: %s s', round(max(gap)::numeric, 2))
        FROM (SELECT extract(epoch FROM event_time - lag(event_time) OVER (ORDER BY event_time)) AS gap
              FROM events e JOIN executions x USING (execution_id)
              WHERE e.event_type = 'ActivityTaskCompleted' AND x.state_machine = '$sm') g"
    # The workers' CPU (user and system), which a loaded machine bends
    # less than their rate.
    ticks=0
    for p in $worker_pids; do
        t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)
        ticks=$((ticks + t))
    done
    echo "  the workers' CPU: $((ticks * 1000 / $(getconf CLK_TCK))) ms for $((execs * 10)) steps"
    if [ -n "${SWF_BENCH_ONE_DEV:-}" ]; then
        for p in $worker_pids; do kill "$p" 2>/dev/null || true; done
        for p in $worker_pids; do wait "$p" 2>/dev/null || true; done
        worker_pids=''
    else
        stop_all
    fi
done
