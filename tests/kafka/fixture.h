/*
 * fixture.h - what the tests of kafka/ share: the worker tests' mock
 * cluster (tests/worker/kafka_fixture.h) and a few checks.
 */
#ifndef SWF_TESTS_KAFKA_FIXTURE_H
#define SWF_TESTS_KAFKA_FIXTURE_H

#include <criterion/criterion.h>
#include <time.h>

#include "kafka/kafka.h"
#include "tests/worker/kafka_fixture.h"

static inline int64_t kt_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void kt_check(swf_error_t *err)
{
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
}

/* The value librdkafka holds for a client's setting `key` is `want`. */
static inline void kt_expect_setting(rd_kafka_t *rk, const char *key, const char *want)
{
    char got[64];
    size_t size = sizeof(got);
    cr_assert_eq(rd_kafka_conf_get(rd_kafka_conf(rk), key, got, &size), RD_KAFKA_CONF_OK, "%s",
                 key);
    cr_expect_str_eq(got, want, "%s", key);
}

#endif
