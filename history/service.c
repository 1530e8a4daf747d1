/*
 * service.c - swf-history's loop: timers, timeouts, the outbox and the sweep.
 *
 * Each step is one short transaction that claims at most batch_max rows
 * with FOR UPDATE SKIP LOCKED (so several services share the work instead
 * of repeating it), posts the messages, and commits. Nothing here writes
 * events: firing a timer is a message to the decider, which appends
 * TimerFired only if the timer is still pending. That keeps one writer per
 * execution (the decider owning its inbox partition) and makes every post
 * idempotent, so the service may post twice without harm - which it does,
 * on purpose, when a condition still holds repost_ms after its last post
 * (the message or the decider was lost).
 *
 * The "posted recently" memory is a json-c object keyed by the row's
 * identity, rebuilt from each query's result, so it never holds more than
 * the rows that are still due.
 *
 * Activity timeouts are derived from the events of open executions (the
 * ActivityTaskScheduled events with a timeout and no closing event); that
 * query reads the events of open executions only, which is fine for the
 * sizes swf dev and the tests see; a projection of activity deadlines is the
 * way to scale it (not done yet).
 */
#include "history/service.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history/pg.h"
#include "history/pg_internal.h"
#include "protocol/json.h"
#include "protocol/log.h"
#include "protocol/message.h"
#include "protocol/task_list.h"
#include "protocol/time.h"
#include "protocol/token.h"

struct swf_history_service {
    swf_history_service_config_t cfg;
    swf_history_store_t *store;
    volatile sig_atomic_t stop;
    swf_history_service_stats_t stats;
    json_object *posted; /* row identity -> time of the last post (ms) */
};

static void slog(swf_history_service_t *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void slog(swf_history_service_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    swf_log_vwrite(s->cfg.log, "swf-history", fmt, ap);
    va_end(ap);
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : dflt;
}

void swf_history_service_config_env(swf_history_service_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->conninfo = swf_history_pg_conninfo_env();
    cfg->inbox_topic = env_or("SWF_INBOX_TOPIC", SWF_MSG_INBOX_TOPIC);
    cfg->task_prefix = env_or("SWF_TASK_TOPIC_PREFIX", SWF_MSG_TASK_TOPIC_PREFIX);
    cfg->secret = swf_token_secret_env();
    cfg->tick_ms = 200;
    cfg->outbox_age_ms = 3000;
    cfg->sweep_age_ms = 5000;
    cfg->repost_ms = 5000;
    double scale = atof(env_or("SWF_DEV_TIME_SCALE", "1"));
    cfg->time_scale = scale > 0 && scale <= 1 ? scale : 1;
    cfg->time_skip = atoi(env_or("SWF_DEV_TIME_SKIP", "0")) != 0;
    cfg->batch_max = 500;
    cfg->log = stderr;
}

swf_error_t *swf_history_service_new(const swf_history_service_config_t *cfg,
                                     swf_history_service_t **out)
{
    *out = NULL;
    if (cfg->send == NULL)
        return swf_error_new(SWF_E_INTERNAL, NULL, "the history service needs a sender");
    swf_history_service_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        abort();
    s->cfg = *cfg;
    if (s->cfg.tick_ms <= 0)
        s->cfg.tick_ms = 200;
    if (s->cfg.batch_max == 0)
        s->cfg.batch_max = 500;
    if (s->cfg.time_scale <= 0 || s->cfg.time_scale > 1 || s->cfg.time_skip)
        s->cfg.time_scale = 1;
    s->posted = json_object_new_object();
    swf_error_t *err = swf_history_pg_new(cfg->conninfo, &s->store);
    if (err != NULL) {
        swf_history_service_free(s);
        return err;
    }
    *out = s;
    return NULL;
}

void swf_history_service_free(swf_history_service_t *s)
{
    if (s == NULL)
        return;
    swf_history_store_free(s->store);
    json_object_put(s->posted);
    free(s);
}

void swf_history_service_stop(swf_history_service_t *s)
{
    s->stop = 1;
}

void swf_history_service_stats(swf_history_service_t *s, swf_history_service_stats_t *out)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *out = s->stats;
}

