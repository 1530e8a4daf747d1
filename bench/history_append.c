/*
 * history_append.c - how fast the PostgreSQL history appends.
 *
 * Uses SWF_DATABASE_URL when set, else starts a throwaway cluster of its own
 * (fsync on). Creates SWF_BENCH_EXECUTIONS executions (default 1000), then
 * for SWF_BENCH_SECONDS each (default 5) measures:
 *   single    one event per append, one transaction (and one fsync) each;
 *   batch10   one event for each of 10 executions per transaction;
 *   batch100  one event for each of 100 executions per transaction;
 *   batch100x10  ten events for each of 100 executions per transaction;
 *   step      the six events of one activity step of one execution (what
 *             a decider appends for a worker's answer: the activity
 *             started and completed, a decision task, the next activity
 *             scheduled, which also writes an outbox row), one transaction
 *             each, through the decider's batch append;
 *   step20    the same for 20 executions per transaction.
 * SWF_BENCH_MODES (e.g. "single,batch100") runs only the modes named;
 * SWF_BENCH_CHAIN=c|plpgsql picks the hash chain's trigger (bench/chain.h).
 * Each line reads "MODE EVENTS_PER_SECOND events/s (TX_PER_SECOND tx/s)",
 * which scripts/bench-history.sh parses. One connection, one thread: this
 * is the latency-bound rate a single writer (a history service instance)
 * sees, the figure comparable to pgbench at one client.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/chain.h"
#include "history/cluster.h"
#include "history/pg.h"
#include "protocol/json.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v != NULL && atoi(v) > 0 ? atoi(v) : def;
}

static void die(swf_error_t *err)
{
    fprintf(stderr, "bench_history_append: %s\n", swf_error_message(err));
    exit(3);
}

/* Whether `mode` is one of the comma-separated names in `list`. */
static bool mode_listed(const char *list, const char *mode)
{
    size_t len = strlen(mode);
    for (const char *p = list; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, mode, len) == 0)
            return true;
        p += n + (end != NULL);
    }
    return false;
}

static int executions;
static char (*ids)[40];
static int64_t *next_id;

/* The events of an activity step as a decider appends them (ids in the
 * attributes are placeholders: the store does not check them). */
static const struct {
    swf_event_type_t type;
    const char *attrs;
} step[] = {
    {SWF_EVENT_ACTIVITY_TASK_STARTED, "{\"identity\":\"bench\",\"scheduledEventId\":1}"},
    {SWF_EVENT_ACTIVITY_TASK_COMPLETED,
     "{\"result\":{\"i\":497},\"startedEventId\":2,\"scheduledEventId\":1}"},
    {SWF_EVENT_DECISION_TASK_SCHEDULED, "{}"},
    {SWF_EVENT_DECISION_TASK_STARTED, "{\"identity\":\"decider-1\",\"scheduledEventId\":3}"},
    {SWF_EVENT_DECISION_TASK_COMPLETED, "{\"startedEventId\":4,\"scheduledEventId\":3}"},
    {SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
     "{\"input\":{\"i\":498},\"control\":{\"path\":\"\",\"state\":\"Work\",\"attempt\":0,"
     "\"resource\":\"arn:aws:states:::activity:bench\"},\"taskList\":{\"name\":\"bench\"},"
     "\"activityId\":\"499\",\"activityType\":{\"name\":\"bench\",\"version\":\"1\"},"
     "\"decisionTaskCompletedEventId\":5}"},
};

/* Appends `per` events to each of `width` executions per transaction:
 * markers, or with `steps` the events of activity steps. */
