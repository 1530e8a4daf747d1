#!/bin/sh
# Builds swf into build/ (and, with --asan, the sanitizer build into build-asan/),
# warnings as errors (SWF_WERROR: a plain cmake build only warns).
set -eu
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSWF_WERROR=ON >/dev/null
cmake --build build -j "$JOBS" >/dev/null
if [ "${1:-}" = "--asan" ]; then
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSWF_SANITIZE=ON -DSWF_WERROR=ON >/dev/null
    cmake --build build-asan -j "$JOBS" >/dev/null
fi
