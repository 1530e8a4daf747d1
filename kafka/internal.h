/*
 * internal.h - what the files of kafka/ share and nothing outside includes.
 */
#ifndef SWF_KAFKA_INTERNAL_H
#define SWF_KAFKA_INTERNAL_H

#include "kafka/kafka.h"

/* A configuration with what every client of swf shares: the brokers, the
 * client id (NULL: librdkafka's), Nagle off, SWF_KAFKA_DEBUG. NULL and
 * *err set when librdkafka refuses one. */
rd_kafka_conf_t *swf_kafka__conf_new(const char *brokers, const char *client_id, swf_error_t **err);

/* Makes the client from conf (which it takes, whatever happens), after the
 * deployment's own properties (SWF_KAFKA_CONFIG_FILE) were added. */
swf_error_t *swf_kafka__client_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, rd_kafka_t **out);

#endif
