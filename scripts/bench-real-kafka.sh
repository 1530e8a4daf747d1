#!/bin/sh
# bench-real-kafka.sh - bench_steps against a real Apache Kafka broker on
# this machine instead of librdkafka's mock cluster.
#
# usage: scripts/bench-real-kafka.sh [BUILD_DIR] ['D E S' ...]
#   each quoted 'D E S' is one bench_steps run (deciders, executions, steps);
#   default: '1 1 2000'.
#
# The broker is the one the tests use: Apache Kafka 4.x in KRaft mode, one
# node on loopback, from scripts/real-kafka.sh (Maven fetches it once). With
# SWF_BENCH_BROKERS set, the runs use that cluster instead and start none
# (scripts/bench-real-table.sh keeps one broker for a whole session).
#
# The broker shares the two cores with PostgreSQL and the engine. Each run
# gets topics of its own (made by bench_steps), so nothing of a run is left
# for the next one. SWF_KAFKA_FETCH_WAIT_MS defaults to 100 here: a real
# broker answers a waiting fetch the moment data arrives (the mock cluster
# holds it to the end, so bench_steps's own default is 1).
# SWF_BENCH_KAFKA_WARMUP: the warm-up run's 'D E S' ('1 20 500'; empty:
# none): a fresh JVM compiles as it goes, and the first seconds of traffic
# run at half speed; only the warm-up's summary line is shown.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
bench="$build/bench_steps"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
[ $# -gt 0 ] || set -- "1 1 2000"

out=$(mktemp -d "${TMPDIR:-/tmp}/swf-bench-real.XXXXXX")
kdir=''
cleanup() {
    [ -n "$kdir" ] && "$root/scripts/real-kafka.sh" stop "$kdir"
    rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
brokers=${SWF_BENCH_BROKERS:-}
if [ -z "$brokers" ]; then
    started=$(SWF_KAFKA_JIT_OPTS=${SWF_KAFKA_JIT_OPTS-} "$root/scripts/real-kafka.sh" start) || exit 1
    brokers=$(echo "$started" | sed -n 's/^SWF_KAFKA_BROKERS=//p')
    kdir=$(echo "$started" | sed -n 's/^SWF_KAFKA_DIR=//p')
    version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$root/tests/kafka-broker/pom.xml")
    echo "== Apache Kafka $version (KRaft, one node) on $brokers"
    warm=${SWF_BENCH_KAFKA_WARMUP-1 20 500}
else
    warm=${SWF_BENCH_KAFKA_WARMUP-}
fi

# Topic names unique to this process and run.
tag="b$$.$(date +%s)"
run=0
[ -n "$warm" ] && set -- "warm-up" "$@"
for args in "$@"; do
    quiet=0
    if [ "$args" = "warm-up" ]; then
        quiet=1 args=$warm
    fi
    run=$((run + 1))
    [ $quiet = 1 ] && echo "== warm-up: bench_steps $args" || echo "== bench_steps $args"
    # shellcheck disable=SC2086
    SWF_BENCH_BROKERS=$brokers SWF_INBOX_TOPIC="swf.inbox.$tag.$run" \
        SWF_DLQ_TOPIC="swf.dlq.$tag.$run" SWF_TASK_TOPIC_PREFIX="swf.tasks.$tag.$run." \
        SWF_KAFKA_FETCH_WAIT_MS="${SWF_KAFKA_FETCH_WAIT_MS:-100}" "$bench" $args >"$out/run.out"
    if [ $quiet = 1 ]; then
        head -1 "$out/run.out"
    else
        cat "$out/run.out"
    fi
done
