/*
 * dev.c - `swf dev` and `swf run --dev`: the distributed system in one
 * process.
 *
 * A newcomer should see the real thing - the same decider daemon, history
 * service, PostgreSQL store and Kafka protocol as production - without
 * installing a Kafka or configuring a database. So this file starts a
 * throwaway PostgreSQL cluster and librdkafka's mock cluster (a real Kafka
 * wire protocol on loopback ports) and runs the daemons on threads. The
 * same harness serves the integration tests and the benchmarks, which is
 * why it is a small library (dev.h) and not only a command.
 *
 * Time in `swf run --dev` is virtual like `--local`'s, with real work in
 * between: the history service skips the time an execution spends idle
 * (waiting for a timer or its timeout only, history/service.h), so a Wait
 * of a day takes no time and timers race timeouts as they would, and the
 * deciders record the virtual times (decider/decision.h). With
 * SWF_DEV_TIME_SCALE set, it runs timers and execution timeouts that much
 * faster instead (0.001: an hour's Wait takes 3.6 s). `swf dev` behaves
 * like production unless SWF_DEV_TIME_SKIP=1 or SWF_DEV_TIME_SCALE is set.
 * Activity timeouts are never scaled: they measure real work.
 *
 * Roles, as in production (README, "Roles"): on a cluster of its own the
 * harness migrates as the cluster's owner (postgres), creates the runtime
 * role swf_runtime, grants it what `swf db migrate --grant` grants, and runs
 * the daemons and hands out SWF_DATABASE_URL as that role, which cannot
 * rewrite events. swf_dev_owner_conninfo() is the owner's, for migrations
 * and `swf admin rebuild-projections`.
 */
#include "cli/dev.h"

#include <errno.h>
#include <librdkafka/rdkafka_mock.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "cli/cli.h"
#include "cli/startup.h"
#include "decider/asl/exec.h"
#include "decider/asl/resource.h"
#include "decider/asl/validate.h"
#include "decider/local.h"
#include "decider/mocks.h"
#include "decider/sw/sw.h"
#include "decider/sw_events.h"
#include "history/cluster.h"
#include "history/pg.h"
#include "kafka/kafka.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/message.h"
#include "protocol/task_list.h"
#include "protocol/time.h"
#include "protocol/token.h"

#define DEV_DECIDERS_MAX 16
/* The state machine of `swf run --dev`'s executions, and their ids' and
 * task lists' prefix: a run on a shared `swf dev` neither adds a version to
 * a state machine of the user's nor looks like one of the user's
 * executions. */
#define SWF_DEV_RUN_NAME "swf-run-dev"
/* The role the daemons of a cluster of its own run as. */
#define SWF_DEV_RUNTIME_ROLE "swf_runtime"

typedef struct dev_decider {
    swf_decider_t *d;
    pthread_t thread;
    bool running;
} dev_decider_t;

struct swf_dev {
    swf_dev_options_t opt;
    swf_history_cluster_t *cluster;
    rd_kafka_t *mock_rk;
    rd_kafka_mock_cluster_t *mock;
    char *conninfo, *owner_conninfo, *brokers;
    swf_kafka_names_t names;
    rd_kafka_t *producer;
    swf_kafka_poster_t *poster;
    swf_history_service_t *svc;
    pthread_t svc_thread;
    bool svc_running;
    dev_decider_t deciders[DEV_DECIDERS_MAX];
    int ndeciders;
    /* The swf.events consumer (decider/sw_events.h): one for the
     * environment, as one per swf-decider would be in its group. */
    swf_sw_events_t *events;
    pthread_t events_thread;
    bool events_running;
};

static void *events_main(void *arg)
{
    swf_sw_events_run(arg);
    return NULL;
}

static void *decider_main(void *arg)
{
    swf_decider_run(arg);
    return NULL;
}

static void *service_main(void *arg)
{
    swf_history_service_run(arg);
    return NULL;
}

const char *swf_dev_conninfo(const swf_dev_t *dev)
{
    return dev->conninfo;
}

const char *swf_dev_owner_conninfo(const swf_dev_t *dev)
{
    return dev->owner_conninfo;
}

const char *swf_dev_brokers(const swf_dev_t *dev)
{
    return dev->brokers;
}

swf_history_cluster_t *swf_dev_pg_cluster(swf_dev_t *dev)
{
    return dev->cluster;
}

rd_kafka_mock_cluster_t *swf_dev_mock_cluster(swf_dev_t *dev)
{
    return dev->mock;
}

swf_decider_t *swf_dev_decider(swf_dev_t *dev, int i)
{
    return i >= 0 && i < dev->ndeciders ? dev->deciders[i].d : NULL;
}

