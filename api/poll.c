/*
 * poll.c - GetActivityTask: long polls served from the activity's task
 * list on Kafka, without a thread per poller.
 *
 * A poll that finds no task at hand suspends its HTTP connection
 * (libmicrohttpd's suspend/resume) and leaves a slot in its activity's
 * queue of waiters, oldest first. One thread, the hub, reads the task
 * topics of the activities that have waiters, each through a consumer in
 * the task list's consumer group (`swf-workers.<name>`, the group of
 * swf's Kafka workers, so that a task goes to exactly one of them or of
 * the pollers), and hands each task to the oldest waiter, whose connection
 * it resumes with the answer. A waiter whose time is up gets the empty
 * answer AWS gives ({} : no taskToken). The hub reads only as many tasks as
 * there are waiters, so a task is not taken from Kafka for nobody; one
 * taken when its waiter just timed out is kept for the next poller, and
 * its offset is committed only when it was handed out, so a crash of the
 * server makes Kafka deliver it again.
 *
 * While an activity has no waiter (for SWF_API_POLL_PAUSE_MS), its consumer
 * stays in the group with its partitions paused: nothing is fetched for
 * nobody (at most a task a partition, kept for the next poller, see
 * below), and the next poller needs no group join (a join takes seconds on Kafka, and on the
 * mock cluster of `swf dev` up to a session after a member left: pollers
 * that came back after an idle period used to wait that long, and when the
 * join outlasted the idle time, the consumer was closed again as soon as
 * the tasks were handed out, so 50 pollers made about one step a second).
 * The idle clock runs only while nobody waits. An activity without waiters
 * for SWF_API_POLL_IDLE_MS gives its partitions up (closes its consumer)
 * only when it does not hold them all: its group has other members, the
 * Kafka workers of its task list or other swf-api servers, which then take
 * them. Holding them all it keeps them, since nobody else would read them,
 * up to SWF_API_POLL_KEEP_MS (10 min) without a poller: a consumer is a
 * librdkafka handle with threads of its own, and a server that served many
 * activities once should not keep one for each.
 *
 * Limits: at most cfg.max_pollers waiting at once (more is
 * ActivityWorkerLimitExceeded, AWS's error for it); at most
 * SWF_API_PENDING_MAX tasks kept per activity.
 *
 * Where the hub pauses and resumes is the delicate part (the worker
 * library's worker.c says the same). librdkafka (2.0) starts an assigned
 * partition's fetcher on its main thread, once the committed offsets are
 * in, in two steps: it takes a new version barrier of the partition, then
 * queues the start. A pause or resume of the application queued between
 * the two carries a newer barrier, and the start is dropped as outdated:
 * the partition stays assigned and is never fetched until the next
 * rebalance, and the activity's pollers get no task. The hub paused or
 * resumed the whole assignment whenever pollers came and went, and paused
 * each new assignment right after rd_kafka_assign. So now the rebalance
 * callback resumes a new assignment before rd_kafka_assign (librdkafka
 * keeps a pause across a revoke: a partition paused before a lost session
 * came back paused, for good when nobody was waiting as it came back), and
 * the hub pauses a partition only once it has delivered a message in its
 * current assignment (its fetcher runs), resuming exactly those it paused.
 * While nobody waits, a partition that delivers a task is paused then
 * (again at each task it delivers, should librdkafka have dropped the
 * pause), and the task kept for the next poller.
 *
 * A task handed out is reported started (activity.started, with the
 * poller's workerName, by the request's thread once it answers): the
 * decider records ActivityTaskStarted then, and HeartbeatSeconds counts
 * from there, as in AWS.
 *
 * What is not done (api/README.md): a poller whose client went away while
 * it waited is found out only when the task is written to its closed
 * connection, when the task is lost until its timeout (HeartbeatSeconds
 * or TimeoutSeconds) fires.
 */
#include "api/internal.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"

