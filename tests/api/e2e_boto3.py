"""The Step Functions API of `swf dev` driven by boto3, as a user of AWS
Step Functions would: create a state machine and an activity, start
executions, run an activity worker (GetActivityTask / SendTaskSuccess) and
a .waitForTaskToken callback to the end, describe, list, read the history,
stop one, and get AWS's error names for a missing execution, a bad token,
a duplicate name with another input and a bad signature.

Run by scripts/api-e2e.sh with the exports of `swf dev` in the environment
(AWS_ENDPOINT_URL_SFN, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_DEFAULT_REGION). Exit status 0 when every check held.
"""
import json
import os
import sys
import subprocess
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

URL = os.environ["SWF_API_URL"]
cfg = Config(read_timeout=70, retries={"max_attempts": 1})
sfn = boto3.client("stepfunctions", endpoint_url=URL, config=cfg)

ACCOUNT = "123456789012"
REGION = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
ROLE = "arn:aws:iam::%s:role/swf-e2e" % ACCOUNT


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


def error_name(fn, **kw):
    try:
        fn(**kw)
    except ClientError as e:
        return e.response["Error"]["Code"]
    return None


def wait_status(arn, want, seconds=30):
    end = time.time() + seconds
    while time.time() < end:
        d = sfn.describe_execution(executionArn=arn)
        if d["status"] == want:
            return d
        time.sleep(0.2)
    raise SystemExit("FAIL: %s never became %s (last %s)" % (arn, want, d["status"]))


act = sfn.create_activity(name="e2e-greet")["activityArn"]
check(act == "arn:aws:states:%s:%s:activity:e2e-greet" % (REGION, ACCOUNT), "CreateActivity ARN")
check(sfn.describe_activity(activityArn=act)["name"] == "e2e-greet", "DescribeActivity")
check(any(a["activityArn"] == act for a in sfn.list_activities()["activities"]), "ListActivities")

definition = {
    "StartAt": "Prepare",
    "States": {
        "Prepare": {"Type": "Pass", "Parameters": {"who.$": "$.who"}, "Next": "Greet"},
        "Greet": {"Type": "Task", "Resource": act, "ResultPath": "$.greeting", "Next": "Approve"},
        "Approve": {
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
            "Parameters": {"token.$": "$$.Task.Token"},
            "ResultPath": "$.approval",
            "End": True,
        },
    },
}
# Debian 12's botocore (1.29) predates ValidateStateMachineDefinition.
if hasattr(sfn, "validate_state_machine_definition"):
    v = sfn.validate_state_machine_definition(definition=json.dumps(definition))
    check(v["result"] == "OK", "ValidateStateMachineDefinition OK")
    bad = sfn.validate_state_machine_definition(definition='{"StartAt": "Nowhere", "States": {}}')
    check(bad["result"] == "FAIL" and bad["diagnostics"], "ValidateStateMachineDefinition FAIL with diagnostics")
else:
    print("skipped: this botocore has no ValidateStateMachineDefinition")

sm = sfn.create_state_machine(name="e2e-hello", definition=json.dumps(definition), roleArn=ROLE)[
    "stateMachineArn"
]
again = sfn.create_state_machine(name="e2e-hello", definition=json.dumps(definition), roleArn=ROLE)
check(again["stateMachineArn"] == sm, "CreateStateMachine is idempotent")
check(
    error_name(sfn.create_state_machine, name="e2e-hello", definition='{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}', roleArn=ROLE)
    == "StateMachineAlreadyExists",
    "StateMachineAlreadyExists for another definition",
)
check(
    error_name(sfn.create_state_machine, name="e2e-bad", definition="{}", roleArn=ROLE) == "InvalidDefinition",
    "InvalidDefinition",
)
sfn.tag_resource(resourceArn=sm, tags=[{"key": "team", "value": "orders"}, {"key": "tier", "value": "1"}])
sfn.untag_resource(resourceArn=sm, tagKeys=["tier"])
check(sfn.list_tags_for_resource(resourceArn=sm)["tags"] == [{"key": "team", "value": "orders"}], "tags")
check(
    error_name(sfn.list_tags_for_resource, resourceArn=sm + "-nope") == "ResourceNotFound",
    "ResourceNotFound for the tags of nothing",
)
d = sfn.describe_state_machine(stateMachineArn=sm)
check(json.loads(d["definition"]) == definition and d["roleArn"] == ROLE, "DescribeStateMachine")
check(any(m["stateMachineArn"] == sm for m in sfn.list_state_machines()["stateMachines"]), "ListStateMachines")