/* Posts built messages (taken) to the inbox, keyed by execution. */
typedef struct posts {
    swf_history_post_t *items;
    json_object **docs;
    int *rows; /* the claimed row each post is made of */
    size_t n, cap;
} posts_t;

static void posts_add(posts_t *p, int row, const char *topic, const char *key, json_object *doc)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 32;
        p->items = realloc(p->items, p->cap * sizeof(*p->items));
        p->docs = realloc(p->docs, p->cap * sizeof(*p->docs));
        p->rows = realloc(p->rows, p->cap * sizeof(*p->rows));
        if (p->items == NULL || p->docs == NULL || p->rows == NULL)
            abort();
    }
    p->rows[p->n] = row;
    p->docs[p->n] = doc;
    const char *s = swf_json_str(doc);
    p->items[p->n++] = (swf_history_post_t){topic, key, s, strlen(s), false};
}

static void posts_free(posts_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        json_object_put(p->docs[i]);
    free(p->items);
    free(p->docs);
    free(p->rows);
}

/* True when the row named `key` was not posted within repost_ms; records
 * the post in `seen` (the new memory). */
static bool due_again(swf_history_service_t *s, json_object *seen, const char *key, int64_t now)
{
    json_object *v;
    if (swf_json_get(s->posted, key, &v) && now - json_object_get_int64(v) < s->cfg.repost_ms) {
        json_object_object_add(seen, key, json_object_new_int64(json_object_get_int64(v)));
        return false;
    }
    json_object_object_add(seen, key, json_object_new_int64(now));
    return true;
}

static const char timers_sql[] =
    "SELECT t.execution_id, t.timer_id, t.started_event_id FROM timers t"
    " JOIN events e ON e.execution_id = t.execution_id AND e.event_id = t.started_event_id"
    " JOIN executions x ON x.execution_id = t.execution_id AND x.status = 'open'"
    " WHERE e.event_time + (t.fire_at - e.event_time) * $1::float8 <= now()"
    " ORDER BY t.fire_at LIMIT $2 FOR UPDATE OF t SKIP LOCKED";

/* The seconds of an execution timeout, of an activity's start-to-close or
 * heartbeat timeout, as stored; NULL when not a number. Appends are checked
 * (history/pg.c, append_check), but rows of older versions were not, and
 * one bad row must not fail every tick: at most SWF_LIMIT_TIMER_SECONDS,
 * inside PostgreSQL's interval range. */
#define EXECUTION_TIMEOUT                                                                          \
    "(CASE WHEN jsonb_typeof(e.attributes->'executionStartToCloseTimeout') = 'number'"             \
    " THEN "                                                                                       \
    "least((e.attributes->>'executionStartToCloseTimeout')::float8,"                               \
    " " SWF_HISTORY__TIMER_SECONDS_SQL ") END)"
#define SECONDS(column) "least(" column ", " SWF_HISTORY__TIMER_SECONDS_SQL ")"

static const char exec_timeouts_sql[] =
    "SELECT x.execution_id FROM executions x"
    " JOIN events e ON e.execution_id = x.execution_id AND e.event_id = 1"
    " WHERE x.status = 'open' AND e.attributes ? 'executionStartToCloseTimeout'"
    " AND x.start_time + " EXECUTION_TIMEOUT " * $1::float8 * interval '1 second' <= now()"
    /* A redriven execution's timeout counts from its last redrive (looked
     * for only once the start's deadline has passed). */
    " AND NOT EXISTS (SELECT 1 FROM events r WHERE r.execution_id = x.execution_id"
    "  AND r.event_type = 'WorkflowExecutionRedriven'"
    "  AND r.event_time + " EXECUTION_TIMEOUT " * $1::float8 * interval '1 second' > now())"
    " LIMIT $2 FOR UPDATE OF x SKIP LOCKED";

/* Open activities past a deadline, from the activity_timeouts projection
 * (migration 4; the append statement keeps it). START_TO_CLOSE counts from
 * the scheduling (a task waits in Kafka until a worker takes it; SWF's
 * schedule-to-close is the closest meaning), and HEARTBEAT from the last
 * heartbeat recorded, or the scheduling. */
