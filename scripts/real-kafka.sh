#!/bin/sh
# real-kafka.sh - a throwaway Apache Kafka cluster (KRaft, no ZooKeeper) on
# loopback, for the tests that run against a real broker instead of
# librdkafka's mock cluster.
#
# usage: scripts/real-kafka.sh start [--brokers N]
#            prints SWF_KAFKA_BROKERS=HOST:PORT,... and SWF_KAFKA_DIR=DIR
#        scripts/real-kafka.sh stop DIR        kills every node, removes DIR
#        scripts/real-kafka.sh down DIR [NODE] kills a node (all: no NODE),
#                                              keeping its storage
#        scripts/real-kafka.sh up DIR [NODE]   starts it again, waits until
#                                              it serves
#
# The broker is the Maven artifact org.apache.kafka:kafka_2.13 that
# tests/kafka-broker/pom.xml names (4.4.0): Maven fetches it and its run-time
# dependencies into its local cache (~/.m2) the first time and prints the
# class path, kept in tests/kafka-broker/target/. Java 17 and Maven come from
# scripts/install-deps.sh.
#
# Each node is a combined broker and controller (process.roles=broker,
# controller) with a PLAINTEXT listener for clients and a CONTROLLER
# listener for the Raft quorum, on free ports of 127.0.0.1. One node by
# default; with --brokers 3, three nodes form the quorum, topics get
# replication factor 3 and min.insync.replicas=2 (swf's producers use
# acks=all, so a write needs two live replicas). Topics are created on
# first use with 4 partitions. A consumer group's first join is not
# delayed (group.initial.rebalance.delay.ms=0) and the short session
# timeouts the tests ask for are allowed. A node killed and started again
# (`down`, `up`) registers anew after broker.session.timeout.ms, 2 s here
# (Kafka's 9 s would add 7 s to every restart).
#
# Everything lives in DIR (mktemp under $TMPDIR): each node's storage,
# properties, pid and log (DIR/nodeI/server.log). `stop` removes it. The
# JVMs run detached from the caller; `stop` is the caller's job (a trap).
# SWF_KAFKA_HEAP overrides each JVM's maximum heap (512m for one node,
# 320m each for three: the machine may have two cores and little else).
# The JVMs compile with C1 only (-XX:TieredStopAtLevel=1): on two cores
# shared with the tests, C2's compiling made a node take 15-20 s to start
# again after `down`, and the suites ran slower, not faster (measured: the
# e2e and recovery suites 300 s with C2, 228 s with C1). SWF_KAFKA_JIT_OPTS
# replaces that option (the benchmarks set it empty: a broker in production
# runs with C2).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
pom="$root/tests/kafka-broker/pom.xml"
target="$root/tests/kafka-broker/target"

die() {
    echo "real-kafka.sh: $*" >&2
    exit 1
}

