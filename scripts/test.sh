#!/bin/sh
# Installs what is missing, builds, and runs every test: the Criterion unit and
# integration tests (plain and under AddressSanitizer + UndefinedBehaviorSanitizer)
# and the ASL conformance corpus against `swf run --local`.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --asan
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
echo "== conformance corpus (swf run --local)"
scripts/conformance.sh build/swf || status=1
echo "== conformance corpus under the sanitizers"
scripts/conformance.sh build-asan/swf || status=1
echo "== docker/ (compose file, Dockerfile steps)"; scripts/check-docker.sh || status=1
echo "== unit and integration tests, sanitizer build"
(cd build-asan && ctest --output-on-failure -j 2) || status=1
echo "== unit and integration tests"
(cd build && ctest --output-on-failure -j 2) || status=1
exit $status