#define START_TO_CLOSE_DUE(NOW)                                                                    \
    "(a.start_to_close IS NOT NULL AND a.scheduled_time + " SECONDS(                               \
        "a.start_to_close") "  * $1::float8 * interval '1 second' <= " NOW ")"
#define ACTIVITY_TIMEOUTS_SQL(NOW)                                                                 \
    "SELECT a.execution_id, a.scheduled_event_id,"                                                 \
    "  CASE WHEN " START_TO_CLOSE_DUE(                                                             \
        NOW) " THEN 'START_TO_CLOSE' ELSE 'HEARTBEAT' END"                                         \
             " FROM activity_timeouts a"                                                           \
             " WHERE " START_TO_CLOSE_DUE(                                                         \
                 NOW) "  OR (a.heartbeat IS NOT NULL AND coalesce(a.last_heartbeat, "              \
                      "a.scheduled_time) +"                                                        \
                      "    " SECONDS("a.heartbeat") " * $1::float8 * interval '1 second' <= " NOW  \
                                                    ")"                                            \
                                                    " LIMIT $2"
static const char activity_timeouts_sql[] = ACTIVITY_TIMEOUTS_SQL("now()");

/* Under time skip, an execution's events carry its virtual time: its
 * clock is the wall clock plus the last clockOffsetMs its history recorded
 * (decider/decision.h), read from its latest events backwards. */
#define CLOCK_OFFSET_MS(X)                                                                         \
    "coalesce((SELECT (o.attributes->>'clockOffsetMs')::bigint FROM events o"                      \
    " WHERE o.execution_id = " X " AND o.attributes ? 'clockOffsetMs'"                             \
    " ORDER BY o.event_id DESC LIMIT 1), 0)"
#define VIRTUAL_NOW(X) "(now() + " CLOCK_OFFSET_MS(X) " * interval '1 millisecond')"
static const char activity_timeouts_skip_sql[] =
    ACTIVITY_TIMEOUTS_SQL(VIRTUAL_NOW("a.execution_id"));

/* An outbox row names its ActivityTaskScheduled event, whose attributes
 * are the task (rows of schema 2 carry a copy in payload). */
static const char outbox_sql[] =
    "SELECT o.execution_id, o.event_id, o.topic, coalesce(o.payload, e.attributes) FROM outbox o"
    " JOIN events e ON e.execution_id = o.execution_id AND e.event_id = o.event_id"
    " WHERE o.created < now() - $1::float8 * interval '1 millisecond'"
    " ORDER BY o.created LIMIT $2 FOR UPDATE OF o SKIP LOCKED";

#define SWEEP_SQL(NOW)                                                                             \
    "SELECT x.execution_id FROM executions x"                                                      \
    " JOIN events e ON e.execution_id = x.execution_id"                                            \
    "  AND e.event_id = (SELECT max(v.event_id) FROM events v"                                     \
    "    WHERE v.execution_id = x.execution_id)"                                                   \
    " WHERE x.status = 'open' AND e.event_type = 'DecisionTaskScheduled'"                          \
    " AND e.event_time < " NOW " - $1::float8 * interval '1 millisecond'"                          \
    " LIMIT $2 FOR UPDATE OF x SKIP LOCKED"
static const char sweep_sql[] = SWEEP_SQL("now()");
static const char sweep_skip_sql[] = SWEEP_SQL(VIRTUAL_NOW("x.execution_id"));

/* Runs one claiming query in a transaction, turns rows into posts with
 * `row`, sends them, commits. */
typedef void (*row_fn)(swf_history_service_t *s, PGresult *res, int r, posts_t *p,
                       json_object *seen, int64_t now, uint64_t *count);

