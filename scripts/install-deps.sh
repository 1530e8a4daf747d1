#!/bin/sh
# Installs what swf needs to build and test, from Debian 12's packages.
# Java and Maven run the real Kafka broker of the tests (scripts/real-kafka.sh).
# Safe to run again: apt-get skips what is installed. Needs root (or sudo).
set -eu
PKGS="build-essential cmake pkg-config libjson-c-dev libpq-dev libssl-dev librdkafka-dev libcriterion-dev
      postgresql postgresql-contrib python3 python3-confluent-kafka docker-compose
      openjdk-17-jre-headless maven"
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
# The example workers' Kafka clients (worker/examples): Python's comes from Debian
# above, JavaScript's (kafkajs, pinned by package-lock.json) from npm.
if ! command -v npm >/dev/null 2>&1; then
    # apt-get update ran above only when a package was missing.
    [ -n "$missing" ] || $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
js="$(dirname "$0")/../worker/examples/js"
if [ ! -f "$js/node_modules/kafkajs/package.json" ]; then
    npm ci --prefix "$js" --no-audit --no-fund >/dev/null
fi
