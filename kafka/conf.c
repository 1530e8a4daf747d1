/*
 * conf.c - the settings every Kafka client of swf is made with: the
 * SWF_KAFKA_* variables, the deployment's properties file
 * (SWF_KAFKA_CONFIG_FILE), and what producers and consumers share.
 *
 * The environment is read where a client is made, not once at start, so
 * that tests and `swf dev` can point their clients at a mock cluster; a
 * value out of its range falls back to the default rather than failing,
 * as a daemon has nobody to ask. The properties file is different: a
 * line swf cannot apply stops the process with the file's name and line,
 * since running with half a TLS setting would be worse than not running.
 * It is applied last, so any property swf does not own overrides swf's
 * choice (linger.ms, say); the ones swf owns are refused, with the reason.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/internal.h"
#include "protocol/limits.h"

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : dflt;
}

void swf_kafka_names_env(swf_kafka_names_t *out)
{
    out->brokers = env_or("SWF_KAFKA_BROKERS", "localhost:9092");
    out->inbox = env_or("SWF_INBOX_TOPIC", SWF_MSG_INBOX_TOPIC);
    out->dlq = env_or("SWF_DLQ_TOPIC", SWF_MSG_DLQ_TOPIC);
    out->task_prefix = env_or("SWF_TASK_TOPIC_PREFIX", SWF_MSG_TASK_TOPIC_PREFIX);
    int p = atoi(env_or("SWF_TASK_PARTITIONS", "4"));
    out->task_partitions = p >= 1 && p <= 10000 ? p : 4;
}

void swf_kafka_task_topic(const swf_kafka_names_t *names, const char *task_list, char *buf,
                          size_t size)
{
    snprintf(buf, size, "%s%s", names->task_prefix, task_list);
}

/* The variable as a number within [min, max], else dflt. */
static long env_ranged(const char *name, long min, long max, long dflt)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0')
        return dflt;
    long n = atol(v);
    return n >= min && n <= max ? n : dflt;
}

int swf_kafka_fetch_wait_ms(void)
{
    return (int)env_ranged("SWF_KAFKA_FETCH_WAIT_MS", 0, 10000, 5);
}

int swf_kafka_session_timeout_ms(void)
{
    return (int)env_ranged("SWF_KAFKA_SESSION_TIMEOUT_MS", 300, 3600000, 0);
}

int swf_kafka_send_timeout_ms(void)
{
    return (int)env_ranged("SWF_KAFKA_SEND_TIMEOUT_MS", 1000, 3600000, SWF_KAFKA_SEND_TIMEOUT_MS);
}

swf_error_t *swf_kafka_conf_set(rd_kafka_conf_t *conf, const char *key, const char *value)
{
    char text[512];
    if (rd_kafka_conf_set(conf, key, value, text, sizeof(text)) == RD_KAFKA_CONF_OK)
        return NULL;
    return swf_error_new(SWF_E_INPUT, NULL, "kafka setting %s: %s", key, text);
}

/*
 * What producers and consumers share. Nagle's algorithm off: a produce or
 * fetch request is written as soon as it is ready; with it on, a request
 * that follows another unacknowledged one waits for the peer's delayed ACK
 * (40 ms on Linux), which made every publish of more than a couple of
 * messages take 44 ms on loopback. SWF_KAFKA_DEBUG passes librdkafka's own
 * tracing contexts ("msg,fetch", "cgrp", "all").
 */
rd_kafka_conf_t *swf_kafka__conf_new(const char *brokers, const char *client_id, swf_error_t **err)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    const char *debug = getenv("SWF_KAFKA_DEBUG");
    if ((*err = swf_kafka_conf_set(conf, "bootstrap.servers", brokers)) == NULL &&
        (client_id == NULL || (*err = swf_kafka_conf_set(conf, "client.id", client_id)) == NULL) &&
        (*err = swf_kafka_conf_set(conf, "socket.nagle.disable", "true")) == NULL &&
        (debug == NULL || debug[0] == '\0' ||
         (*err = swf_kafka_conf_set(conf, "debug", debug)) == NULL))
        return conf;
    rd_kafka_conf_destroy(conf);
    return NULL;
}

swf_error_t *swf_kafka__client_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, rd_kafka_t **out)
{
    *out = NULL;
    swf_error_t *err = swf_kafka_conf_env_apply(conf);
    if (err != NULL) {
        rd_kafka_conf_destroy(conf);
        return err;
    }
    char text[512];
    rd_kafka_t *rk = rd_kafka_new(type, conf, text, sizeof(text));
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        return swf_error_new(SWF_E_KAFKA, NULL, "kafka client: %s", text);
    }
    *out = rk;
    return NULL;
}

/* ---- the properties file ---------------------------------------------------- */

