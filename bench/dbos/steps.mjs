// steps.mjs - DBOS Transact's durable steps on PostgreSQL, measured like
// bench_steps: EXECUTIONS workflows in flight, each running STEPS steps in
// sequence, each step an echo (its body returns a small JSON object) that
// DBOS checkpoints in its system database before the workflow goes on.
//
// usage: node steps.mjs EXECUTIONS STEPS [WORKFLOWS]
//   WORKFLOWS: how many workflows the measured interval runs (default
//   EXECUTIONS: E workflows x S steps, as bench_steps runs E executions x S
//   steps). With more, each of the E slots starts its next workflow as soon
//   as its last one has returned, so that E are in flight until WORKFLOWS
//   have started (a closed loop).
// environment:
//   DBOS_SYSTEM_DATABASE_URL  the system database (required), a postgresql://
//                             URL; DBOS creates the database if missing
//   DBOS_BENCH_WARMUP_STEPS   steps of the warm-up before the clock starts,
//                             run as E workflows of WARMUP/E steps (default
//                             1000; 0: none)
//   DBOS_BENCH_POOL           systemDatabasePoolSize (default: DBOS's own, 10)
//
// Run it from a folder whose node_modules holds @dbos-inc/dbos-sdk
// (scripts/bench-dbos.sh does). Timing, in the workflow's own code: a step's
// latency runs from just before the call of the registered step function to
// its return, which comes after DBOS has read the step's earlier outcome
// (none), run the body and committed the checkpoint. Step-to-step is from
// one step's return to the next step's return in the same workflow, the
// figure next to bench_steps's "answer -> next task published".
import { DBOS } from '@dbos-inc/dbos-sdk';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const [execs, steps] = [Number(process.argv[2]), Number(process.argv[3])];
const workflows = process.argv[4] === undefined ? execs : Number(process.argv[4]);
if (!(execs >= 1 && steps >= 1 && workflows >= 1) || process.argv.length > 5) {
    console.error('usage: node steps.mjs EXECUTIONS STEPS [WORKFLOWS]');
    process.exit(2);
}
const url = process.env.DBOS_SYSTEM_DATABASE_URL;
if (!url) {
    console.error('steps.mjs: set DBOS_SYSTEM_DATABASE_URL');
    process.exit(2);
}
const warmupSteps = Number(process.env.DBOS_BENCH_WARMUP_STEPS ?? 1000);
const pool = process.env.DBOS_BENCH_POOL ? Number(process.env.DBOS_BENCH_POOL) : undefined;

// Filled by the workflows of the measured interval only.
const stepMs = [];
const gapMs = [];

// An echo activity: returns its input with a mark, as bench_steps's worker
// answers each task with its input.
const echo = DBOS.registerStep(async (input) => ({ ...input, by: 'bench' }), { name: 'echo' });

async function chain(n, measured) {
    let prev;
    let v = { i: 0 };
    for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        v = await echo({ i: v.i + 1 });
        const t1 = performance.now();
        if (measured) {
            stepMs.push(t1 - t0);
            if (prev !== undefined) gapMs.push(t1 - prev);
        }
        prev = t1;
    }
    return v;
}
const chainWorkflow = DBOS.registerWorkflow(chain, { name: 'chain' });

// E slots, each running workflows one after the other until `total` have
// started; resolves when all have returned.
async function closedLoop(prefix, total, n, measured) {
    let started = 0;
    const slot = async () => {
        while (started < total) {
            const id = `${prefix}-${started++}`;
            const h = await DBOS.startWorkflow(chainWorkflow, { workflowID: id })(n, measured);
            const r = await h.getResult();
            if (r.i !== n) throw new Error(`workflow ${id}: ${JSON.stringify(r)} after ${n} steps`);
        }
    };
    await Promise.all(Array.from({ length: Math.min(execs, total) }, slot));
}

// CPU time: this process's, and the whole machine's busy time from
// /proc/stat (user nice system irq softirq steal; not idle, not iowait), in
// USER_HZ (100 a second on Linux).
function cpuNow() {
    const u = process.cpuUsage();
    let busy = 0;
    try {
        const v = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
        busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / 100;
    } catch {
        busy = NaN;
    }
    return { self: (u.user + u.system) / 1e6, busy };
}

function pct(a, p) {
    if (a.length === 0) return 0;
    const s = Float64Array.from(a).sort();
    return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}

DBOS.setConfig({
    name: 'swf-bench-dbos',
    systemDatabaseUrl: url,
    ...(pool ? { systemDatabasePoolSize: pool } : {}),
    logLevel: 'warn',
});
await DBOS.launch();

const run = `bench-${process.pid}-${Date.now()}`;
if (warmupSteps > 0) {
    await closedLoop(`${run}-warm`, execs, Math.max(1, Math.ceil(warmupSteps / execs)), false);
}

const c0 = cpuNow();
const t0 = performance.now();
await closedLoop(`${run}-m`, workflows, steps, true);
const secs = (performance.now() - t0) / 1000;
const c1 = cpuNow();

await DBOS.shutdown();

// What PostgreSQL holds for the measured workflows: one checkpoint a step.
const db = new pg.Client({ connectionString: url });
await db.connect();
const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM dbos.operation_outputs WHERE workflow_uuid LIKE $1 AND function_name = 'echo'`,
    [`${run}-m-%`],
);
await db.end();

const total = workflows * steps;
const f = (x) => x.toFixed(2);
console.log(
    `dbos: executions ${execs} x ${steps} steps: ${total} steps in ${f(secs)} s = ` +
        `${(total / secs).toFixed(0)} steps/s; step p50 ${f(pct(stepMs, 0.5))} ms, p99 ${f(pct(stepMs, 0.99))} ms; ` +
        `step-to-step p50 ${f(pct(gapMs, 0.5))} ms, p99 ${f(pct(gapMs, 0.99))} ms`,
);
console.log(
    `  cpu: this process ${f((c1.self - c0.self) / secs)} cores, the machine ${f((c1.busy - c0.busy) / secs)} ` +
        `of ${availableParallelism()} cores busy (workflows ${workflows}, pool ${pool ?? 'default'}, ` +
        `${rows[0].n} step checkpoints in PostgreSQL)`,
);
if (rows[0].n !== total || stepMs.length !== total) {
    console.error(`steps.mjs: ${stepMs.length} steps timed, ${rows[0].n} checkpoints, ${total} expected`);
    process.exit(1);
}
process.exit(0);
