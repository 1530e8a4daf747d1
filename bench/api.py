"""The Step Functions API of swf-api, timed (issue 19, item 8), beside the
Kafka path in the same run. Run by scripts/bench-api.sh on a `swf dev`
(its exports in the environment); prints one line per figure and asserts
nothing about time.

    bench/api.py SWF_WORKER [--starts SECONDS] [--clients 1,4,16]
                            [--workers 1,10,50] [--steps TOTAL] [--idle SECONDS]

1. StartExecution: C keep-alive clients (each a process of its own, one
   connection) start executions of a one-Pass machine for SECONDS; the
   requests per second and the p50/p99 latency of a request. Beside it,
   the Kafka path's way to start: `swf start` commands, C at a time (a
   tenth as many). Then it waits for all those executions to close.
2. Steps: W executions in flight, each a loop of TOTAL/W Task steps (at
   least 30; TOTAL 600 by default) on an activity of its own (a fresh
   consumer group per depth), served by W workers: through the API, W threads (in up to 4 processes) each in a
   GetActivityTask -> SendTaskSuccess loop; through Kafka, `swf-worker
   --echo --concurrency W` (the C worker library). Each depth first runs
   one warm-up execution, so that the workers have joined their consumer
   group before the clock starts; the clock runs from the first
   StartExecution to the last execution's close (ListExecutions).
   --idle S (12; 0: not done): then the API path again at the last depth,
   on the same activity after S seconds without a poller, no warm-up: the
   known problem of api/README.md (the hub closes an idle activity's
   consumer after 10 s and the next pollers join its group again).
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
        # a tenth of the time (a command is a process).
        total = max(c * 10, n // 10)
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
    # The executions started are run by the deciders meanwhile and after:
    # the steps below start once they all closed.
    t0 = time.monotonic()
    while api.call("ListExecutions", {"stateMachineArn": arn, "statusFilter": "RUNNING",
                                      "maxResults": 1}).get("executions"):
        time.sleep(0.2)
    print("the executions started above all closed %.1f s after the last start"
          % (time.monotonic() - t0), flush=True)


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


def run_executions(api, arn, tag, count, limit=600):
    """Starts count executions and waits for them all to close, at most
    limit seconds: (seconds, how many closed, how many succeeded)."""
    t0 = time.monotonic()
    for i in range(count):
        ok(api.call("StartExecution", {"stateMachineArn": arn, "name": "%s-%d" % (tag, i),
                                       "input": "{}"}), "executionArn", "StartExecution")
    while time.monotonic() - t0 < limit:
        out = api.call("ListExecutions", {"stateMachineArn": arn, "statusFilter": "RUNNING",
                                          "maxResults": 1})
        if not out.get("executions"):
            break
        time.sleep(0.02)
    wall = time.monotonic() - t0
    running = api.call("ListExecutions", {"stateMachineArn": arn, "statusFilter": "RUNNING",
                                          "maxResults": 1000}).get("executions", [])
    done = api.call("ListExecutions", {"stateMachineArn": arn, "statusFilter": "SUCCEEDED",
                                       "maxResults": 1000}).get("executions", [])
    return wall, count - len(running), len(done)


def workers_start(path, a, act, w, swf_worker):
    stop = multiprocessing.Event()
    if path == "kafka":
        return stop, [subprocess.Popen([swf_worker, "--task-list", act, "--echo", "--concurrency",
                                        str(w), "--identity", "bench"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    nproc = min(w, 4)
    procs = [multiprocessing.Process(target=api_workers, args=(
        a, w // nproc + (i < w % nproc), stop)) for i in range(nproc)]
    for p in procs:
        p.start()
    return stop, procs


def workers_stop(api, path, stop, procs, one, tag, w):
    stop.set()
    if path == "api":
        # One last task for each waiting poller, so that none is left
        # waiting on the server when its process ends (the server finds a
        # gone client only when it hands it a task).
        run_executions(api, one, tag, w, 60)
    for p in procs:
        if isinstance(p, subprocess.Popen):
            p.terminate()
            p.wait()
        else:
            p.join(5)
            p.terminate()
            p.join()


def report(path, w, steps, res, extra):
    wall, closed, done = res
    label = ("GetActivityTask -> SendTaskSuccess" if path == "api"
             else "swf-worker --echo (Kafka)        ")
    print("%s, %2d workers: %6.0f steps/s (%d executions x %d steps in %.1f s, %d closed, %d"
          " succeeded; %s)" % (label, w, w * steps / wall if closed == w else float("nan"), w,
                               steps, wall, closed, done, extra), flush=True)


def bench_steps(api, depths, total, swf_worker, idle):
    for w in depths:
        steps = max(30, -(-total // w))
        for path in ("api", "kafka"):
            act = "%s-%s-%d" % (RUN, path, w)
            a = ok(api.call("CreateActivity", {"name": act}), "activityArn", "CreateActivity")
            arn = machine(api, act, loop_definition(a, steps))
            one = machine(api, act + "-one", loop_definition(a, 1))
            stop, procs = workers_start(path, a, act, w, swf_worker)
            warm = run_executions(api, one, act + "-warm", 1)
            report(path, w, steps, run_executions(api, arn, act, w),
                   "warm-up %.1f s" % warm[0])
            workers_stop(api, path, stop, procs, one, act + "-end", w)
            if idle <= 0 or path != "api" or w != depths[-1]:
                continue
            # The known problem of api/README.md: the same activity after
            # an idle period longer than the hub keeps its consumer.
            time.sleep(idle)
            stop, procs = workers_start(path, a, act, w, swf_worker)
            again = machine(api, act + "-again", loop_definition(a, steps))
            report(path, w, steps, run_executions(api, again, act + "-again", w, 180),
                   "again after %.0f s idle, no warm-up, at most 180 s" % idle)
            workers_stop(api, path, stop, procs, one, act + "-again-end", w)


def main(argv):
    args = {"--starts": "10", "--clients": "1,4,16", "--workers": "1,10,50", "--steps": "600",
            "--idle": "12"}
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
                swf_worker, float(args["--idle"]))
    print("load average after: %s" % open("/proc/loadavg").read().strip(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