#define SWF_API_PENDING_MAX 64
#define SWF_API_POLL_IDLE_MS 10000
#define SWF_API_POLL_PAUSE_MS 2000
#define SWF_API_POLL_KEEP_MS 600000
#define HUB_TICK_MS 10
/* How long the hub waits for a task topic's partition count. */
#define HUB_METADATA_MS 2000
/* How long stopping waits for the waiters' answers. */
#define STOP_WAIT_MS 5000

typedef struct waiter {
    struct waiter *next;
    struct MHD_Connection *conn;
    int64_t deadline_ms;
    json_object *answer; /* set with done */
    char *execution_id;  /* the task's, set with a task answer */
    bool done;
    bool stopping;                   /* answered by the stop, not yet sent */
    char worker[SWF_MSG_NAME_BYTES]; /* the workerName, or swf-api:<key> */
} waiter_t;

/* A partition of an activity's current assignment (the hub's only). */
typedef struct part {
    int32_t id;
    bool delivered; /* a message came in this assignment: its fetcher runs */
    bool paused;    /* paused by the hub, to resume when a poller comes */
} part_t;

typedef struct act {
    struct act *next;
    char name[SWF_API_NAME_BYTES + 1];
    rd_kafka_t *consumer; /* the hub's only */
    bool paused;          /* nobody waits: partitions are paused as they deliver */
    part_t *parts;        /* the current assignment; the hub's only */
    size_t nparts, parts_cap;
    waiter_t *head, *tail;
    size_t nwaiters;
    rd_kafka_message_t *pending[SWF_API_PENDING_MAX];
    size_t npending;
    int64_t last_wait_ms;   /* the last time someone polled or waited, or the idle check */
    int64_t last_waiter_ms; /* the last time someone polled or waited */
} act_t;

struct swf_api__hub {
    swf_api_t *api;
    pthread_mutex_t lock;
    pthread_t thread;
    bool running, stop;
    act_t *acts; /* added by request threads, removed by nobody until the end */
    int nwaiters;
    int draining; /* waiters answered by the stop, their answers not yet sent */
};

size_t swf_api__waiter_size(void)
{
    return sizeof(waiter_t);
}

/* Reports the task of `answer` started by `worker` (activity.started);
 * frees execution_id. A send that fails is logged: the answer records the
 * start then. */
static void started_send(swf_api_t *api, json_object *answer, char *execution_id,
                         const char *worker)
{
    const char *token = swf_json_get_string(answer, "taskToken");
    if (token != NULL && execution_id != NULL) {
        json_object *m = swf_msg_activity_started_new(token, worker);
        swf_error_t *err = swf_api__inbox_send(api, execution_id, m);
        json_object_put(m);
        if (err != NULL && api->cfg.log != NULL)
            fprintf(api->cfg.log, "swf-api: activity.started of execution %s: %s\n", execution_id,
                    swf_error_message(err));
        swf_error_free(err);
    }
    free(execution_id);
}

bool swf_api__waiter_done(swf_api_t *api, void *w, json_object **out)
{
    waiter_t *waiter = w;
    if (!waiter->done)
        return false;
    *out = waiter->answer;
    waiter->answer = NULL;
    started_send(api, *out, waiter->execution_id, waiter->worker);
    waiter->execution_id = NULL;
    return true;
}

void swf_api__waiter_clear(swf_api_t *api, void *w)
{
    waiter_t *waiter = w;
    swf_api__hub_t *h = api->hub;
    if (waiter->stopping && h != NULL) {
        waiter->stopping = false;
        pthread_mutex_lock(&h->lock);
        h->draining--;
        pthread_mutex_unlock(&h->lock);
    }
    if (!waiter->done)
        return;
    json_object_put(waiter->answer);
    waiter->answer = NULL;
    free(waiter->execution_id);
    waiter->execution_id = NULL;
}

/* The answer of a task message: {"taskToken", "input"}, and its execution
 * id in *execution_id (the caller frees it); NULL when the message is not a
 * task (it is skipped and committed: a worker would dead-letter it). */