# The activity worker: the boto3 example (worker/examples/python/sfn_worker.py),
# answering one task.
HERE = os.path.dirname(os.path.abspath(__file__))
worker = subprocess.Popen(
    [sys.executable, os.path.join(HERE, "../../worker/examples/python/sfn_worker.py"), act, "--max-tasks", "1"]
)
start = sfn.start_execution(stateMachineArn=sm, name="run-1", input='{"who": "ada"}')
ex = start["executionArn"]
check(ex.endswith(":execution:e2e-hello:run-1"), "StartExecution ARN")
same = sfn.start_execution(stateMachineArn=sm, name="run-1", input='{"who": "ada"}')
check(same["executionArn"] == ex, "StartExecution is idempotent by name and input")
check(
    error_name(sfn.start_execution, stateMachineArn=sm, name="run-1", input='{"who": "bob"}')
    == "ExecutionAlreadyExists",
    "ExecutionAlreadyExists for a duplicate name with another input",
)
check(worker.wait(timeout=90) == 0, "the activity worker answered the task")

# The .waitForTaskToken callback: its token is in the history's
# TaskScheduled parameters, as in Step Functions.
token = None
end = time.time() + 30
while token is None and time.time() < end:
    for e in sfn.get_execution_history(executionArn=ex)["events"]:
        if e["type"] == "TaskScheduled":
            token = json.loads(e["taskScheduledEventDetails"]["parameters"])["token"]
    time.sleep(0.2)
check(token is not None, "the callback's token is in the history")
sfn.send_task_success(taskToken=token, output='{"approved": true}')
d = wait_status(ex, "SUCCEEDED")
out = json.loads(d["output"])
check(out["greeting"] == {"greeting": "hello ada"} and out["approval"] == {"approved": True}, "DescribeExecution output")

events = sfn.get_execution_history(executionArn=ex)["events"]
types = [e["type"] for e in events]
check(events[0]["executionStartedEventDetails"].get("roleArn") == ROLE, "ExecutionStarted has the roleArn")
print("history:", " ".join(types))
check(types[0] == "ExecutionStarted" and types[-1] == "ExecutionSucceeded", "history starts and ends as AWS's")
for t in ("PassStateEntered", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
          "ActivitySucceeded", "TaskScheduled", "TaskSucceeded", "TaskStateExited"):
    check(t in types, "history has " + t)
rev = sfn.get_execution_history(executionArn=ex, reverseOrder=True, maxResults=2)
check([e["type"] for e in rev["events"]] == types[::-1][:2] and "nextToken" in rev, "history reverse page")

# Stop one.
stopped = sfn.start_execution(stateMachineArn=sm, name="run-2", input='{"who": "eve"}')["executionArn"]
sfn.stop_execution(executionArn=stopped, error="E2E.Stop", cause="stopped by the e2e test")
d = wait_status(stopped, "ABORTED")
check(d.get("error") == "E2E.Stop", "StopExecution: ABORTED with its error")
runs = sfn.list_executions(stateMachineArn=sm)["executions"]
check({r["name"] for r in runs} >= {"run-1", "run-2"}, "ListExecutions")
aborted = sfn.list_executions(stateMachineArn=sm, statusFilter="ABORTED")["executions"]
check([r["name"] for r in aborted] == ["run-2"], "ListExecutions statusFilter")

# An EXPRESS state machine run by StartSyncExecution. botocore sends that
# call to the host "sync-" + the endpoint's (AWS's sync-states...), which a
# local endpoint is not: inject_host_prefix=False (newer SDKs and CLIs:
# AWS_DISABLE_HOST_PREFIX_INJECTION=true, which `swf dev` exports).
syncc = boto3.client("stepfunctions", endpoint_url=URL,
                     config=Config(read_timeout=330, retries={"max_attempts": 1}, inject_host_prefix=False))
