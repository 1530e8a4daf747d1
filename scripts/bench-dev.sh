# bench-dev.sh - what the benchmarks of the shipped programs share
# (scripts/bench-processes.sh, scripts/bench-start.sh); sourced, not run.
#
# The caller sets build (the build folder), work (a scratch folder),
# deciders, round (a number of its own per `swf dev`), dev_pid='' and, for a
# real broker, SWF_BENCH_KAFKA=HOST:PORT.

# Starts `swf dev` (on SWF_BENCH_KAFKA when set, with topics of this round's
# own) and exports what it prints (SWF_DATABASE_URL, SWF_KAFKA_BROKERS, ...).
dev_start() {
    : >"$work/exports"
    if [ -n "${SWF_BENCH_KAFKA:-}" ]; then
        tag="b$$.$(date +%s).$round"
        export SWF_INBOX_TOPIC="swf.inbox.$tag" SWF_DLQ_TOPIC="swf.dlq.$tag" \
            SWF_TASK_TOPIC_PREFIX="swf.tasks.$tag." SWF_EVENTS_TOPIC="swf.events.$tag"
        set -- --kafka "$SWF_BENCH_KAFKA"
    else
        set --
    fi
    "$build/swf" dev --deciders "$deciders" "$@" >"$work/exports" 2>"$work/dev.err" &
    dev_pid=$!
    tries=0
    until grep -q SWF_KAFKA_BROKERS "$work/exports"; do
        tries=$((tries + 1))
        [ $tries -lt 600 ] && kill -0 "$dev_pid" 2>/dev/null || {
            cat "$work/dev.err" >&2
            exit 1
        }
        sleep 0.1
    done
    . "$work/exports" # its lines export what they set
}

dev_stop() {
    if [ -n "$dev_pid" ]; then
        kill "$dev_pid" 2>/dev/null || true
        wait "$dev_pid" 2>/dev/null || true
        dev_pid=''
    fi
}

# Waits (up to 300 s) until no execution of state machine $1 is open.
closed_wait() {
    tries=0
    while :; do
        open=$(psql "$SWF_DATABASE_URL" -Atc "SELECT count(*) FROM executions WHERE status = 'open' AND state_machine = '$1'")
        [ "$open" = 0 ] && break
        tries=$((tries + 1))
        if [ $tries -gt 3000 ]; then
            echo "$0: $open executions of $1 still open after 300 s" >&2
            exit 1
        fi
        sleep 0.1
    done
}
