#!/usr/bin/env python3
"""An swf activity worker in Python: upper-cases the "text" field of its input.

Usage: SWF_KAFKA_BROKERS=host:port python3 worker.py [--task-list upper]

The whole contract is protocol/KAFKA.md; this file follows its "Writing a
worker in Python" walkthrough step by step. It needs only confluent-kafka
(Debian: python3-confluent-kafka). One task at a time: the offset of a task is
committed only after Kafka acknowledged the answer, so a crash at any point
means the task comes again (answering twice is harmless), never that it is
lost.
"""
import argparse
import json
import os
import signal
import socket
import sys

from confluent_kafka import Consumer, Producer

MAX_MESSAGE_BYTES = 1024 * 1024


def env(name, default):
    return os.environ.get(name) or default


def check_task(task):
    """The fields a worker needs (protocol/schemas/activity.task.schema.json)."""
    if not isinstance(task, dict) or task.get("type") != "activity.task":
        raise ValueError("not an activity.task")
    for field in ("taskToken", "executionId", "activityId"):
        if not isinstance(task.get(field), str) or not task[field]:
            raise ValueError("missing field " + field)
    if "input" not in task:
        raise ValueError("missing field input")


def work(task_input):
    """The activity itself: returns a result, or raises ActivityError."""
    text = task_input.get("text") if isinstance(task_input, dict) else None
    if not isinstance(text, str):
        raise ActivityError("example.NoText", "the input has no string field text")
    return {"text": text.upper()}


class ActivityError(Exception):
    def __init__(self, error, cause):
        super().__init__(cause)
        self.error, self.cause = error, cause


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task-list", default="upper")
    args = parser.parse_args()
    brokers = os.environ.get("SWF_KAFKA_BROKERS")
    if not brokers:
        sys.exit("set SWF_KAFKA_BROKERS")
    inbox = env("SWF_INBOX_TOPIC", "swf.inbox")
    dlq = env("SWF_DLQ_TOPIC", "swf.dlq")
    topic = env("SWF_TASK_TOPIC_PREFIX", "swf.tasks.") + args.task_list
    group = "swf-workers." + args.task_list
    identity = "%s:%d:python" % (socket.gethostname(), os.getpid())

    consumer = Consumer({
        "bootstrap.servers": brokers,
        "group.id": group,
        "enable.auto.commit": False,      # commit by hand, after the answer is acknowledged
        "auto.offset.reset": "earliest",  # tasks published before the group existed count too
    })
    producer = Producer({"bootstrap.servers": brokers, "enable.idempotence": True})
    consumer.subscribe([topic])

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    print("worker.py: %s taking tasks of %s" % (identity, topic), file=sys.stderr, flush=True)

    def send(topic_name, key, message):
        """Produces one message and waits until Kafka acknowledged it."""
        failures = []
        producer.produce(topic_name, key=key, value=json.dumps(message).encode(),
                         on_delivery=lambda err, _msg: err and failures.append(err))
        if producer.flush(30) != 0 or failures:
            raise RuntimeError("answer not acknowledged: %s" % (failures or "timeout"))

    while not stopping:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            print("worker.py: consume: %s" % msg.error(), file=sys.stderr, flush=True)
            continue
        key = msg.key().decode() if msg.key() else None
        try:
            if len(msg.value() or b"") > MAX_MESSAGE_BYTES:
                raise ValueError("message exceeds %d bytes" % MAX_MESSAGE_BYTES)
            task = json.loads(msg.value())
            check_task(task)
        except ValueError as e:  # json.JSONDecodeError is a ValueError
            send(dlq, key, {"v": 1, "type": "dead-letter", "reason": str(e), "topic": topic,
                            "partition": msg.partition(), "offset": msg.offset(),
                            "consumer": group, "identity": identity,
                            "message": (msg.value() or b"").decode("utf-8", "replace")})
            consumer.commit(message=msg, asynchronous=False)
            continue

        base = {"v": 1, "taskToken": task["taskToken"]}
        if task.get("heartbeatTimeout"):
            # A long activity sends one at least every heartbeatTimeout seconds.
            send(inbox, task["executionId"], dict(base, type="activity.heartbeat",
                                                  details={"progress": 0}))
        try:
            answer = dict(base, type="activity.completed", result=work(task["input"]),
                          identity=identity)
        except ActivityError as e:
            answer = dict(base, type="activity.failed", error=e.error, cause=e.cause,
                          identity=identity)
        except Exception as e:  # a bug in work(): report it, do not die
            answer = dict(base, type="activity.failed", error="example.Crashed",
                          cause=repr(e)[:1024], identity=identity)
        send(inbox, task["executionId"], answer)
        consumer.commit(message=msg, asynchronous=False)
        print("worker.py: %s/%s: %s" % (task["executionId"], task["activityId"], answer["type"]),
              file=sys.stderr, flush=True)

    consumer.close()
    producer.flush(10)


if __name__ == "__main__":
    main()
