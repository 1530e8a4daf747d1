#!/usr/bin/env node
// An swf activity worker in JavaScript (kafkajs): upper-cases the "text" field
// of its input.
//
// Usage: SWF_KAFKA_BROKERS=host:port node worker.js [--task-list upper]
//
// The contract is protocol/KAFKA.md. kafkajs commits a message's offset after
// eachMessage resolved, and eachMessage resolves only after producer.send
// resolved, which is after Kafka acknowledged the answer (acks = all): a crash
// at any point means the task comes again (answering twice is harmless),
// never that it is lost.
'use strict';
const os = require('os');
const { Kafka, Partitioners, logLevel } = require('kafkajs');

const MAX_MESSAGE_BYTES = 1024 * 1024;
const DEAD_LETTER_KEEP_BYTES = 512 * 1024; // of the original, in a dead-letter entry (KAFKA.md)
const env = (name, dflt) => process.env[name] || dflt;
const argIndex = process.argv.indexOf('--task-list');
const taskList = argIndex > 0 ? process.argv[argIndex + 1] : 'upper';
const brokers = process.env.SWF_KAFKA_BROKERS;
if (!brokers) {
  console.error('set SWF_KAFKA_BROKERS');
  process.exit(2);
}
const inbox = env('SWF_INBOX_TOPIC', 'swf.inbox');
const dlq = env('SWF_DLQ_TOPIC', 'swf.dlq');
const topic = env('SWF_TASK_TOPIC_PREFIX', 'swf.tasks.') + taskList;
const group = 'swf-workers.' + taskList;
const identity = `${os.hostname()}:${process.pid}:js`;

class ActivityError extends Error {
  constructor(error, cause) {
    super(cause);
    this.error = error;
    this.cause = cause;
  }
}

// The activity itself: returns a result or throws an ActivityError.
function work(input) {
  if (input === null || typeof input !== 'object' || typeof input.text !== 'string') {
    throw new ActivityError('example.NoText', 'the input has no string field text');
  }
  return { text: input.text.toUpperCase() };
}

// The dead-letter entry of a message (KAFKA.md, "Dead letters"): the original
// cut to 512 KiB, and less when escaping would make the entry over 1 MiB.
function deadLetter(reason, partition, message)
{
    const value = message.value || Buffer.alloc(0);
    let keep = Math.min(value.length, DEAD_LETTER_KEEP_BYTES);
    for (;;) {
        const raw = value.subarray(0, keep);
        const text = raw.toString('utf8');
        const entry = {
            v : 1,
            type : 'dead-letter',
            reason : String(reason).slice(0, 1024),
            topic,
            partition,
            offset : Number(message.offset),
            consumer : group,
            identity,
            message : text,
        };
        if (!Buffer.from(text, 'utf8').equals(raw))
            entry.messageBase64 = raw.toString('base64');
        if (keep < value.length)
            entry.truncated = true;
        const data = JSON.stringify(entry);
        if (Buffer.byteLength(data) <= MAX_MESSAGE_BYTES || keep === 0)
            return data;
        keep = Math.floor(keep / 2);
    }
}

// The fields a worker needs (protocol/schemas/activity.task.schema.json).
function checkTask(task) {
  if (task === null || typeof task !== 'object' || task.type !== 'activity.task') {
    throw new Error('not an activity.task');
  }
  for (const field of ['taskToken', 'executionId', 'activityId']) {
    if (typeof task[field] !== 'string' || task[field] === '') throw new Error('missing field ' + field);
  }
  if (!('input' in task)) throw new Error('missing field input');
}

async function main() {
  const kafka = new Kafka({ clientId: identity, brokers: brokers.split(','), logLevel: logLevel.WARN });
  // One request in flight keeps a task's heartbeat before its answer; the
  // Java-compatible (murmur2) partitioner puts an answer on the partition
  // swf's processes use for its execution (protocol/KAFKA.md, Partitioning).
  const producer = kafka.producer({
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  // SWF_KAFKA_SESSION_TIMEOUT_MS: how long the group waits for a worker that
  // went silent (killed, paused) before its tasks go to another.
  const session = Number(process.env.SWF_KAFKA_SESSION_TIMEOUT_MS) || 0;
  const consumer = kafka.consumer(session > 0
      ? { groupId: group, sessionTimeout: session, heartbeatInterval: Math.max(100, Math.floor(session / 3)) }
      : { groupId: group });
  await producer.connect();
  await consumer.connect();
  // The task topic may not exist yet (swf creates it with the first task):
  // the broker's first answer is then UNKNOWN_TOPIC_OR_PARTITION, a retriable
  // error kafkajs throws from subscribe. Wait for the topic instead of dying.
  for (let tries = 0;; tries++) {
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      break;
    } catch (e) {
      if (!e.retriable || tries >= 60) throw e;
      console.error(`worker.js: subscribing to ${topic}: ${e.message}; again in 1 s`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  // value: a string of JSON, or an object to serialise
  const send = (topicName, key, value) => producer.send({
      topic : topicName,
      acks : -1,
      messages : [ {key, value : typeof value === 'string' ? value : JSON.stringify(value)} ],
  });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await consumer.disconnect(); // waits for the running eachMessage
    await producer.disconnect();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  console.error(`worker.js: ${identity} taking tasks of ${topic}`);

  await consumer.run({
      eachMessage : async ({partition, message}) => {
          const key = message.key; // a Buffer, passed on as it came (it need not be UTF-8)
          let task;
          try {
              if (!message.value || message.value.length > MAX_MESSAGE_BYTES)
                  throw new Error('empty or oversized message');
              task = JSON.parse(message.value.toString());
              checkTask(task);
          } catch (e) {
              await send(dlq, key, deadLetter(e.message || String(e), partition, message));
              return; // resolving commits the offset
          }
          const base = {v : 1, taskToken : task.taskToken};
          // Taken: the history records ActivityTaskStarted now, and the heartbeat
          // timeout counts from here (KAFKA.md, "5. Heartbeats").
          await send(inbox, task.executionId, {...base, type : 'activity.started', identity});
          if (task.heartbeatTimeout) {
              // A long activity sends one at least every heartbeatTimeout seconds.
              await send(inbox, task.executionId,
                         {...base, type : 'activity.heartbeat', details : {progress : 0}});
          }
          let answer;
          let value;
          try {
              answer = {...base, type : 'activity.completed', result : work(task.input), identity};
              if (answer.result === undefined)
                  throw new Error('work() returned undefined, not JSON');
              value = JSON.stringify(answer);
              const bytes = Buffer.byteLength(value);
              if (bytes > MAX_MESSAGE_BYTES) {
                  throw new ActivityError('swf.OutputTooLarge',
                                          `the answer would be ${bytes} bytes, more than the ${
                                              MAX_MESSAGE_BYTES} of a message`);
              }
          } catch (e) {
              const error = e instanceof ActivityError ? e.error : 'example.Crashed';
              answer = {
                  ...base,
                  type : 'activity.failed',
                  error,
                  cause : String(e.cause || e).slice(0, 1024),
                  identity
              };
              value = JSON.stringify(answer);
          }
          await send(inbox, task.executionId, value);
          console.error(`worker.js: ${task.executionId}/${task.activityId}: ${answer.type}`);
      },
  });
}

main().catch((e) => {
  console.error('worker.js:', e);
  process.exit(1);
});
