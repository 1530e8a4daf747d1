/*
 * sw_events.c - the swf.events consumer (sw_events.h): one CloudEvent per
 * Kafka message, checked against its documented limits, routed by
 * swf_sw_route_event with this consumer's producer sending the signals to
 * the inbox, or dead-lettered with the reason; offsets are committed one
 * message at a time once it has been handled, so a crash delivers it again,
 * which the routing's derived ids make harmless.
 */
#include "decider/sw_events.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decider/sw_route.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/message.h"

struct swf_sw_events {
    swf_sw_events_config_t cfg;
    swf_history_store_t *store;
    rd_kafka_t *consumer, *producer;
    volatile int stop;
};

static const char content_type[] = "application/cloudevents+json";

const char *swf_sw_events_topic_env(void)
{
    const char *t = getenv("SWF_EVENTS_TOPIC");
    return t != NULL && *t != '\0' ? t : "swf.events";
}

static void logf_(swf_sw_events_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(swf_sw_events_t *e, const char *fmt, ...)
{
    if (e->cfg.log == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("swf-decider: events: ", e->cfg.log);
    vfprintf(e->cfg.log, fmt, ap);
    fputc('\n', e->cfg.log);
    fflush(e->cfg.log);
    va_end(ap);
}

/* The send function of the routing: this consumer's producer, to the inbox. */
static swf_error_t *inbox_send(void *ctx, const char *execution_id, json_object *msg)
{
    swf_sw_events_t *e = ctx;
    const char *s = swf_msg_str(msg);
    swf_kafka_out_t out = {e->cfg.kafka.inbox, execution_id, s, strlen(s),
                           RD_KAFKA_RESP_ERR_NO_ERROR};
    return swf_kafka_send(e->producer, &out, 1);
}

/* The entry of a message it cannot use, keyed by the original key (`key`,
 * NULL when it had none usable). */
static swf_error_t *dead_letter(swf_sw_events_t *e, const rd_kafka_message_t *m, const char *key,
                                const char *reason)
{
    logf_(e, "dead letter (partition %d offset %lld): %s", (int)m->partition, (long long)m->offset,
          reason);
    json_object *doc = swf_msg_dead_letter_new(reason, rd_kafka_topic_name(m->rkt), m->partition,
                                               m->offset, m->payload, m->len);
    const char *s = swf_msg_str(doc);
    swf_kafka_out_t out = {e->cfg.kafka.dlq, key, s, strlen(s), RD_KAFKA_RESP_ERR_NO_ERROR};
    swf_error_t *err = swf_kafka_send(e->producer, &out, 1);
    json_object_put(doc);
    return err;
}

/* Why the message is no CloudEvent in structured mode for a named state
 * machine (written into why), or false when it may be one. */
static bool refused(const rd_kafka_message_t *m, char *name, char *why, size_t size)
{
    if (m->key == NULL || m->key_len == 0 || m->key_len > SWF_LIMIT_MESSAGE_NAME_BYTES ||
        memchr(m->key, '\0', m->key_len) != NULL) {
        snprintf(why, size,
                 "no state machine: the message key names the Serverless Workflow (1 to %d "
                 "bytes, no NUL)",
                 SWF_LIMIT_MESSAGE_NAME_BYTES);
        return true;
    }
    memcpy(name, m->key, m->key_len);
    name[m->key_len] = '\0';
    if (m->len > SWF_SW_EVENT_MAX_BYTES) {
        snprintf(why, size, "a CloudEvent of %zu bytes, over the limit of %u", m->len,
                 SWF_SW_EVENT_MAX_BYTES);
        return true;
    }
    rd_kafka_headers_t *hdrs = NULL;
    const void *value = NULL;
    size_t vlen = 0;
    if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        rd_kafka_header_get_last(hdrs, "content-type", &value, &vlen) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        (value == NULL || vlen < sizeof(content_type) - 1 ||
         strncmp(value, content_type, sizeof(content_type) - 1) != 0)) {
        snprintf(
            why, size, "content-type %.*s: the swf.events topic takes structured mode only (%s)",
            (int)(vlen > 100 ? 100 : vlen), value != NULL ? (const char *)value : "", content_type);
        return true;
    }
    return false;
}

/* Handles one message; an error (PostgreSQL or Kafka) means: retry it. */
static swf_error_t *handle(swf_sw_events_t *e, const rd_kafka_message_t *m)
{
    char name[SWF_LIMIT_MESSAGE_NAME_BYTES + 1] = "", why[512];
    if (refused(m, name, why, sizeof(why)))
        return dead_letter(e, m, name[0] != '\0' ? name : NULL, why);
    json_object *ce = NULL;
    swf_error_t *err = swf_json_parse(m->payload, m->len, SWF_SW_EVENT_MAX_BYTES, &ce);
    if (err != NULL) {
        swf_error_t *derr = dead_letter(e, m, name, swf_error_message(err));
        swf_error_free(err);
        return derr;
    }
    swf_sw_route_t r;
    err = swf_sw_route_event(e->store, e->cfg.secret, name, ce, inbox_send, e, &r);
    json_object_put(ce);
    if (err != NULL &&
        (swf_error_code(err) == SWF_E_INPUT || swf_error_code(err) == SWF_E_NOTFOUND ||
         swf_error_code(err) == SWF_E_LIMIT)) {
        swf_error_t *derr = dead_letter(e, m, name, swf_error_message(err));
        swf_error_free(err);
        err = derr;
    } else if (err == NULL && r.dropped != NULL && strncmp(r.dropped, "malformed", 9) == 0) {
        err = dead_letter(e, m, name, r.dropped);
    } else if (err == NULL && r.dropped != NULL) {
        logf_(e, "%s: dropped: %s", name, r.dropped);
    }
    for (size_t i = 0; err == NULL && i < r.count; i++)
        logf_(e, "%s: %s: %s", name, r.hits[i].execution_id,
              swf_sw_route_kind_name(r.hits[i].kind));
    swf_sw_route_clear(&r);
    return err;
}

swf_error_t *swf_sw_events_new(const swf_sw_events_config_t *cfg, swf_sw_events_t **out)
{
    *out = NULL;
    swf_sw_events_t *e = calloc(1, sizeof(*e));
    if (e == NULL)
        abort();
    e->cfg = *cfg;
    if (e->cfg.topic == NULL)
        e->cfg.topic = swf_sw_events_topic_env();
    if (e->cfg.group == NULL)
        e->cfg.group = "swf-events";
    swf_error_t *err = swf_history_pg_new(cfg->conninfo, &e->store);
    if (err == NULL)
        err = swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = cfg->kafka.brokers},
                                     &e->producer);
    if (err == NULL)
        err = swf_kafka_consumer_new(
            &(swf_kafka_consumer_config_t){.brokers = cfg->kafka.brokers, .group = e->cfg.group},
            &e->consumer);
    if (err == NULL) {
        const char *topics[1] = {e->cfg.topic};
        err = swf_kafka_subscribe(e->consumer, topics, 1);
    }
    if (err != NULL) {
        swf_sw_events_free(e);
        return err;
    }
    *out = e;
    return NULL;
}

