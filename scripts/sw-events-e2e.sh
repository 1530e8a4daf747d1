#!/bin/sh
# sw-events-e2e.sh - N loan-approval instances (examples/loan.sw.json)
# started by CloudEvents on `swf dev` with 2 deciders, each receiving its own
# approval event (decider/sw/README.md): every instance must end with its own
# data, no event may be recorded twice in a history, none may be lost. The
# events are published to the swf.events topic (CloudEvents Kafka binding,
# structured mode, the key naming the state machine; decider/sw_events.h) by
# /usr/bin/python3 with confluent-kafka, together with two malformed events
# that must reach the dead letters; every 10th late approval goes through
# `swf send-event` instead.
#
# usage: scripts/sw-events-e2e.sh [BUILD_DIR] [N]     (N: 200)
#
# Every 4th approval is sent right after its request, while the instance
# still runs loan-check (before it reaches its Decision EVENT state: kept as
# a pending event); every 5th request and every 5th approval are sent
# twice. Real time (no SWF_DEV_TIME_SKIP): the Decision's day-long timeout
# must not be skipped.
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

# Every event goes to the topic, in one stream keyed by the state machine, so
# that an approval sent right behind its request cannot overtake it: the
# requests, every 4th approval right behind its request (early: kept pending),
# the duplicate of every 5th request; then the other approvals and the
# duplicate of every 5th approval; and two malformed events (not JSON; no
# source). Every 10th late approval goes through `swf send-event` instead,
# 4 at a time, so the command's path runs here too.
for i in $(seq 1 "$n"); do
    request "$i" >"$dir/r$i"
    approval "$i" >"$dir/d$i"
done
for i in $(seq 1 "$n"); do
    cat "$dir/r$i"
    [ $((i % 4)) -eq 0 ] && cat "$dir/d$i"
    [ $((i % 5)) -eq 0 ] && cat "$dir/r$i"
done >"$dir/topic"
for i in $(seq 1 "$n"); do
    [ $((i % 4)) -ne 0 ] && [ $((i % 10)) -ne 1 ] && cat "$dir/d$i"
    [ $((i % 5)) -eq 0 ] && cat "$dir/d$i"
done >>"$dir/topic"
echo '{"not json' >>"$dir/topic"
echo '{"specversion":"1.0","id":"x1","type":"loan.decision"}' >>"$dir/topic"
/usr/bin/python3 - "$SWF_KAFKA_BROKERS" "${SWF_EVENTS_TOPIC:-swf.events}" "$dir/topic" <<'PY'
import sys
from confluent_kafka import Producer
brokers, topic, path = sys.argv[1:4]
p = Producer({"bootstrap.servers": brokers, "acks": "all"})
failed = []
def report(err, msg):
    if err is not None:
        failed.append(str(err))
for line in open(path, "rb"):
    p.produce(topic, key=b"loans", value=line.rstrip(b"\n"),
              headers=[("content-type", b"application/cloudevents+json")], on_delivery=report)
    p.poll(0)
left = p.flush(30)
if left or failed:
    sys.exit("produce to %s: %d not delivered %s" % (topic, left, failed[:3]))
PY
late() { # late FIRST STEP: the send-event approvals FIRST, FIRST+STEP, ...
    for i in $(seq "$1" "$2" "$n"); do
        [ $((i % 10)) -eq 1 ] && [ $((i % 4)) -ne 0 ] && { send "$dir/d$i" || return 1; }
    done
    return 0
}
# The late approvals by send-event only once the topic's requests have
# started every instance (the consumer works through the topic meanwhile).
for _ in $(seq 1 600); do
    started=$(psql "$SWF_DATABASE_URL" -XAtq -c "SELECT count(*) FROM executions WHERE state_machine = 'loans'")
    [ "$started" -ge "$n" ] && break
    sleep 0.5
done
late 1 40 & l1=$!
late 11 40 & l2=$!
late 21 40 & l3=$!
late 31 40 & l4=$!
wait $l1 && wait $l2 && wait $l3 && wait $l4
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
# The dead letters of the events topic: the two malformed events, each
# with its reason.
dead=$(/usr/bin/python3 - "$SWF_KAFKA_BROKERS" "${SWF_DLQ_TOPIC:-swf.dlq}" "${SWF_EVENTS_TOPIC:-swf.events}" <<'PY'
import json, sys, time
from confluent_kafka import Consumer
brokers, dlq, topic = sys.argv[1:4]
c = Consumer({"bootstrap.servers": brokers, "group.id": "sw-events-e2e", "auto.offset.reset": "earliest"})
c.subscribe([dlq])
reasons, end = [], time.time() + 10
while time.time() < end:
    m = c.poll(0.5)
    if m is None or m.error():
        continue
    d = json.loads(m.value())
    if d.get("topic") == topic:
        reasons.append(d["reason"])
    if len(reasons) >= 2:
        break
c.close()
print(" | ".join(sorted(reasons)))
PY
)
case $dead in
*"malformed"*" | not JSON"*) echo "ok: the two malformed events went to the dead letters ($dead)" ;;
*) echo "FAILED: the dead letters of the events topic: $dead"; status=1 ;;
esac
echo "sent in $((sent - start)) s, all closed $(($(date +%s) - sent)) s later ($n instances)"
[ $status -eq 0 ] || { tail -20 "$dir/dev.log" >&2; }
exit $status