# The class path, from Maven (once; again when the pom changed or a jar
# went missing from the cache).
classpath() {
    cpfile="$target/classpath.txt"
    if [ -f "$cpfile" ] && [ "$cpfile" -nt "$pom" ]; then
        cp=$(cat "$cpfile")
        missing=$(echo "$cp" | tr ':' '\n' | while read -r j; do [ -f "$j" ] || echo "$j"; done)
        [ -z "$missing" ] && return 0
    fi
    command -v mvn >/dev/null 2>&1 || die "no mvn: run scripts/install-deps.sh"
    mkdir -p "$target"
    echo "real-kafka.sh: Maven fetches the broker (the first time: about a minute, 56 MB)" >&2
    if ! mvn -q -B -f "$pom" dependency:build-classpath -Dmdep.outputFile="$cpfile.new" \
        >"$target/mvn.log" 2>&1; then
        cat "$target/mvn.log" >&2
        die "Maven could not fetch the broker (above: its output)"
    fi
    mv "$cpfile.new" "$cpfile"
    cp=$(cat "$cpfile")
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# node_start DIR I: starts node I detached; its pid goes to DIR/nodeI/pid.
node_start() {
    n="$1/node$2"
    [ -f "$n/server.log" ] && cat "$n/server.log" >>"$n/server.log.old" && : >"$n/server.log"
    # setsid: the node outlives this script and is not in the caller's
    # process group (a ^C of the caller reaches it through `stop` only).
    # shellcheck disable=SC2086
    setsid java -Xms64m -Xmx"$(cat "$1/heap")" -XX:+UseSerialGC $(cat "$1/jit") -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$1/log4j2.properties" -Dkafka.logs.dir="$n" \
        -cp "$(cat "$1/classpath")" kafka.Kafka "$n/server.properties" \
        >"$n/console.out" 2>&1 </dev/null &
    echo $! >"$n/pid"
}

# node_wait DIR I: until node I logs that it started (at most 90 s).
node_wait() {
    n="$1/node$2"
    tries=0
    until grep -q 'Kafka Server started' "$n/server.log" 2>/dev/null; do
        tries=$((tries + 1))
        if [ $tries -gt 450 ] || ! kill -0 "$(cat "$n/pid")" 2>/dev/null; then
            echo "real-kafka.sh: node $2 did not start; the end of its logs:" >&2
            tail -20 "$n/console.out" "$n/server.log" >&2 || true
            return 1
        fi
        sleep 0.2
    done
}

node_kill() {
    n="$1/node$2"
    [ -f "$n/pid" ] || return 0
    pid=$(cat "$n/pid")
    kill -9 "$pid" 2>/dev/null || true
    # Not our child any more (setsid, another shell): wait by polling.
    tries=0
    while kill -0 "$pid" 2>/dev/null && [ $tries -lt 100 ]; do
        sleep 0.1
        tries=$((tries + 1))
    done
    rm -f "$n/pid"
}

nodes_of() {
    if [ -n "${2:-}" ]; then echo "$2"; else seq 1 "$(cat "$1/nodes")"; fi
}

cmd_start() {
    nodes=1
    while [ $# -gt 0 ]; do
        case $1 in
        --brokers)
            [ $# -ge 2 ] || die "--brokers needs a number"
            nodes=$2
            shift 2
            ;;
        *) die "start: unknown option $1" ;;
        esac
    done
    case $nodes in 1 | 3) ;; *) die "--brokers: 1 or 3" ;; esac
    command -v java >/dev/null 2>&1 || die "no java: run scripts/install-deps.sh"
    classpath
    dir=$(mktemp -d "${TMPDIR:-/tmp}/swf-kafka.XXXXXX")
    echo "$cp" >"$dir/classpath"
    echo "$nodes" >"$dir/nodes"
    if [ "$nodes" = 1 ]; then rf=1 isr=1 heap=512m; else rf=3 isr=2 heap=320m; fi
    echo "${SWF_KAFKA_HEAP:-$heap}" >"$dir/heap"
    echo "${SWF_KAFKA_JIT_OPTS--XX:TieredStopAtLevel=1}" >"$dir/jit"
    cat >"$dir/log4j2.properties" <<'EOF'
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.state.name = state.change.logger
logger.state.level = WARN
EOF
    voters="" brokers=""
    for i in $(seq 1 "$nodes"); do
        mkdir -p "$dir/node$i"
        free_port >"$dir/node$i/port"
        free_port >"$dir/node$i/controller_port"
        voters="$voters${voters:+,}$i@127.0.0.1:$(cat "$dir/node$i/controller_port")"
        brokers="$brokers${brokers:+,}127.0.0.1:$(cat "$dir/node$i/port")"
    done
    for i in $(seq 1 "$nodes"); do
        port=$(cat "$dir/node$i/port") cport=$(cat "$dir/node$i/controller_port")
        cat >"$dir/node$i/server.properties" <<EOF
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/node$i/data
num.network.threads=2
num.io.threads=2
background.threads=2
num.partitions=4
auto.create.topics.enable=true
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=300
group.max.session.timeout.ms=3600000
broker.session.timeout.ms=2000
broker.heartbeat.interval.ms=500
num.recovery.threads.per.data.dir=2
EOF
    done
    # One cluster id for every node's storage: 16 random bytes, base64url.
    # (coreutils only: the python3 first on PATH may not be Debian's, and once
    # printed nothing here.)
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
    [ ${#id} -eq 22 ] || { echo "real-kafka.sh: could not make a cluster id" >&2; return 1; }
    for i in $(seq 1 "$nodes"); do
        java -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
            -Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.logs.dir="$dir/node$i" \
            -cp "$cp" kafka.tools.StorageTool format -t "$id" \
            -c "$dir/node$i/server.properties" >"$dir/node$i/format.out" 2>&1 || {
            cat "$dir/node$i/format.out" >&2
            rm -rf "$dir"
            die "formatting node $i's storage failed"
        }
    done
    for i in $(seq 1 "$nodes"); do node_start "$dir" "$i"; done
    for i in $(seq 1 "$nodes"); do
        node_wait "$dir" "$i" || {
            cmd_stop "$dir"
            exit 1
        }
    done
    echo "$brokers" >"$dir/brokers"
    echo "SWF_KAFKA_BROKERS=$brokers"
    echo "SWF_KAFKA_DIR=$dir"
}

cmd_stop() {
    [ -f "$1/nodes" ] || die "$1 is not a cluster of this script"
    for i in $(nodes_of "$1"); do node_kill "$1" "$i"; done
    rm -rf "$1"
}

cmd_down() {
    [ -f "$1/nodes" ] || die "$1 is not a cluster of this script"
    for i in $(nodes_of "$1" "${2:-}"); do node_kill "$1" "$i"; done
}

cmd_up() {
    [ -f "$1/nodes" ] || die "$1 is not a cluster of this script"
    for i in $(nodes_of "$1" "${2:-}"); do
        [ -f "$1/node$i/pid" ] && kill -0 "$(cat "$1/node$i/pid")" 2>/dev/null && continue
        node_start "$1" "$i"
    done
    for i in $(nodes_of "$1" "${2:-}"); do node_wait "$1" "$i"; done
}

[ $# -ge 1 ] || die "usage: real-kafka.sh start [--brokers N] | stop DIR | down DIR [NODE] | up DIR [NODE]"
what=$1
shift
case $what in
start) cmd_start "$@" ;;
stop | down | up)
    [ $# -ge 1 ] || die "$what: which cluster (the SWF_KAFKA_DIR that start printed)?"
    "cmd_$what" "$@"
    ;;
*) die "unknown command $what" ;;
esac
