#!/bin/sh
# Regenerates tests/histories/: recorded histories (exported JSON lines) that
# tests/decider/test_histories.c replays with every build, failing when the
# interpreter derives any decision differently (a change that would break
# executions running on it).
#
#   scripts/record-histories.sh [SWF_BIN]      (default build/swf)
#
# Sources: the conformance corpus (../shared/conformance, or $SWF_CONFORMANCE)
# except the cases whose definition is
# invalid (they record no history); examples/*.asl.json with their input and
# every examples/NAME*.mocks.json; tests/histories/src/*.asl.json; the
# project's nested-execution cases (tests/conformance/cases/nested); the
# Serverless Workflow corpus (../shared/serverless-workflow/cases, or
# $SWF_SW_CASES) with its events. One file
# with a WorkflowExecutionSignaled event added by hand (signals are recorded
# and ignored by the interpreter, but for swf.mapRun.update), and one recorded
# on `swf dev` through the API, copied from tests/histories/fixtures (an
# UpdateMapRun's signal, which changes the decisions after it). Record only
# when a change of decisions is intended, and say so in the commit.
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-build/swf}
CORPUS=${SWF_CONFORMANCE:-../shared/conformance}/cases
OUT=tests/histories
[ -x "$BIN" ] || { echo "record-histories: no $BIN (build first)" >&2; exit 1; }
empty=$(mktemp)
echo '{}' >"$empty"
trap 'rm -f "$empty"' EXIT
rm -f "$OUT"/*.jsonl

# record NAME DEFINITION INPUT [MOCKS]
record() {
    # POSIX sh has no local variables: r_ names keep the callers' intact.
    r_name=$1 r_def=$2 r_input=$3 r_mocks=${4:-} r_events=${5:-}
    r_tmp="$OUT/$r_name.jsonl.tmp"
    set -- "$BIN" run --local "$r_def" --input "$r_input"
    [ -n "$r_mocks" ] && set -- "$@" --mocks "$r_mocks"
    [ -n "$r_events" ] && set -- "$@" --events "$r_events"
    "$@" --history >"$r_tmp" 2>/dev/null || true
    if head -c 11 "$r_tmp" | grep -q '{"eventId"'; then
        mv "$r_tmp" "$OUT/$r_name.jsonl"
    else
        rm -f "$r_tmp" # an invalid definition: no history
    fi
}

if [ -d "$CORPUS" ]; then
    for dir in "$CORPUS"/*/*/; do
        dir=${dir%/}
        case=$(basename "$dir")
        group=$(basename "$(dirname "$dir")")
        [ -f "$dir/definition.json" ] || continue
        input=$dir/input.json
        [ -f "$input" ] || input=$empty
        mocks=
        [ -f "$dir/mocks.json" ] && mocks=$dir/mocks.json
        record "${group}__${case}" "$dir/definition.json" "$input" "$mocks"
    done
else
    echo "record-histories: no corpus at $CORPUS; recording the examples only" >&2
fi

# The Serverless Workflow corpus (decider/sw/), events included: sw-GROUP__CASE.
record_sw() {
    for dir in "$SW_CORPUS"/*/*/; do
        dir=${dir%/}
        [ -f "$dir/definition.json" ] || continue
        input=$dir/input.json
        [ -f "$input" ] || input=$empty
        mocks= events=
        [ -f "$dir/mocks.json" ] && mocks=$dir/mocks.json
        [ -f "$dir/events.json" ] && events=$dir/events.json
        record "sw-$(basename "$(dirname "$dir")")__$(basename "$dir")" "$dir/definition.json" \
            "$input" "$mocks" "$events"
    done
}
SW_CORPUS=${SWF_SW_CASES:-../shared/serverless-workflow/cases}
if [ -d "$SW_CORPUS" ]; then record_sw
else echo "record-histories: no Serverless Workflow corpus at $SW_CORPUS" >&2
fi

# The project's nested-execution cases (their child machines are files
# beside them, which swf run --local reads): project-nested__CASE. The
# history is the parent's; each child's is an execution of its own.
for dir in tests/conformance/cases/nested/*/; do
    dir=${dir%/}
    [ -f "$dir/definition.json" ] || continue
    input=$dir/input.json
    [ -f "$input" ] || input=$empty
    record "project-nested__$(basename "$dir")" "$dir/definition.json" "$input" \
        "$( [ -f "$dir/mocks.json" ] && echo "$dir/mocks.json" )"
done

for def in examples/*.asl.json tests/histories/src/*.asl.json; do
    base=${def%.asl.json}
    name=$(basename "$base")
    group=examples
    case $def in tests/*) group=src ;; esac
    input=$base.input.json
    [ -f "$input" ] || input=$empty
    record "${group}__${name}" "$def" "$input" "$( [ -f "$base.mocks.json" ] && echo "$base.mocks.json" )"
    for mocks in "$base".*.mocks.json; do
        [ -f "$mocks" ] || continue
        variant=${mocks#"$base".}
        variant=${variant%.mocks.json}
        record "${group}__${name}-${variant}" "$def" "$input" "$mocks"
    done
done

# A signal in the middle of a history: inserted after the first
# ActivityTaskStarted, every later id (and every *EventId reference to one)
# moved up by one.
python3 - "$OUT/examples__order.jsonl" "$OUT/examples__order-signaled.jsonl" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
at = next(i for i, e in enumerate(events) if e["eventType"] == "ActivityTaskStarted") + 1
def shift(v):
    if isinstance(v, dict):
        return {k: (x + 1 if k.endswith("EventId") and isinstance(x, int) and x > at else shift(x))
                for k, x in v.items()}
    return v
out = events[:at]
out.append({"eventId": at + 1, "eventType": "WorkflowExecutionSignaled",
            "eventTimestamp": events[at - 1]["eventTimestamp"],
            "workflowExecutionSignaledEventAttributes": {"signalName": "customer-called",
                                                         "input": {"note": "asks about delivery"}}})
for e in events[at:]:
    e = shift(e)
    e["eventId"] += 1
    out.append(e)
with open(sys.argv[2], "w") as f:
    for e in out:
        f.write(json.dumps(e, separators=(",", ":")) + "\n")
PY

# UpdateMapRun raising a distributed Map's MaxConcurrency while it runs
# (tests/histories/fixtures/README.md): recorded once, kept as it was.
cp tests/histories/fixtures/map-run-updated.jsonl "$OUT/map__distributed-run-updated.jsonl"

count=$(ls "$OUT"/*.jsonl | wc -l)
size=$(du -sk "$OUT" | cut -f1)
echo "recorded $count histories in $OUT ($size KiB)"
