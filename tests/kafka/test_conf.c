/*
 * test_conf.c - kafka/conf.c: the librdkafka properties file of
 * SWF_KAFKA_CONFIG_FILE (what it sets, what it refuses, and that every
 * client the library makes takes it) and the SWF_KAFKA_* variables.
 */
#include <criterion/criterion.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka/kafka.h"
#include "protocol/limits.h"

static char path[64];

static const char *write_file(const char *text, size_t len)
{
    snprintf(path, sizeof(path), "/tmp/swf-kafka-conf-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static void remove_file(void)
{
    if (path[0] != '\0')
        unlink(path);
    unsetenv("SWF_KAFKA_CONFIG_FILE");
}

TestSuite(kafka_conf, .fini = remove_file);

static void expect_value(rd_kafka_conf_t *conf, const char *key, const char *want)
{
    char got[256];
    size_t size = sizeof(got);
    cr_assert_eq(rd_kafka_conf_get(conf, key, got, &size), RD_KAFKA_CONF_OK, "%s", key);
    cr_expect_str_eq(got, want, "%s", key);
}

/* The error's message contains `part`; the error is freed. */
static void expect_error(swf_error_t *err, swf_code_t code, const char *part)
{
    cr_assert_not_null(err, "expected an error containing \"%s\"", part);
    cr_expect_eq(swf_error_code(err), code, "%s", swf_error_message(err));
    cr_expect_not_null(strstr(swf_error_message(err), part), "\"%s\" lacks \"%s\"",
                       swf_error_message(err), part);
    swf_error_free(err);
}

Test(kafka_conf, sets_each_property_and_skips_comments)
{
    const char text[] = "# a comment\n"
                        "! another\n"
                        "\n"
                        "   linger.ms = 7  \r\n"
                        "client.rack=eu-west-1a\n"
                        "ssl.cipher.suites=A=B:C\n"     /* the value is all after the first '=' */
                        "socket.keepalive.enable=true"; /* no newline at the end */
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    cr_assert_null(swf_kafka_conf_file_apply(write_file(text, strlen(text)), conf));
    expect_value(conf, "linger.ms", "7");
    expect_value(conf, "client.rack", "eu-west-1a");
    expect_value(conf, "ssl.cipher.suites", "A=B:C");
    expect_value(conf, "socket.keepalive.enable", "true");
    rd_kafka_conf_destroy(conf);
}

Test(kafka_conf, no_path_sets_nothing)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    cr_expect_null(swf_kafka_conf_file_apply(NULL, conf));
    cr_expect_null(swf_kafka_conf_file_apply("", conf));
    unsetenv("SWF_KAFKA_CONFIG_FILE");
    cr_expect_null(swf_kafka_conf_env_apply(conf));
    expect_value(conf, "linger.ms", "5"); /* librdkafka's own default */
    rd_kafka_conf_destroy(conf);
}

Test(kafka_conf, refuses_what_swf_sets_itself)
{
    const char *keys[] = {
        "bootstrap.servers",  "group.id",          "enable.auto.commit", "acks",
        "enable.idempotence", "fetch.wait.max.ms", "session.timeout.ms", "message.timeout.ms",
        "partitioner"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char text[128];
        int n = snprintf(text, sizeof(text), "linger.ms=1\n%s = 1\n", keys[i]);
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char where[128];
        expect_error(swf_kafka_conf_file_apply(write_file(text, (size_t)n), conf), SWF_E_INPUT,
                     keys[i]);
        snprintf(where, sizeof(where), "%s:2: %s is swf's to set", path, keys[i]);
        swf_error_t *again = swf_kafka_conf_file_apply(path, conf);
        cr_assert_not_null(again);
        cr_expect_not_null(strstr(swf_error_message(again), where), "%s", swf_error_message(again));
        swf_error_free(again);
        unlink(path);
        rd_kafka_conf_destroy(conf);
    }
    cr_expect_not_null(strstr(swf_kafka_conf_owned("bootstrap.servers"), "SWF_KAFKA_BROKERS"));
    cr_expect_null(swf_kafka_conf_owned("linger.ms"));
    cr_expect_not_null(strstr(swf_kafka_conf_owned("partitioner"), "murmur2"));
}

Test(kafka_conf, names_the_line_of_a_bad_one)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    const char no_eq[] = "linger.ms=1\n\njust words\n";
    expect_error(swf_kafka_conf_file_apply(write_file(no_eq, strlen(no_eq)), conf), SWF_E_INPUT,
                 ":3: expected key=value");
    unlink(path);
    const char no_key[] = " = 3\n";
    expect_error(swf_kafka_conf_file_apply(write_file(no_key, strlen(no_key)), conf), SWF_E_INPUT,
                 ":1: a property without a name");
    unlink(path);
    /* librdkafka's own refusal, with the place in the file */
    const char unknown[] = "linger.ms=1\nno.such.property=1\n";
    expect_error(swf_kafka_conf_file_apply(write_file(unknown, strlen(unknown)), conf), SWF_E_INPUT,
                 ":2: kafka setting no.such.property: No such configuration property");
    unlink(path);
    const char nul[] = "linger.ms=1\nclient.rack=a\0b\n";
    expect_error(swf_kafka_conf_file_apply(write_file(nul, sizeof(nul) - 1), conf), SWF_E_INPUT,
                 ":2: a NUL byte");
    rd_kafka_conf_destroy(conf);
}