static swf_error_t *step(swf_history_service_t *s, const char *sql, const char *arg, row_fn row,
                         uint64_t *count, bool delete_outbox)
{
    swf_history__pg_t *pg = swf_history__pg(s->store);
    char limit[32];
    snprintf(limit, sizeof(limit), "%zu", s->cfg.batch_max);
    const char *params[2] = {arg, limit};
    PGresult *res = NULL;
    posts_t p = {0};
    json_object *seen = json_object_new_object();
    int64_t now = swf_time_now_ms();
    swf_error_t *err = swf_history__pg_begin(pg->conn);
    if (err != NULL)
        goto out;
    err = swf_history__pg_query(pg->conn, sql, 2, params, &res);
    if (err != NULL)
        goto out;
    uint64_t n = 0;
    for (int r = 0; r < PQntuples(res); r++)
        row(s, res, r, &p, seen, now, &n);
    if (p.n > 0)
        err = s->cfg.send(s->cfg.send_ctx, p.items, p.n);
    if (delete_outbox && PQntuples(res) > 0) {
        /* The rows sent, and those that make no task (logged), go; a task
         * Kafka did not take stays for the next tick. One that Kafka will
         * never take (too large for the broker) fails every tick with its
         * reason, but holds back no other task. */
        bool *kept = calloc((size_t)PQntuples(res), sizeof(*kept));
        swf_history_outbox_key_t *keys = calloc((size_t)PQntuples(res), sizeof(*keys));
        if (kept == NULL || keys == NULL)
            abort();
        for (size_t i = 0; err != NULL && i < p.n; i++) {
            kept[p.rows[i]] = !p.items[i].sent;
            n -= !p.items[i].sent;
        }
        size_t nk = 0;
        for (int r = 0; r < PQntuples(res); r++) {
            if (!kept[r])
                keys[nk++] = (swf_history_outbox_key_t){PQgetvalue(res, r, 0),
                                                        strtoll(PQgetvalue(res, r, 1), NULL, 10)};
        }
        swf_error_t *unsent = err;
        err = nk > 0 ? swf_history_outbox_delete(s->store, keys, nk) : NULL;
        free(keys);
        free(kept);
        if (err == NULL)
            err = swf_history__pg_commit(pg->conn);
        if (err != NULL) {
            swf_history__pg_rollback(pg->conn);
            swf_error_free(unsent);
        } else {
            __atomic_add_fetch(count, n, __ATOMIC_RELAXED);
            err = unsent;
        }
        goto done;
    }
    if (err == NULL)
        err = swf_history__pg_commit(pg->conn);
    if (err == NULL)
        __atomic_add_fetch(count, n, __ATOMIC_RELAXED);
out:
    if (err != NULL)
        swf_history__pg_rollback(pg->conn);
done:
    swf_history__pg_clear(res);
    posts_free(&p);
    if (!delete_outbox && err == NULL) {
        /* The memory of this step's kind of row is what this query saw
         * (after a failure, what it did not post is due at the next tick). */
        json_object_object_foreach(seen, k, v)
        {
            json_object_object_add(s->posted, k, json_object_get(v));
        }
    }
    json_object_put(seen);
    return err;
}

static void timer_row(swf_history_service_t *s, PGresult *res, int r, posts_t *p, json_object *seen,
                      int64_t now, uint64_t *count)
{
    const char *x = PQgetvalue(res, r, 0), *t = PQgetvalue(res, r, 1);
    int64_t started = strtoll(PQgetvalue(res, r, 2), NULL, 10);
    char key[600];
    snprintf(key, sizeof(key), "timer\x1f%s\x1f%s\x1f%lld", x, t, (long long)started);
    if (!due_again(s, seen, key, now))
        return;
    posts_add(p, r, s->cfg.inbox_topic, x, swf_msg_timer_fired_new(s->cfg.secret, x, t, started));
    (*count)++;
}

/* A row that names only its execution (column 0): posts make(x) to the
 * inbox, remembered under `kind` and the execution. */
static void execution_row(swf_history_service_t *s, PGresult *res, int r, posts_t *p,
                          json_object *seen, int64_t now, uint64_t *count, const char *kind,
                          json_object *(*make)(const char *secret, const char *execution_id))
{
    const char *x = PQgetvalue(res, r, 0);
    char key[600];
    snprintf(key, sizeof(key), "%s\x1f%s", kind, x);
    if (!due_again(s, seen, key, now))
        return;
    posts_add(p, r, s->cfg.inbox_topic, x, make(s->cfg.secret, x));
    (*count)++;
}

