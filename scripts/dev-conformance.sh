#!/bin/sh
# dev-conformance.sh - the ASL conformance corpus through the distributed
# system, compared case by case with the local interpreter.
#
# usage: scripts/dev-conformance.sh [BUILD_DIR] [FILTER]
#
# SWF_CASES=DIR scores another corpus with the same harness (the Serverless
# Workflow corpus: SWF_CASES=../shared/serverless-workflow/cases), without
# the project's own ASL cases.
#
# SWF_VIA=api runs each case through the Step Functions API of the same
# `swf dev` instead (tests/api/corpus_adapter.py: ValidateStateMachineDefinition,
# CreateStateMachine, StartExecution, GetActivityTask pollers answering the
# mocks with SendTaskSuccess/SendTaskFailure, DescribeExecution), compared
# with --local the same way. ASL only.
#
# Starts one `swf dev` (throwaway PostgreSQL, librdkafka's mock Kafka cluster,
# swf-history, two deciders) and scores the corpus with the harness, the
# engine being `swf run --dev` (a worker on Kafka serves the mocks). Every
# case is also run twice with `swf run --local`; where the two local runs
# agree (the case is deterministic), the --dev result must be the same JSON
# object, not only the same verdict. Cases whose local result changes from
# run to run (random numbers, UUIDs, execution ids) are compared by verdict
# only, and listed. The project's own cases (tests/conformance/cases, run by
# scripts/extra-cases.py) go through both paths too.
#
# swf dev is stopped at the end as by hand: a sanitizer report in its log, or
# an exit status other than 0 (a leak found at exit), fails the run.
#
# Time: the dev system skips the time an execution spends idle
# (SWF_DEV_TIME_SKIP=1, history/service.h), so a Wait of a day takes no time
# and timers still race execution timeouts as they would; the times an
# execution sees are those of --local (an hour's Wait moves them an hour).
# Results are compared whole, times included: nothing is masked. Activity
# timeouts are real time (work in flight).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
filter=${2:-}
cases=${SWF_CASES:-}
via=${SWF_VIA:-dev}
case $via in dev | api) ;; *) echo "dev-conformance: SWF_VIA is dev or api" >&2; exit 2 ;; esac
[ "$via" = dev ] || [ -z "$cases" ] ||
    { echo "dev-conformance: SWF_VIA=api runs the ASL corpus only (CreateStateMachine takes ASL)" >&2; exit 2; }
