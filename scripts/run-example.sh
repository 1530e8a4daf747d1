#!/bin/sh
# The main job: install, build, then run the example order workflow on the
# distributed system of `swf dev` (scripts/example.sh says how).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec scripts/example.sh build
