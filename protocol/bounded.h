/*
 * bounded.h - a call that may block without limit, given a limit.
 *
 * librdkafka's rd_kafka_consumer_close() waits, without a timeout, until the
 * group coordinator has confirmed every step of leaving the group (the last
 * commit, the revoke, LeaveGroup) and every request it has in flight has
 * been answered. A broker that never answers one of them (librdkafka's mock
 * cluster can hold a JoinGroup for the whole max.poll.interval.ms, minutes)
 * would keep a stopping daemon alive for that long. Kafka's Java client
 * bounds the same step (KafkaConsumer.close(Duration), 30 s by default);
 * swf does it with this: the call runs on a thread of its own, and the
 * caller stops waiting at the limit. A call that overran is abandoned, not
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

#endif
