#!/bin/sh
# storm.sh - swf under a storm of failures, then a checker (tests/storm/storm.py).
#
# usage: scripts/storm.sh [BUILD_DIR] [--short | --long | --done-when] [storm.py options]
#
#   --short      (CI) 300 executions, 90 s of storm: about 5 minutes in all
#   --long       30 minutes of storm, 1200 executions started over the first 25
#   --done-when  no storm: a timer-heavy workflow on workers on kafkajs and on
#                Kafka's Java client, with 2 and then 3 deciders; every
#                execution must complete (issue 18's first "Done when")
#
# Everything runs as separate processes on a throwaway 3-node KRaft cluster
# (scripts/real-kafka.sh) and a throwaway PostgreSQL server, removed at the
# end (--keep keeps the logs and the database when a check fails). Builds the
# Java worker (worker/examples/java, Maven) and installs kafkajs (npm ci) when
# they are missing. Prints what was killed and paused, how often, and the
# checker's counts; exits 1 when a check failed.
set -eu
cd "$(dirname "$0")/.."
case ${1:-} in
-* | "") build=build ;;
*) build=$1 && shift ;;
esac
for t in swf swf-decider swf-history swf-worker example_c_worker; do
    [ -x "$build/$t" ] || { echo "storm.sh: no $build/$t: build first" >&2; exit 2; }
done
mode=--short
case ${1:-} in --short | --long | --done-when) mode=$1; shift ;; esac

jar=worker/examples/java/target/swf-example-worker.jar
if [ ! -f "$jar" ] || [ worker/examples/java/pom.xml -nt "$jar" ] ||
    [ worker/examples/java/src/main/java/swf/examples/Worker.java -nt "$jar" ]; then
    echo "storm.sh: building the Java worker (Maven)" >&2
    mvn -q -B -f worker/examples/java/pom.xml package >/tmp/storm-mvn.$$.log 2>&1 ||
        { cat /tmp/storm-mvn.$$.log >&2; rm -f /tmp/storm-mvn.$$.log; exit 1; }
    rm -f /tmp/storm-mvn.$$.log
fi
js=worker/examples/js
if [ ! -f "$js/node_modules/kafkajs/package.json" ]; then
    npm ci --prefix "$js" --no-audit --no-fund >/dev/null
fi

case $mode in
--short) set -- --duration 90 --executions 300 --drain 240 "$@" ;;
--long) set -- --duration 1800 --executions 1200 --start-over 1500 --drain 600 "$@" ;;
--done-when)
    set -- --mix timers --chaos none --deciders 2,3 --workers js,java --executions 40 \
        --rounds 3 --brokers 3 --drain 180 "$@"
    ;;
esac
exec /usr/bin/python3 tests/storm/storm.py --build "$build" "$@"
