#!/bin/sh
# sw-conformance.sh - the Serverless Workflow corpus
# (../shared/serverless-workflow/cases, SPEC.md section 14) against
# `SWF_BIN run --local`. Every case must pass: the corpus is the language's
# definition as swf implements it (decider/sw/README.md).
#
# usage: scripts/sw-conformance.sh [SWF_BIN]
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-build/swf}
CASES=${SWF_SW_CASES:-../shared/serverless-workflow/cases}
HARNESS=${SWF_CONFORMANCE:-../shared/conformance}/run
if [ ! -d "$CASES" ] || [ ! -x "$HARNESS" ]; then
    echo "sw-conformance: no corpus at $CASES or no harness at $HARNESS" >&2
    exit 1
fi
out=$(mktemp)
status=0
"$HARNESS" --cases "$CASES" --jobs 2 -- "$BIN" run --local >"$out" 2>&1 || status=1
grep '^FAIL' "$out" || true
sed -n '/^group/,$p' "$out"
rm -f "$out"
exit $status
