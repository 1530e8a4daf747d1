#!/usr/bin/python3
"""storm.py - swf under a storm of failures, then a checker over what it wrote.

usage: tests/storm/storm.py [--build DIR] [--duration S] [--executions N]
           [--deciders N[,N...]] [--histories N] [--workers c,py,js,java]
           [--mix full|timers] [--chaos all|none] [--brokers 1|3] [--keep]

Everything runs as separate processes, as in production: swf-decider (3),
swf-history (2), workers in C (swf-worker --exec and --echo for the order
example, the C example worker), Python (confluent-kafka), JavaScript (kafkajs)
and Java (Kafka's Java client), on a real Apache Kafka of three KRaft nodes
(scripts/real-kafka.sh: replication factor 3, min.insync.replicas=2) and a
throwaway PostgreSQL server.

The storm (--chaos all, for --duration seconds): the executions are started
during its first third, a realistic mix (--mix full): the order example
(Choice, Retry, Parallel, a Map of the order's items, a Wait), a Map of 50
Tasks served by the four languages' workers, callbacks (.waitForTaskToken
Tasks answered with `swf task-success`), executions signalled twice
while they wait at a gate the driver opens (`swf task-success`) only once
both signals were acknowledged, executions cancelled while they wait, and
timer-heavy loops.
Every second a random swf process (decider, swf-history, worker) is
SIGKILLed and started again, or paused with SIGSTOP for 2-10 s and continued;
every ~40 s the leader of the inbox's partition 0 among the three brokers is
killed (SIGKILL) and started again 5-10 s later; every ~50 s PostgreSQL is
crashed (pg_ctl stop -m immediate) and started again 2-5 s later. Then the
storm ends, everything comes back, and the executions are given
--drain seconds (default 300) to close.

The checker reads the events, executions, outbox and timers tables:
  - every execution started closed exactly once (one close event, the
    projection's status agrees), with the output (or error, or cancel) its
    input implies;
  - event ids are dense (1..last_event_id, no gap) and the projection's
    last_event_id is the history's last;
  - no activity has two results (completed/failed/timed out), no activity id
    was scheduled twice, no signal requestId recorded twice, no decision task
    completed twice; every acknowledged signal recorded;
  - at most one execution per workflow id (a start retried by the driver
    must not start a second one);
  - the outbox, the timers and the activity timeouts are drained;
  - `swf admin check --all` exits 0 (dense ids, one close, one result per
    activity, replay; and the hash chain where the build has one).
It prints what was killed and paused and how often, and the counts:
executions, closed, lost, duplicated, forked, wrong. Exit 0 when every check
holds.

--mix timers --chaos none (the test of routing across clients): timer-heavy
executions only, with workers on kafkajs and Java; every execution must
complete. --deciders 2,3 runs one phase per count, each with fresh
executions, on the same cluster.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def log(msg):
    print("storm: %s %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


# ---------------------------------------------------------------- workflows

def task(name, **kw):
    d = {"Type": "Task", "Resource": "arn:aws:states:us-east-1:123456789012:activity:" + name}
    d.update(kw)
    return d


def order_definition():
    """examples/order.asl.json, with a courier Wait of 2 s instead of an hour
    and no Charge timeout (a worker paused for 10 s plus a session timeout
    would time it out, which is right but not what the checker expects)."""
    with open(os.path.join(ROOT, "examples", "order.asl.json")) as f:
        d = json.load(f)
    d["States"]["WaitForCourier"]["Seconds"] = 2
    d["States"]["Charge"].pop("TimeoutSeconds", None)
    # Without the nested invoice execution: the storm counts its own
    # executions, and a child is one more.
    d["States"]["WaitForCourier"]["Next"] = "Done"
    del d["States"]["Invoice"]
    del d["States"]["Done"]["Parameters"]["invoice.$"]
    return d


LANGS = ["c", "py", "js", "java"]


def map50_definition():
    branch = {"StartAt": "Route", "States": {
        "Route": {"Type": "Choice", "Default": "UpperJava", "Choices": [
            {"Variable": "$.lang", "StringEquals": "c", "Next": "UpperC"},
            {"Variable": "$.lang", "StringEquals": "py", "Next": "UpperPy"},
            {"Variable": "$.lang", "StringEquals": "js", "Next": "UpperJs"}]},
        "UpperC": task("upper-c", End=True),
        "UpperPy": task("upper-py", End=True),
        "UpperJs": task("upper-js", End=True),
        "UpperJava": task("upper-java", End=True)}}
    return {"StartAt": "Each", "States": {
        "Each": {"Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": 10,
                 "ItemProcessor": branch, "End": True}}}


def callback_definition():
    return {"StartAt": "Approve", "States": {
        "Approve": task("callback.waitForTaskToken",
                        Parameters={"token.$": "$$.Task.Token", "id.$": "$.id"},
                        ResultPath="$.approval", Next="Cool"),
        "Cool": {"Type": "Wait", "Seconds": 1, "Next": "Shout"},
        "Shout": task("upper-java", Parameters={"text.$": "$.id"}, ResultPath="$.upper",
                      End=True)}}


def signal_definition():
    """Signalled twice while it waits at a gate (a .waitForTaskToken Task)
    that the driver opens only once both signals were acknowledged: every
    acknowledged signal is then in the inbox before the answer that lets
    the execution close, so each must be recorded."""
    return {"StartAt": "Gate", "States": {
        "Gate": task("gate.waitForTaskToken",
                     Parameters={"token.$": "$$.Task.Token", "id.$": "$.id"},
                     ResultPath=None, Next="Listen"),
        "Listen": {"Type": "Wait", "Seconds": 1, "Next": "Shout"},
        "Shout": task("upper-py", Parameters={"text.$": "$.id"}, End=True)}}


def cancel_definition():
    return {"StartAt": "Hold", "States": {
        "Hold": task("hold.waitForTaskToken", Parameters={"token.$": "$$.Task.Token"},
                     Next="Long"),
        "Long": {"Type": "Wait", "Seconds": 3600, "End": True}}}


def timers_definition(rounds, langs):
    """Wait 1 s, a Task, Wait 1 s, another Task, count; `rounds` times."""
    a, b = langs[0], langs[-1]
    return {"StartAt": "W1", "States": {
        "W1": {"Type": "Wait", "Seconds": 1, "Next": "T1"},
        "T1": task("upper-" + a, Parameters={"text.$": "$.text"}, ResultPath="$.a", Next="W2"),
        "W2": {"Type": "Wait", "Seconds": 1, "Next": "T2"},
        "T2": task("upper-" + b, Parameters={"text.$": "$.text"}, ResultPath="$.b", Next="Count"),
        "Count": {"Type": "Pass", "Parameters": {
            "text.$": "$.text", "n.$": "States.MathAdd($.n, 1)",
            "a.$": "$.a.text", "b.$": "$.b.text"}, "Next": "More"},
        "More": {"Type": "Choice", "Default": "Done", "Choices": [
            {"Variable": "$.n", "NumericLessThan": rounds, "Next": "W1"}]},
        "Done": {"Type": "Succeed"}}}


class Execution:
    """One execution the driver starts: its kind, input and expected close."""

    def __init__(self, kind, wid, inp, status, output):
        self.kind, self.wid, self.input = kind, wid, inp
        self.status, self.output = status, output  # expected
        self.id = None  # execution id, once started
        self.started_at = None
        self.cancel_at = None
        self.canceled = False
        self.signals = 0  # acknowledged by `swf signal`
        self.signal_tries = 0  # `swf signal` commands run


def make_execution(kind, n, tag, rounds, langs):
    wid = "storm-%s-%s-%d" % (tag, kind, n)
    if kind == "order":
        items = [{"sku": "sku%d" % i} for i in range(1 + n % 3)]
        if n % 10 == 9:  # a zero total: rejected by the Choice
            inp = {"orderId": "O%d" % n, "total": 0, "items": items}
            return Execution(kind, wid, inp, "failed", {"error": "OrderRejected"})
        inp = {"orderId": "O%d" % n, "total": 10 + n, "items": items}
        out = {"orderId": "O%d" % n, "chargeId": "ch_O%d" % n,
               "fulfilment": {"packed": [{"sku": it["sku"], "box": "box-%d" % (i + 1)}
                                         for i, it in enumerate(items)],
                              "notice": "Order O%d is being packed" % n},
               "status": "SHIPPED"}
        return Execution(kind, wid, inp, "succeeded", out)
    if kind == "map50":
        items = [{"text": "m%d-item-%d" % (n, i), "lang": LANGS[i % 4]} for i in range(50)]
        return Execution(kind, wid, {"items": items}, "succeeded",
                         [{"text": it["text"].upper()} for it in items])
    if kind == "callback":
        i = "cb-%d" % n
        return Execution(kind, wid, {"id": i}, "succeeded",
                         {"id": i, "approval": {"approved": True, "id": i},
                          "upper": {"text": i.upper()}})
    if kind == "signal":
        i = "sig-%d" % n
        return Execution(kind, wid, {"id": i}, "succeeded", {"text": i.upper()})
    if kind == "cancel":
        return Execution(kind, wid, {"n": n}, "canceled", None)
    if kind == "timers":
        t = "tm-%s-%d" % (tag, n)
        return Execution(kind, wid, {"text": t, "n": 0}, "succeeded",
                         {"text": t, "n": rounds, "a": t.upper(), "b": t.upper()})
    raise ValueError(kind)


FULL_MIX = [("order", 20), ("map50", 4), ("callback", 18), ("signal", 18), ("cancel", 10),
            ("timers", 30)]


# ---------------------------------------------------------------- processes

class Proc:
    """One swf process (or worker) the storm may kill, pause and restart."""

    def __init__(self, name, kind, argv, env, logdir):
        self.name, self.kind, self.argv, self.env = name, kind, argv, env
        self.logpath = os.path.join(logdir, name + ".log")
        self.p = None
        self.paused_until = 0.0
        self.lock = threading.Lock()
        self.stopped = False  # for good

    def start(self):
        with open(self.logpath, "ab") as out:
            out.write(("---- started %s\n" % time.strftime("%H:%M:%S")).encode())
            out.flush()
            # A session of its own: a pause or a kill reaches this process
            # alone, and ^C of the storm does not reach it directly.
            self.p = subprocess.Popen(self.argv, env=self.env, stdout=out, stderr=out,
                                      stdin=subprocess.DEVNULL, start_new_session=True,
                                      cwd=ROOT)

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def kill(self):
        if self.p is not None:
            try:
                os.kill(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.p.wait()

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s."""
        self.stopped = True
        if not self.alive():
            return
        os.kill(self.p.pid, signal.SIGCONT)
        os.kill(self.p.pid, signal.SIGTERM)
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()


