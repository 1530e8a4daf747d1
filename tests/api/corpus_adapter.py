"""The ASL conformance corpus through the Step Functions API of `swf dev`.

    corpus_adapter.py serve SOCKET
    corpus_adapter.py run SOCKET DEFINITION --input FILE [--mocks FILE] [--events FILE]

`serve` is the adapter: one process that talks only to swf-api (the
exports of `swf dev` in the environment) through sfn_client.py.
`run` is what the conformance harness calls per case, like `swf run
--local`: it hands the case to the adapter over the Unix socket and prints
the one JSON object the harness reads.

Per case the adapter calls ValidateStateMachineDefinition on the definition
as written (INVALID, with the diagnostics, when it fails), then
CreateStateMachine with each Task state's Resource (and each Map's
ItemReader's and ResultWriter's) replaced by an activity ARN, StartExecution
with the input,
and DescribeExecution until the execution closed, whose status, output,
error and cause it prints as `swf run --local` does. The mocks are served
by a pool of GetActivityTask pollers answering with SendTaskSuccess (a
Return, or the task's input for an Echo) and SendTaskFailure (a Throw).

Which activity: the n-th distinct Task state name of a case runs on the
shared activity `corpus-n` (`corpus-n.waitForTaskToken` when its Resource
asked for a token, which the interpreter reads from the Resource), so a
few activities serve every case and their pollers wait all along (an
activity's first poll joins its consumer group, seconds on the mock
Kafka). A task is routed to its case by the execution id in its token,
whose payload is documented (protocol/KAFKA.md, "Task tokens"); a real
worker fleet would not need that, a harness that runs many cases at once
on the same activities does. A task of no running case (one left behind
by a closed execution) is not answered.

A Map's reader and writer tasks run on the Map's activity and are
answered by the Map's mocks in the order they come (the reader's first), as
`swf run --local` answers them.

Nested executions (a Task on arn:aws:states:::states:startExecution, .sync,
.sync:2, .waitForTaskToken) are not rewritten: swf starts the child itself.
The machines a case names literally in StateMachineArn (and those they
name) are read as `swf run --local` reads them, NAME.asl.json then
NAME.json beside the case's definition, and made with CreateStateMachine
under that NAME (an UpdateStateMachine when an earlier case made it with
another definition; a DeleteStateMachine when this case has no file for
it, so that a missing machine is missing), with their Task states on the
case's activities: a mock is by state name whichever machine the state is
in, and a child's tasks are routed to the case by its execution id (the
parent's, `-`, the Task's activity id). The names keep what the parent's
ARN says (a child's ExecutionArn names its machine), so the cases naming
one machine run one after the other (a lock per name, held for the case).
A `.waitForTaskToken` child is answered by whoever sends its token, as on
AWS, not by its output as under --local.

Numbers in the definition and the mocks are passed on as written (a
float is not re-printed by Python).
"""
import base64
import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time
import uuid

from sfn_client import Api

ROLE = "arn:aws:iam::123456789012:role/swf-corpus"
POLLERS = 4  # per activity: concurrent invocations of one Task state (a Map)
ACTIVITIES = 3  # made at start; more when a case has more Task states
CASE_SECONDS = 120  # a case that has not closed by then is reported as such
NESTED = "arn:aws:states:::states:startExecution"
NESTED_PATTERNS = ("", ".sync", ".sync:2", ".waitForTaskToken")
NESTED_DEPTH = 32  # SWF_LIMIT_NESTED_DEPTH: machines read per case, as swf run --local


def is_nested(resource):
    return (isinstance(resource, str) and resource.startswith(NESTED)
            and resource[len(NESTED):] in NESTED_PATTERNS)


def machine_name(arn):
    """The machine a StateMachineArn names (decider/nested.c), or None."""
    if not isinstance(arn, str):
        return None
    if arn.startswith("arn:"):
        parts = arn.split(":")
        if len(parts) < 7 or not arn.startswith("arn:aws:states:") or parts[5] != "stateMachine":
            return None
        arn = parts[6]
    name = arn.split(":")[0]
    return name if name and "{%" not in name and "/" not in name else None


