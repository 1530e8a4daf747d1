"""RedriveExecution, TestState and state machine aliases on `swf dev`,
driven as a boto3 user would. Debian 12's botocore (1.29) predates all
three, so an action the client does not know (or whose members it does not
know) goes over a request signed with botocore's own SigV4 signer, as the
SDKs sign it; a newer botocore is used as is.

Run by scripts/api-e2e.sh with the exports of `swf dev` in the environment.
Exit status 0 when every check held.
"""
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.exceptions import ClientError, ParamValidationError

URL = os.environ["SWF_API_URL"]
REGION = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
ACCOUNT = "123456789012"
ROLE = "arn:aws:iam::%s:role/swf-e2e" % ACCOUNT
# inject_host_prefix: TestState is "sync-" prefixed by newer botocores, as for AWS.
cfg = Config(read_timeout=70, retries={"max_attempts": 1}, inject_host_prefix=False)
sfn = boto3.client("stepfunctions", endpoint_url=URL, config=cfg)
creds = boto3.Session().get_credentials()


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


def raw(action, kw):
    req = AWSRequest(
        method="POST", url=URL + "/", data=json.dumps(kw),
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AWSStepFunctions." + action},
    )
    SigV4Auth(creds, "states", REGION).add_auth(req)
    body = req.body if isinstance(req.body, bytes) else req.body.encode()
    r = urllib.request.Request(URL + "/", data=body, headers=dict(req.headers), method="POST")
    try:
        with urllib.request.urlopen(r, timeout=70) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        body = json.loads(e.read() or b"{}")
        raise ClientError({"Error": {"Code": body.get("__type", ""), "Message": body.get("message", "")}}, action)


def call(action, **kw):
    """The action through boto3 when this botocore has it, else signed by hand."""
    fn = getattr(sfn, re.sub(r"(?<!^)(?=[A-Z])", "_", action).lower(), None)
    if fn is not None:
        try:
            return fn(**kw)
        except ParamValidationError:
            pass  # an older model of the action, without some member
    return raw(action, kw)


def error_name(action, **kw):
    try:
        call(action, **kw)
    except ClientError as e:
        return e.response["Error"]["Code"]
    return None


def wait_status(arn, want, seconds=60):
    """DescribeExecution by hand: an older botocore drops the members it does
    not know (redriveCount, stateMachineAliasArn, ...)."""
    end = time.time() + seconds
    while time.time() < end:
        d = raw("DescribeExecution", {"executionArn": arn})
        if d["status"] == want:
            return d
        time.sleep(0.2)
    raise SystemExit("FAIL: %s never became %s (last %s)" % (arn, want, d["status"]))


# ---- TestState: no execution, no worker.
task = {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "ResultSelector": {"v.$": "$.Payload"},
        "ResultPath": "$.r", "Next": "After"}
t = call("TestState", definition=json.dumps(task), input='{"a": 1}', inspectionLevel="DEBUG",
         mock={"result": '{"Payload": 7}'})
check(t["status"] == "SUCCEEDED" and t["nextState"] == "After", "TestState SUCCEEDED with nextState")
check(json.loads(t["output"]) == {"a": 1, "r": {"v": 7}}, "TestState output")
check(json.loads(t["inspectionData"]["afterResultSelector"]) == {"v": 7}, "TestState inspectionData")
t = call("TestState", definition=json.dumps(task), input="{}",
         mock={"errorOutput": {"error": "Lambda.Boom", "cause": "down"}})
check(t["status"] == "FAILED" and t["error"] == "Lambda.Boom", "TestState FAILED on a mocked error")
check(error_name("TestState", definition=json.dumps(task), input="{}") == "ValidationException",
      "TestState of a Task without a mock is ValidationException")

