"""The Step Functions API of swf-api, timed (issue 19, item 8), beside the
Kafka path in the same run. Run by scripts/bench-api.sh on a `swf dev`
(its exports in the environment); prints one line per figure and asserts
nothing about time.

    bench/api.py SWF_WORKER [--starts SECONDS] [--clients 1,4,16]
                            [--workers 1,10,50] [--steps TOTAL]

1. StartExecution: C keep-alive clients (each a process of its own, one
   connection) start executions of a one-Pass machine for SECONDS; the
   requests per second and the p50/p99 latency of a request. Beside it,
   the Kafka path's way to start: `swf start` commands, C at a time.
2. Steps: W executions in flight, each a loop of TOTAL/W Task steps on an
   activity of its own (a fresh consumer group per depth), served by W
   workers: through the API, W threads (in up to 4 processes) each in a
   GetActivityTask -> SendTaskSuccess loop; through Kafka, `swf-worker
   --echo --concurrency W` (the C worker library). Each depth first runs
   one warm-up execution, so that the workers have joined their consumer
   group before the clock starts; the clock runs from the first
   StartExecution to the last execution's close (ListExecutions).
"""
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "api"))
from sfn_client import Api  # noqa: E402

ROLE = "arn:aws:iam::123456789012:role/swf-bench"
RUN = "b%d" % int(time.time())


def ok(out, key, what):
    if key not in out:
        sys.exit("bench/api.py: %s: %s" % (what, json.dumps(out)[:300]))
    return out[key]


def machine(api, name, definition):
    out = api.call("CreateStateMachine", {"name": name, "definition": json.dumps(definition),
                                          "roleArn": ROLE})
    return ok(out, "stateMachineArn", "CreateStateMachine " + name)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))] if xs else float("nan")


# ---- 1. StartExecution ---------------------------------------------------

def starter(arn, tag, seconds, q):
    api = Api()
    lat, n, errors = [], 0, 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        out = api.call("StartExecution", {"stateMachineArn": arn, "name": "%s-%d" % (tag, n),
                                          "input": "{}"})
        lat.append(time.monotonic() - t)
        n += 1
        errors += "executionArn" not in out
    q.put((n, errors, lat))


