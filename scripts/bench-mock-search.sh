#!/bin/sh
# bench-mock-search.sh - how much of bench_steps is the mock cluster's own
# message-set search.
#
# usage: scripts/bench-mock-search.sh [BUILD_DIR] ['D E S' ...]
#   each quoted 'D E S' is one bench_steps run (deciders, executions, steps),
#   run twice with each library, interleaved; default: '1 40 1000'.
#
# librdkafka 2.0.2's mock cluster finds the message set of a fetch's offset
# by walking the partition's log from its oldest set (rdkafka_mock.c,
# rd_kafka_mock_msgset_find: "FIXME: Maintain an index"), and keeps up to
# 5 MiB or 100,000 sets a partition. A consumer near the end of a long log
# walks nearly all of it for every fetch that brings data, so the mock's
# cost per message grows with the length of the run. A real broker finds
# the offset through its index.
#
# This script builds Debian's librdkafka source twice with the same flags:
# as it is, and with that one loop walking from the newest set instead.
# Then it runs bench_steps against each (LD_LIBRARY_PATH), alternating. The
# libraries stay in BUILD_DIR/rdkafka-search; the project never links them.
# Needs the Debian source archive (a temporary deb-src list is used).
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
bench="$build/bench_steps"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
[ $# -gt 0 ] || set -- "1 40 1000"
version=2.0.2

work="$build/rdkafka-search"
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ ! -f "$work/as-is/librdkafka.so.1" ] || [ ! -f "$work/from-newest/librdkafka.so.1" ]; then
    apt="$work/apt"
    mkdir -p "$apt/lists/partial"
    echo "deb-src http://deb.debian.org/debian bookworm main" >"$apt/sources.list"
    aptsrc() {
        apt-get -q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
            -o Dir::State::Lists="$apt/lists" "$@"
    }
    aptsrc update >/dev/null
    (cd "$apt" && aptsrc source --download-only "librdkafka=$version-1" >/dev/null 2>&1)
    for variant in as-is from-newest; do
        src="$work/src-$variant"
        rm -rf "$src"
        mkdir -p "$src"
        tar xzf "$apt/librdkafka_$version.orig.tar.gz" -C "$src" --strip-components=1
        if [ "$variant" = from-newest ]; then
            # Name the log's list head, then walk it from its tail.
            sed -i 's/TAILQ_HEAD(, rd_kafka_mock_msgset_s) msgsets;/TAILQ_HEAD(swf_msgsets, rd_kafka_mock_msgset_s) msgsets;/' \
                "$src/src/rdkafka_mock_int.h"
            sed -i 's/TAILQ_FOREACH(mset, &mpart->msgsets, link) {/TAILQ_FOREACH_REVERSE(mset, \&mpart->msgsets, swf_msgsets, link) {/' \
                "$src/src/rdkafka_mock.c"
            grep -q 'TAILQ_FOREACH_REVERSE(mset, &mpart->msgsets, swf_msgsets' "$src/src/rdkafka_mock.c" ||
                { echo "the patch did not apply" >&2; exit 1; }
        fi
        (cd "$src" && ./configure --disable-gssapi --disable-lz4-ext --disable-zstd >/dev/null &&
            make -j2 -C src librdkafka.so.1 >/dev/null 2>&1)
        mkdir -p "$work/$variant"
        cp "$src/src/librdkafka.so.1" "$work/$variant/"
    done
fi

for run in "$@"; do
    for round in 1 2; do
        for variant in as-is from-newest; do
            printf '== %s, search %s, round %s\n' "$run" "$variant" "$round"
            # shellcheck disable=SC2086
            LD_LIBRARY_PATH="$work/$variant" "$bench" $run 2>&1 |
                grep -E '^deciders|two parts|cpu:'
        done
    done
done
