/*
 * bounded.h - a call that may block without limit, given a limit.
 *
 * librdkafka's rd_kafka_consumer_close() has no time limit of its own: it
 * returns once the group coordinator has answered what leaving needs (the
 * offset commits of the revoke, and those still in flight). A broker that
 * answers late holds it that long: an OffsetCommit answered after 100 s
 * held a close for the whole 60 s request timeout in this project's tests,
 * and test_e2e's chaos run once saw a swf-worker not stop within 60 s of
 * SIGTERM (the cause was not found). Kafka's Java client bounds the same
 * step (KafkaConsumer.close(Duration), 30 s by default); swf does it with
 * this: the call runs on a thread of its own, and the caller stops waiting
 * at the limit. A call that overran is abandoned, not
 * interrupted: it keeps its thread and everything it uses, so it is only for
 * the last step of a process, or of a handle that is thrown away.
 */
#ifndef SWF_PROTOCOL_BOUNDED_H
#define SWF_PROTOCOL_BOUNDED_H

#include <stdbool.h>

/*
 * Runs fn(arg) and waits up to timeout_ms for it to return. Returns true when
 * it did. When it did not, the call goes on, detached, and arg belongs to it
 * from then on: the caller must not free or use what fn uses; if fn returns
 * later, late(arg) (when not NULL) runs right after it, on the same thread,
 * to free what the caller would have. When no thread can be started, fn
 * runs on the caller's thread, unbounded, and true is returned.
 * Thread-safe.
 */
bool swf_bounded_call(void (*fn)(void *arg), void (*late)(void *arg), void *arg, int timeout_ms);

/*
 * Waits up to timeout_ms for every abandoned call to return (and its `late`
 * to run). True when none is left. For the end of a process or a test that
 * wants what those calls hold freed, once whatever held them up is gone.
 * Thread-safe.
 */
bool swf_bounded_wait_abandoned(int timeout_ms);

#endif
