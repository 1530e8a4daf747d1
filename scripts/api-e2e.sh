#!/bin/sh
# api-e2e.sh - the Step Functions API against `swf dev`, with the clients
# people use: boto3 (tests/api/e2e_boto3.py: create, start, describe, list,
# history, stop, an activity worker, a .waitForTaskToken callback, AWS's
# error names), the AWS CLI v2 (the same calls a shell script makes) and an
# activity worker on the AWS SDK for JavaScript v3 (worker/examples/js).
#
# usage: scripts/api-e2e.sh [BUILD_DIR]     (default build)
# Needs python3-boto3, awscli and the npm packages of worker/examples/js
# (scripts/install-deps.sh). Debian's
# /usr/bin/python3 and /usr/bin/aws are used, not whatever else is first on
# the PATH, so the versions tested are the packaged ones.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
PY=/usr/bin/python3
AWS=/usr/bin/aws
[ -x "$AWS" ] || { echo "api-e2e: $AWS is missing (scripts/install-deps.sh)" >&2; exit 2; }
dir=$(mktemp -d)
"$build/swf" dev >"$dir/env" 2>"$dir/log" &
dev=$!
cleanup() {
    kill "$dev" 2>/dev/null || true
    wait "$dev" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
i=0
until grep -q AWS_DEFAULT_REGION "$dir/env" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 600 ] || ! kill -0 "$dev" 2>/dev/null; then
        echo "api-e2e: swf dev did not start" >&2
        cat "$dir/log" >&2
        exit 1
    fi
    sleep 0.1
done
. "$dir/env"
# Nothing of the user's AWS configuration may change what is tested.
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_PAGER=""
unset AWS_PROFILE AWS_SESSION_TOKEN
status=0
echo "== boto3"
"$PY" tests/api/e2e_boto3.py || status=1
echo "== RedriveExecution, TestState, aliases (boto3, or signed by hand)"
"$PY" tests/api/e2e_actions.py || status=1

echo "== AWS CLI"
sfn() { "$AWS" stepfunctions --endpoint-url "$SWF_API_URL" --output json "$@"; }
fail() { echo "FAIL: $*"; status=1; }
def='{"StartAt":"Hello","States":{"Hello":{"Type":"Pass","Result":{"x":1},"ResultPath":"$.p","Next":"Work"},"Work":{"Type":"Task","Resource":"arn:aws:states:us-east-1:123456789012:activity:cli-greet","End":true}}}'
arn=$(sfn create-state-machine --name cli-hello --definition "$def" \
    --role-arn arn:aws:iam::123456789012:role/x --query stateMachineArn --output text) || fail create
act=$(sfn create-activity --name cli-greet --query activityArn --output text) || fail create-activity
sfn list-state-machines --query 'stateMachines[].name' --output text | grep -qw cli-hello ||
    fail list-state-machines
ex=$(sfn start-execution --state-machine-arn "$arn" --name cli-1 --input '{"a":1}' \
    --query executionArn --output text) || fail start-execution
task=$(sfn get-activity-task --activity-arn "$act" --worker-name cli) || fail get-activity-task
token=$(printf '%s' "$task" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["taskToken"])')
# The hand-out is recorded at once (activity.started), with the workerName.
i=0
until sfn get-execution-history --execution-arn "$ex" --output text \
    --query 'events[?type==`ActivityStarted`].activityStartedEventDetails.workerName' |
    grep -qw cli; do
    i=$((i + 1)); [ $i -lt 100 ] || { fail "no ActivityStarted with workerName cli"; break; }
    sleep 0.2
done
sfn send-task-success --task-token "$token" --task-output '{"hi":true}' >/dev/null ||
    fail send-task-success
i=0
until [ "$(sfn describe-execution --execution-arn "$ex" --query status --output text)" = SUCCEEDED ]; do
    i=$((i + 1)); [ $i -lt 100 ] || { fail "cli-1 did not succeed"; break; }; sleep 0.2
done
sfn list-executions --state-machine-arn "$arn" --query 'executions[].name' --output text |
    grep -qw cli-1 || fail list-executions
