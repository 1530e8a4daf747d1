#!/bin/sh
# bench-real-table.sh - the whole performance table of issue 18 in one
# session: bench_steps on a real Kafka broker at 1, 3, 10, 20, 50 and 200
# executions in flight with 1 and 2 deciders, and DBOS Transact at the same
# depths, back to back, ROUNDS times; then one table of medians (and the
# range over the rounds).
#
# usage: scripts/bench-real-table.sh [BUILD_DIR] [ROUNDS]   (default: build 3)
#
# One broker for the session (scripts/real-kafka.sh: Kafka 4.x, KRaft, one
# node), warmed by one discarded run; each round runs DBOS's matrix
# (scripts/bench-dbos.sh, its own throwaway PostgreSQL) and then swf's
# (scripts/bench-real-kafka.sh; each bench_steps run has its own throwaway
# PostgreSQL and its own topics). Every run's full output is kept in
# BUILD_DIR/bench-real-table.log. SWF_BENCH_DEPTHS overrides the depths
# ('1 3 10 20 50 200'); SWF_BENCH_STEPS the steps each depth's run takes in
# all (6000: each run takes a few seconds). The targets (issue 18): at least
# 5,000 steps/s with an answer -> next task published p50 <= 2 ms and
# p99 <= 10 ms, in one run.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
rounds=${2:-3}
depths=${SWF_BENCH_DEPTHS:-1 3 10 20 50 200}
total=${SWF_BENCH_STEPS:-6000}
[ -x "$build/bench_steps" ] || { echo "no $build/bench_steps: build first" >&2; exit 2; }
log="$build/bench-real-table.log"
: >"$log"

started=$(SWF_KAFKA_JIT_OPTS=${SWF_KAFKA_JIT_OPTS-} "$root/scripts/real-kafka.sh" start) || exit 1
brokers=$(echo "$started" | sed -n 's/^SWF_KAFKA_BROKERS=//p')
kdir=$(echo "$started" | sed -n 's/^SWF_KAFKA_DIR=//p')
trap '"$root/scripts/real-kafka.sh" stop "$kdir"' EXIT
trap 'exit 130' INT TERM
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$root/tests/kafka-broker/pom.xml")
echo "== Apache Kafka $version (KRaft, one node) on $brokers; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"

swf_runs='' dbos_runs=''
for e in $depths; do
    s=$((total / e))
    [ $s -lt 20 ] && s=20
    dbos_runs="$dbos_runs '$e $s'"
    swf_runs="$swf_runs '1 $e $s'"
done
for e in $depths; do
    s=$((total / e))
    [ $s -lt 20 ] && s=20
    swf_runs="$swf_runs '2 $e $s'"
done
SWF_BENCH_KAFKA_WARMUP='' SWF_BENCH_BROKERS=$brokers \
    "$root/scripts/bench-real-kafka.sh" "$build" '1 20 500' >/dev/null
r=1
while [ $r -le "$rounds" ]; do
    echo "== round $r of $rounds: DBOS, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
    eval "set -- $dbos_runs"
    "$root/scripts/bench-dbos.sh" "$build" "$@" >>"$log" 2>&1
    echo "== round $r of $rounds: swf, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
    eval "set -- $swf_runs"
    SWF_BENCH_KAFKA_WARMUP='' SWF_BENCH_BROKERS=$brokers \
        "$root/scripts/bench-real-kafka.sh" "$build" "$@" >>"$log" 2>&1
    r=$((r + 1))
done

python3 - "$log" <<'EOF'
import re, statistics, sys
rows = {}  # (system, deciders, depth) -> list of dict
cur = None
warm = False  # the line after "== warm-up" is a discarded run's
batches = 0   # of the decider whose "per batch" line comes next
for line in open(sys.argv[1]):
    if line.startswith('== warm-up'):
        warm = True
        continue
    if warm and re.match(r'(deciders \d+|dbos:) ', line):
        warm = False
        cur = None
        continue
    m = re.match(r'deciders (\d+), executions (\d+) x', line)
    if m:
        cur = rows.setdefault(('swf', int(m[1]), int(m[2])), [])
        f = re.search(r'= (\d+) steps/s; answer -> next task published p50 ([\d.]+) ms, p99 ([\d.]+) ms', line)
        cur.append({'sps': float(f[1]), 'p50': float(f[2]), 'p99': float(f[3])})
        continue
    m = re.search(r'broker hop\) p50 ([\d.]+) ms, p99 ([\d.]+) ms; the decider has it -> task published p50 ([\d.]+) ms', line)
    if m and cur:
        cur[-1].update(hop=float(m[1]), own=float(m[3]))
        continue
    m = re.match(r'  decider \d+: (\d+) batches', line)
    if m:
        batches = int(m[1])
        continue
    # The deciders' phases, averaged over all their batches.
    m = re.search(r'per batch ms: gather ([\d.]+), decide ([\d.]+), append ([\d.]+), publish ([\d.]+)', line)
    if m and cur and batches:
        r = cur[-1]
        w = r.get('_w', 0)
        for k, v in (('decide', m[2]), ('append', m[3]), ('publish', m[4])):
            r[k] = (r.get(k, 0) * w + float(v) * batches) / (w + batches)
        r['_w'] = w + batches
        continue
    m = re.search(r'cpu: this process [\d.]+ cores, the machine ([\d.]+) of', line)
    if m and cur:
        cur[-1].setdefault('busy', float(m[1]))
        continue
    m = re.match(r'dbos: executions (\d+) x .*= (\d+) steps/s; step p50 ([\d.]+) ms, p99 ([\d.]+) ms; step-to-step p50 ([\d.]+) ms, p99 ([\d.]+) ms', line)
    if m:
        cur = rows.setdefault(('dbos', 0, int(m[1])), [])
        cur.append({'sps': float(m[2]), 'p50': float(m[5]), 'p99': float(m[6])})

def cell(runs, k, fmt):
    v = [r[k] for r in runs if k in r]
    if not v:
        return ''
    med = statistics.median(v)
    return (fmt % med) + (' (%s-%s)' % (fmt % min(v), fmt % max(v)) if len(v) > 1 else '')

print()
print('| system | in flight | steps/s | p50 ms | p99 ms | hop / own p50 ms | per batch: decide / append / publish ms | busy cores | targets |')
print('|---|---|---|---|---|---|---|---|---|')
for key in sorted(rows, key=lambda k: (k[0] != 'dbos', k[1], k[2])):
    runs = rows[key]
    name = 'DBOS' if key[0] == 'dbos' else 'swf, %d decider%s' % (key[1], 's' if key[1] > 1 else '')
    ok = sum(1 for r in runs if r['sps'] >= 5000 and r['p50'] <= 2 and r['p99'] <= 10)
    split = '%s / %s' % (cell(runs, 'hop', '%.2f'), cell(runs, 'own', '%.2f')) if key[0] == 'swf' else ''
    batch = ' / '.join(cell(runs, k, '%.2f') for k in ('decide', 'append', 'publish')) if key[0] == 'swf' else ''
    print('| %s | %d | %s | %s | %s | %s | %s | %s | %d of %d runs |' % (
        name, key[2], cell(runs, 'sps', '%.0f'), cell(runs, 'p50', '%.2f'), cell(runs, 'p99', '%.1f'),
        split, batch, cell(runs, 'busy', '%.2f'), ok, len(runs)))
print()
print('DBOS p50/p99: one step\'s end to the next step\'s end in the same workflow; swf: a worker\'s answer '
      'to the next task published. Medians of the rounds, the range in brackets.')
EOF
