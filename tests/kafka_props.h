/*
 * kafka_props.h - a librdkafka properties file for the tests that run
 * swf's Kafka clients under a setting of SWF_KAFKA_CONFIG_FILE.
 */
#ifndef SWF_TESTS_KAFKA_PROPS_H
#define SWF_TESTS_KAFKA_PROPS_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes `props` to a new file in /tmp, whose name goes into path (at least
 * 32 bytes), and points SWF_KAFKA_CONFIG_FILE at it; unlink it when done. */
static inline void kafka_props_use(const char *props, char *path)
{
    strcpy(path, "/tmp/swf-test-propsXXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, props, strlen(props)), (ssize_t)strlen(props));
    close(fd);
    setenv("SWF_KAFKA_CONFIG_FILE", path, 1);
}

#endif
