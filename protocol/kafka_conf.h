/*
 * kafka_conf.h - the librdkafka properties a deployment adds to every Kafka
 * client of swf (TLS, SASL, a broker version, tuning), read from the file
 * that SWF_KAFKA_CONFIG_FILE names.
 *
 * The file has one `key = value` per line, as librdkafka's (and kcat's -F)
 * properties files: blank lines and lines starting with '#' or '!' are
 * skipped, spaces around the key and the value are trimmed, and the value
 * is everything after the first '='. At most SWF_LIMIT_KAFKA_CONFIG_BYTES,
 * lines of at most SWF_LIMIT_KAFKA_CONFIG_LINE_BYTES.
 *
 * The properties swf relies on for its guarantees, or sets from a variable
 * of its own, are refused (swf_kafka_conf_owned says which, and why), so a
 * file never silently undoes them. Every other property is set after swf's
 * own settings and overrides them (linger.ms, say).
 */
#ifndef SWF_PROTOCOL_KAFKA_CONF_H
#define SWF_PROTOCOL_KAFKA_CONF_H

#include "protocol/error.h"

/* Sets one property on a client's configuration; NULL or an error saying
 * why the client refused it. */
typedef swf_error_t *(*swf_kafka_conf_setter_t)(void *conf, const char *key, const char *value);

/* What swf does with `key` itself, when a properties file may not set it;
 * else NULL. */
const char *swf_kafka_conf_owned(const char *key);

/* Sets every property of the file at `path` through `set`; a NULL or empty
 * path sets nothing. Errors name the file and the line. */
swf_error_t *swf_kafka_conf_file_apply(const char *path, swf_kafka_conf_setter_t set, void *conf);

/* swf_kafka_conf_file_apply with the path from SWF_KAFKA_CONFIG_FILE. */
swf_error_t *swf_kafka_conf_env_apply(swf_kafka_conf_setter_t set, void *conf);

#endif
