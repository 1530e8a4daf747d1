#!/bin/sh
# bench-start.sh - starting many executions with the shipped `swf` command:
# EXECUTIONS single `swf start` commands 8 at a time beside one
# `swf start --inputs` of EXECUTIONS lines, and one of BIG lines, on `swf dev`.
#
# usage: scripts/bench-start.sh [BUILD_DIR] [EXECUTIONS] [BIG] [ROUNDS]
#   default: build 400 4000 3
#
# Each round runs on a fresh `swf dev` (one decider; SWF_BENCH_DECIDERS for
# more) and starts, one after the other, each set on a state machine of its
# own (a Pass state, which the decider closes at its first decision):
#   1. EXECUTIONS `swf start` commands, 8 at a time (SWF_BENCH_START_PARALLEL);
#   2. one `swf start --inputs -` of EXECUTIONS lines;
#   3. one `swf start --inputs -` of BIG lines.
# For each: the time of the commands (starts/s), and when the decider had
# closed the last of them, counted from the same moment (all closed by the
# decide messages: no swf-history runs a sweep in `swf dev`'s time here).
# SWF_BENCH_KAFKA=HOST:PORT runs `swf dev --kafka` on that cluster (topics
# of the round's own; scripts/real-kafka.sh starts one).
# Each line of output is one figure; nothing is asserted about time.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
execs=${2:-400}
big=${3:-4000}
rounds=${4:-3}
parallel=${SWF_BENCH_START_PARALLEL:-8}
deciders=${SWF_BENCH_DECIDERS:-1}
[ -x "$build/swf" ] || { echo "no $build/swf: build first" >&2; exit 2; }
command -v psql >/dev/null || { echo "bench-start.sh: needs psql" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/swf-bench-start.XXXXXX")
dev_pid=''
. "$root/scripts/bench-dev.sh"
trap 'dev_stop; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

echo '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}' >"$work/pass.json"
now() { python3 -c 'import time; print(time.time())'; }

# Waits until every execution of state machine $1 is closed; prints a
# figure line: $2 (what), $3 executions, started from $4 to $5 (epoch s).
report() {
    closed_wait "$1"
    last=$(psql "$SWF_DATABASE_URL" -Atc "SELECT extract(epoch FROM max(close_time)) FROM executions WHERE state_machine = '$1'")
    ok=$(psql "$SWF_DATABASE_URL" -Atc "SELECT count(*) FROM executions WHERE status = 'succeeded' AND state_machine = '$1'")
    python3 -c "import sys
what, n, ok, t0, t1, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *map(float, sys.argv[4:])
print('%s: %d started in %.2f s = %.0f starts/s; %d succeeded, the last closed %.2f s after the start' % (what, n, t1 - t0, n / (t1 - t0), ok, last - t0))" \
        "$2" "$3" "$ok" "$4" "$5" "$last"
}

lines() { python3 -c "import sys; [print('{\"input\": {\"n\": %d}}' % i) for i in range(int(sys.argv[1]))]" "$1"; }

round=0
while [ $round -lt "$rounds" ]; do
    round=$((round + 1))
    dev_start
    echo "round $round ($(cut -d' ' -f1-3 /proc/loadavg) load average)"
    for sm in single batch big; do
        "$build/swf" register "$sm" "$work/pass.json" >/dev/null
    done

    t0=$(now)
    seq "$execs" | xargs -P "$parallel" -I{} "$build/swf" start single --input '{"n": {}}' \
        >"$work/ids" 2>"$work/start.err"
    t1=$(now)
    report single "  $execs swf start commands, $parallel at a time" "$(wc -l <"$work/ids")" "$t0" "$t1"

    lines "$execs" >"$work/batch.jsonl"
    t0=$(now)
    "$build/swf" start batch --inputs - <"$work/batch.jsonl" >"$work/ids" 2>"$work/start.err"
    t1=$(now)
    report batch "  one swf start --inputs of $execs lines" "$(wc -l <"$work/ids")" "$t0" "$t1"

    lines "$big" >"$work/big.jsonl"
    t0=$(now)
    "$build/swf" start big --inputs - <"$work/big.jsonl" >"$work/ids" 2>"$work/start.err"
    t1=$(now)
    report big "  one swf start --inputs of $big lines" "$(wc -l <"$work/ids")" "$t0" "$t1"
    dev_stop
done