def machines_named(v, names, depth=0):
    """Adds the machines v's nested Tasks name literally (decider/nested.c)."""
    if depth > 64:
        return
    if isinstance(v, list):
        for x in v:
            machines_named(x, names, depth + 1)
        return
    if not isinstance(v, dict):
        return
    if v.get("Type") == "Task" and is_nested(v.get("Resource")):
        for k in ("Parameters", "Arguments"):
            args = v.get(k)
            n = machine_name(args.get("StateMachineArn")) if isinstance(args, dict) else None
            if n is not None and n not in names:
                names.append(n)
    for x in v.values():
        machines_named(x, names, depth + 1)


def machines_read(directory, machine):
    """{NAME: (value, restore)} of the machines machine names and
    those they name, read beside the definition as swf run --local reads
    them (decider/local.c); names: every name seen, read or not."""
    names, found = [], {}
    machines_named(machine, names)
    i = 0
    while i < len(names) and len(found) < NESTED_DEPTH:
        name = names[i]
        i += 1
        for ext in (".asl.json", ".json"):
            try:
                with open(os.path.join(directory, name + ext), encoding="utf-8") as f:
                    text = f.read()
                value, restore = load_raw(text)
            except (OSError, ValueError):
                continue
            found[name] = (value, restore)
            machines_named(value, names)
            break
    return names, found


def load_raw(text):
    """Parses JSON keeping each float's text: (value, restore), restore(s)
    puts the texts back into what json.dumps printed of the value."""
    marks = {}
    tag = uuid.uuid4().hex

    def keep(s):
        m = "%s:%d" % (tag, len(marks))
        marks[m] = s
        return m

    value = json.loads(text, parse_float=keep)

    def restore(s):
        for m, raw in marks.items():
            s = s.replace('"%s"' % m, raw)
        return s

    return value, restore


def token_execution(token):
    """The execution id in a task token's payload (protocol/KAFKA.md)."""
    body = token.split(".")[0]
    payload = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    return json.loads(payload)["e"]


class Case:
    def __init__(self, mocks, restore, states):
        self.mocks, self.restore, self.states = mocks, restore, states
        self.calls = {}
        self.lock = threading.Lock()

    def answer(self, state, task_input):
        """("success", output text) or ("failure", error, cause)."""
        with self.lock:
            responses = self.mocks.get(state) if isinstance(self.mocks, dict) else None
            n = self.calls.get(state, 0)
            self.calls[state] = n + 1
        if not responses:
            return ("success", task_input)
        r = responses[min(n, len(responses) - 1)]
        if "Return" in r:
            return ("success", self.restore(json.dumps(r["Return"])))
        if "Throw" in r:
            return ("failure", r["Throw"].get("Error"), r["Throw"].get("Cause"))
        return ("success", task_input)