swf_error_t *swf_dev_decider_add(swf_dev_t *dev, int *index)
{
    if (dev->ndeciders >= DEV_DECIDERS_MAX)
        return swf_error_new(SWF_E_LIMIT, NULL, "at most %d deciders", DEV_DECIDERS_MAX);
    swf_decider_config_t cfg;
    swf_decider_config_env(&cfg);
    cfg.conninfo = dev->conninfo;
    cfg.kafka = dev->names;
    cfg.secret = swf_token_secret_env();
    cfg.log = dev->opt.log;
    cfg.on_received = dev->opt.on_received;
    cfg.on_published = dev->opt.on_published;
    cfg.hook_arg = dev->opt.hook_arg;
    /* One clock for the deciders and swf-history (history/service.h). */
    cfg.time_skip = cfg.time_skip || dev->opt.time_skip;
    char group[64];
    if (dev->opt.split_groups) {
        snprintf(group, sizeof(group), "swf-deciders-%d", dev->ndeciders);
        cfg.group = group;
    }
    dev_decider_t *dd = &dev->deciders[dev->ndeciders];
    swf_error_t *err = swf_decider_new(&cfg, &dd->d);
    if (err != NULL)
        return err;
    if (pthread_create(&dd->thread, NULL, decider_main, dd->d) != 0) {
        swf_decider_free(dd->d);
        return swf_error_new(SWF_E_INTERNAL, NULL, "cannot start a thread");
    }
    dd->running = true;
    if (index != NULL)
        *index = dev->ndeciders;
    dev->ndeciders++;
    return NULL;
}

void swf_dev_decider_remove(swf_dev_t *dev, int i)
{
    if (i < 0 || i >= dev->ndeciders || !dev->deciders[i].running)
        return;
    swf_decider_stop(dev->deciders[i].d);
    pthread_join(dev->deciders[i].thread, NULL);
    dev->deciders[i].running = false;
    swf_decider_free(dev->deciders[i].d); /* its consumer leaves the group */
    dev->deciders[i].d = NULL;
}

/* Migrates as the owner, once, before the daemons race to do it; on a
 * cluster of its own, then creates the runtime role, grants it the
 * runtime's privileges and makes dev->conninfo its. */
static swf_error_t *dev_migrate(swf_dev_t *dev)
{
    swf_history_store_t *store = NULL;
    swf_error_t *err = swf_history_pg_new(dev->owner_conninfo, &store);
    if (err == NULL && dev->cluster != NULL) {
        PGconn *c = PQconnectdb(dev->owner_conninfo);
        PGresult *r = PQexec(c, "CREATE ROLE " SWF_DEV_RUNTIME_ROLE " LOGIN");
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            err = swf_error_new(SWF_E_DB, NULL, "creating the role %s: %s", SWF_DEV_RUNTIME_ROLE,
                                PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        if (err == NULL)
            err = swf_history_pg_grant(store, SWF_DEV_RUNTIME_ROLE);
        if (err == NULL) {
            /* libpq takes the last of two values of a keyword. */
            size_t n = strlen(dev->owner_conninfo) + sizeof(" user=" SWF_DEV_RUNTIME_ROLE);
            free(dev->conninfo);
            dev->conninfo = malloc(n);
            if (dev->conninfo == NULL)
                abort();
            snprintf(dev->conninfo, n, "%s user=" SWF_DEV_RUNTIME_ROLE, dev->owner_conninfo);
        }
    }
    swf_history_store_free(store);
    return err;
}

swf_error_t *swf_dev_start(const swf_dev_options_t *opt, swf_dev_t **out)
{
    *out = NULL;
    swf_dev_t *dev = calloc(1, sizeof(*dev));
    if (dev == NULL)
        abort();
    dev->opt = *opt;
    swf_error_t *err = NULL;
    if (opt->conninfo == NULL) {
        err = swf_history_cluster_start(&dev->cluster);
        if (err != NULL)
            goto fail;
        dev->conninfo = swf_strdup(swf_history_cluster_conninfo(dev->cluster));
    } else {
        dev->conninfo = swf_strdup(opt->conninfo);
    }
    dev->owner_conninfo = swf_strdup(dev->conninfo);
    swf_kafka_names_env(&dev->names);
    if (opt->brokers == NULL) {
        char errstr[256];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
        /* The mock brokers' sockets take this handle's setting: with Nagle
         * on, an answer written while the previous one is unacknowledged
         * waits for the client's delayed ACK (40 ms per publish). */
        rd_kafka_conf_set(conf, "socket.nagle.disable", "true", errstr, sizeof(errstr));
        dev->mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (dev->mock_rk == NULL) {
            rd_kafka_conf_destroy(conf);
            err = swf_error_new(SWF_E_KAFKA, NULL, "mock kafka: %s", errstr);
            goto fail;
        }
        dev->mock = rd_kafka_mock_cluster_new(dev->mock_rk, 1);
        if (dev->mock == NULL) {
            err = swf_error_new(SWF_E_KAFKA, NULL, "cannot start the mock Kafka cluster");
            goto fail;
        }
        dev->brokers = swf_strdup(rd_kafka_mock_cluster_bootstraps(dev->mock));
        rd_kafka_mock_topic_create(dev->mock, dev->names.inbox, 4, 1);
        rd_kafka_mock_topic_create(dev->mock, dev->names.dlq, 1, 1);
        rd_kafka_mock_topic_create(dev->mock, swf_sw_events_topic_env(), 4, 1);
    } else {
        dev->brokers = swf_strdup(opt->brokers);
    }
    dev->names.brokers = dev->brokers;
    err = dev_migrate(dev);
    if (err == NULL)
        err = swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = dev->brokers},
                                     &dev->producer);
    if (err != NULL)
        goto fail;
    dev->poster = swf_kafka_poster_new(dev->producer, dev->names.task_partitions);
    if (opt->history_service) {
        swf_history_service_config_t sc;
        swf_history_service_config_env(&sc);
        sc.conninfo = dev->conninfo;
        sc.send = swf_kafka_poster_send;
        sc.send_ctx = dev->poster;
        sc.inbox_topic = dev->names.inbox;
        sc.task_prefix = dev->names.task_prefix;
        sc.time_scale = opt->time_scale > 0 ? opt->time_scale : 1;
        sc.time_skip = sc.time_skip || opt->time_skip;
        sc.tick_ms = sc.time_scale < 1 || sc.time_skip ? 20 : 200;
        sc.log = opt->log;
        err = swf_history_service_new(&sc, &dev->svc);
        if (err != NULL)
            goto fail;
        if (pthread_create(&dev->svc_thread, NULL, service_main, dev->svc) != 0) {
            err = swf_error_new(SWF_E_INTERNAL, NULL, "cannot start a thread");
            goto fail;
        }
        dev->svc_running = true;
    }
    for (int i = 0; i < opt->deciders && err == NULL; i++)
        err = swf_dev_decider_add(dev, NULL);
    if (err == NULL && opt->deciders > 0) {
        err = swf_sw_events_new(&(swf_sw_events_config_t){.conninfo = dev->conninfo,
                                                          .kafka = dev->names,
                                                          .secret = swf_token_secret_env(),
                                                          .log = opt->log},
                                &dev->events);
        if (err == NULL && pthread_create(&dev->events_thread, NULL, events_main, dev->events) != 0)
            err = swf_error_new(SWF_E_INTERNAL, NULL, "cannot start a thread");
        dev->events_running = err == NULL;
    }
    if (err != NULL)
        goto fail;
    *out = dev;
    return NULL;