static void exec_timeout_row(swf_history_service_t *s, PGresult *res, int r, posts_t *p,
                             json_object *seen, int64_t now, uint64_t *count)
{
    execution_row(s, res, r, p, seen, now, count, "timeout", swf_msg_execution_timed_out_new);
}

static void activity_timeout_row(swf_history_service_t *s, PGresult *res, int r, posts_t *p,
                                 json_object *seen, int64_t now, uint64_t *count)
{
    const char *x = PQgetvalue(res, r, 0), *type = PQgetvalue(res, r, 2);
    int64_t sched = strtoll(PQgetvalue(res, r, 1), NULL, 10);
    char key[600];
    snprintf(key, sizeof(key), "activity\x1f%s\x1f%lld", x, (long long)sched);
    if (!due_again(s, seen, key, now))
        return;
    posts_add(p, r, s->cfg.inbox_topic, x,
              swf_msg_activity_timed_out_new(s->cfg.secret, x, sched, type));
    (*count)++;
}

static void sweep_row(swf_history_service_t *s, PGresult *res, int r, posts_t *p, json_object *seen,
                      int64_t now, uint64_t *count)
{
    execution_row(s, res, r, p, seen, now, count, "decide", swf_msg_decide_new);
}

/* The topic strings of republished tasks must outlive the send: kept in
 * the doc itself as a hidden member would leak into the message, so they
 * are interned here for the tick. */
static json_object *tick_topics;

static void outbox_row(swf_history_service_t *s, PGresult *res, int r, posts_t *p,
                       json_object *seen, int64_t now, uint64_t *count)
{
    const char *x = PQgetvalue(res, r, 0), *list = PQgetvalue(res, r, 2);
    int64_t id = strtoll(PQgetvalue(res, r, 1), NULL, 10);
    json_object *payload = NULL, *doc = NULL, *control = NULL, *v;
    const char *text = PQgetvalue(res, r, 3);
    swf_error_t *err = swf_json_parse_stored(text, strlen(text), SWF_MSG_MAX_BYTES * 64, &payload);
    if (err == NULL && strcmp(list, SWF_HISTORY_NESTED_CLOSED_TOPIC) == 0) {
        /* A nested execution closed: its parent's decider is told
         * (decider/nested.h), on the parent's key. */
        json_object *pe = NULL;
        swf_json_get(payload, "parentWorkflowExecution", &pe);
        const char *parent = swf_json_get_string(pe, "workflowId");
        int64_t sched =
            swf_json_get(payload, "parentInitiatedEventId", &v) ? json_object_get_int64(v) : 0;
        if (parent != NULL && sched > 0) {
            json_object *interned;
            if (!swf_json_get(tick_topics, parent, &interned)) {
                interned = json_object_new_string(parent);
                json_object_object_add(tick_topics, parent, interned);
            }
            posts_add(p, r, s->cfg.inbox_topic, json_object_get_string(interned),
                      swf_msg_nested_new(s->cfg.secret, SWF_MSG_NESTED_CLOSED, parent, sched));
            (*count)++;
        }
        json_object_put(payload);
        return;
    }
    if (err == NULL && swf_json_get(payload, "control", &control) &&
        swf_task_list_nested_pattern(swf_json_get_string(control, "resource")) != NULL) {
        /* A nested execution's Task: no worker serves it; the parent's
         * decider starts the child (decider/nested.h). */
        posts_add(p, r, s->cfg.inbox_topic, x,
                  swf_msg_nested_new(s->cfg.secret, SWF_MSG_NESTED_START, x, id));
        (*count)++;
        json_object_put(payload);
        return;
    }
    if (err == NULL)
        err = swf_msg_activity_task_new(s->cfg.secret, x, id, payload, &doc);
    json_object_put(payload);
    if (err != NULL) {
        slog(s, "outbox row %s/%lld: %s", x, (long long)id, swf_error_message(err));
        swf_error_free(err);
        return;
    }
    char topic[600];
    snprintf(topic, sizeof(topic), "%s%s", s->cfg.task_prefix, list);
    json_object *interned;
    if (!swf_json_get(tick_topics, topic, &interned)) {
        interned = json_object_new_string(topic);
        json_object_object_add(tick_topics, topic, interned);
    }
    posts_add(p, r, json_object_get_string(interned), x, doc);
    (*count)++;
}