class Adapter:
    def __init__(self):
        self.api = Api()
        self.lock = threading.Lock()
        self.cases = {}  # execution name -> Case
        self.activities = {}  # activity name -> ARN
        self.machines = {}  # nested machine name -> (ARN, definition made)
        self.machine_locks = {}  # nested machine name -> Lock, held by a case
        self.seq = 0
        self.answered = self.unrouted = 0

    def activity(self, name):
        """The ARN of a shared activity, made (with its pollers) on first use."""
        with self.lock:
            arn = self.activities.get(name)
            if arn is not None:
                return arn
            out = self.api.call("CreateActivity", {"name": name})
            if "activityArn" not in out:
                raise RuntimeError("CreateActivity %s: %s" % (name, out))
            arn = self.activities[name] = out["activityArn"]
        for i in range(POLLERS):
            threading.Thread(target=self.poll, args=(name, arn, i), daemon=True).start()
        return arn

    def case_of(self, execution):
        """The running case of an execution: its own, or its parent's (a
        child's default id is the parent's, '-', ...). Under self.lock."""
        case = self.cases.get(execution)
        while case is None and "-" in execution:
            execution = execution.rsplit("-", 1)[0]
            case = self.cases.get(execution)
        return case

    def poll(self, name, arn, i):
        index = int(name.split("-")[1].split(".")[0])
        while True:
            try:
                task = self.api.call("GetActivityTask", {
                    "activityArn": arn, "workerName": "corpus-%s-%d" % (name, i)})
            except OSError:
                time.sleep(0.2)
                continue
            token = task.get("taskToken")
            if not token:
                if "__type" in task:
                    time.sleep(0.2)
                continue
            with self.lock:
                case = self.case_of(token_execution(token))
            if case is None or index >= len(case.states):
                self.unrouted += 1
                continue
            ans = case.answer(case.states[index], task.get("input", "{}"))
            with self.lock:
                self.answered += 1
            if ans[0] == "success":
                self.api.call("SendTaskSuccess", {"taskToken": token, "output": ans[1]})
            else:
                req = {"taskToken": token, "error": ans[1]}
                if ans[2] is not None:
                    req["cause"] = ans[2]
                self.api.call("SendTaskFailure", req)

    def rewrite(self, machine, states, depth=0):
        """Points each Task (and ItemReader) at its shared activity; states
        collects the Task state names in order of first sight."""
        st = machine.get("States") if isinstance(machine, dict) else None
        if not isinstance(st, dict) or depth > 64:
            return
        for name, s in st.items():
            if not isinstance(s, dict):
                continue
            holders = []
            if s.get("Type") == "Task" and not is_nested(s.get("Resource")):
                holders.append(s)
            for k in ("ItemReader", "ResultWriter"):
                if s.get("Type") == "Map" and isinstance(s.get(k), dict):
                    holders.append(s[k])
            for h in holders:
                res = h.get("Resource")
                if not isinstance(res, str):
                    continue
                if name not in states:
                    states.append(name)
                act = "corpus-%d" % states.index(name)
                if ".waitForTaskToken" in res:
                    act += ".waitForTaskToken"
                h["Resource"] = self.activity(act)
            for b in s.get("Branches") if isinstance(s.get("Branches"), list) else []:
                self.rewrite(b, states, depth + 1)
            for k in ("Iterator", "ItemProcessor"):
                self.rewrite(s.get(k), states, depth + 1)

    def machine_put(self, name, text):
        """Makes the nested machine name as this case has it (text: its
        definition, or None: none); the caller holds the name's lock."""
        have = self.machines.get(name)
        if text is None:
            if have is not None:
                self.api.call("DeleteStateMachine", {"stateMachineArn": have[0]})
                del self.machines[name]
            return None
        if have is not None and have[1] == text:
            return None
        if have is None:
            out = self.api.call("CreateStateMachine", {
                "name": name, "definition": text, "roleArn": ROLE})
            arn = out.get("stateMachineArn")
        else:
            out = self.api.call("UpdateStateMachine", {
                "stateMachineArn": have[0], "definition": text})
            arn = have[0] if "__type" not in out else None
        if arn is None:
            return {"adapter": "CreateStateMachine " + name, "answer": out}
        self.machines[name] = (arn, text)
        return None

    def run(self, definition, input_text, mocks_text, directory="."):
        names, found = [], {}
        if NESTED in definition:
            try:
                names, found = machines_read(directory, json.loads(definition))
            except ValueError:  # not JSON: Validate says so below
                pass
        with self.lock:
            locks = [self.machine_locks.setdefault(n, threading.Lock()) for n in sorted(names)]
        for lk in locks:
            lk.acquire()
        try:
            return self.run_locked(definition, input_text, mocks_text, names, found)
        finally:
            for lk in reversed(locks):
                lk.release()

    def run_locked(self, definition, input_text, mocks_text, names, found):
        v = self.api.call("ValidateStateMachineDefinition", {"definition": definition})
        if v.get("result") != "OK":
            # A definition that is not JSON has one diagnostic, the parser's
            # message; the others are "WHERE: MESSAGE", as swf run prints them.
            errs = [d.get("message", "") if d.get("code") == "INVALID_JSON_DESCRIPTION"
                    else d.get("location", "") + ": " + d.get("message", "")
                    for d in v.get("diagnostics", [])] or [json.dumps(v)]
            return {"status": "INVALID", "errors": errs}
        machine, restore = load_raw(definition)
        mocks, mocks_restore = load_raw(mocks_text) if mocks_text else ({}, None)
        states = []
        self.rewrite(machine, states)
        for n in names:
            text = None
            if n in found:
                child, child_restore = found[n]
                self.rewrite(child, states)
                text = child_restore(json.dumps(child))
            bad = self.machine_put(n, text)
            if bad is not None:
                return bad
        with self.lock:
            self.seq += 1
            name = "corpus-%d-%d" % (os.getpid(), self.seq)
            self.cases[name] = Case(mocks, mocks_restore, states)
        try:
            out = self.api.call("CreateStateMachine", {
                "name": name, "definition": restore(json.dumps(machine)), "roleArn": ROLE})
            if out.get("__type") == "InvalidDefinition":
                return {"status": "INVALID", "errors": [out.get("message", "")]}
            if "stateMachineArn" not in out:
                return {"adapter": "CreateStateMachine", "answer": out}
            ex = self.api.call("StartExecution", {
                "stateMachineArn": out["stateMachineArn"], "name": name, "input": input_text})
            if "executionArn" not in ex:
                return {"adapter": "StartExecution", "answer": ex}
            end = time.time() + CASE_SECONDS
            while True:
                d = self.api.call("DescribeExecution", {"executionArn": ex["executionArn"]})
                if d.get("status") not in ("RUNNING", None) or time.time() > end:
                    break
                time.sleep(0.02)
            if d.get("status") == "SUCCEEDED":
                return '{"status":"SUCCEEDED","output":%s}' % d.get("output", "null")
            if d.get("status") in ("FAILED", "TIMED_OUT", "ABORTED"):
                return {"status": d["status"], "error": d.get("error", ""),
                        "cause": d.get("cause", "")}
            return {"adapter": "DescribeExecution", "answer": d}
        finally:
            with self.lock:
                del self.cases[name]


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        req = json.loads(self.rfile.readline())
        try:
            def read(path):
                with open(path, encoding="utf-8") as f:
                    return f.read()

            res = self.server.adapter.run(read(req["definition"]), read(req["input"]),
                                          read(req["mocks"]) if req.get("mocks") else None,
                                          os.path.dirname(req["definition"]))
        except Exception as e:  # reported on the case, the adapter keeps serving
            res = {"adapter": "error", "message": repr(e)}
        line = res if isinstance(res, str) else json.dumps(res)
        self.wfile.write(line.encode() + b"\n")


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def serve(path):
    adapter = Adapter()
    # Warm-up: a Task on each activity at once, so that their pollers have
    # joined the consumer groups before the first case (the harness gives
    # a case 10 s).
    branches = [{"StartAt": "W%d" % i, "States": {"W%d" % i: {
        "Type": "Task", "Resource": "w", "End": True}}} for i in range(ACTIVITIES)]
    warm = json.dumps({"StartAt": "P", "States": {"P": {
        "Type": "Parallel", "Branches": branches, "End": True}}})
    res = adapter.run(warm, "{}", None)
    if not isinstance(res, str) or '"SUCCEEDED"' not in res:
        print("corpus_adapter: the warm-up did not succeed: %s" % (res,), file=sys.stderr)
        sys.exit(1)
    def stop(_sig, _frame):
        print("corpus_adapter: %d executions, %d tasks answered, %d tasks of no running case"
              % (adapter.seq - 1, adapter.answered - ACTIVITIES, adapter.unrouted),
              file=sys.stderr, flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    srv = Server(path + ".tmp", Handler)
    srv.adapter = adapter
    os.rename(path + ".tmp", path)  # the socket appears when it is served
    srv.serve_forever()


def run(path, argv):
    req, i = {"definition": os.path.abspath(argv[0])}, 1
    while i + 1 < len(argv):
        req[argv[i].lstrip("-")] = os.path.abspath(argv[i + 1])
        i += 2
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(json.dumps(req).encode() + b"\n")
    f = s.makefile("rb")
    sys.stdout.write(f.readline().decode())
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3:]))
    else:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
