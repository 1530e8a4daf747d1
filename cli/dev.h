/*
 * dev.h - the whole distributed system in one process, for `swf dev`,
 * `swf run --dev`, the integration tests and the benchmarks.
 *
 * swf_dev_start() starts a throwaway PostgreSQL cluster (history/cluster.h),
 * librdkafka's mock Kafka cluster (real Kafka protocol on loopback ports),
 * the history service and `deciders` decider daemons on threads of their
 * own. Or, given a database and brokers, only the services.
 *
 * The mock worker answers activity tasks from a mocks document with the
 * code `swf run --local` answers them with (decider/mocks.h).
 *
 * Ownership: handles are freed by their _stop function; strings returned
 * live as long as the handle. Thread-safety: start and stop from one thread.
 */
#ifndef SWF_CLI_DEV_H
#define SWF_CLI_DEV_H

#include <json-c/json.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h> /* after rdkafka.h */
#include <stdio.h>

#include "decider/daemon.h"
#include "history/cluster.h"
#include "history/service.h"
#include "protocol/error.h"

typedef struct swf_dev_options {
    const char *conninfo; /* NULL: start a throwaway cluster */
    const char *brokers;  /* NULL: start a mock Kafka cluster */
    int deciders;         /* decider threads: 0 or more (default: the caller says) */
    bool history_service; /* run swf-history on a thread */
    double time_scale;    /* timers and execution timeouts: 1 = real time */
    bool time_skip;       /* virtual time that skips idle periods (history/service.h) */
    FILE *log;            /* the daemons' log, NULL: quiet */
    bool split_groups;    /* each decider in a consumer group of its own, so all of them
                             see every message and race (tests of the optimistic check) */
    /* Given to every decider (decider/daemon.h); NULL: nothing. */
    void (*on_received)(void *arg, const char *execution_id, size_t len);
    void (*on_published)(void *arg, const char *execution_id);
    void *hook_arg;
} swf_dev_options_t;

typedef struct swf_dev swf_dev_t;

swf_error_t *swf_dev_start(const swf_dev_options_t *opt, swf_dev_t **out);
/* The daemons' conninfo: on a cluster of its own, the runtime role
 * swf_runtime's (dev.c); the owner's, which migrated, beside it. */
const char *swf_dev_conninfo(const swf_dev_t *dev);
const char *swf_dev_owner_conninfo(const swf_dev_t *dev);
const char *swf_dev_brokers(const swf_dev_t *dev);
/* The throwaway PostgreSQL cluster and the mock Kafka cluster, NULL when
 * the harness was given a database or brokers. Tests of failures take them
 * down and bring them back (swf_history_cluster_down/up,
 * rd_kafka_mock_broker_set_down/up; the mock cluster has one broker, id 1). */
swf_history_cluster_t *swf_dev_pg_cluster(swf_dev_t *dev);
rd_kafka_mock_cluster_t *swf_dev_mock_cluster(swf_dev_t *dev);
/* The i-th decider (for its statistics), or NULL. */
swf_decider_t *swf_dev_decider(swf_dev_t *dev, int i);
/* Starts one more decider thread; returns its index. */
swf_error_t *swf_dev_decider_add(swf_dev_t *dev, int *index);
/* Stops the i-th decider: its thread ends, it leaves the group and is
 * freed (swf_dev_decider then gives NULL for it). */
void swf_dev_decider_remove(swf_dev_t *dev, int i);
/* Stops every thread, removes the clusters; NULL does nothing. */
void swf_dev_stop(swf_dev_t *dev);

typedef struct swf_dev_worker swf_dev_worker_t;

/* Starts a worker thread consuming the task topics of the given task lists,
 * answering every task on them from mocks (borrowed, may be NULL: echo).
 * With execution_id set (swf run --dev, whose task lists carry the run's
 * own prefix, so that concurrent runs never answer each other's tasks with
 * the wrong mocks) it reads all their partitions without a consumer group,
 * and answers the run's tasks and its nested executions', whatever their
 * names; otherwise it consumes in group swf-dev-worker. */
swf_error_t *swf_dev_worker_start(const char *brokers, const char *const *task_lists, size_t n,
                                  json_object *mocks, const char *execution_id,
                                  swf_dev_worker_t **out);
/* Tasks answered so far. */
unsigned long swf_dev_worker_answered(swf_dev_worker_t *w);
void swf_dev_worker_stop(swf_dev_worker_t *w);

/* The task lists of a definition's Task states (recursively), as a new JSON
 * array of strings without duplicates. */
json_object *swf_dev_task_lists(json_object *definition);

/* Reads and validates the definition of `swf run` (--local and --dev
 * alike). Returns SWF_EXIT_OK with *def set (the caller owns it) when it is
 * valid; otherwise *def is NULL, the verdict has been printed as the
 * conformance harness reads it ({"status":"INVALID","errors":[...]} on
 * stdout, each problem on stderr) and the exit status is returned
 * (SWF_EXIT_ERROR for a file that cannot be read, which is no verdict). */
int swf_cli_run_definition(const char *def_path, json_object **def);

/* `swf run --dev ...`, called by swf_cli_run with its options: the
 * definition's path, --input's text (cli/args.h) and --mocks' path, the
 * last two may be NULL. */
int swf_cli_run_dev(const char *def_path, const char *input_arg, const char *mocks_path,
                    const char *events_path);

#endif