/* ---- time skipping (development) ------------------------------------------
 *
 * Every open execution with a pending timer or an execution timeout, its
 * timers earliest first, its virtual time (the wall clock plus its
 * offset, in ms), and whether it is idle: no decision task pending (the
 * last event is not WorkflowExecutionStarted or DecisionTask
 * Scheduled/Started) and no activity without a result. Timers' fire_at and
 * the start time are virtual already: they come from the events' times. */
static const char skip_sql[] =
    "SELECT x.execution_id, (extract(epoch FROM x.start_time) * 1000)::bigint,"
    "  " EXECUTION_TIMEOUT ","
    "  t.timer_id, t.started_event_id, (extract(epoch FROM t.fire_at) * 1000)::bigint,"
    "  (extract(epoch FROM now()) * 1000)::bigint + " CLOCK_OFFSET_MS(
        "x.execution_id") ","
                          "  (SELECT v.event_type FROM events v WHERE v.execution_id = "
                          "x.execution_id"
                          "    ORDER BY v.event_id DESC LIMIT 1) NOT IN "
                          "('WorkflowExecutionStarted',"
                          "    'DecisionTaskScheduled', 'DecisionTaskStarted')"
                          "  AND NOT EXISTS (SELECT 1 FROM events a WHERE a.execution_id = "
                          "x.execution_id"
                          "    AND a.event_type = 'ActivityTaskScheduled'"
                          "    AND NOT EXISTS (SELECT 1 FROM events c WHERE c.execution_id = "
                          "a.execution_id"
                          "      AND c.event_id > a.event_id"
                          "      AND c.event_type IN ('ActivityTaskCompleted', "
                          "'ActivityTaskFailed',"
                          "        'ActivityTaskTimedOut', 'ActivityTaskCanceled')"
                          "      AND (c.attributes->>'scheduledEventId')::bigint = a.event_id))"
                          " FROM executions x JOIN events e ON e.execution_id = x.execution_id AND "
                          "e.event_id = 1"
                          " LEFT JOIN timers t ON t.execution_id = x.execution_id"
                          " WHERE x.status = 'open'"
                          "   AND (t.timer_id IS NOT NULL OR e.attributes ? "
                          "'executionStartToCloseTimeout')"
                          " ORDER BY x.execution_id, t.fire_at LIMIT $1";

/* One execution's rows [from, to) of skip_sql: posts what is due on its
 * virtual clock, and, when it is idle, what is due next (its earliest
 * timers, or its timeout), at once: nothing else can happen before. The
 * decider records them at their deadline, which moves the execution's
 * clock there (decider/decision.h). */
static void skip_execution(swf_history_service_t *s, PGresult *res, int from, int to, posts_t *p,
                           json_object *seen, int64_t now_ms)
{
    const char *x = PQgetvalue(res, from, 0);
    int64_t now = strtoll(PQgetvalue(res, from, 6), NULL, 10);
    bool idle = PQgetvalue(res, from, 7)[0] == 't';
    bool has_deadline = !PQgetisnull(res, from, 2);
    int64_t deadline = has_deadline ? strtoll(PQgetvalue(res, from, 1), NULL, 10) +
                                          (int64_t)(atof(PQgetvalue(res, from, 2)) * 1000)
                                    : INT64_MAX;
    int64_t earliest = deadline;
    for (int r = from; r < to; r++) {
        int64_t due = PQgetisnull(res, r, 3) ? INT64_MAX : strtoll(PQgetvalue(res, r, 5), NULL, 10);
        if (due < earliest)
            earliest = due;
    }
    if (idle && earliest != INT64_MAX && earliest > now)
        now = earliest;
    char key[600];
    for (int r = from; r < to; r++) {
        if (PQgetisnull(res, r, 3) || strtoll(PQgetvalue(res, r, 5), NULL, 10) > now)
            continue;
        const char *t = PQgetvalue(res, r, 3), *started = PQgetvalue(res, r, 4);
        snprintf(key, sizeof(key), "timer\x1f%s\x1f%s\x1f%s", x, t, started);
        if (due_again(s, seen, key, now_ms)) {
            posts_add(p, r, s->cfg.inbox_topic, x,
                      swf_msg_timer_fired_new(s->cfg.secret, x, t, strtoll(started, NULL, 10)));
            s->stats.timers_fired++;
        }
    }
    snprintf(key, sizeof(key), "timeout\x1f%s", x);
    if (deadline <= now && due_again(s, seen, key, now_ms)) {
        posts_add(p, from, s->cfg.inbox_topic, x,
                  swf_msg_execution_timed_out_new(s->cfg.secret, x));
        s->stats.executions_timed_out++;
    }
}