express_def = {"StartAt": "Greet", "States": {"Greet": {"Type": "Pass", "Parameters": {"greeting.$": "States.Format('hi {}', $.who)"}, "End": True}}}
express = sfn.create_state_machine(name="e2e-express", type="EXPRESS", definition=json.dumps(express_def),
                                   roleArn=ROLE)["stateMachineArn"]
check(sfn.describe_state_machine(stateMachineArn=express)["type"] == "EXPRESS", "CreateStateMachine type EXPRESS")
r = syncc.start_sync_execution(stateMachineArn=express, name="sync-1", input='{"who": "ada"}')
check(r["status"] == "SUCCEEDED" and json.loads(r["output"]) == {"greeting": "hi ada"},
      "StartSyncExecution answers SUCCEEDED with the output")
check(r["billingDetails"]["billedDurationInMilliseconds"] >= 100 and r["stopDate"] >= r["startDate"],
      "StartSyncExecution billingDetails and dates")
check(error_name(syncc.start_sync_execution, stateMachineArn=sm) == "StateMachineTypeNotSupported",
      "StartSyncExecution of a STANDARD machine: StateMachineTypeNotSupported")
with_activity = {"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": act, "End": True}}}
check(error_name(sfn.create_state_machine, name="e2e-express-2", type="EXPRESS",
                 definition=json.dumps(with_activity), roleArn=ROLE) == "InvalidDefinition",
      "an EXPRESS machine with an activity: InvalidDefinition")
sfn.delete_state_machine(stateMachineArn=express)

# ListExecutions: filters, pagination, AWS's validation.
page = sfn.list_executions(stateMachineArn=sm, maxResults=1)
check(len(page["executions"]) == 1 and "nextToken" in page, "ListExecutions maxResults 1 has a nextToken")
rest = sfn.list_executions(stateMachineArn=sm, maxResults=1, nextToken=page["nextToken"])
check(rest["executions"][0]["name"] != page["executions"][0]["name"], "ListExecutions next page")
names = set()
for p in sfn.get_paginator("list_executions").paginate(stateMachineArn=sm, PaginationConfig={"PageSize": 1}):
    names |= {r["name"] for r in p["executions"]}
check(names >= {"run-1", "run-2"}, "ListExecutions paginator walks every page")


def list_with(extra, **kw):
    """ListExecutions with members this boto3 may not know yet (Debian 12's
    predates redriveFilter): added to the body before it is signed."""
    c = boto3.client("stepfunctions", endpoint_url=URL, config=cfg)

    def add(request, **_):
        body = json.loads(request.data or b"{}")
        body.update(extra)
        request.data = json.dumps(body).encode()
    c.meta.events.register("before-sign.*.ListExecutions", add)
    return c.list_executions(**kw)


check(list_with({"redriveFilter": "REDRIVEN"}, stateMachineArn=sm)["executions"] == [],
      "ListExecutions redriveFilter REDRIVEN: nothing is redriven")
check({r["name"] for r in list_with({"redriveFilter": "NOT_REDRIVEN"}, stateMachineArn=sm)["executions"]} >= {"run-1", "run-2"},
      "ListExecutions redriveFilter NOT_REDRIVEN")
check(error_name(lambda **kw: list_with({"redriveFilter": "SOMETIMES"}, **kw), stateMachineArn=sm) == "ValidationException",
      "ListExecutions redriveFilter SOMETIMES: ValidationException")
check({r["name"] for r in sfn.list_executions(stateMachineArn=sm + ":1")["executions"]} >= {"run-1", "run-2"},
      "ListExecutions of a version ARN")
check(sfn.list_executions(stateMachineArn=sm + ":99")["executions"] == [], "ListExecutions of a version without executions")
for bad, want in (({"statusFilter": "DONE"}, "ValidationException"),
                  ({"statusFilter": "PENDING_REDRIVE"}, "ValidationException"),
                  ({"nextToken": "not-a-token"}, "InvalidToken"),
                  ({"nextToken": "x" * 3073}, "ValidationException"),
                  ({"maxResults": 1001}, "ValidationException"),
                  ({"mapRunArn": sm.replace(":stateMachine:", ":mapRun:") + "/m:1"}, "ValidationException")):
    check(error_name(sfn.list_executions, stateMachineArn=sm, **bad) == want, "ListExecutions %s: %s" % (list(bad)[0], want))
