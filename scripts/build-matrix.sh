#!/bin/sh
# build-matrix.sh - builds the programs and the libraries they link (not the
# tests nor the benchmarks; the server extension history/pgext where the
# server headers are) in every build type - Debug, RelWithDebInfo,
# Release, MinSizeRel - with GCC and with clang, warnings as errors
# (SWF_WERROR=ON). CI runs it: each optimisation level and each compiler
# finds warnings the others miss (GCC's maybe-uninitialized appears at -O2
# and -O3 only). One folder per build, build-matrix/COMPILER-TYPE, kept
# between runs so that a second run rebuilds only what changed.
#
# usage: scripts/build-matrix.sh [COMPILER...]    (default: gcc clang)
# Prints one line per build with its time; on a failure, the compiler's
# messages. Exit status 0 when every build succeeded.
set -eu
cd "$(dirname "$0")/.."
compilers=${*:-gcc clang}
JOBS=$(nproc 2>/dev/null || echo 2)
targets="swf example_c_worker"
for src in cli/bin/*.c; do targets="$targets $(basename "$src" .c)"; done
# The hash chain's trigger in C (history/pgext), where the server's headers
# are (CMakeLists.txt builds it then).
if [ -f "$(pg_config --includedir-server 2>/dev/null)/postgres.h" ]; then
    targets="$targets swf_chain"
fi
status=0
for cc in $compilers; do
    for type in Debug RelWithDebInfo Release MinSizeRel; do
        dir=build-matrix/$cc-$type
        mkdir -p "$dir"
        start=$(date +%s)
        if cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$type" \
            -DSWF_WERROR=ON >"$dir/matrix.log" 2>&1 &&
            cmake --build "$dir" -j "$JOBS" --target $targets >>"$dir/matrix.log" 2>&1; then
            echo "$cc $type: ok ($(($(date +%s) - start)) s)"
        else
            echo "$cc $type: FAILED ($(($(date +%s) - start)) s)"
            grep -E -A5 '(error|warning):' "$dir/matrix.log" | head -60
            status=1
        fi
    done
done
exit $status