fail:
    swf_dev_stop(dev);
    return err;
}

void swf_dev_stop(swf_dev_t *dev)
{
    if (dev == NULL)
        return;
    for (int i = 0; i < dev->ndeciders; i++) {
        if (dev->deciders[i].d != NULL)
            swf_decider_stop(dev->deciders[i].d);
    }
    if (dev->events_running) {
        swf_sw_events_stop(dev->events);
        pthread_join(dev->events_thread, NULL);
    }
    swf_sw_events_free(dev->events);
    if (dev->svc_running) {
        swf_history_service_stop(dev->svc);
        pthread_join(dev->svc_thread, NULL);
    }
    for (int i = 0; i < dev->ndeciders; i++) {
        if (dev->deciders[i].running)
            pthread_join(dev->deciders[i].thread, NULL);
        swf_decider_free(dev->deciders[i].d);
    }
    swf_history_service_free(dev->svc);
    swf_kafka_poster_free(dev->poster);
    swf_kafka_producer_free(dev->producer);
    if (dev->mock != NULL)
        rd_kafka_mock_cluster_destroy(dev->mock);
    if (dev->mock_rk != NULL)
        rd_kafka_destroy(dev->mock_rk);
    swf_history_cluster_stop(dev->cluster);
    free(dev->conninfo);
    free(dev->owner_conninfo);
    free(dev->brokers);
    free(dev);
}

/* ---- the mock worker ------------------------------------------------------ */

struct swf_dev_worker {
    rd_kafka_t *consumer, *producer;
    swf_kafka_names_t names;
    swf_decider_mocks_t *mocks;
    /* The run's worker (swf run --dev): its partitions assigned, not
     * consumed in a group, so nothing is committed. It answers every task
     * on its topics, which are the run's own (their prefix is the run's
     * id): the run's and those of its nested executions, which inherit the
     * prefix (decider/nested.h) whatever their name. */
    bool assigned;
    pthread_t thread;
    volatile sig_atomic_t stop;
    unsigned long answered;
    bool by_function; /* Serverless Workflow: mocks per function (SPEC 14) */
};

/* The answer to one task, as an inbox message (decider/mocks.h). */
static json_object *worker_answer(swf_dev_worker_t *w, const swf_msg_t *task)
{
    swf_decider_mock_answer_t ans;
    swf_error_t *err = swf_decider_mocks_answer(
        w->mocks, w->by_function ? task->activity_type : task->state, task->input, &ans);
    json_object *msg;
    if (err != NULL) /* the mocks were checked: not reached */
        msg = swf_msg_activity_failed_new(task->task_token, "States.Runtime",
                                          swf_error_message(err), "swf-dev-worker");
    else if (ans.failed)
        msg = swf_msg_activity_failed_new(task->task_token, ans.error, ans.cause, "swf-dev-worker");
    else
        msg = swf_msg_activity_completed_new(task->task_token, ans.result, "swf-dev-worker");
    swf_error_free(err);
    return msg;
}