check(error_name(sfn.list_executions, mapRunArn=sm.replace(":stateMachine:", ":mapRun:") + "/m:1") == "InvalidArn",
      "ListExecutions mapRunArn malformed: InvalidArn")
check(error_name(sfn.list_executions, mapRunArn=sm.replace(":stateMachine:", ":mapRun:") + "/m:run-1-1") == "ResourceNotFound",
      "ListExecutions mapRunArn of no Map Run: ResourceNotFound")

# Map Runs: a distributed Map's run, derived from the history (api/maprun.c).
dmap = {"StartAt": "Each", "States": {"Each": {
    "Type": "Map", "Label": "Batch", "ItemsPath": "$.items", "MaxConcurrency": 2, "End": True,
    "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                      "StartAt": "Same", "States": {"Same": {"Type": "Pass", "End": True}}}}}}
msm = sfn.create_state_machine(name="e2e-maprun", definition=json.dumps(dmap), roleArn=ROLE)["stateMachineArn"]
mex = sfn.start_execution(stateMachineArn=msm, name="maprun-1", input=json.dumps({"items": [1, 2, 3]}))["executionArn"]
wait_status(mex, "SUCCEEDED")
runs = sfn.list_map_runs(executionArn=mex)["mapRuns"]
run_arn = "arn:aws:states:%s:%s:mapRun:e2e-maprun/Batch:maprun-1-1" % (REGION, ACCOUNT)
check([r["mapRunArn"] for r in runs] == [run_arn], "ListMapRuns")
run = sfn.describe_map_run(mapRunArn=run_arn)
check(run["status"] == "SUCCEEDED" and run["maxConcurrency"] == 2 and run["itemCounts"]["succeeded"] == 3
      and run["executionCounts"]["total"] == 3 and run["stopDate"] >= run["startDate"], "DescribeMapRun")
hist = sfn.get_execution_history(executionArn=mex)["events"]
check([e["mapRunStartedEventDetails"]["mapRunArn"] for e in hist if e["type"] == "MapRunStarted"] == [run_arn]
      and [e["type"] for e in hist if e["type"].startswith("MapRun")] == ["MapRunStarted", "MapRunSucceeded"],
      "GetExecutionHistory: MapRunStarted names the run, MapRunSucceeded closes it")
kids = sfn.list_executions(mapRunArn=run_arn)["executions"]
check(sorted(k["name"] for k in kids) == ["maprun-1-1-0", "maprun-1-1-1", "maprun-1-1-2"]
      and all(k["status"] == "SUCCEEDED" for k in kids), "ListExecutions of a mapRunArn: its iterations")
check(error_name(sfn.describe_execution, executionArn=kids[0]["executionArn"]) == "ExecutionDoesNotExist",
      "an iteration's ARN is a name only: DescribeExecution ExecutionDoesNotExist")
check(error_name(sfn.update_map_run, mapRunArn=run_arn, maxConcurrency=5) == "ValidationException",
      "UpdateMapRun of a closed run: ValidationException")
check(error_name(sfn.describe_map_run, mapRunArn=run_arn[:-1] + "2") == "ResourceNotFound", "DescribeMapRun of no run")
check(error_name(sfn.describe_map_run, mapRunArn="arn:aws:states:x") == "InvalidArn", "DescribeMapRun malformed ARN")
check(error_name(sfn.list_executions) == "ValidationException", "ListExecutions without an ARN")
check(error_name(sfn.list_state_machines, nextToken="no such token!") == "InvalidToken", "ListStateMachines bad nextToken")
check(error_name(sfn.list_activities, nextToken="x" * 100) == "InvalidToken", "ListActivities bad nextToken")
check(error_name(sfn.list_activities, maxResults=1001) == "ValidationException", "ListActivities maxResults 1001")
extra = [sfn.create_activity(name="e2e-page-%d" % i)["activityArn"] for i in range(3)]
seen = []
for p in sfn.get_paginator("list_activities").paginate(PaginationConfig={"PageSize": 2}):
    check(len(p["activities"]) <= 2, "ListActivities page of at most 2")
    seen += [a["name"] for a in p["activities"]]
check(len(seen) == len(set(seen)) and {"e2e-page-0", "e2e-page-1", "e2e-page-2"} <= set(seen),
      "ListActivities paginator: every activity once")
for a in extra:
    sfn.delete_activity(activityArn=a)

# AWS's error names.
missing = ex.replace(":run-1", ":no-such-run")
check(error_name(sfn.describe_execution, executionArn=missing) == "ExecutionDoesNotExist", "ExecutionDoesNotExist")
check(error_name(sfn.send_task_success, taskToken="not-a-token", output="{}") == "InvalidToken", "InvalidToken")
check(error_name(sfn.send_task_success, taskToken=token, output="{}") == "TaskTimedOut", "TaskTimedOut after the close")
check(error_name(sfn.describe_state_machine, stateMachineArn=sm + "-nope") == "StateMachineDoesNotExist", "StateMachineDoesNotExist")
check(error_name(sfn.describe_execution, executionArn="nonsense") == "InvalidArn", "InvalidArn")
forged = boto3.client(
    "stepfunctions", endpoint_url=URL, config=cfg, aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
    aws_secret_access_key="not-the-secret",
)
check(error_name(forged.list_state_machines) == "InvalidSignatureException", "InvalidSignatureException")
stranger = boto3.client(
    "stepfunctions", endpoint_url=URL, config=cfg, aws_access_key_id="AKIANOBODY",
    aws_secret_access_key="whatever",
)
check(error_name(stranger.list_state_machines) == "UnrecognizedClientException", "UnrecognizedClientException")

# Pollers after an idle period get their tasks at once: the activity's
# consumer stays in its group while nobody polls (api/poll.c); it used to be
# closed after 10 s, and 50 pollers then made about one step a second.
idle_act = sfn.create_activity(name="e2e-idle")["activityArn"]
idle_sm = sfn.create_state_machine(
    name="e2e-idle", roleArn=ROLE,
    definition=json.dumps({"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": idle_act, "End": True}}}),
)["stateMachineArn"]


def poll_round(tag, pollers, tasks, seconds):
    """Starts `tasks` executions; `pollers` threads answer until all are done."""
    import threading
    done, claimed, lock = [0], [0], threading.Lock()
    pcfg = Config(read_timeout=70, retries={"max_attempts": 1}, max_pool_connections=pollers + 4)

    def poller():
        c = boto3.client("stepfunctions", endpoint_url=URL, config=pcfg)
        while True:
            with lock:  # one poll per task: no poller is left waiting after the round
                if claimed[0] >= tasks:
                    return
                claimed[0] += 1
            while True:
                t = c.get_activity_task(activityArn=idle_act, workerName=tag)
                if t.get("taskToken"):
                    break
            c.send_task_success(taskToken=t["taskToken"], output="{}")
            with lock:
                done[0] += 1
    for i in range(tasks):
        sfn.start_execution(stateMachineArn=idle_sm, name="%s-%d" % (tag, i), input="{}")
    start = time.time()
    threads = [threading.Thread(target=poller, daemon=True) for _ in range(pollers)]
    for t in threads:
        t.start()
    while done[0] < tasks and time.time() - start < seconds:
        time.sleep(0.2)
    took = time.time() - start
    print("%s: %d pollers, %d of %d tasks in %.1f s" % (tag, pollers, done[0], tasks, took))
    return done[0], took


# Each poller of the first round finds a task at hand, so none waits after it.
n, _ = poll_round("idle-a", 10, 10, 120)
check(n == 10, "10 pollers answered 10 tasks")
time.sleep(13)  # more than the 10 s after which the consumer used to be closed
n, took = poll_round("idle-b", 50, 100, 60)
check(n == 100, "50 pollers after 13 s without any answered 100 tasks within 60 s (%.1f s)" % took)
sfn.delete_state_machine(stateMachineArn=idle_sm)
sfn.delete_activity(activityArn=idle_act)

sfn.delete_state_machine(stateMachineArn=sm)
check(error_name(sfn.describe_state_machine, stateMachineArn=sm) == "StateMachineDoesNotExist", "DeleteStateMachine")
sfn.delete_activity(activityArn=act)
check(error_name(sfn.describe_activity, activityArn=act) == "ActivityDoesNotExist", "DeleteActivity")
print("boto3: all checks held")
