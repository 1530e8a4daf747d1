#!/bin/sh
# real-kafka-e2e.sh - the e2e and recovery suites (tests/e2e) once more, on a
# real Apache Kafka instead of librdkafka's mock cluster.
#
# usage: scripts/real-kafka-e2e.sh [BUILD_DIR] [--brokers 1|3]
#
# Starts a throwaway KRaft cluster on loopback (scripts/real-kafka.sh: the
# broker from Maven, one node, or three with replication factor 3 and
# min.insync.replicas=2), runs BUILD_DIR/e2e_test_e2e and
# BUILD_DIR/e2e_test_recovery on it (SWF_TEST_KAFKA_BROKERS and
# SWF_TEST_KAFKA_DIR: tests/e2e/real_kafka.h), every test of both, one at a
# time (they share the cluster and swf's fixed consumer group names), and
# removes the cluster. The recovery suite's broker outages kill every node
# with SIGKILL and start it again on its storage. Prints how long each part
# took; exits 1 when a test failed or the cluster did not start.
set -eu
cd "$(dirname "$0")/.."
build=build
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
    build=$1
    shift
fi
for t in e2e_test_e2e e2e_test_recovery; do
    [ -x "$build/$t" ] || { echo "no $build/$t: build first" >&2; exit 2; }
done
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' tests/kafka-broker/pom.xml)
t0=$(date +%s)
out=$(scripts/real-kafka.sh start "$@") || exit 1
brokers=$(echo "$out" | sed -n 's/^SWF_KAFKA_BROKERS=//p')
dir=$(echo "$out" | sed -n 's/^SWF_KAFKA_DIR=//p')
trap 'scripts/real-kafka.sh stop "$dir"' EXIT
trap 'exit 130' INT TERM
t1=$(date +%s)
echo "== Apache Kafka $version (KRaft) on $brokers, up in $((t1 - t0)) s (the class path from Maven included)"
status=0
for t in e2e_test_e2e e2e_test_recovery; do
    s=$(date +%s)
    SWF_TEST_KAFKA_BROKERS=$brokers SWF_TEST_KAFKA_DIR=$dir "$build/$t" --jobs 1 --verbose || status=1
    echo "== $t on the real Kafka: $(($(date +%s) - s)) s"
done
echo "== the suites on the real Kafka took $(($(date +%s) - t0)) s in all"
exit $status