def bench_starts(api, clients, seconds, swf):
    arn = machine(api, RUN + "-pass", {"StartAt": "P", "States": {"P": {"Type": "Pass",
                                                                          "End": True}}})
    api.call("StartExecution", {"stateMachineArn": arn, "name": RUN + "-warm", "input": "{}"})
    for c in clients:
        q = multiprocessing.Queue()
        ps = [multiprocessing.Process(target=starter, args=(arn, "%s-s%d-%d" % (RUN, c, i),
                                                            seconds, q)) for i in range(c)]
        t0 = time.monotonic()
        for p in ps:
            p.start()
        res = [q.get() for _ in ps]
        wall = time.monotonic() - t0
        for p in ps:
            p.join()
        n = sum(r[0] for r in res)
        lat = [x for r in res for x in r[2]]
        print("StartExecution, %2d keep-alive clients: %6.0f requests/s (%d in %.1f s, %d errors),"
              " p50 %.1f ms, p99 %.1f ms"
              % (c, n / wall, n, wall, sum(r[1] for r in res), pct(lat, 50) * 1e3,
                 pct(lat, 99) * 1e3), flush=True)
        # The Kafka path's start: `swf start` commands (PostgreSQL, then a
        # decide on the inbox), c at a time, as many as c clients made in
        # a third of the time (a command is a process).
        total = max(c * 10, n // 3)
        t0 = time.monotonic()
        lat, running, k = [], [], 0
        while k < total or running:
            while k < total and len(running) < c:
                running.append((time.monotonic(), subprocess.Popen(
                    [swf, "start", RUN + "-pass", "--input", "{}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
                k += 1
            for item in list(running):
                if item[1].poll() is not None:
                    lat.append(time.monotonic() - item[0])
                    running.remove(item)
            time.sleep(0.001)
        wall = time.monotonic() - t0
        print("swf start commands, %2d at a time:     %6.0f commands/s (%d in %.1f s),"
              " p50 %.1f ms, p99 %.1f ms"
              % (c, total / wall, total, wall, pct(lat, 50) * 1e3, pct(lat, 99) * 1e3),
              flush=True)


# ---- 2. steps ------------------------------------------------------------

def loop_definition(activity_arn, steps):
    return {"StartAt": "Init", "States": {
        "Init": {"Type": "Pass", "Parameters": {"i": 0}, "Next": "Work"},
        "Work": {"Type": "Task", "Resource": activity_arn, "ResultPath": None, "Next": "Count"},
        "Count": {"Type": "Pass", "Parameters": {"i.$": "States.MathAdd($.i, 1)"},
                  "Next": "More"},
        "More": {"Type": "Choice", "Default": "Done", "Choices": [
            {"Variable": "$.i", "NumericLessThan": steps, "Next": "Work"}]},
        "Done": {"Type": "Succeed"}}}


def api_workers(arn, threads, stop):
    api = Api()

    def work():
        while True:
            task = api.call("GetActivityTask", {"activityArn": arn, "workerName": "bench"})
            if task.get("taskToken"):
                api.call("SendTaskSuccess", {"taskToken": task["taskToken"],
                                             "output": task.get("input", "{}")})
                if stop.is_set():
                    return
    ts = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def run_executions(api, arn, tag, count):
    """Starts count executions, waits for them all to close; the seconds."""
    t0 = time.monotonic()
    for i in range(count):
        ok(api.call("StartExecution", {"stateMachineArn": arn, "name": "%s-%d" % (tag, i),
                                       "input": "{}"}), "executionArn", "StartExecution")
    while True:
        out = api.call("ListExecutions", {"stateMachineArn": arn, "statusFilter": "RUNNING",
                                          "maxResults": 1})
        if not out.get("executions"):
            break
        time.sleep(0.02)
    wall = time.monotonic() - t0
    out = api.call("ListExecutions", {"stateMachineArn": arn, "statusFilter": "SUCCEEDED",
                                      "maxResults": 1000})
    return wall, len(out.get("executions", []))


def bench_steps(api, depths, total, swf_worker):
    for w in depths:
        steps = max(1, total // w)
        for path in ("api", "kafka"):
            act = "%s-%s-%d" % (RUN, path, w)
            a = ok(api.call("CreateActivity", {"name": act}), "activityArn", "CreateActivity")
            arn = machine(api, act, loop_definition(a, steps))
            warm = machine(api, act + "-warm", loop_definition(a, 1))
            stop, procs = multiprocessing.Event(), []
            if path == "api":
                nproc = min(w, 4)
                procs = [multiprocessing.Process(target=api_workers, args=(
                    a, w // nproc + (i < w % nproc), stop)) for i in range(nproc)]
                for p in procs:
                    p.start()
            else:
                procs = [subprocess.Popen([swf_worker, "--task-list", act, "--echo",
                                           "--concurrency", str(w), "--identity", "bench"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
            tw = time.monotonic()
            run_executions(api, warm, act + "-w", 1)
            warmup = time.monotonic() - tw
            wall, done = run_executions(api, arn, act, w)
            n = w * steps
            label = ("GetActivityTask -> SendTaskSuccess" if path == "api"
                     else "swf-worker --echo (Kafka)        ")
            print("%s, %2d workers: %6.0f steps/s (%d executions x %d steps in %.1f s, %d of %d"
                  " succeeded; warm-up %.1f s)"
                  % (label, w, n / wall, w, steps, wall, done, w, warmup), flush=True)
            stop.set()
            if path == "api":
                # One last task for each waiting poller, so that none is
                # left waiting on the server when its process ends (the
                # server finds a gone client only when it hands it a task).
                run_executions(api, warm, act + "-end", w)
            for p in procs:
                if isinstance(p, subprocess.Popen):
                    p.terminate()
                    p.wait()
                else:
                    p.join(5)
                    p.terminate()
                    p.join()


def main(argv):
    args = {"--starts": "10", "--clients": "1,4,16", "--workers": "1,10,50", "--steps": "600"}
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__.strip().splitlines()[5])
    swf_worker, rest = argv[0], argv[1:]
    for i in range(0, len(rest) - 1, 2):
        args[rest[i]] = rest[i + 1]
    swf = os.path.join(os.path.dirname(swf_worker), "swf")
    api = Api()
    print("load average before: %s" % open("/proc/loadavg").read().strip(), flush=True)
    bench_starts(api, [int(x) for x in args["--clients"].split(",")], float(args["--starts"]),
                 swf)
    print("load average: %s" % open("/proc/loadavg").read().strip(), flush=True)
    bench_steps(api, [int(x) for x in args["--workers"].split(",")], int(args["--steps"]),
                swf_worker)
    print("load average after: %s" % open("/proc/loadavg").read().strip(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
