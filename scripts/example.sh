#!/bin/sh
# example.sh - runs the example order workflow (examples/order.asl.json:
# Choice, Retry/Catch, Parallel, Map, Wait, and a nested execution of
# examples/invoice.asl.json with startExecution.sync:2) on the distributed system of
# `swf dev` - PostgreSQL, Kafka (librdkafka's mock cluster), swf-history, two
# deciders - with three swf-worker processes doing its activities
# (examples/workers/). Prints the execution live, its result and its
# history, then `swf describe` of the order and of its invoice, which name
# each other, then stops everything. Exit status 0 when the order shipped
# and the two are linked both ways.
#
# usage: scripts/example.sh [BUILD_DIR]    (scripts/run-example.sh builds first)
#
# The Wait of an hour takes no time: `swf dev` runs with SWF_DEV_TIME_SKIP=1,
# a virtual clock that skips the time an execution spends idle.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
dir=$(mktemp -d /tmp/swf-example-XXXXXX)
pids=
cleanup() {
    for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
    for p in $pids; do wait "$p" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
show() { echo "\$ $*"; "$@"; }

echo "\$ swf dev --deciders 2 &    # PostgreSQL, Kafka (mock), swf-history, 2 deciders"
: >"$dir/env"; : >"$dir/dev.log"  # before swf dev starts: its redirections happen in the child
SWF_DEV_TIME_SKIP=1 "$build"/swf dev --deciders 2 >"$dir/env" 2>"$dir/dev.log" &
pids=$!
for i in $(seq 1 240); do
    [ "$(wc -l <"$dir/env")" -ge 2 ] && break
    kill -0 "$pids" 2>/dev/null || { cat "$dir/dev.log" >&2; exit 1; }
    sleep 0.5
done
[ "$(wc -l <"$dir/env")" -ge 2 ] || { echo "swf dev did not start" >&2; cat "$dir/dev.log" >&2; exit 1; }
cat "$dir/env"
. "$dir/env"

echo "\$ swf-worker --task-list payments --exec examples/workers/charge.sh &"
"$build"/swf-worker --task-list payments --exec examples/workers/charge.sh 2>"$dir/payments.log" &
pids="$pids $!"
echo "\$ swf-worker --task-list warehouse --exec examples/workers/pack.sh --concurrency 2 &"
"$build"/swf-worker --task-list warehouse --exec examples/workers/pack.sh --concurrency 2 \
    2>"$dir/warehouse.log" &
pids="$pids $!"
echo "\$ swf-worker --task-list email --echo &"
"$build"/swf-worker --task-list email --echo 2>"$dir/email.log" &
pids="$pids $!"

show "$build"/swf register invoice examples/invoice.asl.json
show "$build"/swf register orders examples/order.asl.json
echo "\$ swf start orders --input @examples/order.input.json --workflow-id order-A-1001 --wait"
"$build"/swf start orders --input @examples/order.input.json --workflow-id order-A-1001 --wait \
    | tee "$dir/follow"
id=$(head -1 "$dir/follow")
show "$build"/swf history "$id"
tail -1 "$dir/follow" | grep -q '"status":"SHIPPED"'
# The nested execution: the order names its invoice, the invoice its order.
show "$build"/swf describe "$id"
child=$("$build"/swf describe "$id" --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["children"][0]["executionId"])')
show "$build"/swf describe "$child"
"$build"/swf describe "$child" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["parent"]["executionId"] == sys.argv[1], d
assert d["status"] == "succeeded", d
' "$id"