def worker_procs(build, workers, env, logdir):
    java_jar = os.path.join(ROOT, "worker/examples/java/target/swf-example-worker.jar")
    java = ["java", "-Xms16m", "-Xmx96m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-XX:CICompilerCount=1", "-jar", java_jar]
    specs = []
    if "c" in workers:
        specs += [("c-payments", [build + "/swf-worker", "--task-list", "payments", "--exec",
                                  "examples/workers/charge.sh", "--concurrency", "2"]),
                  ("c-warehouse", [build + "/swf-worker", "--task-list", "warehouse", "--exec",
                                   "examples/workers/pack.sh", "--concurrency", "4"]),
                  ("c-warehouse-2", [build + "/swf-worker", "--task-list", "warehouse", "--exec",
                                     "examples/workers/pack.sh", "--concurrency", "4"]),
                  ("c-email", [build + "/swf-worker", "--task-list", "email", "--echo"]),
                  ("c-upper", [build + "/example_c_worker", "upper-c"])]
    if "py" in workers:
        specs += [("py-upper", ["/usr/bin/python3", "worker/examples/python/worker.py",
                                "--task-list", "upper-py"])]
    if "js" in workers:
        specs += [("js-upper", ["node", "worker/examples/js/worker.js", "--task-list", "upper-js"])]
    if "java" in workers:
        specs += [("java-upper", java + ["--task-list", "upper-java"])]
    return [Proc(n, "worker", a, env, logdir) for n, a in specs]