/* Time skipping: timers and execution timeouts on each execution's
 * virtual clock, skipping the time it spends idle (see service.h). */
static swf_error_t *skip_step(swf_history_service_t *s)
{
    swf_history__pg_t *pg = swf_history__pg(s->store);
    const char *params[1] = {"20000"};
    PGresult *res = NULL;
    swf_error_t *err = swf_history__pg_query(pg->conn, skip_sql, 1, params, &res);
    if (err != NULL)
        return err;
    posts_t p = {0};
    json_object *seen = json_object_new_object();
    int64_t now_ms = swf_time_now_ms();
    int n = PQntuples(res);
    for (int from = 0, to; from < n; from = to) {
        for (to = from + 1;
             to < n && strcmp(PQgetvalue(res, to, 0), PQgetvalue(res, from, 0)) == 0;)
            to++;
        skip_execution(s, res, from, to, &p, seen, now_ms);
    }
    if (p.n > 0)
        err = s->cfg.send(s->cfg.send_ctx, p.items, p.n);
    if (err == NULL) {
        json_object_object_foreach(seen, k, v)
        {
            json_object_object_add(s->posted, k, json_object_get(v));
        }
    }
    json_object_put(seen);
    posts_free(&p);
    swf_history__pg_clear(res);
    return err;
}

/* Keeps the first error of a tick's steps in *first. */
static void keep_first(swf_error_t **first, swf_error_t *err)
{
    if (*first == NULL)
        *first = err;
    else
        swf_error_free(err);
}

/*
 * Every step runs even when one before it failed: a step that fails on
 * one row (Kafka refusing a message, a value PostgreSQL cannot compute
 * with) must not hold up timers, timeouts and republishing for every
 * execution. The tick returns the first failure.
 */
swf_error_t *swf_history_service_tick(swf_history_service_t *s)
{
    char scale[32], age[32];
    swf_error_t *err = swf_history__pg_ready(swf_history__pg(s->store));
    if (err != NULL) {
        __atomic_add_fetch(&s->stats.ticks, 1, __ATOMIC_RELAXED);
        return err;
    }
    /* Under time skip, the virtual clocks decide what is due (the wall
     * clock would fire a timer early while an activity runs, when an
     * execution's clock is behind it, and an activity's timeout late
     * after a skip). */
    bool skip = s->cfg.time_skip;
    if (skip)
        keep_first(&err, skip_step(s));
    snprintf(scale, sizeof(scale), "%.9g", s->cfg.time_scale);
    if (!skip) {
        keep_first(&err, step(s, timers_sql, scale, timer_row, &s->stats.timers_fired, false));
        keep_first(&err, step(s, exec_timeouts_sql, scale, exec_timeout_row,
                              &s->stats.executions_timed_out, false));
    }
    keep_first(&err, step(s, skip ? activity_timeouts_skip_sql : activity_timeouts_sql, "1",
                          activity_timeout_row, &s->stats.activities_timed_out, false));
    snprintf(age, sizeof(age), "%d", s->cfg.outbox_age_ms);
    tick_topics = json_object_new_object();
    keep_first(&err, step(s, outbox_sql, age, outbox_row, &s->stats.outbox_republished, true));
    json_object_put(tick_topics);
    tick_topics = NULL;
    snprintf(age, sizeof(age), "%d", s->cfg.sweep_age_ms);
    keep_first(&err, step(s, skip ? sweep_skip_sql : sweep_sql, age, sweep_row,
                          &s->stats.decides_posted, false));
    /* Forget posts whose rows are no longer due (each step re-adds its own). */
    if (json_object_object_length(s->posted) > 100000) {
        json_object_put(s->posted);
        s->posted = json_object_new_object();
    }
    __atomic_add_fetch(&s->stats.ticks, 1, __ATOMIC_RELAXED);
    return err;
}