static void *worker_main(void *arg)
{
    swf_dev_worker_t *w = arg;
    enum { BATCH = 256 };
    json_object *docs[BATCH];
    swf_kafka_out_t outs[BATCH];
    char *keys[BATCH];
    rd_kafka_message_t *km[BATCH];
    while (!w->stop) {
        size_t n = 0;
        swf_error_t *perr = NULL;
        size_t nkm = swf_kafka_poll(w->consumer, 50, 0, km, BATCH, &perr);
        swf_error_free(perr); /* the consumer reconnects by itself */
        for (size_t k = 0; k < nkm; k++) {
            swf_msg_t task;
            swf_error_t *err = swf_msg_parse(km[k]->payload, km[k]->len, NULL, &task);
            if (err == NULL && task.type == SWF_MSG_ACTIVITY_TASK) {
                docs[n] = worker_answer(w, &task);
                keys[n] = swf_strdup(task.execution_id);
                const char *s = swf_json_str(docs[n]);
                outs[n] = (swf_kafka_out_t){w->names.inbox, keys[n], s, strlen(s), 0};
                n++;
            }
            swf_error_free(err);
            swf_msg_clear(&task);
        }
        if (n == 0) {
            for (size_t k = 0; k < nkm; k++)
                rd_kafka_message_destroy(km[k]);
            continue;
        }
        /* Answers Kafka refused (the broker was away longer than a send
         * waits) are sent again, and nothing is committed until all went
         * through: the decider ignores a duplicate answer, but a lost one
         * would leave its execution waiting for ever. */
        size_t left = n;
        for (;;) {
            swf_error_t *err = swf_kafka_send(w->producer, outs, left);
            swf_error_free(err);
            size_t kept = 0;
            for (size_t i = 0; i < left; i++) {
                if (outs[i].result != RD_KAFKA_RESP_ERR_NO_ERROR)
                    outs[kept++] = outs[i];
            }
            left = kept;
            if (left == 0 || w->stop)
                break;
            usleep(100000);
        }
        if (!w->assigned && left == 0)
            swf_error_free(swf_kafka_commit(w->consumer, km, nkm, true));
        for (size_t k = 0; k < nkm; k++)
            rd_kafka_message_destroy(km[k]);
        __atomic_add_fetch(&w->answered, n - left, __ATOMIC_RELAXED);
        for (size_t i = 0; i < n; i++) {
            json_object_put(docs[i]);
            free(keys[i]);
        }
    }
    return NULL;
}

/* Assigns every partition of the topics from their beginning, without a
 * consumer group: one execution's worker needs no coordination, and a group
 * join costs seconds on the mock cluster. */
static swf_error_t *assign_all(rd_kafka_t *rk, char **topics, size_t n)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(16);
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n && err == NULL; i++) {
        rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topics[i], NULL);
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t code = rd_kafka_metadata(rk, 0, t, &md, 10000);
        if (code == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1) {
            for (int p = 0; p < md->topics[0].partition_cnt; p++)
                rd_kafka_topic_partition_list_add(l, topics[i], p)->offset =
                    RD_KAFKA_OFFSET_BEGINNING;
        } else {
            err = swf_kafka_error(code ? code : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC, "metadata");
        }
        if (md != NULL)
            rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(t);
    }
    if (err == NULL) {
        rd_kafka_resp_err_t code = rd_kafka_assign(rk, l);
        if (code)
            err = swf_kafka_error(code, "assign");
    }
    rd_kafka_topic_partition_list_destroy(l);
    return err;
}

/* Everything but the consumer. */
static void dev_worker_free_rest(void *arg)
{
    swf_dev_worker_t *w = arg;
    swf_kafka_producer_free(w->producer);
    swf_decider_mocks_free(w->mocks);
    free(w);
}

/* Frees a worker whose thread is not running (or never ran). */
static void dev_worker_free(swf_dev_worker_t *w)
{
    if (w->consumer != NULL &&
        !swf_kafka_consumer_close(w->consumer, SWF_KAFKA_CLOSE_MS, NULL, dev_worker_free_rest, w)) {
        fprintf(stderr,
                "swf dev: the worker's consumer did not leave its group within %d ms (Kafka did "
                "not confirm); abandoned\n",
                SWF_KAFKA_CLOSE_MS);
        return;
    }
    dev_worker_free_rest(w);
}

swf_error_t *swf_dev_worker_start(const char *brokers, const char *const *task_lists, size_t n,
                                  json_object *mocks, const char *execution_id,
                                  swf_dev_worker_t **out)
{
    *out = NULL;
    swf_dev_worker_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        abort();
    swf_kafka_names_env(&w->names);
    w->names.brokers = brokers;
    w->mocks = swf_decider_mocks_new(mocks);
    w->assigned = execution_id != NULL;
    char group[128];
    if (execution_id != NULL)
        snprintf(group, sizeof(group), "swf-dev-worker.%s", execution_id);
    else
        snprintf(group, sizeof(group), "swf-dev-worker");
    char **topics = calloc(n ? n : 1, sizeof(*topics));
    swf_error_t *err =
        swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, &w->producer);
    for (size_t i = 0; i < n && err == NULL; i++) {
        size_t len = strlen(w->names.task_prefix) + strlen(task_lists[i]) + 1;
        topics[i] = malloc(len);
        swf_kafka_task_topic(&w->names, task_lists[i], topics[i], len);
        err = swf_kafka_topic_ensure(w->producer, topics[i], w->names.task_partitions, 10000);
    }
    if (err == NULL)
        err = swf_kafka_consumer_new(
            &(swf_kafka_consumer_config_t){.brokers = brokers, .group = group}, &w->consumer);
    if (err == NULL && n > 0 && execution_id == NULL)
        err = swf_kafka_subscribe(w->consumer, (const char *const *)topics, n);
    if (err == NULL && n > 0 && execution_id != NULL)
        err = assign_all(w->consumer, topics, n);
    for (size_t i = 0; i < n; i++)
        free(topics[i]);
    free(topics);
    if (err == NULL && pthread_create(&w->thread, NULL, worker_main, w) != 0)
        err = swf_error_new(SWF_E_INTERNAL, NULL, "cannot start a thread");
    if (err != NULL) {
        dev_worker_free(w);
        return err;
    }
    *out = w;
    return NULL;
}