# ---------------------------------------------------------------- the storm

class Storm:
    def __init__(self, args):
        self.a = args
        self.seed = args.seed if args.seed is not None else random.randrange(1 << 30)
        self.build = os.path.abspath(args.build)
        self.dir = tempfile.mkdtemp(prefix="swf-storm-")
        self.logdir = os.path.join(self.dir, "logs")
        os.makedirs(self.logdir)
        self.procs = []
        self.stats = {}  # "SIGKILL+restart decider" -> count
        self.per_proc = {}  # "decider-1-of-3" -> {"killed": n, "paused": n}
        self.events = []
        self.stats_lock = threading.Lock()
        self.kafka_dir = None
        self.pg_down = False
        self.stop_chaos = threading.Event()
        self.executions = []
        self.ex_lock = threading.Lock()
        self.bindir = os.environ.get("SWF_PG_BINDIR", "/usr/lib/postgresql/15/bin")
        if not os.path.exists(os.path.join(self.bindir, "initdb")):
            self.bindir = os.path.dirname(shutil.which("initdb") or "/usr/bin/initdb")

    def count_proc(self, name, what):
        with self.stats_lock:
            d = self.per_proc.setdefault(name, {})
            d[what] = d.get(what, 0) + 1

    def count(self, what):
        with self.stats_lock:
            self.stats[what] = self.stats.get(what, 0) + 1

    # -- PostgreSQL
    def as_pg(self, argv):
        if os.getuid() == 0:
            return ["runuser", "-u", "postgres", "--"] + argv
        return argv

    def pg_start(self):
        subprocess.run(self.as_pg([self.bindir + "/pg_ctl", "-D", self.pgdata, "-l",
                                   os.path.join(self.dir, "pg", "server.log"), "-w", "-t", "60",
                                   "start"]), check=True, stdout=subprocess.DEVNULL)

    def pg_crash(self):
        subprocess.run(self.as_pg([self.bindir + "/pg_ctl", "-D", self.pgdata, "-m", "immediate",
                                   "-w", "stop"]), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

    def pg_setup(self):
        pgdir = os.path.join(self.dir, "pg")
        os.makedirs(pgdir)
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres")
            shutil.chown(pgdir, "postgres")
        self.pgdata = os.path.join(pgdir, "data")
        subprocess.run(self.as_pg([self.bindir + "/initdb", "-D", self.pgdata, "-U", "postgres",
                                   "-A", "trust", "-E", "UTF8", "--no-locale", "-N"]),
                       check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(self.pgdata, "postgresql.conf"), "a") as f:
            f.write("listen_addresses = ''\nunix_socket_directories = '%s'\nfsync = on\n"
                    "max_connections = 200\n" % pgdir)
        self.pg_start()
        self.conn = "host=%s port=5432 user=postgres dbname=postgres" % pgdir

    def psql(self, sql, timeout=120):
        r = subprocess.run(["psql", self.conn, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError("psql: " + r.stderr.strip())
        return r.stdout

    # -- Kafka
    def kafka_setup(self):
        env = dict(os.environ, SWF_KAFKA_HEAP=self.a.broker_heap)
        r = subprocess.run([ROOT + "/scripts/real-kafka.sh", "start", "--brokers",
                            str(self.a.brokers)], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            raise RuntimeError("the Kafka cluster did not start")
        for line in r.stdout.splitlines():
            k, _, v = line.partition("=")
            if k == "SWF_KAFKA_BROKERS":
                self.brokers = v
            elif k == "SWF_KAFKA_DIR":
                self.kafka_dir = v

    def inbox_leader(self):
        from confluent_kafka.admin import AdminClient
        md = AdminClient({"bootstrap.servers": self.brokers}).list_topics(timeout=10)
        t = md.topics.get("swf.inbox")
        if t is None or t.error is not None or 0 not in t.partitions:
            return None
        return t.partitions[0].leader

    # -- swf
    def swf(self, *argv, timeout=60):
        return subprocess.run([self.build + "/swf"] + list(argv), env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def setup(self):
        t0 = time.time()
        self.pg_setup()
        log("PostgreSQL up in %s" % self.pgdata)
        self.kafka_setup()
        log("Kafka (%d KRaft nodes, RF %d) on %s, up after %.0f s" % (
            self.a.brokers, 3 if self.a.brokers == 3 else 1, self.brokers, time.time() - t0))
        self.env = dict(os.environ, SWF_DATABASE_URL=self.conn, SWF_KAFKA_BROKERS=self.brokers,
                        SWF_TOKEN_SECRET="storm-" + os.urandom(16).hex(),
                        SWF_KAFKA_SESSION_TIMEOUT_MS=str(self.a.session_timeout_ms))
        r = self.swf("db", "migrate")
        if r.returncode != 0:
            raise RuntimeError("swf db migrate: " + r.stderr)
        defs = {"storm-order": order_definition(), "storm-map50": map50_definition(),
                "storm-callback": callback_definition(), "storm-signal": signal_definition(),
                "storm-cancel": cancel_definition(),
                "storm-timers": timers_definition(self.a.rounds, self.timer_langs())}
        for name, d in defs.items():
            path = os.path.join(self.dir, name + ".asl.json")
            with open(path, "w") as f:
                json.dump(d, f)
            r = self.swf("register", name, path)
            if r.returncode != 0:
                raise RuntimeError("swf register %s: %s" % (name, r.stderr))
        workers = self.a.workers.split(",")
        self.procs = [Proc("history-%d" % i, "history", [self.build + "/swf-history"], self.env,
                           self.logdir) for i in range(1, self.a.histories + 1)]
        self.procs += worker_procs(self.build, workers, self.env, self.logdir)
        for p in self.procs:
            p.start()

    def timer_langs(self):
        w = [x for x in self.a.workers.split(",") if x in LANGS]
        return w if w else ["c"]

    def set_deciders(self, n):
        for p in [p for p in self.procs if p.kind == "decider"]:
            p.stop()
            self.procs.remove(p)
        for i in range(1, n + 1):
            p = Proc("decider-%d-of-%d" % (i, n), "decider", [self.build + "/swf-decider"],
                     self.env, self.logdir)
            p.start()
            self.procs.append(p)

    # -- starting executions, callbacks, signals, cancels
    def start_one(self, ex):
        """Starts ex; a failed or ambiguous start is retried, after looking
        for the execution the first try may have created."""
        while True:
            try:
                r = self.swf("start", ex.kind == "order" and "storm-order" or "storm-" + ex.kind,
                             "--input", json.dumps(ex.input), "--workflow-id", ex.wid,
                             timeout=60)
                if r.returncode == 0 and r.stdout.strip():
                    ex.id = r.stdout.strip().splitlines()[0]
                    ex.started_at = time.time()
                    return
                self.count("swf start retried")
            except subprocess.TimeoutExpired:
                self.count("swf start retried")
            time.sleep(1)
            try:
                out = self.psql("SELECT execution_id FROM executions WHERE workflow_id = '%s'"
                                % ex.wid, timeout=20).split()
                if out:
                    ex.id, ex.started_at = out[0], time.time()
                    return
            except Exception:
                pass

    def starter(self, todo, seconds):
        """Starts todo evenly over `seconds`, from 4 threads (one `swf start`
        takes a while when PostgreSQL or a broker is down)."""
        gap = seconds / max(1, len(todo))
        t0 = time.time()
        queue = list(enumerate(todo))
        lock = threading.Lock()

        def run():
            while True:
                with lock:
                    if not queue:
                        return
                    i, ex = queue.pop(0)
                time.sleep(max(0, t0 + i * gap - time.time()))
                self.start_one(ex)
                if ex.kind == "cancel":
                    ex.cancel_at = time.time() + random.uniform(2, 6)
                with self.ex_lock:
                    self.executions.append(ex)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def closed_ids(self):
        try:
            out = self.psql("SELECT execution_id FROM executions WHERE status <> 'open'", 30)
            return set(out.split())
        except Exception:
            return None

    def helper(self, stop):
        """Answers callbacks, sends signals, cancels: like the world outside."""
        while not stop.is_set():
            time.sleep(1)
            try:
                self.help_once()
            except Exception as e:  # a command that timed out: next round
                self.count("helper round failed (%s)" % type(e).__name__)

    def help_once(self):
        if self.stop_chaos.is_set() or self.a.chaos == "none":
            self.supervise()
        with self.ex_lock:
            exs = list(self.executions)
        closed = self.closed_ids()
        if closed is None:
            return
        now = time.time()
        for ex in exs:
            if ex.id is None or ex.id in closed:
                continue
            if ex.kind == "cancel" and ex.cancel_at and now >= ex.cancel_at:
                r = self.swf("cancel", ex.id, "--cause", "storm", timeout=60)
                if r.returncode == 0:
                    ex.cancel_at = now + 30  # again later if it did not close
                    self.count("swf cancel sent")
            if ex.kind == "signal" and ex.signals < 2 and now - ex.started_at > 1 + 2 * ex.signals:
                ex.signal_tries += 1
                r = self.swf("signal", ex.id, "poke", "--force", "--input", '{"n": %d}' % ex.signals,
                             timeout=60)
                if r.returncode == 0:
                    ex.signals += 1
                    self.count("swf signal sent")
                else:
                    self.count("swf signal failed (retried)")
        gated = {ex.id for ex in exs if ex.kind == "signal" and ex.signals >= 2}
        self.answer_callbacks(gated)

    def answer_callbacks(self, gated):
        """`swf task-success` for every open Approve task, and for the gate of
        every signalled execution in `gated` (again while it is open: a
        second answer must change nothing)."""
        try:
            out = self.psql(
                "SELECT e.execution_id, e.attributes->'input'->>'token', e.attributes->'input'->>'id'"
                " FROM events e JOIN executions x USING (execution_id)"
                " WHERE x.status = 'open' AND x.state_machine IN ('storm-callback', 'storm-signal')"
                " AND e.event_type = 'ActivityTaskScheduled'"
                " AND NOT EXISTS (SELECT 1 FROM events c WHERE c.execution_id = e.execution_id"
                "   AND c.event_type IN ('ActivityTaskCompleted', 'ActivityTaskFailed',"
                "   'ActivityTaskTimedOut') AND (c.attributes->>'scheduledEventId')::bigint = e.event_id)"
                " AND e.attributes->'input' ? 'token'", 30)
        except Exception:
            return
        for line in out.splitlines():
            xid, token, i = line.split("|")
            if i.startswith("sig-") and xid not in gated:
                continue
            r = self.swf("task-success", token, json.dumps({"approved": True, "id": i}),
                         timeout=60)
            self.count("swf task-success sent" if r.returncode == 0 else "swf task-success failed")

    # -- chaos
    def chaos(self):
        rng = random.Random(self.seed)
        next_broker = time.time() + rng.uniform(15, 25)
        next_pg = time.time() + rng.uniform(25, 35)
        while not self.stop_chaos.wait(1.0):
            now = time.time()
            self.supervise()
            candidates = [p for p in self.procs if not p.stopped and p.paused_until < now]
            if candidates:
                p = rng.choice(candidates)
                if rng.random() < 0.5:
                    with p.lock:
                        p.kill()
                        p.start()
                    self.count("SIGKILL+restart %s" % p.kind)
                    self.count_proc(p.name, "killed")
                else:
                    secs = rng.uniform(2, 10)
                    with p.lock:
                        if p.alive():
                            os.kill(p.p.pid, signal.SIGSTOP)
                            p.paused_until = now + secs
                            threading.Timer(secs, self.resume, [p]).start()
                            self.count("SIGSTOP 2-10 s %s" % p.kind)
                            self.count_proc(p.name, "paused")
            if self.a.brokers == 3 and now >= next_broker:
                next_broker = now + 1e9
                threading.Thread(target=self.broker_bounce, args=(rng,), daemon=True).start()
            if now >= next_pg and not self.pg_down:
                next_pg = now + 1e9
                threading.Thread(target=self.pg_bounce, args=(rng,), daemon=True).start()
            if self.broker_done:
                self.broker_done = False
                next_broker = now + rng.uniform(30, 45)
            if self.pg_done:
                self.pg_done = False
                next_pg = now + rng.uniform(40, 55)

    broker_done = False
    pg_done = False

    def supervise(self):
        """Like systemd's Restart=always: a process that exited by itself (a
        worker that could not deliver an answer exits, as KAFKA.md says) is
        started again, and counted."""
        for p in self.procs:
            with p.lock:
                if not p.stopped and p.p is not None and p.p.poll() is not None:
                    self.count("exited by itself (status %s), restarted: %s" % (
                        p.p.returncode, p.kind))
                    self.count_proc(p.name, "exited")
                    p.start()

    def resume(self, p):
        with p.lock:
            if p.alive():
                os.kill(p.p.pid, signal.SIGCONT)
            p.paused_until = 0

    def broker_bounce(self, rng):
        try:
            leader = self.inbox_leader()
            if leader is None or leader < 0:
                leader = rng.randint(1, 3)
            subprocess.run([ROOT + "/scripts/real-kafka.sh", "down", self.kafka_dir, str(leader)],
                           check=True)
            log("broker %d (the inbox's partition 0 leader) killed" % leader)
            self.count("SIGKILL+restart partition leader broker")
            time.sleep(rng.uniform(5, 10))
            subprocess.run([ROOT + "/scripts/real-kafka.sh", "up", self.kafka_dir, str(leader)],
                           check=True)
            log("broker %d back" % leader)
        except Exception as e:
            log("broker bounce: %s" % e)
        self.broker_done = True

    def pg_bounce(self, rng):
        self.pg_down = True
        self.pg_crash()
        log("PostgreSQL crashed (pg_ctl stop -m immediate)")
        self.count("PostgreSQL crash (immediate stop)+restart")
        time.sleep(rng.uniform(2, 5))
        for _ in range(10):
            try:
                self.pg_start()
                break
            except subprocess.CalledProcessError:
                time.sleep(2)
        log("PostgreSQL back")
        self.pg_down = False
        self.pg_done = True

    def calm(self):
        """The storm is over: everything back up."""
        self.stop_chaos.set()
        deadline = time.time() + 120
        while (self.pg_down or any(p.paused_until for p in self.procs)) and time.time() < deadline:
            time.sleep(0.5)
        if self.kafka_dir:
            subprocess.run([ROOT + "/scripts/real-kafka.sh", "up", self.kafka_dir])
        for p in self.procs:
            with p.lock:
                if p.alive():
                    os.kill(p.p.pid, signal.SIGCONT)
                elif not p.stopped:
                    p.start()
                    self.count("restarted after the storm %s" % p.kind)

    # -- a phase: start executions, storm, drain
    def phase(self, deciders, tag):
        self.set_deciders(deciders)
        rng = random.Random(tag)
        mix = FULL_MIX if self.a.mix == "full" else [("timers", 1)]
        kinds = [k for k, w in mix for _ in range(w)]
        todo = [make_execution(rng.choice(kinds), n, tag, self.a.rounds, self.timer_langs())
                for n in range(self.a.executions)]
        log("phase %s: %d deciders, seed %d, %d executions (%s)" % (
            tag, deciders, self.seed, len(todo), ", ".join("%s %d" % (k, sum(1 for e in todo if e.kind == k))
                                                for k, _ in mix)))
        t0 = time.time()
        self.stop_chaos.clear()
        helper_stop = threading.Event()
        helper = threading.Thread(target=self.helper, args=(helper_stop,), daemon=True)
        helper.start()
        chaos = None
        if self.a.chaos == "all":
            chaos = threading.Thread(target=self.chaos, daemon=True)
            chaos.start()
        starter = threading.Thread(target=self.starter,
                                   args=(todo, self.a.start_over or (
                                       self.a.duration / 3 if self.a.chaos == "all" else 5)))
        starter.start()
        if self.a.chaos == "all":
            time.sleep(self.a.duration)
            log("storm over after %.0f s; everything back up" % (time.time() - t0))
            self.calm()
            chaos.join()
        starter.join()
        log("all %d executions started; draining (at most %d s)" % (len(todo), self.a.drain))
        deadline = time.time() + self.a.drain
        while time.time() < deadline:
            closed = self.closed_ids() or set()
            open_ = [e for e in todo if e.id not in closed]
            if not open_:
                break
            time.sleep(2)
        helper_stop.set()
        helper.join()
        closed = self.closed_ids() or set()
        log("phase %s: %d of %d closed after %.0f s" % (
            tag, sum(1 for e in todo if e.id in closed), len(todo), time.time() - t0))
        return todo

    def teardown(self, ok):
        for p in self.procs:
            try:
                p.stop()
            except Exception:
                pass
        if self.kafka_dir:
            if not ok and self.a.keep:
                log("kept the Kafka logs in %s" % self.kafka_dir)
                subprocess.run([ROOT + "/scripts/real-kafka.sh", "down", self.kafka_dir])
            else:
                subprocess.run([ROOT + "/scripts/real-kafka.sh", "stop", self.kafka_dir])
        subprocess.run(self.as_pg([self.bindir + "/pg_ctl", "-D", self.pgdata, "-m", "fast", "-w",
                                   "stop"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if ok or not self.a.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            log("kept the logs and the database in %s" % self.dir)


# ---------------------------------------------------------------- the checker

CHECK_SQL = r"""
WITH h AS (
  SELECT execution_id, count(*) AS n, min(event_id) AS lo, max(event_id) AS hi,
    count(*) FILTER (WHERE event_type IN ('WorkflowExecutionCompleted', 'WorkflowExecutionFailed',
      'WorkflowExecutionTimedOut', 'WorkflowExecutionCanceled', 'WorkflowExecutionTerminated')) AS closes
  FROM events GROUP BY execution_id),
r AS (
  SELECT execution_id, count(*) AS dup FROM (
    SELECT execution_id, attributes->>'scheduledEventId' AS s FROM events
    WHERE event_type IN ('ActivityTaskCompleted', 'ActivityTaskFailed', 'ActivityTaskTimedOut',
      'ActivityTaskCanceled')
    GROUP BY 1, 2 HAVING count(*) > 1) q GROUP BY 1),
a AS (
  SELECT execution_id, count(*) AS dup FROM (
    SELECT execution_id, attributes->>'activityId' FROM events
    WHERE event_type = 'ActivityTaskScheduled' GROUP BY 1, 2 HAVING count(*) > 1) q GROUP BY 1),
d AS (
  SELECT execution_id, count(*) AS dup FROM (
    SELECT execution_id, attributes->>'startedEventId' FROM events
    WHERE event_type = 'DecisionTaskCompleted' GROUP BY 1, 2 HAVING count(*) > 1) q GROUP BY 1),
s AS (
  SELECT execution_id, count(*) AS dup FROM (
    SELECT execution_id, attributes->>'requestId' FROM events
    WHERE event_type IN ('WorkflowExecutionSignaled', 'WorkflowExecutionCancelRequested')
      AND attributes ? 'requestId' GROUP BY 1, 2 HAVING count(*) > 1) q GROUP BY 1),
sg AS (
  SELECT execution_id, count(*) AS n FROM events WHERE event_type = 'WorkflowExecutionSignaled'
  GROUP BY 1),
c AS (
  SELECT DISTINCT ON (execution_id) execution_id, event_type, attributes FROM events
  WHERE event_type IN ('WorkflowExecutionCompleted', 'WorkflowExecutionFailed',
      'WorkflowExecutionTimedOut', 'WorkflowExecutionCanceled', 'WorkflowExecutionTerminated')
  ORDER BY execution_id, event_id)
SELECT json_build_object('id', x.execution_id, 'wid', x.workflow_id, 'status', x.status,
  'last', x.last_event_id, 'n', h.n, 'lo', h.lo, 'hi', h.hi, 'closes', h.closes,
  'close_type', c.event_type, 'close', c.attributes,
  'dup_results', coalesce(r.dup, 0), 'dup_activities', coalesce(a.dup, 0),
  'dup_decisions', coalesce(d.dup, 0), 'dup_requests', coalesce(s.dup, 0),
  'signals', coalesce(sg.n, 0))
FROM executions x LEFT JOIN h USING (execution_id) LEFT JOIN r USING (execution_id)
  LEFT JOIN a USING (execution_id) LEFT JOIN d USING (execution_id)
  LEFT JOIN s USING (execution_id) LEFT JOIN sg USING (execution_id)
  LEFT JOIN c USING (execution_id)
"""

CLOSE_STATUS = {"WorkflowExecutionCompleted": "succeeded", "WorkflowExecutionFailed": "failed",
                "WorkflowExecutionTimedOut": "timed_out", "WorkflowExecutionCanceled": "canceled",
                "WorkflowExecutionTerminated": "terminated"}


def check(storm, expected):
    """The checker; returns (problems, counts)."""
    rows = [json.loads(l) for l in storm.psql(CHECK_SQL, 600).splitlines() if l]
    check_the_checker(rows, expected)
    problems, counts = check_rows(rows, expected)
    left = storm.psql("SELECT (SELECT count(*) FROM outbox), (SELECT count(*) FROM timers),"
                      " (SELECT count(*) FROM activity_timeouts)").strip().split("|")
    counts["outbox_left"], counts["timers_left"], counts["activity_timeouts_left"] = map(int, left)
    if any(int(v) for v in left):
        problems.append("not drained: outbox %s, timers %s, activity timeouts %s rows" % tuple(left))
    r = storm.swf("admin", "check", "--all", timeout=600)
    counts["admin_check_exit"] = r.returncode
    if r.returncode != 0:
        problems.append("swf admin check --all exited %d: %s" % (
            r.returncode, (r.stdout + r.stderr).strip()[-2000:]))
    return problems, counts


def check_the_checker(rows, expected):
    """The checker must see a wrong output and a missing execution: it is run
    once on expectations altered so, and must count exactly those."""
    done = [e for e in expected if e.status == "succeeded"]
    if not done:
        return
    bad = Execution(done[0].kind, done[0].wid, done[0].input, "succeeded", {"not": "this"})
    ghost = Execution("order", "storm-never-started", {}, "succeeded", None)
    _, c = check_rows(rows, [bad, ghost], strays=False)
    if c["wrong"] != 1 or c["lost"] != 1:
        raise RuntimeError("the checker missed an altered expectation: %s" % c)


def check_rows(rows, expected, strays=True):
    """The checks over the events of each execution expected (and, with
    strays, that no other storm- execution exists)."""
    by_wid = {}
    for r in rows:
        by_wid.setdefault(r["wid"], []).append(r)
    problems = []
    counts = dict(executions=len(expected), closed=0, lost=0, duplicated=0, forked=0, wrong=0,
                  signals_acknowledged=sum(e.signals for e in expected), signals_recorded=0)
    for ex in expected:
        rs = by_wid.get(ex.wid, [])
        if not rs:
            counts["lost"] += 1
            problems.append("%s: no execution in the database" % ex.wid)
            continue
        if len(rs) > 1:
            counts["duplicated"] += 1
            problems.append("%s: %d executions for one workflow id" % (ex.wid, len(rs)))
        r = rs[0]
        counts["signals_recorded"] += r["signals"]
        if ex.kind == "signal" and not ex.signals <= r["signals"] <= ex.signal_tries:
            counts["lost" if r["signals"] < ex.signals else "duplicated"] += 1
            problems.append("%s (%s): %d signals recorded, %d acknowledged of %d sent" % (
                ex.wid, r["id"], r["signals"], ex.signals, ex.signal_tries))
        if r["closes"] == 0 or r["status"] == "open":
            counts["lost"] += 1
            problems.append("%s (%s): not closed (status %s, last event %s)" % (
                ex.wid, r["id"], r["status"], r["last"]))
            continue
        counts["closed"] += 1
        if r["closes"] > 1:
            counts["duplicated"] += 1
            problems.append("%s (%s): closed %d times" % (ex.wid, r["id"], r["closes"]))
        if r["dup_results"] or r["dup_requests"]:
            counts["duplicated"] += 1
            problems.append("%s (%s): %d activities with two results, %d requests recorded twice"
                            % (ex.wid, r["id"], r["dup_results"], r["dup_requests"]))
        if r["lo"] != 1 or r["hi"] != r["n"] or r["last"] != r["hi"] or r["dup_activities"] \
                or r["dup_decisions"]:
            counts["forked"] += 1
            problems.append("%s (%s): ids %s..%s for %s events, projection's last %s, "
                            "%s activity ids twice, %s decisions twice" % (
                                ex.wid, r["id"], r["lo"], r["hi"], r["n"], r["last"],
                                r["dup_activities"], r["dup_decisions"]))
        status = CLOSE_STATUS.get(r["close_type"])
        wrong = None
        if status != ex.status or r["status"] != ex.status:
            wrong = "closed %s (projection: %s), expected %s" % (status, r["status"], ex.status)
        elif ex.status == "succeeded" and r["close"].get("result") != ex.output:
            wrong = "output %s, expected %s" % (json.dumps(r["close"].get("result"))[:300],
                                                json.dumps(ex.output)[:300])
        elif ex.status == "failed" and r["close"].get("reason", r["close"].get("error")) \
                != ex.output["error"]:
            wrong = "failed with %s, expected %s" % (json.dumps(r["close"])[:300], ex.output)
        if wrong:
            counts["wrong"] += 1
            problems.append("%s (%s): %s" % (ex.wid, r["id"], wrong))
    known = {ex.wid for ex in expected}
    stray = [r for r in rows if r["wid"] not in known and r["wid"].startswith("storm-")]
    if stray and strays:
        counts["duplicated"] += len(stray)
        problems.append("%d executions nobody started: %s" % (len(stray), stray[0]["wid"]))
    return problems, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--duration", type=int, default=120, help="seconds of storm")
    ap.add_argument("--executions", type=int, default=300)
    ap.add_argument("--deciders", default="3")
    ap.add_argument("--histories", type=int, default=2)
    ap.add_argument("--workers", default="c,py,js,java")
    ap.add_argument("--mix", choices=["full", "timers"], default="full")
    ap.add_argument("--chaos", choices=["all", "none"], default="all")
    ap.add_argument("--brokers", type=int, choices=[1, 3], default=3)
    ap.add_argument("--broker-heap", default="256m")
    ap.add_argument("--rounds", type=int, default=3, help="loops of the timer workflow")
    ap.add_argument("--drain", type=int, default=300)
    ap.add_argument("--session-timeout-ms", type=int, default=6000)
    ap.add_argument("--start-over", type=int, default=0,
                    help="seconds over which the executions are started (default: a third "
                    "of --duration)")
    ap.add_argument("--seed", type=int, default=None, help="of the storm's random choices")
    ap.add_argument("--keep", action="store_true", help="keep logs and data when a check fails")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up on a timeout too
    storm = Storm(a)
    ok = False
    t0 = time.time()
    try:
        storm.setup()
        expected = []
        for n in [int(x) for x in a.deciders.split(",")]:
            expected += storm.phase(n, "d%d" % n)
        problems, counts = check(storm, expected)
        print("== storm: %.0f s in all%s" % (time.time() - t0, a.chaos == "all" and
                                               " (%d s of storm per phase)" % a.duration or
                                               ", no storm"))
        print("== what the storm (and the world outside) did:")
        for k in sorted(storm.stats):
            print("   %-50s %d" % (k, storm.stats[k]))
        if storm.per_proc:
            print("   by process: " + ", ".join(
                "%s %s" % (n, "/".join("%s %d" % kv for kv in sorted(d.items())))
                for n, d in sorted(storm.per_proc.items())))
        print("== checker: " + ", ".join("%s %s" % kv for kv in counts.items()))
        for p in problems[:50]:
            print("   PROBLEM " + p)
        if len(problems) > 50:
            print("   ... and %d more" % (len(problems) - 50))
        ok = not problems
        print("== storm: %s" % ("every check holds" if ok else "FAILED"))
    finally:
        storm.teardown(ok)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