static json_object *task_answer(swf_api_t *api, const rd_kafka_message_t *m, char **execution_id)
{
    swf_msg_t msg = {0};
    swf_error_t *err = swf_msg_parse(m->payload, m->len, api->secret, &msg);
    json_object *o = NULL;
    *execution_id = NULL;
    if (err == NULL && msg.type == SWF_MSG_ACTIVITY_TASK) {
        o = json_object_new_object();
        swf_json_add(o, "taskToken", json_object_new_string(msg.task_token));
        swf_json_add(o, "input", json_object_new_string(swf_json_str(msg.input)));
        *execution_id = msg.execution_id;
        msg.execution_id = NULL;
    }
    swf_error_free(err);
    swf_msg_clear(&msg);
    return o;
}

/* Hands `answer` and the task's execution_id (both taken; NULL for an
 * empty answer) to the oldest waiter of a; the lock is held. */
static void hand(swf_api__hub_t *h, act_t *a, json_object *answer, char *execution_id)
{
    waiter_t *w = a->head;
    a->head = w->next;
    if (a->head == NULL)
        a->tail = NULL;
    a->nwaiters--;
    h->nwaiters--;
    w->answer = answer;
    w->execution_id = execution_id;
    w->done = true;
    MHD_resume_connection(w->conn);
}

static act_t *act_get(swf_api__hub_t *h, const char *name)
{
    for (act_t *a = h->acts; a != NULL; a = a->next)
        if (strcmp(a->name, name) == 0)
            return a;
    act_t *a = calloc(1, sizeof(*a));
    if (a == NULL)
        abort();
    snprintf(a->name, sizeof(a->name), "%s", name);
    a->next = h->acts;
    h->acts = a;
    return a;
}

/* The identity a task is started with: the poller's workerName, else
 * swf-api:<access key>, as the answers of swf-api name themselves. */
static const char *worker_name(swf_api_call_t *call, const char *worker,
                               char buf[SWF_MSG_NAME_BYTES])
{
    if (worker != NULL && *worker != '\0')
        return worker;
    snprintf(buf, SWF_MSG_NAME_BYTES, "swf-api:%s", call->key);
    return buf;
}

swf_error_t *swf_api__activity_task_get(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *arn, *worker = NULL;
    char wname[SWF_MSG_NAME_BYTES];
    char name[SWF_API_NAME_BYTES + 1];
    swf_error_t *err = swf_api__str(in, "activityArn", true, SWF_API_ARN_BYTES, &arn);
    if (err == NULL)
        err = swf_api__str(in, "workerName", false, SWF_API_NAME_BYTES, &worker);
    if (err == NULL)
        err = swf_api__arn_parse(arn, "activity", name, NULL);
    if (err == NULL)
        err = swf_api__allowed(call, "activity", name);
    if (err != NULL)
        return err;
    swf_api__hub_t *h = call->api->hub;
    pthread_mutex_lock(&h->lock);
    if (h->stop) {
        pthread_mutex_unlock(&h->lock);
        *out = json_object_new_object();
        return NULL;
    }
    act_t *a = act_get(h, name);
    a->last_wait_ms = a->last_waiter_ms = swf_time_now_ms();
    if (a->npending > 0 && a->consumer != NULL) {
        rd_kafka_message_t *m = a->pending[0];
        memmove(a->pending, a->pending + 1, --a->npending * sizeof(a->pending[0]));
        char *execution_id;
        *out = task_answer(call->api, m, &execution_id);
        swf_error_free(swf_kafka_commit(a->consumer, &m, 1, true));
        rd_kafka_message_destroy(m);
        pthread_mutex_unlock(&h->lock);
        if (*out == NULL)
            *out = json_object_new_object();
        started_send(call->api, *out, execution_id, worker_name(call, worker, wname));
        return NULL;
    }
    if (h->nwaiters >= call->api->cfg.max_pollers) {
        pthread_mutex_unlock(&h->lock);
        return swf_api__err("ActivityWorkerLimitExceeded",
                            "more than %d GetActivityTask calls are waiting",
                            call->api->cfg.max_pollers);
    }
    waiter_t *w = call->waiter;
    memset(w, 0, sizeof(*w));
    snprintf(w->worker, sizeof(w->worker), "%s", worker_name(call, worker, wname));
    w->conn = call->conn;
    w->deadline_ms = swf_time_now_ms() + (int64_t)call->api->cfg.poll_s * 1000;
    if (a->tail != NULL)
        a->tail->next = w;
    else
        a->head = w;
    a->tail = w;
    a->nwaiters++;
    h->nwaiters++;
    MHD_suspend_connection(call->conn);
    pthread_mutex_unlock(&h->lock);
    *out = NULL;
    return NULL;
}