static const struct {
    const char *key, *why;
} owned[] = {
    {"bootstrap.servers", "it comes from SWF_KAFKA_BROKERS"},
    {"group.id", "each process names its consumer group"},
    {"enable.auto.commit", "offsets are committed only after what they cover is stored"},
    {"enable.auto.offset.store", "offsets are committed only after what they cover is stored"},
    {"auto.offset.reset", "a new consumer group must read its topics from the start"},
    {"acks", "a message counts as sent only once every in-sync replica has it"},
    {"enable.idempotence", "librdkafka 2.0's idempotent producer can drop an acknowledged message "
                           "when a partition's leader changes (protocol/KAFKA.md)"},
    {"partitioner", "every client keys the inbox and task topics with murmur2 (protocol/KAFKA.md)"},
    {"debug", "it comes from SWF_KAFKA_DEBUG"},
    {"fetch.wait.max.ms", "it comes from SWF_KAFKA_FETCH_WAIT_MS"},
    {"session.timeout.ms", "it comes from SWF_KAFKA_SESSION_TIMEOUT_MS"},
    {"heartbeat.interval.ms", "it follows SWF_KAFKA_SESSION_TIMEOUT_MS"},
    {"message.timeout.ms", "it comes from SWF_KAFKA_SEND_TIMEOUT_MS"},
};

const char *swf_kafka_conf_owned(const char *key)
{
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
        if (strcmp(owned[i].key, key) == 0)
            return owned[i].why;
    return NULL;
}

static char *trim(char *s, char *end)
{
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    *end = '\0';
    return s;
}

/* One line, without its newline; NUL-terminated and writable. */
static swf_error_t *apply_line(const char *path, int lineno, char *line, rd_kafka_conf_t *conf)
{
    char *key = trim(line, line + strlen(line));
    if (key[0] == '\0' || key[0] == '#' || key[0] == '!')
        return NULL;
    char *eq = strchr(key, '=');
    if (eq == NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "%s:%d: expected key=value", path, lineno);
    char *value = trim(eq + 1, eq + 1 + strlen(eq + 1));
    key = trim(key, eq);
    if (key[0] == '\0')
        return swf_error_new(SWF_E_INPUT, NULL, "%s:%d: a property without a name", path, lineno);
    const char *why = swf_kafka_conf_owned(key);
    if (why != NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "%s:%d: %s is swf's to set: %s", path, lineno, key,
                             why);
    swf_error_t *err = swf_kafka_conf_set(conf, key, value);
    if (err != NULL)
        swf_error_prefix(err, "%s:%d", path, lineno);
    return err;
}

swf_error_t *swf_kafka_conf_file_apply(const char *path, rd_kafka_conf_t *conf)
{
    if (path == NULL || path[0] == '\0')
        return NULL;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return swf_error_new(SWF_E_IO, NULL, "Kafka properties file %s: %s", path, strerror(errno));
    /* The whole file at once: one byte over the limit tells it is too long. */
    char *text = malloc(SWF_LIMIT_KAFKA_CONFIG_BYTES + 2);
    if (text == NULL)
        abort();
    size_t n = fread(text, 1, SWF_LIMIT_KAFKA_CONFIG_BYTES + 1, f);
    swf_error_t *err = NULL;
    if (ferror(f))
        err = swf_error_new(SWF_E_IO, NULL, "Kafka properties file %s: %s", path, strerror(errno));
    else if (n > SWF_LIMIT_KAFKA_CONFIG_BYTES)
        err = swf_error_new(SWF_E_LIMIT, NULL, "Kafka properties file %s: more than %u bytes", path,
                            SWF_LIMIT_KAFKA_CONFIG_BYTES);
    fclose(f);
    text[n] = '\0';
    char *line = text;
    for (int lineno = 1; err == NULL && line < text + n; lineno++) {
        char *nl = memchr(line, '\n', (size_t)(text + n - line));
        char *end = nl != NULL ? nl : text + n;
        if ((size_t)(end - line) > SWF_LIMIT_KAFKA_CONFIG_LINE_BYTES)
            err = swf_error_new(SWF_E_LIMIT, NULL, "%s:%d: a line of more than %u bytes", path,
                                lineno, SWF_LIMIT_KAFKA_CONFIG_LINE_BYTES);
        else if (memchr(line, '\0', (size_t)(end - line)) != NULL)
            err = swf_error_new(SWF_E_INPUT, NULL, "%s:%d: a NUL byte", path, lineno);
        else {
            *end = '\0';
            err = apply_line(path, lineno, line, conf);
        }
        line = end + 1;
    }
    free(text);
    return err;
}

swf_error_t *swf_kafka_conf_env_apply(rd_kafka_conf_t *conf)
{
    return swf_kafka_conf_file_apply(getenv("SWF_KAFKA_CONFIG_FILE"), conf);
}
