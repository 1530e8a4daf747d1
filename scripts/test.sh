#!/bin/sh
# Installs what is missing, builds, and runs every test: the Criterion unit and
# integration tests (plain and under AddressSanitizer + UndefinedBehaviorSanitizer)
# the Serverless Workflow corpus against `swf run --local`,
# and the ASL conformance corpus against `swf run --local` and through the
# distributed system (`swf run --dev`: PostgreSQL, Kafka, swf-history, deciders,
# a worker), each case's two results compared; the Step Functions API
# with boto3, the AWS CLI and the JS SDK (scripts/api-e2e.sh), and the ASL
# corpus through it (SWF_VIA=api scripts/dev-conformance.sh, sanitizer
# build). The e2e and recovery suites
# run a second time on a real Apache Kafka (KRaft, from Maven), plain build
# only; then, on a 3-node real Kafka, the short storm with its checker and the
# routing test with kafkajs and Java-client workers (scripts/storm.sh).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --asan
# The hash chain's trigger in C (history/pgext), built where the server's
# headers are (install-deps.sh installs them), into the server's folders
# (root), so that the history tests run with it as well as without (the
# ctest runs named *_c_chain, tests/history/test_pg_chain_c.c), and fail
# rather than skip when it is missing.
if [ -f build/swf_chain.so ]; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO cmake --install build --component swf_chain >/dev/null
    export SWF_TEST_CHAIN_REQUIRED=1
fi
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
t0=$(date +%s)
say() { # each part's heading, with the seconds since the tests began
    echo "== [$(($(date +%s) - t0)) s] $*"
}
say "conformance corpus (swf run --local)"
scripts/conformance.sh build/swf || status=1
say "conformance corpus under the sanitizers"
scripts/conformance.sh build-asan/swf || status=1
say "Serverless Workflow corpus (swf run --local), plain and under the sanitizers"
scripts/sw-conformance.sh build/swf || status=1
scripts/sw-conformance.sh build-asan/swf || status=1
# The ASL corpus through --dev runs once, on the sanitizer build: the same
# path as the plain build's, with the sanitizers watching (CI's 45 minutes).
say "conformance corpus through the distributed path (swf run --dev, sanitizer build), compared with --local"
scripts/dev-conformance.sh build-asan || status=1
say "Serverless Workflow corpus through swf run --dev, compared with --local (plain, sanitizers)"
SWF_CASES=../shared/serverless-workflow/cases scripts/dev-conformance.sh build || status=1
SWF_CASES=../shared/serverless-workflow/cases scripts/dev-conformance.sh build-asan || status=1
say "the main job: scripts/example.sh (the order workflow on swf dev with swf-workers)"
log=$(mktemp)
if scripts/example.sh build >"$log" 2>&1; then grep -E 'execution succeeded|SHIPPED' "$log" | head -2
else cat "$log"; status=1; fi
rm -f "$log"
say "the Step Functions API: boto3, the AWS CLI and the JS SDK against swf dev (scripts/api-e2e.sh)"
scripts/api-e2e.sh build || status=1
# On the sanitizer build, as the --dev run above: 108 and 136 s here with
# the machine loaded (load 8 to 17), where the plain build took 89 s; swf
# dev (and its swf-api) must stop without a sanitizer report.
say "the ASL corpus through the Step Functions API (tests/api/corpus_adapter.py, sanitizer build), compared with --local"
SWF_VIA=api scripts/dev-conformance.sh build-asan || status=1
say "Serverless Workflow events: 200 event-started loan instances on swf dev, 2 deciders"
scripts/sw-events-e2e.sh build 200 || status=1
say "docker/ (compose file, Dockerfile steps)"; scripts/check-docker.sh || status=1
# -j 4 on two cores: most tests wait (Kafka group joins, timers, idle
# timeouts) far more than they compute.
say "unit and integration tests, sanitizer build"
(cd build-asan && ctest --output-on-failure -j 4) || status=1
say "unit and integration tests"
(cd build && ctest --output-on-failure -j 4) || status=1
say "the e2e and recovery suites again, on a real Apache Kafka (scripts/real-kafka-e2e.sh)"
scripts/real-kafka-e2e.sh build || status=1
say "the short storm: kills, pauses, broker and PostgreSQL crashes, then the checker (scripts/storm.sh)"
scripts/storm.sh build --short || status=1
say "2 and 3 deciders, workers on kafkajs and Kafka's Java client, a timer-heavy workflow (scripts/storm.sh --done-when)"
scripts/storm.sh build --done-when || status=1
say "done"
exit $status
