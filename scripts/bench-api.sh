#!/bin/sh
# bench-api.sh - the Step Functions API timed beside the Kafka path, on one
# `swf dev` (issue 19, item 8): StartExecution requests per second with 1, 4
# and 16 keep-alive clients (and `swf start` commands beside them), and steps
# per second of GetActivityTask -> SendTaskSuccess workers at 1, 10 and 50,
# beside `swf-worker --echo` at the same depths (bench/api.py says how).
#
# usage: scripts/bench-api.sh [BUILD_DIR] [bench/api.py options]
# SWF_BENCH_DECIDERS: the deciders of the swf dev (default 1).
# Each line of output is one figure; nothing is asserted about time.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
[ $# -gt 0 ] && shift
for p in swf swf-worker; do
    [ -x "$build/$p" ] || { echo "bench-api: no $build/$p: build first" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/swf-bench-api.XXXXXX")
dev=
cleanup() {
    [ -n "$dev" ] && kill "$dev" 2>/dev/null && wait "$dev" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
: >"$work/env"
"$build/swf" dev --deciders "${SWF_BENCH_DECIDERS:-1}" >"$work/env" 2>"$work/dev.log" &
dev=$!
for _ in $(seq 1 600); do
    grep -q AWS_DEFAULT_REGION "$work/env" && break
    kill -0 "$dev" 2>/dev/null || { cat "$work/dev.log" >&2; exit 1; }
    sleep 0.1
done
. "$work/env"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
status=0
/usr/bin/python3 "$root/bench/api.py" "$build/swf-worker" "$@" || status=$?
if [ $status -ne 0 ]; then
    kill -0 "$dev" 2>/dev/null || echo "bench-api: swf dev is gone ($(wait "$dev"; echo "exit status $?"))"
    dev=
    echo "bench-api: the end of swf dev's log:"
    tail -40 "$work/dev.log"
fi
exit $status