/* A tick that fails (the database restarts, Kafka is away) is retried on
 * later ticks, spaced out from tick_ms up to RETRY_PAUSE_MS_MAX. The first
 * failure of a run of them is logged, then one line every
 * RETRY_LOG_EVERY_MS while it lasts, and one when a tick passes again. */
#define RETRY_PAUSE_MS_MAX 5000
#define RETRY_LOG_EVERY_MS 30000

void swf_history_service_run(swf_history_service_t *s)
{
    int pause_ms = s->cfg.tick_ms;
    unsigned failures = 0;
    int64_t logged_ms = 0;
    while (!s->stop) {
        swf_error_t *err = swf_history_service_tick(s);
        int64_t now_ms = swf_time_now_ms();
        if (err != NULL) {
            if (failures == 0 || now_ms - logged_ms >= RETRY_LOG_EVERY_MS) {
                slog(s, "%s%s; retrying", swf_error_message(err),
                     swf_error_retriable(err) ? "" : " (not known to be transient)");
                logged_ms = now_ms;
            }
            swf_error_free(err);
            pause_ms = failures++ == 0 ? s->cfg.tick_ms : pause_ms * 2;
            if (pause_ms > RETRY_PAUSE_MS_MAX)
                pause_ms = RETRY_PAUSE_MS_MAX;
        } else {
            if (failures > 0)
                slog(s, "ticks pass again, after %u failed", failures);
            failures = 0;
            pause_ms = s->cfg.tick_ms;
        }
        for (int slept = 0; slept < pause_ms && !s->stop; slept += 20)
            usleep(20000);
    }
}

/* The outbox rows of the (execution, event id) pairs given as two jsonb
 * arrays; prepared on every connection (pg_internal.h). */
const char swf_history__outbox_delete_sql[] =
    "DELETE FROM outbox o USING (SELECT * FROM unnest("
    "  ARRAY(SELECT jsonb_array_elements_text($1::jsonb)),"
    "  ARRAY(SELECT (jsonb_array_elements_text($2::jsonb))::bigint)) AS k(x, i)) k"
    " WHERE o.execution_id = k.x AND o.event_id = k.i";

/* Both deletes: sent only, or run to its end; an earlier delete's error
 * first. */
static swf_error_t *outbox_delete(swf_history_store_t *store, const swf_history_outbox_key_t *keys,
                                  size_t n, bool wait)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *earlier = swf_history__pg_collect(pg);
    if (n == 0)
        return earlier;
    swf_error_t *err = swf_history__pg_prepare(pg);
    if (err != NULL) {
        swf_error_free(earlier);
        return err;
    }
    json_object *xs = json_object_new_array(), *ids = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object_array_add(xs, json_object_new_string(keys[i].execution_id));
        json_object_array_add(ids, json_object_new_int64(keys[i].event_id));
    }
    const char *params[2] = {swf_json_str(xs), swf_json_str(ids)};
    err = wait ? swf_history__pg_prepared(pg, "swf_outbox_delete", 2, params, NULL)
               : swf_history__pg_send_prepared(pg, "swf_outbox_delete", 2, params);
    json_object_put(xs);
    json_object_put(ids);
    if (earlier != NULL) {
        swf_error_free(err);
        return earlier;
    }
    return err;
}

swf_error_t *swf_history_outbox_delete(swf_history_store_t *store,
                                       const swf_history_outbox_key_t *keys, size_t n)
{
    return outbox_delete(store, keys, n, true);
}

swf_error_t *swf_history_outbox_delete_send(swf_history_store_t *store,
                                            const swf_history_outbox_key_t *keys, size_t n)
{
    return outbox_delete(store, keys, n, false);
}

swf_error_t *swf_history_outbox_wait(swf_history_store_t *store)
{
    return swf_history__pg_collect(swf_history__pg(store));
}
