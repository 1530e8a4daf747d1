#!/bin/sh
# bench-dbos.sh - DBOS Transact's durable steps on the same throwaway
# PostgreSQL as bench_steps (15, fsync on), for a figure to set beside it:
# completed steps per second with E workflows in flight, and per step p50/p99
# (the step's call to its checkpoint committed, and one step's end to the
# next one's). See bench/dbos/steps.mjs for what is timed.
#
# usage: scripts/bench-dbos.sh [BUILD_DIR] ['E S' ...]
#   each quoted 'E S' is one run (workflows in flight, steps each; a third
#   number, WORKFLOWS, makes each slot start new workflows until that many
#   have run); default: '1 2000' '10 1000' '50 400'.
#
# The npm package @dbos-inc/dbos-sdk (pinned below) is installed into
# BUILD_DIR/dbos-bench (not part of the repository; reused when present),
# and steps.mjs is copied beside its node_modules so that its imports
# resolve. Node runs the workflows, PostgreSQL checkpoints them, on the same
# two cores. One run ('10 200') goes first and is discarded: it creates the
# system database and warms PostgreSQL's caches; each run also warms its own
# node process (DBOS_BENCH_WARMUP_STEPS, default 1000) before its clock
# starts. DBOS_BENCH_POOL sets DBOS's systemDatabasePoolSize (default 10).
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "1 2000" "10 1000" "50 400"
version=5.3.0
here=$(cd "$(dirname "$0")" && pwd)

command -v node >/dev/null 2>&1 || { echo "bench-dbos.sh: needs node (20 or later) and npm" >&2; exit 2; }
work="$build/dbos-bench"
mkdir -p "$work"
if [ "$(cat "$work/.installed" 2>/dev/null)" != "$version" ]; then
    # A package.json of its own keeps npm from looking for one further up.
    printf '{ "name": "swf-dbos-bench", "private": true }\n' >"$work/package.json"
    (cd "$work" && npm install -q --no-save --no-audit --no-fund --no-package-lock \
        "@dbos-inc/dbos-sdk@$version" >/dev/null)
    echo "$version" >"$work/.installed"
fi
cp "$here/../bench/dbos/steps.mjs" "$work/steps.mjs"

# shellcheck disable=SC1091
. "$here/throwaway-pg.sh"
# node-postgres takes the Unix socket's folder ($dir, from throwaway-pg.sh)
# as the host query parameter.
# shellcheck disable=SC2154
export DBOS_SYSTEM_DATABASE_URL="postgresql://postgres@localhost/dbos_bench?host=$dir"
echo "== DBOS Transact $version, node $(node --version), PostgreSQL at $dir"

# DBOS queues a SET on each new pool connection ahead of its first query,
# which node-postgres 8 answers with a DeprecationWarning on every run.
echo "== warm-up: dbos 10 200"
node --disable-warning=DeprecationWarning "$work/steps.mjs" 10 200 >"$dir/run.out"
head -1 "$dir/run.out"
for args in "$@"; do
    echo "== dbos $args"
    # shellcheck disable=SC2086
    node --disable-warning=DeprecationWarning "$work/steps.mjs" $args
done
