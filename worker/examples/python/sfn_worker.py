"""An activity worker of the AWS Step Functions kind, on swf's Step Functions
API (swf-api): GetActivityTask, SendTaskHeartbeat, SendTaskSuccess or
SendTaskFailure, with boto3 and nothing of swf. The same file runs against
AWS Step Functions itself.

    python3 sfn_worker.py ACTIVITY_ARN [--max-tasks N]

With `swf dev`'s exports (SWF_API_URL or AWS_ENDPOINT_URL_SFN, and the
AWS_* credentials) it talks to swf. Each task's input is a JSON object; the
worker answers {"greeting": "hello " + input["who"]}, or fails the task with
the error Greeting.NoName when there is no "who". tests/api/e2e_boto3.py
starts it.
"""
import argparse
import json
import os
import sys

import boto3
from botocore.config import Config


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("activity_arn")
    p.add_argument("--max-tasks", type=int, default=0, help="stop after N tasks (0: never)")
    args = p.parse_args()
    endpoint = os.environ.get("SWF_API_URL") or os.environ.get("AWS_ENDPOINT_URL_SFN")
    # GetActivityTask waits up to 60 s: the read timeout must be longer.
    sfn = boto3.client("stepfunctions", endpoint_url=endpoint, config=Config(read_timeout=70))
    done = 0
    while args.max_tasks == 0 or done < args.max_tasks:
        task = sfn.get_activity_task(activityArn=args.activity_arn, workerName="sfn_worker.py")
        token = task.get("taskToken")
        if not token:
            continue  # the poll ended without a task: poll again
        sfn.send_task_heartbeat(taskToken=token)
        data = json.loads(task["input"])
        if isinstance(data, dict) and "who" in data:
            sfn.send_task_success(taskToken=token, output=json.dumps({"greeting": "hello " + data["who"]}))
        else:
            sfn.send_task_failure(taskToken=token, error="Greeting.NoName", cause="no \"who\" in the input")
        done += 1
        print("answered task", done, file=sys.stderr)


if __name__ == "__main__":
    main()
