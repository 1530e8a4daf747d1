/*
 * sw_events.h - the swf.events topic: CloudEvents published to Kafka (the
 * CloudEvents Kafka binding, structured mode, content-type
 * application/cloudevents+json), each routed to the instances of the
 * Serverless Workflow its message key names (decider/sw_route.h).
 *
 * A consumer in the group `swf-events` (one per swf-decider, which runs it
 * on a thread of its own next to the inbox consumer: routing replays
 * candidate histories through the interpreter, which the decider links and
 * swf-history does not, and the deciders already scale out as a group).
 * Each message is routed, then its offset is committed; a message that is
 * not a CloudEvent for a Serverless Workflow (over SWF_SW_EVENT_MAX_BYTES,
 * no key, another content-type, not JSON, no id/source/type, an unknown or
 * ASL state machine) goes to the dead-letter topic with the reason. An
 * event no instance takes is logged, not dead-lettered (SPEC 11 drops it).
 * A PostgreSQL or Kafka failure retries the message, with a pause growing
 * to 5 s; a retry reaches no instance twice (sw_route.c's derived ids).
 *
 * Ownership: the consumer owns its connection, Kafka consumer and producer;
 * the config's strings are borrowed for its lifetime. run() on one thread,
 * stop() from any (async-signal-safe).
 */
#ifndef SWF_DECIDER_SW_EVENTS_H
#define SWF_DECIDER_SW_EVENTS_H

#include <stdio.h>

#include "kafka/kafka.h"
#include "protocol/error.h"

/* Bytes of one CloudEvent on the topic: it travels on to its instances
 * inside a signal, one Kafka message of at most 1 MiB, with 64 KiB kept
 * for the signal's other fields. */
#define SWF_SW_EVENT_MAX_BYTES (960u * 1024u)

typedef struct swf_sw_events_config {
    const char *conninfo;
    swf_kafka_names_t kafka;
    const char *secret;
    const char *topic; /* NULL: $SWF_EVENTS_TOPIC, else "swf.events" */
    const char *group; /* NULL: "swf-events" */
    FILE *log;         /* NULL: quiet */
} swf_sw_events_config_t;

typedef struct swf_sw_events swf_sw_events_t;

/* The topic's name: $SWF_EVENTS_TOPIC, else "swf.events". */
const char *swf_sw_events_topic_env(void);

swf_error_t *swf_sw_events_new(const swf_sw_events_config_t *cfg, swf_sw_events_t **out);
/* Routes events until stop. */
void swf_sw_events_run(swf_sw_events_t *e);
void swf_sw_events_stop(swf_sw_events_t *e);
/* Leaves the group and frees everything; NULL does nothing. */
void swf_sw_events_free(swf_sw_events_t *e);

#endif
