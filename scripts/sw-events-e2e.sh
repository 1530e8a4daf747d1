#!/bin/sh
# sw-events-e2e.sh - N loan-approval instances (examples/loan.sw.json)
# started by CloudEvents on `swf dev` with 2 deciders, each receiving its own
# approval event, through `swf send-event` (decider/sw/README.md): every
# instance must end with its own data, no event may be recorded twice in a
# history, none may be lost.
#
# usage: scripts/sw-events-e2e.sh [BUILD_DIR] [N]     (N: 200)
#
# Every 4th approval is sent right after its request, while the instance
# still runs loan-check (before it reaches its Decision EVENT state: kept as
# a pending event); every 5th request and every 5th approval are sent
# twice, the second copy concurrently with other sends. Sends run 4 at a
# time. Real time (no SWF_DEV_TIME_SKIP): the Decision's day-long timeout
# must not be skipped. Not yet: the events through the swf.events topic.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-200}
dir=$(mktemp -d /tmp/swf-sw-events-XXXXXX)
pids=
cleanup() {
    for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
    for p in $pids; do wait "$p" 2>/dev/null || true; done
    [ -n "${SWF_E2E_KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start=$(date +%s)

: >"$dir/env"; : >"$dir/dev.log"  # before swf dev starts: its redirections happen in the child
"$build"/swf dev --deciders 2 >"$dir/env" 2>"$dir/dev.log" &
pids=$!
for i in $(seq 1 240); do
    [ "$(wc -l <"$dir/env")" -ge 2 ] && break
    kill -0 "$pids" 2>/dev/null || { cat "$dir/dev.log" >&2; exit 1; }
    sleep 0.5
done
[ "$(wc -l <"$dir/env")" -ge 2 ] || { echo "swf dev did not start" >&2; cat "$dir/dev.log" >&2; exit 1; }
. "$dir/env"
"$build"/swf-worker --task-list loan-check --echo --concurrency 4 2>"$dir/check.log" &
pids="$pids $!"
"$build"/swf-worker --task-list loan-notify --echo --concurrency 4 2>"$dir/notify.log" &
pids="$pids $!"
"$build"/swf register loans examples/loan.sw.json >/dev/null

request() {
    echo "{\"specversion\":\"1.0\",\"id\":\"r$1\",\"source\":\"/loan-portal\",\"type\":\"loan.requested\",\"data\":{\"loanId\":\"L-$1\",\"amount\":$1}}"
}
approval() {
    ok=false
    [ $(($1 % 2)) -eq 0 ] && ok=true
    echo "{\"specversion\":\"1.0\",\"id\":\"d$1\",\"source\":\"/manager-app\",\"type\":\"loan.decision\",\"data\":{\"loanId\":\"L-$1\",\"approved\":\"$ok\"}}"
}
send() { # send FILE: one send-event; its report in FILE.out. A duplicate may
    # come after its instance closed: then nothing takes it (exit 1, dropped).
    "$build"/swf send-event loans "@$1" >"$1.out" 2>&1 || {
        case $1 in *.dup) grep -q '^dropped: no open instance' "$1.out" && return 0 ;; esac
        echo "send-event $1 failed:" >&2
        cat "$1.out" >&2
        return 1
    }
}

# Requests (some approvals right behind them), 4 sends at a time.
for i in $(seq 1 "$n"); do
    request "$i" >"$dir/r$i"
    approval "$i" >"$dir/d$i"
done
batch() { # batch FIRST LAST: the requests of FIRST..LAST, then early approvals
    for i in $(seq "$1" "$2"); do
        send "$dir/r$i"
        [ $((i % 4)) -eq 0 ] && send "$dir/d$i"
        [ $((i % 5)) -eq 0 ] && cp "$dir/r$i" "$dir/r$i.dup" && send "$dir/r$i.dup"
    done
}
q=$((n / 4))
batch 1 "$q" & b1=$!
batch $((q + 1)) $((2 * q)) & b2=$!
batch $((2 * q + 1)) $((3 * q)) & b3=$!
batch $((3 * q + 1)) "$n" & b4=$!
wait $b1 && wait $b2 && wait $b3 && wait $b4
# The other approvals, and the duplicates of every 5th.
approvals() {
    for i in $(seq "$1" "$2"); do
        [ $((i % 4)) -ne 0 ] && send "$dir/d$i"
        [ $((i % 5)) -eq 0 ] && cp "$dir/d$i" "$dir/d$i.dup" && send "$dir/d$i.dup"
    done
}
approvals 1 "$q" & b1=$!
approvals $((q + 1)) $((2 * q)) & b2=$!
approvals $((2 * q + 1)) $((3 * q)) & b3=$!
approvals $((3 * q + 1)) "$n" & b4=$!
wait $b1 && wait $b2 && wait $b3 && wait $b4
sent=$(date +%s)

sql() { psql "$SWF_DATABASE_URL" -XAtq -c "$1"; }
for i in $(seq 1 600); do
    open=$(sql "SELECT count(*) FROM executions WHERE state_machine = 'loans' AND status = 'open'")
    [ "$open" -eq 0 ] && break
    sleep 0.5
done
status=0
check() { # check NAME SQL EXPECTED
    got=$(sql "$2")
    if [ "$got" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1: got $got, want $3"; status=1; fi
}
check "$n instances, all succeeded" \
    "SELECT count(*) FILTER (WHERE status = 'succeeded') || '/' || count(*) FROM executions WHERE state_machine = 'loans'" "$n/$n"
check "each ends with its own loan and its own decision" \
    "SELECT count(*) FROM events e JOIN events s ON s.execution_id = e.execution_id AND s.event_id = 1
     WHERE e.event_type = 'WorkflowExecutionCompleted'
       AND e.attributes #>> '{result,request,loanId}' = s.attributes #>> '{startEvent,data,loanId}'
       AND e.attributes #>> '{result,decision,loanId}' = s.attributes #>> '{startEvent,data,loanId}'
       AND e.attributes #>> '{result,decision,approved}' =
           CASE WHEN (s.attributes #>> '{startEvent,data,amount}')::int % 2 = 0 THEN 'true' ELSE 'false' END" "$n"
check "no event recorded twice (one cloudevent signal per history, its own approval)" \
    "SELECT count(*) || '/' || count(DISTINCT e.execution_id) FROM events e JOIN events s ON s.execution_id = e.execution_id AND s.event_id = 1
     WHERE e.event_type = 'WorkflowExecutionSignaled' AND e.attributes->>'signalName' = 'cloudevent'
       AND e.attributes #>> '{input,data,loanId}' = s.attributes #>> '{startEvent,data,loanId}'" "$n/$n"
check "no other cloudevent signal" \
    "SELECT count(*) FROM events WHERE event_type = 'WorkflowExecutionSignaled'" "$n"
check "the projection is empty (every instance closed)" "SELECT count(*) FROM sw_instances" "0"
echo "sent in $((sent - start)) s, all closed $(($(date +%s) - sent)) s later ($n instances)"
[ $status -eq 0 ] || { tail -20 "$dir/dev.log" >&2; }
exit $status