Test(kafka_conf, refuses_a_file_or_line_over_its_limit)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    size_t big = SWF_LIMIT_KAFKA_CONFIG_BYTES + 1;
    char *text = malloc(big);
    cr_assert_not_null(text);
    /* comment lines of 1,000 bytes: only the total is too long */
    for (size_t i = 0; i < big; i++)
        text[i] = i % 1000 == 999 ? '\n' : '#';
    expect_error(swf_kafka_conf_file_apply(write_file(text, big), conf), SWF_E_LIMIT,
                 "more than 65536 bytes");
    unlink(path);
    /* exactly the limit is fine */
    cr_expect_null(swf_kafka_conf_file_apply(write_file(text, big - 1), conf));
    unlink(path);
    size_t line = SWF_LIMIT_KAFKA_CONFIG_LINE_BYTES + 1;
    memset(text, '#', line);
    expect_error(swf_kafka_conf_file_apply(write_file(text, line), conf), SWF_E_LIMIT,
                 ":1: a line of more than 4096 bytes");
    free(text);
    rd_kafka_conf_destroy(conf);
}

Test(kafka_conf, a_missing_file_or_a_directory_is_an_error)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    expect_error(swf_kafka_conf_file_apply("/nonexistent/swf.properties", conf), SWF_E_IO,
                 "/nonexistent/swf.properties: No such file");
    expect_error(swf_kafka_conf_file_apply("/tmp", conf), SWF_E_IO, "/tmp: Is a directory");
    rd_kafka_conf_destroy(conf);
}

/* Every client the library makes reads the file: a bad property stops
 * each of them with the file's own message, a good one lets them start. */
Test(kafka_conf, every_client_takes_the_file)
{
    const char bad[] = "no.such.property=1\n";
    setenv("SWF_KAFKA_CONFIG_FILE", write_file(bad, strlen(bad)), 1);
    swf_kafka_producer_config_t pc = {.brokers = "127.0.0.1:1"};
    swf_kafka_consumer_config_t cc = {.brokers = "127.0.0.1:1", .group = "g"};
    rd_kafka_t *rk = NULL;
    expect_error(swf_kafka_producer_new(&pc, &rk), SWF_E_INPUT, "no.such.property");
    cr_expect_null(rk);
    expect_error(swf_kafka_consumer_new(&cc, &rk), SWF_E_INPUT, "no.such.property");
    cr_expect_null(rk);
    unlink(path);

    const char good[] = "linger.ms=3\nlog_level=0\n";
    setenv("SWF_KAFKA_CONFIG_FILE", write_file(good, strlen(good)), 1);
    cr_assert_null(swf_kafka_producer_new(&pc, &rk));
    swf_kafka_producer_free(rk);
    cr_assert_null(swf_kafka_consumer_new(&cc, &rk));
    cr_assert(swf_kafka_consumer_close(rk, SWF_KAFKA_CLOSE_MS, NULL, NULL, NULL));
}

/* A variable out of its range is the default, not an error: a daemon has
 * nobody to ask. */
Test(kafka_conf, variables_out_of_range_take_their_defaults)
{
    setenv("SWF_KAFKA_FETCH_WAIT_MS", "20000", 1);
    setenv("SWF_KAFKA_SESSION_TIMEOUT_MS", "100", 1);
    setenv("SWF_KAFKA_SEND_TIMEOUT_MS", "abc", 1);
    setenv("SWF_TASK_PARTITIONS", "0", 1);
    cr_expect_eq(swf_kafka_fetch_wait_ms(), 5);
    cr_expect_eq(swf_kafka_session_timeout_ms(), 0);
    cr_expect_eq(swf_kafka_send_timeout_ms(), SWF_KAFKA_SEND_TIMEOUT_MS);
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    cr_expect_eq(names.task_partitions, 4);
    setenv("SWF_KAFKA_FETCH_WAIT_MS", "0", 1);
    setenv("SWF_KAFKA_SESSION_TIMEOUT_MS", "6000", 1);
    setenv("SWF_KAFKA_SEND_TIMEOUT_MS", "2000", 1);
    setenv("SWF_TASK_PARTITIONS", "12", 1);
    setenv("SWF_TASK_TOPIC_PREFIX", "t.", 1);
    cr_expect_eq(swf_kafka_fetch_wait_ms(), 0);
    cr_expect_eq(swf_kafka_session_timeout_ms(), 6000);
    cr_expect_eq(swf_kafka_send_timeout_ms(), 2000);
    swf_kafka_names_env(&names);
    cr_expect_eq(names.task_partitions, 12);
    char topic[64];
    swf_kafka_task_topic(&names, "orders", topic, sizeof(topic));
    cr_expect_str_eq(topic, "t.orders");
}