static void run(swf_history_store_t *s, const char *mode, int width, int per, bool steps,
                double seconds)
{
    swf_history_append_t *appends = calloc((size_t)width, sizeof(*appends));
    swf_error_t **errors = calloc((size_t)width, sizeof(*errors));
    swf_event_t *events = calloc((size_t)per, sizeof(*events));
    int *which = calloc((size_t)width, sizeof(*which));
    if (appends == NULL || errors == NULL || events == NULL || which == NULL)
        abort();
    for (int k = 0; k < per; k++) {
        events[k] = steps ? (swf_event_t){0, step[k % 6].type, 1763719200000LL,
                                          json_tokener_parse(step[k % 6].attrs)}
                          : (swf_event_t){0, SWF_EVENT_MARKER_RECORDED, 1763719200000LL,
                                          json_tokener_parse("{\"markerName\":\"bench\","
                                                             "\"details\":{\"state\":\"Charge\","
                                                             "\"n\":42}}")};
    }
    long long tx = 0, written = 0;
    int cursor = 0;
    double start = now_s(), end = start + seconds, t;
    while ((t = now_s()) < end) {
        for (int i = 0; i < width; i++) {
            int e = which[i] = cursor++ % executions;
            appends[i] = (swf_history_append_t){ids[e], next_id[e], events, (size_t)per};
        }
        swf_error_t *err =
            width == 1 && !steps
                ? swf_history_append(s, appends[0].execution_id, appends[0].expected_next_id,
                                     events, (size_t)per)
                : swf_history_pg_batch_append(s, appends, (size_t)width, errors);
        if (err != NULL)
            die(err);
        for (int i = 0; i < width; i++) {
            if (width > 1 && errors[i] != NULL)
                die(errors[i]);
            next_id[which[i]] += per;
        }
        tx++;
        written += (long long)width * per;
    }
    double elapsed = now_s() - start;
    printf("%-12s %10.0f events/s (%8.0f tx/s, %lld events in %.1f s)\n", mode,
           (double)written / elapsed, (double)tx / elapsed, written, elapsed);
    fflush(stdout);
    for (int k = 0; k < per; k++)
        json_object_put(events[k].attrs);
    free(events);
    free(which);
    free(errors);
    free(appends);
}

int main(void)
{
    double seconds = env_int("SWF_BENCH_SECONDS", 5);
    executions = env_int("SWF_BENCH_EXECUTIONS", 1000);
    if (executions < 100)
        executions = 100;
    swf_history_cluster_t *cluster = NULL;
    const char *conninfo = getenv("SWF_DATABASE_URL");
    swf_error_t *err;
    if (conninfo == NULL) {
        if ((err = swf_history_cluster_start(&cluster)) != NULL)
            die(err);
        conninfo = swf_history_cluster_conninfo(cluster);
        fprintf(stderr, "throwaway cluster: %s\n", conninfo);
    }
    swf_history_store_t *s;
    if ((err = swf_history_pg_new(conninfo, &s)) != NULL)
        die(err);
    bench_chain_set("bench_history_append", conninfo);

    ids = calloc((size_t)executions, sizeof(*ids));
    next_id = calloc((size_t)executions, sizeof(*next_id));
    if (ids == NULL || next_id == NULL)
        abort();
    unsigned tag = (unsigned)time(NULL);
    for (int e = 0; e < executions; e++) {
        snprintf(ids[e], sizeof(ids[e]), "bench-%08x-%06d", tag, e);
        json_object *a = json_object_new_object();
        json_object_object_add(a, "executionId", json_object_new_string(ids[e]));
        json_object_object_add(a, "workflowId", json_object_new_string(ids[e]));
        json_object_object_add(a, "workflowType",
                               json_tokener_parse("{\"name\":\"bench\",\"version\":\"1\"}"));
        json_object_object_add(a, "input", json_object_new_object());
        swf_event_t ev = {0, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, 1763719200000LL, a};
        if ((err = swf_history_append(s, ids[e], 1, &ev, 1)) != NULL)
            die(err);
        json_object_put(a);
        next_id[e] = 2;
    }

    static const struct {
        const char *mode;
        int width, per;
        bool steps;
    } modes[] = {{"single", 1, 1, false},     {"batch10", 10, 1, false},
                 {"batch100", 100, 1, false}, {"batch100x10", 100, 10, false},
                 {"step", 1, 6, true},        {"step20", 20, 6, true}};
    const char *only = getenv("SWF_BENCH_MODES");
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        if (only == NULL || mode_listed(only, modes[m].mode))
            run(s, modes[m].mode, modes[m].width, modes[m].per, modes[m].steps, seconds);
    }

    swf_history_store_free(s);
    free(ids);
    free(next_id);
    swf_history_cluster_stop(cluster);
    return 0;
}