unsigned long swf_dev_worker_answered(swf_dev_worker_t *w)
{
    return __atomic_load_n(&w->answered, __ATOMIC_RELAXED);
}

void swf_dev_worker_stop(swf_dev_worker_t *w)
{
    if (w == NULL)
        return;
    w->stop = 1;
    pthread_join(w->thread, NULL);
    dev_worker_free(w);
}

json_object *swf_dev_task_lists(json_object *definition)
{
    /* The lists the decider will schedule on (decider/asl/resource.h), under
     * the map swf-history records when it starts the execution. A map that
     * does not read fails that start, with the reason. */
    json_object *map = NULL, *out = json_object_new_array();
    swf_error_free(swf_task_list_map_from_env(&map));
    /* A Serverless Workflow document's Tasks are those of its translation. */
    json_object *machine = swf_sw_is_document(definition) ? swf_sw_translate(definition) : NULL;
    json_object *tasks = swf_asl_task_lists(machine != NULL ? machine : definition, map);
    json_object_put(machine);
    for (size_t i = 0; i < json_object_array_length(tasks); i++) {
        const char *list = swf_json_get_string(json_object_array_get_idx(tasks, i), "taskList");
        bool seen = list == NULL;
        for (size_t j = 0; j < json_object_array_length(out) && !seen; j++)
            seen = strcmp(json_object_get_string(json_object_array_get_idx(out, j)), list) == 0;
        if (!seen)
            json_object_array_add(out, json_object_new_string(list));
    }
    json_object_put(tasks);
    json_object_put(map);
    return out;
}

/* ---- `swf dev` ------------------------------------------------------------ */

static volatile sig_atomic_t dev_signaled;

static void on_signal(int sig)
{
    (void)sig;
    dev_signaled = 1;
}

/* export NAME='VALUE', each ' in VALUE written '\'' so that the shell's
 * eval (or `.`) reads VALUE back exactly. */
static void print_export(const char *name, const char *value)
{
    printf("export %s='", name);
    for (const char *p = value; *p != '\0'; p++) {
        if (*p == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*p);
    }
    printf("'\n");
}

/*
 * The session timeout `swf dev` gives the clients of its mock cluster (its
 * own daemons, and through its exports the workers): 5 s where librdkafka's
 * default is 45 s. The mock's consumer groups make any rejoin of a group
 * that has already formed wait the session timeout less a second before
 * the new generation is handed out (rd_kafka_mock_cgrp_rebalance; a real
 * broker ends the wait as soon as every member has rejoined), and the
 * members give up their partitions meanwhile: a second worker joining mid
 * run stopped every worker of its task list for 44 s. Two workers started
 * at once hit it too, one start in three or four: the mock answers a
 * follower's SyncGroup that arrives after the leader's with
 * INVALID_REQUEST, and the follower's rejoin is such a rejoin
 * (bench/README.md, "A whole run stalled for 44 s"). With 5 s that wait is
 * 4 s. Not shorter: a group's first join waits 3 s in the mock, and a
 * member whose session ends meanwhile is dropped with its JoinGroup never
 * answered (the client waits 5 minutes for it; seen with 1.5 s); 5 s
 * leaves 2 s for the mock's thread to be late.
 */
#define SWF_DEV_SESSION_TIMEOUT_MS "5000"

/* The development credentials of `swf dev`'s swf-api: like the development
 * token secret, for a machine of one's own only. */
#define SWF_DEV_API_KEY "AKIASWFDEVELOPMENT01"
#define SWF_DEV_API_SECRET "swf-development-secret-access-key-do-not-use"

/* Writes the credentials file (path into creds, removed by the caller)
 * and starts swf-api on the dev environment. */
static swf_error_t *dev_api_start(swf_dev_t *dev, int port, char creds[64], swf_api_t **out)
{
    *out = NULL;
    snprintf(creds, 64, "%s", "/tmp/swf-dev-api-XXXXXX");
    int fd = mkstemp(creds);
    if (fd < 0)
        return swf_error_new(SWF_E_IO, NULL, "%s: %s", creds, strerror(errno));
    char line[160];
    int n = snprintf(line, sizeof(line), "%s %s *\n", SWF_DEV_API_KEY, SWF_DEV_API_SECRET);
    bool ok = write(fd, line, (size_t)n) == n;
    close(fd);
    if (!ok) {
        unlink(creds);
        return swf_error_new(SWF_E_IO, NULL, "%s: cannot write", creds);
    }
    swf_api_config_t cfg = {.port = port,
                            .conninfo = swf_dev_conninfo(dev),
                            .brokers = swf_dev_brokers(dev),
                            .credentials = creds,
                            .log = getenv("SWF_DEV_API_LOG") != NULL ? stderr : NULL};
    swf_error_t *err = swf_api_start(&cfg, out);
    if (err != NULL)
        unlink(creds);
    return err;
}