corpus=${SWF_CONFORMANCE:-../shared/conformance}
[ -x "$corpus/run" ] || { echo "dev-conformance: no corpus at $corpus" >&2; exit 1; }
[ -x "$build/swf" ] || { echo "dev-conformance: no $build/swf: build first" >&2; exit 2; }
dir=$(mktemp -d /tmp/swf-devconf-XXXXXX)
pid= adapter=
cleanup() {
    [ -n "$adapter" ] && kill -TERM "$adapter" 2>/dev/null && wait "$adapter" 2>/dev/null
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The files exist before swf dev starts: its redirections happen in the
# background child, which a loaded machine may run after the loop's first read.
: >"$dir/env"
: >"$dir/dev.log"
SWF_DEV_TIME_SKIP=1 "$build/swf" dev --deciders 2 \
    >"$dir/env" 2>"$dir/dev.log" &
pid=$!
for _ in $(seq 1 240); do
    [ "$(wc -l <"$dir/env")" -ge 2 ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$dir/dev.log" >&2; exit 1; }
    sleep 0.5
done
. "$dir/env"
mkdir "$dir/out"
# Warm up: the first execution waits until the deciders have joined their
# consumer group (seconds on the mock cluster, more under the sanitizers), a
# wait the harness's 10 s per case should not pay.
echo '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}' >"$dir/warmup.json"
SWF_DEV_RUN_TIMEOUT=180 "$build/swf" run --dev "$dir/warmup.json" >/dev/null
# Then until the group has settled: both deciders have had an assignment and
# none has moved for 3 s. A decider that joins after the warm-up moves
# partitions, and the cases sent meanwhile wait for that rebalance (once 16
# cases in a row timed out under the sanitizers, at the start of the run).
moves=-1 quiet=0
for _ in $(seq 1 360); do
    now=$(grep -cE 'swf-decider: (assigned|revoked) ' "$dir/dev.log" || true)
    assigned=$(grep -c 'swf-decider: assigned ' "$dir/dev.log" || true)
    if [ "$now" = "$moves" ]; then quiet=$((quiet + 1)); else moves=$now quiet=0; fi
    [ "$assigned" -ge 2 ] && [ "$quiet" -ge 6 ] && break
    sleep 0.5
done

# Through the API: the adapter (one process, its pollers joined before the
# cases start: it answers on its socket once it has served a Task).
run_one="\"$PWD/$build/swf\" run --dev"
if [ "$via" = api ]; then
    /usr/bin/python3 tests/api/corpus_adapter.py serve "$dir/adapter.sock" 2>"$dir/adapter.log" &
    adapter=$!
    for _ in $(seq 1 400); do # its warm-up is bounded by 120 s
        [ -S "$dir/adapter.sock" ] && break
        kill -0 "$adapter" 2>/dev/null || { cat "$dir/adapter.log" >&2; exit 1; }
        sleep 0.5
    done
    [ -S "$dir/adapter.sock" ] || { echo "dev-conformance: the adapter did not start" >&2; exit 1; }
    run_one="/usr/bin/python3 \"$PWD/tests/api/corpus_adapter.py\" run \"$dir/adapter.sock\""
fi

# The engine the harness calls: prints the --dev (or API) result, records it
# and two --local results beside it. Through the API, the two local runs go
# on while the case waits for its execution (the CPU is otherwise idle then);
# --dev keeps them after, as before.
local_runs='env -u SWF_DATABASE_URL -u SWF_KAFKA_BROKERS "'$PWD/$build/swf'" run --local "$@" >"'$dir/out/'$key.local1" 2>/dev/null
env -u SWF_DATABASE_URL -u SWF_KAFKA_BROKERS "'$PWD/$build/swf'" run --local "$@" >"'$dir/out/'$key.local2" 2>/dev/null'
before= after=$local_runs jobs=4
[ "$via" = dev ] || { before="( $local_runs ) & l=\$!" after='wait $l' jobs=6; }
cat >"$dir/engine" <<ENGINE
#!/bin/sh
key=\$(printf '%s' "\$1" | sed 's|.*/cases/||; s|/definition.json\$||; s|/|__|g')
$before
$run_one "\$@" >"$dir/out/\$key.dev" 2>"$dir/out/\$key.err"
$after
cat "$dir/out/\$key.dev"
ENGINE
chmod +x "$dir/engine"

status=0
"$corpus/run" ${cases:+--cases "$cases"} ${filter:+--filter "$filter"} --jobs "$jobs" -- "$dir/engine" >"$dir/harness" 2>&1 || status=1
grep '^FAIL' "$dir/harness" || true
label="swf run --dev"
[ "$via" = dev ] || label="the API adapter"
echo "$label against the expected results: $(tail -1 "$dir/harness")"
[ -n "$filter$cases" ] || scripts/extra-cases.py -- "$dir/engine" || status=1
python3 - "$dir/out" "$label" <<'PY' || status=1
import json, os, re, sys
d, label = sys.argv[1], sys.argv[2]
keys = sorted(f[:-4] for f in os.listdir(d) if f.endswith('.dev'))
def load(path):
    try:
        return json.loads(open(path).read())
    except Exception as e:
        return ('unreadable', str(e))
def unplaced(r):
    # A definition that is not JSON: swf run names the file and the line
    # (FILE:LINE:COL: MESSAGE), the API has no file to name.
    if isinstance(r, dict) and r.get('status') == 'INVALID' and label != 'swf run --dev':
        r['errors'] = [re.sub(r'^/.*?:[0-9]+:[0-9]+: ', '', e) for e in r.get('errors', [])]
    return r
same = differ = 0
nondet = []
for k in keys:
    dev, l1, l2 = (unplaced(load(f"{d}/{k}.{s}")) for s in ('dev', 'local1', 'local2'))
    if l1 != l2 and not any(isinstance(v, tuple) for v in (dev, l1, l2)):
        nondet.append(k)
    elif dev == l1:
        same += 1
    else:
        differ += 1
        print(f"DIFFER {k.replace('__', '/')}:\n  {label}: {json.dumps(dev)[:400]}\n  --local: {json.dumps(l1)[:400]}")
        err = open(f"{d}/{k}.err").read().strip()
        if err:
            print(f"  {label} stderr: " + err[:400])
print(f"{label} against swf run --local: {same} identical, {differ} different, "
      f"{len(nondet)} not deterministic locally (compared by verdict only: {', '.join(n.replace('__', '/') for n in nondet)})")
sys.exit(1 if differ or not keys else 0)
PY
if [ -n "$adapter" ]; then
    { kill -TERM "$adapter" && wait "$adapter"; } 2>/dev/null || true
    adapter=
    tail -1 "$dir/adapter.log"
fi
# swf dev (deciders, swf-history, swf-api) stops as it would by hand: on the
# sanitizer build that is when a leak is reported, and an error it hit while
# serving is in its log; either fails the run.
kill -TERM "$pid" 2>/dev/null || true
dev_status=0
wait "$pid" || dev_status=$?
pid=
if [ "$dev_status" != 0 ] || grep -qE 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$dir/dev.log"; then
    echo "dev-conformance: swf dev ended with status $dev_status; its log:"
    grep -E -A40 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$dir/dev.log" | head -80 ||
        tail -20 "$dir/dev.log"
    status=1
fi
exit $status
