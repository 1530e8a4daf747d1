/*
 * kafka_conf.c - the properties file of SWF_KAFKA_CONFIG_FILE (see
 * kafka_conf.h).
 */
#include "protocol/kafka_conf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/limits.h"

static const struct {
    const char *key, *why;
} owned[] = {
    {"bootstrap.servers", "it comes from SWF_KAFKA_BROKERS"},
    {"group.id", "each process names its consumer group"},
    {"enable.auto.commit", "offsets are committed only after what they cover is stored"},
    {"enable.auto.offset.store", "offsets are committed only after what they cover is stored"},
    {"auto.offset.reset", "a new consumer group must read its topics from the start"},
    {"acks", "a message counts as sent only once every in-sync replica has it"},
    {"enable.idempotence", "a worker's heartbeats and answer must stay in order"},
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
static swf_error_t *apply_line(const char *path, int lineno, char *line,
                               swf_kafka_conf_setter_t set, void *conf)
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
    swf_error_t *err = set(conf, key, value);
    if (err != NULL)
        swf_error_prefix(err, "%s:%d", path, lineno);
    return err;
}

swf_error_t *swf_kafka_conf_file_apply(const char *path, swf_kafka_conf_setter_t set, void *conf)
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
            err = apply_line(path, lineno, line, set, conf);
        }
        line = end + 1;
    }
    free(text);
    return err;
}

swf_error_t *swf_kafka_conf_env_apply(swf_kafka_conf_setter_t set, void *conf)
{
    return swf_kafka_conf_file_apply(getenv("SWF_KAFKA_CONFIG_FILE"), set, conf);
}