/* The record of partition id in a's assignment, or NULL. */
static part_t *part_get(act_t *a, int32_t id)
{
    for (size_t i = 0; i < a->nparts; i++)
        if (a->parts[i].id == id)
            return &a->parts[i];
    return NULL;
}

/* Records the partitions of l in a's assignment: nothing delivered yet. */
static void parts_add(act_t *a, const rd_kafka_topic_partition_list_t *l)
{
    for (int i = 0; i < l->cnt; i++) {
        part_t *p = part_get(a, l->elems[i].partition);
        if (p == NULL) {
            if (a->nparts == a->parts_cap) {
                a->parts_cap = a->parts_cap ? 2 * a->parts_cap : 8;
                a->parts = realloc(a->parts, a->parts_cap * sizeof(*a->parts));
                if (a->parts == NULL)
                    abort();
            }
            p = &a->parts[a->nparts++];
        }
        *p = (part_t){.id = l->elems[i].partition};
    }
}

/* Forgets the partitions a's consumer no longer has (revoked), with their
 * pause marks: the next assignment of one resumes it. */
static void parts_prune(act_t *a)
{
    rd_kafka_topic_partition_list_t *l = NULL;
    if (rd_kafka_assignment(a->consumer, &l) != RD_KAFKA_RESP_ERR_NO_ERROR || l == NULL)
        return;
    for (size_t i = 0; i < a->nparts;) {
        bool held = false;
        for (int j = 0; j < l->cnt && !held; j++)
            held = l->elems[j].partition == a->parts[i].id;
        if (held)
            i++;
        else
            a->parts[i] = a->parts[--a->nparts];
    }
    rd_kafka_topic_partition_list_destroy(l);
}

/* A rebalance of a's consumer. Runs on the hub's thread, in its poll. A
 * new assignment is resumed, always, and before the assign (see the top of
 * the file); a partition this consumer never had is skipped, it has no
 * pause to clear. While nobody waits, the new partitions are paused as
 * they deliver, in act_tick. A revoke leaves a alone: it also comes in the
 * close of the consumer, which may end on its own thread after the hub
 * gave up on it (SWF_KAFKA_CLOSE_MS) and freed a; the hub forgets revoked
 * partitions itself (parts_prune). */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t code,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    act_t *a = opaque;
    if (code == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
        rd_kafka_resume_partitions(rk, parts);
    swf_error_free(swf_kafka_rebalance_apply(rk, code, parts));
    if (code == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
        parts_add(a, parts);
}

/* Opens a's consumer; errors are logged by the caller's next tick. */
static void consumer_open(swf_api_t *api, act_t *a)
{
    char group[SWF_API_NAME_BYTES + 32], topic[SWF_API_NAME_BYTES + 128];
    snprintf(group, sizeof(group), "swf-workers.%s", a->name);
    swf_kafka_task_topic(&api->names, a->name, topic, sizeof(topic));
    rd_kafka_t *c = NULL;
    swf_error_t *err =
        swf_kafka_consumer_new(&(swf_kafka_consumer_config_t){.brokers = api->brokers,
                                                              .group = group,
                                                              .client_id = "swf-api",
                                                              .on_rebalance = on_rebalance,
                                                              .opaque = a},
                               &c);
    const char *topics[1] = {topic};
    if (err == NULL)
        err = swf_kafka_subscribe(c, topics, 1);
    if (err != NULL) {
        if (api->cfg.log != NULL)
            fprintf(api->cfg.log, "swf-api: consumer of %s: %s\n", topic, swf_error_message(err));
        swf_error_free(err);
        if (c != NULL)
            swf_kafka_consumer_close(c, SWF_KAFKA_CLOSE_MS, NULL, NULL, NULL);
        return;
    }
    a->consumer = c;
}

/* Pauses partition id of a's consumer, which just delivered (its fetcher
 * runs: no start of it can be in flight), and marks it for the resume.
 * Not a partition out of a's assignment: a pause nobody records would
 * never be resumed. */
static void part_pause(swf_api_t *api, act_t *a, int32_t id)
{
    part_t *p = part_get(a, id);
    if (p == NULL)
        return;
    p->delivered = p->paused = true;
    char topic[SWF_API_NAME_BYTES + 128];
    swf_kafka_task_topic(&api->names, a->name, topic, sizeof(topic));
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, topic, id);
    rd_kafka_pause_partitions(a->consumer, l);
    rd_kafka_topic_partition_list_destroy(l);
}