static const swf_cli_cmd_t dev_cmd = {
    "swf dev", NULL,
    "Start PostgreSQL (a throwaway cluster), Kafka (librdkafka's mock cluster), swf-history and "
    "deciders in one process, print the shell exports that point swf and workers at them, and "
    "run until Ctrl-C, which stops and removes everything.",
    (const swf_cli_opt_t[]){
        {"--deciders", "N", 0, "how many deciders, 0 to 16 (default 1)", "swf dev --deciders 2 &"},
        {"--api-port", "PORT", 0,
         "the port of the Step Functions API (swf-api), 0 to 65535 (default 0: any free port)",
         "swf dev --api-port 8083 &"},
        {"--kafka", "HOST:PORT,...", 0,
         "a Kafka cluster to use instead of the mock one (it must create topics on first use, "
         "auto.create.topics.enable; its consumer groups keep SWF_KAFKA_SESSION_TIMEOUT_MS or "
         "librdkafka's 45 s)",
         "swf dev --kafka localhost:9092 &"},
        SWF_CLI_OPTS_END},
    "Environment: SWF_DEV_TIME_SKIP=1 skips the time timers wait; SWF_DEV_TIME_SCALE runs\n"
    "timers that much faster; SWF_PG_BINDIR names PostgreSQL's programs (see README.md);\n"
    "SWF_DEV_API_LOG=1 logs swf-api's requests to stderr.\n"};

int swf_cli_dev(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&dev_cmd, argc, argv, &a))
        return a.status;
    int64_t n = 1;
    if (swf_cli_args_has(&a, "--deciders") &&
        !swf_cli_args_int(&a, "--deciders", 0, DEV_DECIDERS_MAX, &n))
        return a.status;
    int deciders = (int)n;
    int64_t api_port = 0;
    if (swf_cli_args_has(&a, "--api-port") &&
        !swf_cli_args_int(&a, "--api-port", 0, 65535, &api_port))
        return a.status;
    const char *kafka = swf_cli_args_get(&a, "--kafka");
    if (kafka != NULL && kafka[0] == '\0') {
        fprintf(stderr, "swf dev: --kafka: empty broker list\n");
        return SWF_EXIT_USAGE;
    }
    /* Before any client is made: every client of this process reads it. */
    if (kafka == NULL && swf_kafka_session_timeout_ms() == 0)
        setenv("SWF_KAFKA_SESSION_TIMEOUT_MS", SWF_DEV_SESSION_TIMEOUT_MS, 1);
    swf_cli_on_stop_signals(on_signal);
    const char *scale = getenv("SWF_DEV_TIME_SCALE");
    swf_dev_options_t opt = {.deciders = deciders,
                             .history_service = true,
                             .time_scale = scale ? atof(scale) : 1,
                             .brokers = kafka,
                             .log = stderr};
    swf_dev_t *dev;
    swf_error_t *err = swf_dev_start(&opt, &dev);
    if (err != NULL) {
        fprintf(stderr, "swf dev: %s\n", swf_error_message(err));
        if (swf_error_cause(err))
            fprintf(stderr, "%s\n", swf_error_cause(err));
        swf_error_free(err);
        return SWF_EXIT_ERROR;
    }
    /* A signal during the start: stop without announcing a system that
     * is about to go (a script sourcing these lines would use it). */
    if (dev_signaled) {
        fprintf(stderr, "swf dev: stopping\n");
        swf_dev_stop(dev);
        return SWF_EXIT_OK;
    }
    char creds[64];
    swf_api_t *api = NULL;
    err = dev_api_start(dev, (int)api_port, creds, &api);
    if (err != NULL) {
        fprintf(stderr, "swf dev: swf-api: %s\n", swf_error_message(err));
        swf_error_free(err);
        swf_dev_stop(dev);
        return SWF_EXIT_ERROR;
    }
    /* The conninfo has spaces (and may hold quotes): quote it for the shell. */
    print_export("SWF_DATABASE_URL", swf_dev_conninfo(dev));
    print_export("SWF_KAFKA_BROKERS", swf_dev_brokers(dev));
    int session_ms = swf_kafka_session_timeout_ms();
    if (session_ms > 0) {
        char session[16];
        snprintf(session, sizeof(session), "%d", session_ms);
        print_export("SWF_KAFKA_SESSION_TIMEOUT_MS", session);
    }
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", swf_api_port(api));
    print_export("SWF_API_URL", url);
    print_export("AWS_ENDPOINT_URL_SFN", url);
    print_export("AWS_ACCESS_KEY_ID", SWF_DEV_API_KEY);
    print_export("AWS_SECRET_ACCESS_KEY", SWF_DEV_API_SECRET);
    print_export("AWS_DEFAULT_REGION", SWF_API_DEFAULT_REGION);
    /* StartSyncExecution goes to "sync-" + the host otherwise (api/README.md). */
    print_export("AWS_DISABLE_HOST_PREFIX_INJECTION", "true");
    fflush(stdout);
    fprintf(stderr,
            "swf dev: PostgreSQL, Kafka (%s), swf-history, %d decider(s) and the Step "
            "Functions API (%s) are up; task tokens use the development secret unless "
            "SWF_TOKEN_SECRET is set. SWF_DATABASE_URL is the runtime role " SWF_DEV_RUNTIME_ROLE
            ", which cannot rewrite events; the owner, for swf db migrate: %s. "
            "Ctrl-C stops and removes everything.\n",
            kafka != NULL ? kafka : "mock", deciders, url, swf_dev_owner_conninfo(dev));
    while (!dev_signaled)
        usleep(100000);
    fprintf(stderr, "swf dev: stopping\n");
    swf_api_stop(api);
    unlink(creds);
    swf_dev_stop(dev);
    return SWF_EXIT_OK;
}

