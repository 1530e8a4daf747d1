#!/bin/sh
# Runs a sample of the conformance corpus through the distributed system
# (`swf run --dev` against one `swf dev`: PostgreSQL, mock Kafka, swf-history,
# two deciders) and through `swf run --local`, and fails when they differ.
# usage: scripts/dev-conformance.sh [BUILD_DIR] [FILTER...]
# Timers run 1000 times faster (SWF_DEV_TIME_SCALE=0.001): a Wait of a day
# still takes 86 s and exceeds the harness's 10 s (wait/seconds-long-virtual).
set -eu
build=${1:-build}
shift || true
filters=${*:-retry/ map/ parallel/ wait/ task/ catch/}
run=/work/shared/conformance/run
dir=$(mktemp -d)
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT INT TERM
SWF_DEV_TIME_SCALE=0.001 "$build/swf" dev --deciders 2 >"$dir/env" 2>"$dir/log" &
pid=$!
for i in $(seq 1 120); do [ "$(wc -l <"$dir/env")" -ge 2 ] && break; sleep 0.5; done
. "$dir/env"
status=0
for f in $filters; do
    dev=$("$run" --filter "$f" --jobs 2 -- "$build/swf" run --dev | tail -1)
    local_=$(env -u SWF_DATABASE_URL -u SWF_KAFKA_BROKERS "$run" --filter "$f" --jobs 2 -- "$build/swf" run --local | tail -1)
    echo "$f: dev: $dev; local: $local_"
    [ "$dev" = "$local_" ] || status=1
done
exit $status