/* Nobody waits (pause), or pollers came: pauses the partitions of a's
 * consumer that have delivered in their assignment (the others are paused
 * as they deliver), or resumes exactly those the hub paused. */
static void consumer_pause(swf_api_t *api, act_t *a, bool pause)
{
    parts_prune(a);
    char topic[SWF_API_NAME_BYTES + 128];
    swf_kafka_task_topic(&api->names, a->name, topic, sizeof(topic));
    rd_kafka_topic_partition_list_t *l = NULL;
    for (size_t i = 0; i < a->nparts; i++) {
        part_t *p = &a->parts[i];
        if (pause ? !p->delivered || p->paused : !p->paused)
            continue;
        p->paused = pause;
        if (l == NULL)
            l = rd_kafka_topic_partition_list_new(4);
        rd_kafka_topic_partition_list_add(l, topic, p->id);
    }
    if (l != NULL && pause)
        rd_kafka_pause_partitions(a->consumer, l);
    else if (l != NULL)
        rd_kafka_resume_partitions(a->consumer, l);
    if (l != NULL)
        rd_kafka_topic_partition_list_destroy(l);
    a->paused = pause;
}

/* Whether a's consumer holds fewer than all the partitions of its task
 * topic: then its group has other members (Kafka workers of the task
 * list, other swf-api servers) that would read the rest; true when Kafka
 * cannot say, so that partitions are given up rather than kept from a
 * worker. Holding them all, it deprives nobody: a worker that joins
 * later gets its share at that rebalance, and the next idle check gives
 * up the rest. */
