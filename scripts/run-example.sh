#!/bin/sh
# The main job, for now: install, build, and run the example order workflow
# locally (mocked activities, virtual time), printing its result.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo "\$ build/swf run --local examples/order.asl.json --input examples/order.input.json --mocks examples/order.mocks.json"
build/swf run --local examples/order.asl.json --input examples/order.input.json --mocks examples/order.mocks.json