/* ---- `swf run --dev` ------------------------------------------------------ */

/* The result line of --local, from the history replayed. */
static json_object *result_line(swf_history_store_t *store, const char *id, swf_error_t **err)
{
    swf_event_list_t events = {0};
    *err = swf_history_load(store, id, 0, 0, &events);
    swf_asl_exec_t *exec = swf_asl_exec_new();
    swf_asl_exec_set_trusted(exec, true);
    swf_asl_exec_set_token_secret(exec, swf_token_secret_env());
    for (size_t i = 0; *err == NULL && i < events.count; i++)
        *err = swf_asl_exec_apply(exec, &events.items[i]);
    json_object *o = NULL;
    if (*err == NULL) {
        o = json_object_new_object();
        swf_asl_status_t st = swf_asl_exec_status(exec);
        swf_json_add(o, "status", json_object_new_string(swf_asl_status_name(st)));
        if (st == SWF_ASL_SUCCEEDED) {
            swf_json_add(o, "output", swf_json_ref(swf_asl_exec_output(exec)));
        } else {
            const char *e = swf_asl_exec_error(exec), *c = swf_asl_exec_cause(exec);
            swf_json_add(o, "error", json_object_new_string(e ? e : ""));
            swf_json_add(o, "cause", json_object_new_string(c ? c : ""));
        }
    }
    swf_asl_exec_free(exec);
    swf_event_list_free(&events);
    return o;
}