static bool partitions_shared(swf_api_t *api, act_t *a)
{
    rd_kafka_topic_partition_list_t *parts = NULL;
    int held = 0, total = -1;
    if (rd_kafka_assignment(a->consumer, &parts) == RD_KAFKA_RESP_ERR_NO_ERROR && parts != NULL)
        held = parts->cnt;
    if (parts != NULL)
        rd_kafka_topic_partition_list_destroy(parts);
    char topic[SWF_API_NAME_BYTES + 128];
    swf_kafka_task_topic(&api->names, a->name, topic, sizeof(topic));
    rd_kafka_topic_t *t = rd_kafka_topic_new(a->consumer, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    if (t != NULL &&
        rd_kafka_metadata(a->consumer, 0, t, &md, HUB_METADATA_MS) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR)
        total = md->topics[0].partition_cnt;
    if (md != NULL)
        rd_kafka_metadata_destroy(md);
    if (t != NULL)
        rd_kafka_topic_destroy(t);
    return total <= 0 || held < total;
}

/* One tick for one activity: expire waiters, read tasks for the others. */
static bool act_tick(swf_api__hub_t *h, act_t *a, int64_t now)
{
    swf_api_t *api = h->api;
    bool busy = false;
    pthread_mutex_lock(&h->lock);
    while (a->head != NULL && a->head->deadline_ms <= now)
        hand(h, a, json_object_new_object(), NULL);
    size_t want = a->nwaiters;
    if (want > 0)
        a->last_wait_ms = a->last_waiter_ms = now; /* the idle clock runs while nobody waits */
    bool stale = want == 0 && now - a->last_waiter_ms > SWF_API_POLL_KEEP_MS;
    bool idle = want == 0 && now - a->last_wait_ms > SWF_API_POLL_IDLE_MS;
    pthread_mutex_unlock(&h->lock);
    if (idle && a->consumer != NULL) {
        if (stale || partitions_shared(api, a)) {
            /* The tasks kept for pollers that did not come are not
             * committed: Kafka delivers them again to the partitions' next
             * reader. */
            pthread_mutex_lock(&h->lock);
            for (size_t i = 0; i < a->npending; i++)
                rd_kafka_message_destroy(a->pending[i]);
            a->npending = 0;
            pthread_mutex_unlock(&h->lock);
            swf_kafka_consumer_close(a->consumer, SWF_KAFKA_CLOSE_MS, NULL, NULL, NULL);
            a->consumer = NULL;
            a->paused = false;
            a->nparts = 0;
        } else {
            pthread_mutex_lock(&h->lock);
            a->last_wait_ms = now; /* alone: ask again after another idle period */
            pthread_mutex_unlock(&h->lock);
        }
    }
    if (want == 0 && a->consumer == NULL)
        return false;
    if (a->consumer == NULL)
        consumer_open(api, a);
    if (a->consumer == NULL)
        return false;
    /* Paused only after a while without waiters: a resumed partition is
     * fetched again from the broker, which takes a moment, and pollers
     * that answer a task and come back leave the queue empty for less. */
    bool pause = want == 0 && now - a->last_wait_ms > SWF_API_POLL_PAUSE_MS;
    if (pause != a->paused && (pause || want > 0))
        consumer_pause(api, a, pause);
    if (want == 0 && !a->paused)
        return false;
    /* Paused, the poll serves the group's rebalances and keeps the consumer
     * a member; a task of a partition not paused yet is kept, and its
     * partition paused. */
    if (want == 0)
        want = a->npending < SWF_API_PENDING_MAX ? 1 : 0;
    if (want > SWF_API_PENDING_MAX - a->npending)
        want = SWF_API_PENDING_MAX - a->npending;
    rd_kafka_message_t *msgs[SWF_API_PENDING_MAX];
    swf_error_t *err = NULL;
    size_t n =
        want ? swf_kafka_poll(a->consumer, a->paused ? 0 : HUB_TICK_MS, 0, msgs, want, &err) : 0;
    swf_error_free(err);
    for (size_t i = 0; i < n; i++) {
        busy = true;
        part_t *p = part_get(a, msgs[i]->partition);
        if (a->paused)
            part_pause(api, a, msgs[i]->partition);
        else if (p != NULL)
            p->delivered = true;
        char *execution_id;
        json_object *answer = task_answer(api, msgs[i], &execution_id);
        pthread_mutex_lock(&h->lock);
        if (answer == NULL) {
            swf_error_free(swf_kafka_commit(a->consumer, &msgs[i], 1, true));
            rd_kafka_message_destroy(msgs[i]);
        } else if (a->head != NULL) {
            hand(h, a, answer, execution_id);
            swf_error_free(swf_kafka_commit(a->consumer, &msgs[i], 1, true));
            rd_kafka_message_destroy(msgs[i]);
        } else {
            json_object_put(answer);
            free(execution_id);
            a->pending[a->npending++] = msgs[i];
        }
        pthread_mutex_unlock(&h->lock);
    }
    /* Tasks kept from before, for waiters that came since. */
    pthread_mutex_lock(&h->lock);
    while (a->npending > 0 && a->head != NULL) {
        rd_kafka_message_t *m = a->pending[0];
        memmove(a->pending, a->pending + 1, --a->npending * sizeof(a->pending[0]));
        char *execution_id;
        json_object *answer = task_answer(api, m, &execution_id);
        hand(h, a, answer ? answer : json_object_new_object(), execution_id);
        swf_error_free(swf_kafka_commit(a->consumer, &m, 1, true));
        rd_kafka_message_destroy(m);
    }
    pthread_mutex_unlock(&h->lock);
    return busy;
}

static void *hub_main(void *arg)
{
    swf_api__hub_t *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->lock);
        bool stop = h->stop;
        act_t *acts = h->acts;
        pthread_mutex_unlock(&h->lock);
        if (stop)
            break;
        bool busy = false;
        int64_t now = swf_time_now_ms();
        /* New activities are added at the head: this walk sees the list as
         * it was, and the next tick the rest. */
        for (act_t *a = acts; a != NULL; a = a->next)
            busy |= act_tick(h, a, now);
        if (!busy)
            usleep(HUB_TICK_MS * 1000);
    }
    return NULL;
}