# ---- Aliases: two versions, an alias routing to them.
one = {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": 1, "End": True}}}
two = {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": 2, "End": True}}}
sm = sfn.create_state_machine(name="e2e-alias", definition=json.dumps(one), roleArn=ROLE)["stateMachineArn"]
sfn.update_state_machine(stateMachineArn=sm, definition=json.dumps(two))
alias = call("CreateStateMachineAlias", name="prod", description="all on 2",
             routingConfiguration=[{"stateMachineVersionArn": sm + ":1", "weight": 0},
                                   {"stateMachineVersionArn": sm + ":2", "weight": 100}])["stateMachineAliasArn"]
check(alias == sm + ":prod", "CreateStateMachineAlias ARN")
check(error_name("CreateStateMachineAlias", name="bad", routingConfiguration=[
    {"stateMachineVersionArn": sm + ":1", "weight": 60}]) == "ValidationException", "weights must sum to 100")
d = call("DescribeStateMachineAlias", stateMachineAliasArn=alias)
check(d["name"] == "prod" and len(d["routingConfiguration"]) == 2, "DescribeStateMachineAlias")
check([a["stateMachineAliasArn"] for a in call("ListStateMachineAliases", stateMachineArn=sm)["stateMachineAliases"]]
      == [alias], "ListStateMachineAliases")
ex = sfn.start_execution(stateMachineArn=alias, name="alias-1")["executionArn"]
d = wait_status(ex, "SUCCEEDED")
check(d["output"] == "2", "StartExecution on the alias ran version 2")
check(d.get("stateMachineAliasArn") == alias and d.get("stateMachineVersionArn") == sm + ":2",
      "DescribeExecution names the alias and the version")
check(error_name("DeleteStateMachineVersion", stateMachineVersionArn=sm + ":2") == "ConflictException",
      "a version an alias routes to cannot be deleted")
call("DeleteStateMachineAlias", stateMachineAliasArn=alias)
check(error_name("DescribeStateMachineAlias", stateMachineAliasArn=alias) == "ResourceNotFound",
      "DeleteStateMachineAlias")
sfn.delete_state_machine(stateMachineArn=sm)

# ---- RedriveExecution: a Task fails, the worker is fixed, the redrive
# runs only the Task that failed.
act = sfn.create_activity(name="e2e-redo")["activityArn"]
flow = {"StartAt": "Once", "States": {
    "Once": {"Type": "Pass", "Result": {"kept": True}, "ResultPath": "$.once", "Next": "Work"},
    "Work": {"Type": "Task", "Resource": act, "ResultPath": "$.work", "End": True}}}
sm = sfn.create_state_machine(name="e2e-redo", definition=json.dumps(flow), roleArn=ROLE)["stateMachineArn"]
ex = sfn.start_execution(stateMachineArn=sm, name="redo-1", input='{"n": 1}')["executionArn"]


def task_token():
    end = time.time() + 90
    while time.time() < end:
        t = sfn.get_activity_task(activityArn=act, workerName="e2e")
        if t.get("taskToken"):
            return t["taskToken"]
    raise SystemExit("FAIL: no task for " + act)


sfn.send_task_failure(taskToken=task_token(), error="Worker.Bug", cause="fixed in the next release")
d = wait_status(ex, "FAILED")
check(d["error"] == "Worker.Bug" and d.get("redriveStatus", "REDRIVABLE") == "REDRIVABLE", "FAILED, redrivable")
r = call("RedriveExecution", executionArn=ex)
check("redriveDate" in r, "RedriveExecution answers redriveDate")
check(error_name("RedriveExecution", executionArn=ex) == "ExecutionNotRedrivable", "a running execution is not redrivable")
sfn.send_task_success(taskToken=task_token(), output='{"done": true}')
d = wait_status(ex, "SUCCEEDED")
check(json.loads(d["output"]) == {"n": 1, "once": {"kept": True}, "work": {"done": True}}, "redriven to SUCCEEDED")
check(d.get("redriveCount") == 1, "DescribeExecution redriveCount")
types = [e["type"] for e in sfn.get_execution_history(executionArn=ex, maxResults=1000)["events"]]
check("ExecutionRedriven" in types, "history has ExecutionRedriven")
check(types.count("PassStateEntered") == 1 and types.count("ActivityScheduled") == 2,
      "the Pass state ran once, the Task twice")
# ListExecutions' redriveFilter (a member Debian's botocore does not know: raw).
other = sfn.start_execution(stateMachineArn=sm, name="redo-2", input='{"n": 2}')["executionArn"]
sfn.stop_execution(executionArn=other, error="E2e.Stop")
wait_status(other, "ABORTED")
names = lambda f: [e["name"] for e in raw("ListExecutions", {"stateMachineArn": sm, "redriveFilter": f})["executions"]]
check(names("REDRIVEN") == ["redo-1"], "ListExecutions redriveFilter REDRIVEN")
check(names("NOT_REDRIVEN") == ["redo-2"], "ListExecutions redriveFilter NOT_REDRIVEN")
page = raw("ListExecutions", {"stateMachineArn": sm, "redriveFilter": "NOT_REDRIVEN", "maxResults": 1})
check(len(page["executions"]) == 1 and "nextToken" not in page, "ListExecutions redriveFilter pages the filtered list")
sfn.delete_state_machine(stateMachineArn=sm)
sfn.delete_activity(activityArn=act)
print("actions: all checks held")
