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
import base64
import json
import os
import signal
import socket
import sys

from confluent_kafka import Consumer, Producer

MAX_MESSAGE_BYTES = 1024 * 1024
DEAD_LETTER_KEEP_BYTES = 512 * 1024  # of the original, in a dead-letter entry (KAFKA.md)


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


def encode(message):
    """A message as the bytes swf reads: strict JSON (no NaN), UTF-8."""
    return json.dumps(message, ensure_ascii=False, allow_nan=False).encode()


def dead_letter(reason, msg, topic, group, identity):
    """The dead-letter entry of a message (KAFKA.md, "Dead letters"): the original
    cut to 512 KiB, and less when escaping would make the entry over 1 MiB."""
    value = msg.value() or b""
    keep = min(len(value), DEAD_LETTER_KEEP_BYTES)
    while True:
        raw = value[:keep]
        text = raw.decode("utf-8", "replace")
        entry = {"v": 1, "type": "dead-letter", "reason": reason[:1024], "topic": topic,
                 "partition": msg.partition(), "offset": msg.offset(), "consumer": group,
                 "identity": identity, "message": text}
        if text.encode("utf-8", "surrogatepass") != raw:
            entry["messageBase64"] = base64.b64encode(raw).decode()
        if keep < len(value):
            entry["truncated"] = True
        data = encode(entry)
        if len(data) <= MAX_MESSAGE_BYTES or keep == 0:
            return data
        keep //= 2


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

    settings = {
        "bootstrap.servers": brokers,
        "group.id": group,
        "enable.auto.commit": False,      # commit by hand, after the answer is acknowledged
        "auto.offset.reset": "earliest",  # tasks published before the group existed count too
    }
    if os.environ.get("SWF_KAFKA_SESSION_TIMEOUT_MS"):
        # how long the group waits for a worker that went silent (KAFKA.md)
        session = int(os.environ["SWF_KAFKA_SESSION_TIMEOUT_MS"])
        settings.update({"session.timeout.ms": session,
                         "heartbeat.interval.ms": max(100, session // 3)})
    consumer = Consumer(settings)
    # librdkafka's own bound on a message is 1,000,000 bytes, under the
    # protocol's 1 MiB; the size is checked here instead. murmur2 puts an
    # answer where swf's processes put its execution's messages
    # (protocol/KAFKA.md, Partitioning); librdkafka's default is CRC32.
    # Not idempotent: librdkafka 2.0's idempotent producer can report an
    # answer delivered that no broker stored (protocol/KAFKA.md); acks=all
    # with retries delivers at least once, and a second answer changes nothing.
    producer = Producer({"bootstrap.servers": brokers, "acks": "all",
                         "message.max.bytes": 2000000, "partitioner": "murmur2_random"})
    consumer.subscribe([topic])

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    print("worker.py: %s taking tasks of %s" % (identity, topic), file=sys.stderr, flush=True)

    def send(topic_name, key, value):
        """Produces one message (bytes) and waits until Kafka acknowledged it."""
        failures = []
        producer.produce(topic_name, key=key, value=value,
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
        key = msg.key()  # bytes, passed on as they came (they need not be UTF-8)
        try:
            if len(msg.value() or b"") > MAX_MESSAGE_BYTES:
                raise ValueError("message exceeds %d bytes" % MAX_MESSAGE_BYTES)
            task = json.loads(msg.value())
            check_task(task)
        except Exception as e:  # not JSON, not UTF-8, nested too deep (RecursionError), ...
            send(dlq, key, dead_letter(str(e) or type(e).__name__, msg, topic, group, identity))
            consumer.commit(message=msg, asynchronous=False)
            continue

        base = {"v": 1, "taskToken": task["taskToken"]}
        # Taken: the history records ActivityTaskStarted now, and the heartbeat
        # timeout counts from here (KAFKA.md, "5. Heartbeats").
        send(inbox, task["executionId"], encode(dict(base, type="activity.started",
                                                     identity=identity)))
        if task.get("heartbeatTimeout"):
            # A long activity sends one at least every heartbeatTimeout seconds.
            send(inbox, task["executionId"], encode(dict(base, type="activity.heartbeat",
                                                         details={"progress": 0})))
        try:
            answer = dict(base, type="activity.completed", result=work(task["input"]),
                          identity=identity)
            value = encode(answer)  # a result that is not JSON fails here
            if len(value) > MAX_MESSAGE_BYTES:
                raise ActivityError("swf.OutputTooLarge",
                                    "the answer would be %d bytes, more than the %d of a "
                                    "message" % (len(value), MAX_MESSAGE_BYTES))
        except ActivityError as e:
            answer = dict(base, type="activity.failed", error=e.error, cause=e.cause[:1024],
                          identity=identity)
        except Exception as e:  # a bug in work(): report it, do not die
            answer = dict(base, type="activity.failed", error="example.Crashed",
                          cause=repr(e)[:1024], identity=identity)
        if answer["type"] == "activity.failed":
            value = encode(answer)
        send(inbox, task["executionId"], value)
        consumer.commit(message=msg, asynchronous=False)
        print("worker.py: %s/%s: %s" % (task["executionId"], task["activityId"], answer["type"]),
              file=sys.stderr, flush=True)

    consumer.close()
    producer.flush(10)


if __name__ == "__main__":
    main()