swf_error_t *swf_api__hub_start(swf_api_t *api)
{
    swf_api__hub_t *h = calloc(1, sizeof(*h));
    if (h == NULL)
        abort();
    h->api = api;
    pthread_mutex_init(&h->lock, NULL);
    if (pthread_create(&h->thread, NULL, hub_main, h) != 0) {
        pthread_mutex_destroy(&h->lock);
        free(h);
        return swf_error_new(SWF_E_INTERNAL, NULL, "cannot start the poll thread");
    }
    h->running = true;
    api->hub = h;
    return NULL;
}

void swf_api__hub_stop(swf_api_t *api)
{
    swf_api__hub_t *h = api->hub;
    if (h == NULL)
        return;
    pthread_mutex_lock(&h->lock);
    bool running = h->running;
    h->stop = true;
    h->running = false;
    pthread_mutex_unlock(&h->lock);
    if (running)
        pthread_join(h->thread, NULL);
    pthread_mutex_lock(&h->lock);
    for (act_t *a = h->acts; a != NULL; a = a->next)
        while (a->head != NULL) {
            a->head->stopping = true;
            h->draining++;
            hand(h, a, json_object_new_object(), NULL);
        }
    pthread_mutex_unlock(&h->lock);
    /* A resumed connection is taken up by its thread a moment later, and
     * libmicrohttpd must not stop with one still suspended, nor before the
     * answer is sent: wait until each request completed
     * (swf_api__waiter_clear), a bounded time. The rest stays until
     * libmicrohttpd stopped (swf_api__hub_free): a request of a connection
     * kept alive may still come, and finds the hub stopping. */
    swf_api__drain_wait(&h->lock, &h->draining);
}

void swf_api__drain_wait(pthread_mutex_t *lock, const int *left)
{
    for (int waited_ms = 0; waited_ms < STOP_WAIT_MS; waited_ms += 10) {
        pthread_mutex_lock(lock);
        int n = *left;
        pthread_mutex_unlock(lock);
        if (n == 0)
            break;
        usleep(10 * 1000);
    }
}

void swf_api__hub_free(swf_api_t *api)
{
    swf_api__hub_t *h = api->hub;
    if (h == NULL)
        return;
    swf_api__hub_stop(api);
    for (act_t *a = h->acts, *next; a != NULL; a = next) {
        next = a->next;
        for (size_t i = 0; i < a->npending; i++)
            rd_kafka_message_destroy(a->pending[i]);
        if (a->consumer != NULL)
            swf_kafka_consumer_close(a->consumer, SWF_KAFKA_CLOSE_MS, NULL, NULL, NULL);
        free(a->parts);
        free(a);
    }
    pthread_mutex_destroy(&h->lock);
    free(h);
    api->hub = NULL;
}