int swf_cli_run_dev(const char *def_path, const char *input_arg, const char *mocks_path,
                    const char *events_path)
{
    int rc = SWF_EXIT_ERROR;
    json_object *def = NULL, *input = NULL, *mocks = NULL, *lists = NULL, *line = NULL;
    json_object *events = NULL, *children = NULL;
    swf_dev_t *dev = NULL;
    swf_dev_worker_t *worker = NULL;
    swf_history_store_t *store = NULL;
    rd_kafka_t *producer = NULL;
    bool reused = false; /* of a running `swf dev`, named by the environment */
    char id[64];
    swf_error_t *err = NULL;
    rc = swf_cli_run_definition(def_path, &def);
    if (def == NULL)
        return rc;
    rc = SWF_EXIT_ERROR;
    if (input_arg != NULL)
        err = swf_cli_json_arg("--input", input_arg, SWF_LIMIT_PAYLOAD_BYTES, &input);
    else
        input = json_object_new_object();
    if (err == NULL && mocks_path != NULL) {
        err = swf_json_read_file(mocks_path, SWF_LIMIT_JSON_BYTES, &mocks);
        if (err == NULL) {
            err = swf_decider_mocks_check(mocks);
            if (err != NULL)
                swf_error_prefix(err, "%s", mocks_path);
        }
    }
    /* Serverless Workflow: the events the run delivers (SPEC 14), recorded
     * in WorkflowExecutionStarted as in swf run --local (decider/local.c). */
    if (err == NULL && swf_sw_is_document(def)) {
        if (events_path != NULL) {
            err = swf_json_read_file(events_path, SWF_LIMIT_JSON_BYTES, &events);
            if (err == NULL && !json_object_is_type(events, json_type_array))
                err = swf_error_new(SWF_E_INPUT, NULL, "%s: must be a JSON array of CloudEvents",
                                    events_path);
        } else {
            events = json_object_new_array();
        }
    }
    if (err != NULL)
        goto done;
    const char *url = getenv("SWF_DATABASE_URL"), *brokers = getenv("SWF_KAFKA_BROKERS");
    bool reuse = url && url[0] && brokers && brokers[0];
    reused = reuse;
    const char *scale = getenv("SWF_DEV_TIME_SCALE");
    swf_dev_options_t opt = {.conninfo = reuse ? url : NULL,
                             .brokers = reuse ? brokers : NULL,
                             .deciders = reuse ? 0 : 1,
                             .history_service = !reuse,
                             .time_scale = scale ? atof(scale) : 1,
                             .time_skip = scale == NULL,
                             .log = getenv("SWF_DEV_LOG") ? stderr : NULL};
    err = swf_dev_start(&opt, &dev);
    if (err != NULL)
        goto done;
    /* The run's execution id, and the prefix of its task lists: the mock
     * worker serves topics no other worker consumes (a real worker of the
     * same task list on a running `swf dev` would otherwise take the mocked
     * tasks), and the execution records the prefix so that every replay
     * schedules on the same lists. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(id, sizeof(id), "%s-%lld-%ld-%d", SWF_DEV_RUN_NAME, (long long)ts.tv_sec, ts.tv_nsec,
             (int)getpid());
    char prefix[sizeof(id) + 1];
    snprintf(prefix, sizeof(prefix), "%s.", id);
    lists = swf_dev_task_lists(def);
    /* The state machines its nested Tasks name, from the files beside it
     * (decider/local.h, as swf run --local reads them), registered below
     * under their names; the worker serves their tasks too. */
    char dir[4096];
    swf_local_machine_dir(def_path, dir, sizeof(dir));
    children = swf_local_machines_read(dir, def);
    json_object_object_foreach(children, child_name, child_def)
    {
        swf_asl_problems_t problems = {0};
        if (err == NULL && swf_sw_validate_any(child_def, &problems) != 0)
            err = swf_error_new(SWF_E_INPUT, NULL, "%s/%s: %s: %s", dir, child_name,
                                problems.items[0].where, problems.items[0].message);
        swf_asl_problems_free(&problems);
        json_object *more = swf_dev_task_lists(child_def);
        for (size_t i = 0; i < json_object_array_length(more); i++) {
            json_object *l = json_object_array_get_idx(more, i);
            bool seen = false;
            for (size_t j = 0; j < json_object_array_length(lists) && !seen; j++)
                seen = swf_json_equal(json_object_array_get_idx(lists, j), l);
            if (!seen)
                json_object_array_add(lists, swf_json_ref(l));
        }
        json_object_put(more);
    }
    size_t nl = json_object_array_length(lists);
    char **names = calloc(nl ? nl : 1, sizeof(*names));
    for (size_t i = 0; i < nl; i++) {
        const char *list = json_object_get_string(json_object_array_get_idx(lists, i));
        size_t len = strlen(prefix) + strlen(list) + 1;
        names[i] = malloc(len);
        if (names[i] == NULL)
            abort();
        snprintf(names[i], len, "%s%s", prefix, list);
    }
    err = swf_dev_worker_start(swf_dev_brokers(dev), (const char *const *)names, nl, mocks, id,
                               &worker);
    for (size_t i = 0; i < nl; i++)
        free(names[i]);
    free(names);
    if (worker != NULL)
        worker->by_function = swf_sw_is_document(def);
    if (err == NULL)
        err = swf_history_pg_new(swf_dev_conninfo(dev), &store);
    int version = 0;
    json_object_object_foreach(children, cname, cdef)
    {
        if (err == NULL)
            err = swf_history_pg_state_machine_register(store, cname, cdef, NULL);
    }
    if (err == NULL)
        err = swf_history_pg_state_machine_register(store, SWF_DEV_RUN_NAME, def, &version);
    swf_history_start_t start = {.execution_id = id,
                                 .state_machine = SWF_DEV_RUN_NAME,
                                 .version = version,
                                 .input = input,
                                 .time_ms = swf_time_now_ms(),
                                 .task_list_prefix = prefix,
                                 .cloud_events = events};
    if (err == NULL)
        err = swf_history_pg_execution_start(store, &start, NULL);
    if (err == NULL)
        err = swf_kafka_producer_new(
            &(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(dev)}, &producer);
    if (err == NULL) {
        json_object *msg = swf_msg_decide_new(NULL, id);
        const char *s = swf_json_str(msg);
        swf_kafka_names_t names_env;
        swf_kafka_names_env(&names_env);
        swf_kafka_out_t o = {names_env.inbox, id, s, strlen(s), 0};
        err = swf_kafka_send(producer, &o, 1);
        json_object_put(msg);
    }
    /* Wait for the close: bounded by SWF_DEV_RUN_TIMEOUT seconds (600). */
    const char *tmo = getenv("SWF_DEV_RUN_TIMEOUT");
    long limit_ms = (tmo ? atol(tmo) : 600) * 1000L;
    for (long waited = 0; err == NULL; waited += 20) {
        swf_history_execution_t ex;
        err = swf_history_pg_execution_describe(store, id, &ex);
        if (err != NULL)
            break;
        bool open = strcmp(ex.status, "open") == 0;
        swf_history_execution_free(&ex);
        if (!open)
            break;
        if (waited >= limit_ms) {
            err = swf_error_new(SWF_E_IO, NULL, "execution %s did not close in %ld s", id,
                                limit_ms / 1000);
            break;
        }
        usleep(20000);
    }
    if (err == NULL)
        line = result_line(store, id, &err);
    if (err == NULL) {
        printf("%s\n", swf_json_str(line));
        rc = strcmp(swf_json_get_string(line, "status"), "SUCCEEDED") == 0 ? SWF_EXIT_OK
                                                                           : SWF_EXIT_NO;
    }
done:
    if (err != NULL) {
        fprintf(stderr, "swf run --dev: %s\n", swf_error_message(err));
        if (reused && (swf_error_code(err) == SWF_E_DB || swf_error_code(err) == SWF_E_KAFKA))
            fprintf(stderr, "swf run --dev: SWF_DATABASE_URL and SWF_KAFKA_BROKERS are set, so "
                            "this run used that system (a `swf dev` that may have stopped); "
                            "unset them to run on a throwaway one\n");
        swf_error_free(err);
    }
    swf_dev_worker_stop(worker);
    swf_kafka_producer_free(producer);
    swf_history_store_free(store);
    swf_dev_stop(dev);
    json_object_put(def);
    json_object_put(input);
    json_object_put(mocks);
    json_object_put(events);
    json_object_put(lists);
    json_object_put(children);
    json_object_put(line);
    return rc;
}
