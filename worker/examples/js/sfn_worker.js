// An activity worker of the AWS Step Functions kind, on swf's Step Functions
// API (swf-api): GetActivityTask, SendTaskHeartbeat, SendTaskSuccess or
// SendTaskFailure, with the AWS SDK for JavaScript v3 (@aws-sdk/client-sfn)
// and nothing of swf. The same file runs against AWS Step Functions itself.
//
//     node sfn_worker.js ACTIVITY_ARN [--max-tasks N]
//
// With `swf dev`'s exports (SWF_API_URL or AWS_ENDPOINT_URL_SFN, and the
// AWS_* credentials) it talks to swf. Each task's input is a JSON object; the
// worker answers {"greeting": "hello " + input.who}, or fails the task with
// the error Greeting.NoName when there is no "who". scripts/api-e2e.sh
// starts it.
"use strict";
const {
  SFNClient,
  GetActivityTaskCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  SendTaskFailureCommand,
} = require("@aws-sdk/client-sfn");

async function main() {
  const args = process.argv.slice(2);
  const activityArn = args[0];
  const at = args.indexOf("--max-tasks");
  const maxTasks = at >= 0 ? Number(args[at + 1]) : 0;
  if (!activityArn || !Number.isInteger(maxTasks) || maxTasks < 0) {
    console.error("usage: node sfn_worker.js ACTIVITY_ARN [--max-tasks N]");
    process.exit(2);
  }
  const endpoint = process.env.SWF_API_URL || process.env.AWS_ENDPOINT_URL_SFN;
  // GetActivityTask waits up to 60 s: the SDK's default socket timeouts allow it.
  // The SDK reads AWS_REGION; swf dev and the AWS CLI export AWS_DEFAULT_REGION.
  const region = process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION;
  const sfn = new SFNClient({ ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}) });
  let done = 0;
  while (maxTasks === 0 || done < maxTasks) {
    const task = await sfn.send(
      new GetActivityTaskCommand({ activityArn, workerName: "sfn_worker.js" }));
    const token = task.taskToken;
    if (!token) continue; // the poll ended without a task: poll again
    await sfn.send(new SendTaskHeartbeatCommand({ taskToken: token }));
    const data = JSON.parse(task.input);
    if (data !== null && typeof data === "object" && "who" in data) {
      await sfn.send(new SendTaskSuccessCommand({
        taskToken: token, output: JSON.stringify({ greeting: "hello " + data.who }) }));
    } else {
      await sfn.send(new SendTaskFailureCommand({
        taskToken: token, error: "Greeting.NoName", cause: 'no "who" in the input' }));
    }
    done++;
    console.error("answered task", done);
  }
}

main().catch((e) => {
  console.error("sfn_worker.js:", e.name || "", e.message);
  process.exit(1);
});
