#!/bin/sh
# Installs what swf needs to build and test, from Debian 12's packages.
# Java and Maven run the real Kafka broker of the tests (scripts/real-kafka.sh).
# Safe to run again: apt-get skips what is installed. Needs root (or sudo).
#
# usage: scripts/install-deps.sh [--build]
#   --build: only what building the programs and libraries needs (the
#   Docker image's build stage); no test tools, servers or npm packages.
set -eu
BUILD_PKGS="build-essential cmake pkg-config libjson-c-dev libpq-dev librdkafka-dev libssl-dev
      libmicrohttpd-dev"
# A minimal Debian (debootstrap --variant=minbase, scripts/fresh-debian.sh)
# lacks even ca-certificates (npm's downloads are https) and procps (the
# tests look for leftover processes with ps). clang and clang-format: CI
# builds with clang too and checks the format (scripts/build-matrix.sh,
# scripts/check-format.sh). Java and Maven: the real Apache Kafka broker of
# the e2e suites (scripts/real-kafka.sh, tests/kafka-broker/pom.xml); the JDK
# (javac) builds the Java example worker the storm runs (worker/examples/java,
# scripts/storm.sh). boto3 and the AWS CLI v2: the clients the Step Functions
# API is tested with (scripts/api-e2e.sh). libmicrohttpd (above): swf-api's
# HTTP server. postgresql-server-dev-15: the server's headers, to build the
# hash chain's trigger in C (history/pgext/swf_chain.c, an optional server
# extension), which the tests install and run the history tests with; it
# brings llvm-14-dev (Debian's PGXS builds JIT bitcode), ~34 MB.
TEST_PKGS="libcriterion-dev postgresql postgresql-contrib python3 python3-confluent-kafka
      docker-compose ca-certificates procps clang clang-format openjdk-17-jdk-headless maven
      python3-boto3 awscli postgresql-server-dev-15"
PKGS="$BUILD_PKGS $TEST_PKGS"
[ "${1:-}" != "--build" ] || PKGS=$BUILD_PKGS
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
[ "${1:-}" != "--build" ] || exit 0
# The example workers' Kafka clients (worker/examples): Python's comes from Debian
# above, JavaScript's (kafkajs, and @aws-sdk/client-sfn for the Step Functions
# API's activity worker, pinned by package-lock.json) from npm, Java's
# (kafka-clients, pinned by worker/examples/java/pom.xml) from Maven when
# scripts/storm.sh builds the worker.
if ! command -v npm >/dev/null 2>&1; then
    # apt-get update ran above only when a package was missing.
    [ -n "$missing" ] || $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
js="$(dirname "$0")/../worker/examples/js"
if [ ! -f "$js/node_modules/kafkajs/package.json" ] ||
    [ ! -f "$js/node_modules/@aws-sdk/client-sfn/package.json" ]; then
    npm ci --prefix "$js" --no-audit --no-fund >/dev/null
fi