void swf_sw_events_run(swf_sw_events_t *e)
{
    while (!e->stop) {
        rd_kafka_message_t *m = NULL;
        swf_error_t *err = NULL;
        size_t n = swf_kafka_poll(e->consumer, 100, 0, &m, 1, &err);
        if (err != NULL) {
            logf_(e, "%s", swf_error_message(err));
            swf_error_free(err);
        }
        if (n == 0)
            continue;
        int pause_ms = 100;
        while ((err = handle(e, m)) != NULL && !e->stop) {
            logf_(e, "partition %d offset %lld: %s (retried in %d ms)", (int)m->partition,
                  (long long)m->offset, swf_error_message(err), pause_ms);
            swf_error_free(err);
            for (int t = 0; t < pause_ms && !e->stop; t += 50)
                usleep(50 * 1000);
            pause_ms = pause_ms * 2 > 5000 ? 5000 : pause_ms * 2;
        }
        if (err == NULL) {
            err = swf_kafka_commit(e->consumer, &m, 1, true);
            if (err != NULL)
                logf_(e, "committing the offset: %s", swf_error_message(err));
        }
        swf_error_free(err);
        rd_kafka_message_destroy(m);
    }
}

void swf_sw_events_stop(swf_sw_events_t *e)
{
    e->stop = 1;
}

static void events_free_rest(void *arg)
{
    swf_sw_events_t *e = arg;
    swf_kafka_producer_free(e->producer);
    swf_history_store_free(e->store);
    free(e);
}

void swf_sw_events_free(swf_sw_events_t *e)
{
    if (e == NULL)
        return;
    if (e->consumer != NULL &&
        !swf_kafka_consumer_close(e->consumer, SWF_KAFKA_CLOSE_MS, NULL, events_free_rest, e))
        return;
    events_free_rest(e);
}