sfn get-execution-history --execution-arn "$ex" --query 'events[].type' --output text |
    grep -q 'ExecutionStarted.*ActivitySucceeded.*ExecutionSucceeded' || fail get-execution-history
ex2=$(sfn start-execution --state-machine-arn "$arn" --name cli-2 --query executionArn --output text)
sfn stop-execution --execution-arn "$ex2" >/dev/null || fail stop-execution
expect_error() {
    name=$1; shift
    out=$("$@" 2>&1 >/dev/null) && { fail "$name: the call succeeded"; return; }
    printf '%s' "$out" | grep -q "($name)" || fail "$name: got $out"
}
expect_error ExecutionDoesNotExist sfn describe-execution \
    --execution-arn "$(printf '%s' "$ex" | sed 's/:cli-1$/:cli-none/')"
expect_error InvalidToken sfn send-task-success --task-token bad --task-output '{}'
expect_error ExecutionAlreadyExists sfn start-execution --state-machine-arn "$arn" --name cli-1 \
    --input '{"a":2}'
# Map Runs: the boto3 part ran a distributed Map (e2e-maprun, maprun-1).
mrex=arn:aws:states:$AWS_DEFAULT_REGION:123456789012:execution:e2e-maprun:maprun-1
mr=$(sfn list-map-runs --execution-arn "$mrex" --query 'mapRuns[0].mapRunArn' --output text) ||
    fail list-map-runs
[ "$(sfn describe-map-run --map-run-arn "$mr" --query status --output text)" = SUCCEEDED ] ||
    fail "describe-map-run $mr"
expect_error ResourceNotFound sfn describe-map-run --map-run-arn "${mr%-1}-9"
AWS_SECRET_ACCESS_KEY=wrong expect_error InvalidSignatureException sfn list-state-machines
[ $status != 0 ] || echo "AWS CLI: all checks held"

echo "== AWS SDK for JavaScript v3"
# The activity worker of worker/examples/js/sfn_worker.js (@aws-sdk/client-sfn,
# pinned by its package-lock.json) answers one task of an execution the CLI
# starts; the history names it as the worker that started the task.
js_status=0
jsdef='{"StartAt":"Greet","States":{"Greet":{"Type":"Task","Resource":"arn:aws:states:us-east-1:123456789012:activity:js-greet","End":true}}}'
jsarn=$(sfn create-state-machine --name js-hello --definition "$jsdef" \
    --role-arn arn:aws:iam::123456789012:role/x --query stateMachineArn --output text) ||
    { fail "js: create"; js_status=1; }
jsact=$(sfn create-activity --name js-greet --query activityArn --output text) ||
    { fail "js: create-activity"; js_status=1; }
node worker/examples/js/sfn_worker.js "$jsact" --max-tasks 1 &
jsw=$!
jsex=$(sfn start-execution --state-machine-arn "$jsarn" --name js-1 --input '{"who":"ada"}' \
    --query executionArn --output text) || { fail "js: start-execution"; js_status=1; }
wait $jsw || { fail "js: sfn_worker.js did not answer its task"; js_status=1; }
i=0
until [ "$(sfn describe-execution --execution-arn "$jsex" --query status --output text)" = SUCCEEDED ]; do
    i=$((i + 1)); [ $i -lt 100 ] || { fail "js-1 did not succeed"; js_status=1; break; }; sleep 0.2
done
sfn describe-execution --execution-arn "$jsex" --query output --output text |
    grep -q '"greeting": *"hello ada"' || { fail "js: the worker's output"; js_status=1; }
sfn get-execution-history --execution-arn "$jsex" --output text \
    --query 'events[?type==`ActivityStarted`].activityStartedEventDetails.workerName' |
    grep -qx sfn_worker.js || { fail "js: ActivityStarted names sfn_worker.js"; js_status=1; }
[ $js_status != 0 ] || echo "AWS SDK for JavaScript v3: all checks held"
[ $status = 0 ] || cat "$dir/log"
exit $status
