/*
 * follow.c - `swf start ... --wait`: follow an execution live, one line per
 * thing that happened, until it closes; then its result.
 *
 * The history in PostgreSQL is the only place where progress shows, so
 * following is polling it: every FOLLOW_POLL_MS, load the events after the
 * last one seen (swf_history_load with after_id; an execution's events are
 * append-only with dense ids, so "after the last id" never misses or repeats
 * one). Polling keeps the command independent of Kafka and of which decider
 * holds the execution; a tenth of a second is quicker than a person reads,
 * and one indexed range query per poll costs the database next to nothing.
 *
 * The events themselves only know activities and timers. The states an
 * execution passes through (a Choice, a Pass, a Map iteration) come from
 * the interpreter: the events are applied, as they arrive, to an execution
 * object with a trace callback, exactly as `swf timeline` does on a whole
 * history. Should the fold fail (a history recorded under another token
 * secret or by a newer interpreter), following goes on with the events
 * alone and says so once; the events still tell the whole story of the
 * activities, and ActivityTaskScheduled names its state (control.state).
 *
 * Output is for a person: "#ID  HH:MM:SS.mmm  what". The last lines are the
 * outcome and, for a success, the output as compact JSON on a line of its own,
 * so `swf start ... --wait | tail -1` is the result.
 */
#include "cli/cli.h"

#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decider/asl/exec.h"
#include "decider/nested.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/time.h"
#include "protocol/token.h"

#define FOLLOW_POLL_MS 100
/* The pause between loads while the database does not answer (a restart,
 * a dropped connection), which is waited out like every process does. */
#define FOLLOW_RETRY_MS 500
/* Events read per query, so a long history is read in bounded pieces. */
#define FOLLOW_BATCH_EVENTS 1000
/* Inputs, results and causes longer than this are cut in a line. */
#define FOLLOW_VALUE_CUT 120

typedef struct follow {
    FILE *out;
    swf_asl_exec_t *exec; /* NULL once the fold failed */
    json_object *labels;  /* scheduledEventId -> "payments for Charge" */
} follow_t;

/* "HH:MM:SS.mmm" of an event time. */
static const char *clock_str(int64_t ms, char buf[SWF_TIME_BUF])
{
    swf_time_format_ms(ms, buf);
    buf[23] = '\0'; /* drop the zone: "YYYY-MM-DDTHH:MM:SS.mmm" */
    return buf + 11;
}

static const char *cut(const char *s, char *buf, size_t size)
{
    size_t n = strlen(s);
    if (n < size && n <= FOLLOW_VALUE_CUT)
        return s;
    size_t keep = size - 4 < FOLLOW_VALUE_CUT ? size - 4 : FOLLOW_VALUE_CUT;
    snprintf(buf, size, "%.*s...", (int)keep, s);
    return buf;
}

static const char *json_cut(json_object *v, char *buf, size_t size)
{
    return cut(swf_json_str(v), buf, size);
}

static void line(follow_t *f, int64_t event_id, int64_t ms, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void line(follow_t *f, int64_t event_id, int64_t ms, const char *fmt, ...)
{
    char t[SWF_TIME_BUF];
    fprintf(f->out, "#%-5lld %s  ", (long long)event_id, clock_str(ms, t));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f->out, fmt, ap);
    va_end(ap);
    fputc('\n', f->out);
}

/* "Charge" at top level, "Fulfil[0]/PackItems[1]/Pack" inside. A name
 * longer than buf keeps its end (the state itself) behind "...". */
static void state_name(char *buf, size_t size, const char *path, const char *state)
{
    const char *p = path != NULL ? path : "", *st = state ? state : "?";
    size_t plen = strlen(p), slen = strlen(st), len = plen + (plen ? 1 : 0) + slen;
    if (len < size) {
        snprintf(buf, size, "%s%s%s", p, plen ? "/" : "", st);
        return;
    }
    char *full = malloc(len + 1);
    if (full == NULL)
        abort();
    snprintf(full, len + 1, "%s%s%s", p, plen ? "/" : "", st);
    snprintf(buf, size, "...%s", full + len - (size - 4));
    free(full);
}

static void on_trace(void *ctx, const swf_asl_trace_t *t)
{
    follow_t *f = ctx;
    char name[512], v[FOLLOW_VALUE_CUT + 4];
    state_name(name, sizeof(name), t->path, t->state);
    const char *error = swf_json_get_string(t->data, "Error");
    const char *cause = swf_json_get_string(t->data, "Cause");
    switch (t->kind) {
    case SWF_ASL_STATE_ENTERED:
        line(f, t->event_id, t->time_ms, "entered %s (%s)", name, t->state_type);
        break;
    case SWF_ASL_STATE_EXITED:
        break; /* the next state entered says as much */
    case SWF_ASL_STATE_FAILED:
        line(f, t->event_id, t->time_ms, "state %s failed: %s%s%s", name, error ? error : "?",
             cause && cause[0] ? ": " : "", cause && cause[0] ? cut(cause, v, sizeof(v)) : "");
        break;
    case SWF_ASL_STATE_RETRIED: {
        json_object *n = NULL;
        swf_json_get(t->data, "RetryCount", &n);
        line(f, t->event_id, t->time_ms, "retrying %s after %s (retry %d)", name,
             error ? error : "?", n ? json_object_get_int(n) : 0);
        break;
    }
    case SWF_ASL_STATE_CAUGHT: {
        const char *next = swf_json_get_string(t->data, "Next");
        line(f, t->event_id, t->time_ms, "caught %s in %s, next %s", error ? error : "?", name,
             next ? next : "?");
        break;
    }
    }
}

static void fold(follow_t *f, const swf_event_t *ev)
{
    if (f->exec == NULL)
        return;
    swf_error_t *err = swf_asl_exec_apply(f->exec, ev);
    if (err == NULL)
        return;
    fprintf(stderr, "swf: states are not shown after event %lld (%s); events still are\n",
            (long long)ev->id, swf_error_message(err));
    swf_error_free(err);
    swf_asl_exec_free(f->exec);
    f->exec = NULL;
}

static const char *label_of(follow_t *f, const swf_event_t *ev)
{
    json_object *id = NULL;
    swf_json_get(ev->attrs, "scheduledEventId", &id);
    const char *l = swf_json_get_string(f->labels, json_object_get_string(id));
    return l != NULL ? l : "?";
}

/* A string member of a nested object, or "?". */
static const char *member_or(json_object *obj, const char *key)
{
    const char *s = swf_json_get_string(obj, key);
    return s != NULL ? s : "?";
}

static const char *str_or(const swf_event_t *ev, const char *key, const char *dflt)
{
    const char *s = swf_json_get_string(ev->attrs, key);
    return s != NULL ? s : dflt;
}

/* Prints the line of one event (nothing for the bookkeeping ones). Returns
 * the exit status once the event closes the execution, -1 before. */
static int event_show(follow_t *f, const swf_event_t *ev)
{
    char v[FOLLOW_VALUE_CUT + 4], w[FOLLOW_VALUE_CUT + 4];
    json_object *x = NULL;
    switch (ev->type) {
    case SWF_EVENT_WORKFLOW_EXECUTION_STARTED: {
        json_object *type = NULL;
        swf_json_get(ev->attrs, "workflowType", &type);
        swf_json_get(ev->attrs, "input", &x);
        line(f, ev->id, ev->time_ms, "started %s (version %s), input %s",
             str_or(ev, "executionId", "?"), member_or(type, "version"), json_cut(x, v, sizeof(v)));
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_SCHEDULED: {
        json_object *type = NULL, *control = NULL, *attempt = NULL;
        swf_json_get(ev->attrs, "activityType", &type);
        swf_json_get(ev->attrs, "control", &control);
        swf_json_get(control, "attempt", &attempt);
        swf_json_get(ev->attrs, "input", &x);
        char name[512], label[700];
        state_name(name, sizeof(name), swf_json_get_string(control, "path"),
                   swf_json_get_string(control, "state"));
        snprintf(label, sizeof(label), "activity %s (%s, state %s)", str_or(ev, "activityId", "?"),
                 member_or(type, "name"), name);
        char key[32];
        snprintf(key, sizeof(key), "%lld", (long long)ev->id);
        json_object_object_add(f->labels, key, json_object_new_string(label));
        line(f, ev->id, ev->time_ms, "scheduled %s attempt %d, input %s", label,
             attempt ? json_object_get_int(attempt) : 0, json_cut(x, v, sizeof(v)));
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_STARTED: {
        /* Only a nested execution's start is news (decider/nested.h). */
        const char *who = str_or(ev, "identity", "");
        size_t n = strlen(SWF_NESTED_IDENTITY);
        if (strncmp(who, SWF_NESTED_IDENTITY, n) == 0 && who[n] != '\0')
            line(f, ev->id, ev->time_ms, "started nested execution %s for %s", who + n,
                 label_of(f, ev));
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_COMPLETED:
        swf_json_get(ev->attrs, "result", &x);
        line(f, ev->id, ev->time_ms, "completed %s, result %s", label_of(f, ev),
             json_cut(x, v, sizeof(v)));
        break;
    case SWF_EVENT_ACTIVITY_TASK_FAILED:
        line(f, ev->id, ev->time_ms, "failed %s: %s: %s", label_of(f, ev),
             str_or(ev, "reason", "States.TaskFailed"),
             cut(str_or(ev, "details", ""), v, sizeof(v)));
        break;
    case SWF_EVENT_ACTIVITY_TASK_TIMED_OUT:
        line(f, ev->id, ev->time_ms, "timed out %s (%s)", label_of(f, ev),
             str_or(ev, "timeoutType", "?"));
        break;
    case SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED:
        line(f, ev->id, ev->time_ms, "cancel requested for activity %s",
             str_or(ev, "activityId", "?"));
        break;
    case SWF_EVENT_ACTIVITY_TASK_CANCELED:
        line(f, ev->id, ev->time_ms, "canceled %s", label_of(f, ev));
        break;
    case SWF_EVENT_TIMER_STARTED:
        swf_json_get(ev->attrs, "startToFireTimeout", &x);
        line(f, ev->id, ev->time_ms, "timer %s started (%s s)", str_or(ev, "timerId", "?"),
             json_cut(x, v, sizeof(v)));
        break;
    case SWF_EVENT_TIMER_FIRED:
        line(f, ev->id, ev->time_ms, "timer %s fired", str_or(ev, "timerId", "?"));
        break;
    case SWF_EVENT_TIMER_CANCELED:
        line(f, ev->id, ev->time_ms, "timer %s canceled", str_or(ev, "timerId", "?"));
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED:
        swf_json_get(ev->attrs, "input", &x);
        line(f, ev->id, ev->time_ms, "signal %s, input %s", str_or(ev, "signalName", "?"),
             json_cut(x, v, sizeof(v)));
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
        line(f, ev->id, ev->time_ms, "cancel requested: %s",
             cut(str_or(ev, "cause", ""), v, sizeof(v)));
        break;
    case SWF_EVENT_DECISION_TASK_TIMED_OUT:
    case SWF_EVENT_COMPLETE_WORKFLOW_EXECUTION_FAILED:
    case SWF_EVENT_FAIL_WORKFLOW_EXECUTION_FAILED:
    case SWF_EVENT_CANCEL_WORKFLOW_EXECUTION_FAILED:
        line(f, ev->id, ev->time_ms, "%s %s", swf_event_type_name(ev->type),
             json_cut(ev->attrs, v, sizeof(v)));
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED:
        swf_json_get(ev->attrs, "result", &x);
        line(f, ev->id, ev->time_ms, "execution succeeded");
        fprintf(f->out, "%s\n", swf_json_str(x));
        return SWF_EXIT_OK;
    case SWF_EVENT_WORKFLOW_EXECUTION_FAILED:
        line(f, ev->id, ev->time_ms, "execution failed");
        fprintf(f->out, "error: %s\ncause: %s\n", str_or(ev, "reason", ""),
                str_or(ev, "details", ""));
        return SWF_EXIT_NO;
    case SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT:
        line(f, ev->id, ev->time_ms, "execution timed out (%s)", str_or(ev, "timeoutType", "?"));
        fprintf(f->out, "error: States.Timeout\n");
        return SWF_EXIT_NO;
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCELED:
        swf_json_get(ev->attrs, "details", &x);
        line(f, ev->id, ev->time_ms, "execution canceled, details %s", json_cut(x, v, sizeof(v)));
        return SWF_EXIT_NO;
    case SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED:
        line(f, ev->id, ev->time_ms, "execution terminated: %s: %s",
             cut(str_or(ev, "reason", ""), v, sizeof(v)),
             cut(str_or(ev, "details", ""), w, sizeof(w)));
        return SWF_EXIT_NO;
    default:
        break; /* decision task bookkeeping, ActivityTaskStarted, heartbeats, markers */
    }
    return -1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int swf_cli_follow(const char *execution_id, FILE *out)
{
    swf_history_store_t *s;
    swf_error_t *err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    if (err != NULL) {
        fprintf(stderr, "swf: following %s: %s\n", execution_id, swf_error_message(err));
        swf_error_free(err);
        return SWF_EXIT_ERROR;
    }
    follow_t f = {out, swf_asl_exec_new(), json_object_new_object()};
    /* Definitions were validated when registered; tokens need the secret
     * the deciders sign with. */
    swf_asl_exec_set_trusted(f.exec, true);
    swf_asl_exec_set_token_secret(f.exec, swf_token_secret_env());
    swf_asl_exec_set_trace(f.exec, on_trace, &f);
    int64_t last = 0;
    int code = -1;
    swf_event_list_t events = {0};
    bool down = false; /* the database went away while following */
    while (code < 0) {
        swf_event_list_clear(&events);
        err = swf_history_load(s, execution_id, last, FOLLOW_BATCH_EVENTS, &events);
        if (err != NULL && swf_error_code(err) == SWF_E_DB && swf_error_retriable(err)) {
            /* A restart or a dropped connection is waited out, as every
             * other process does; the next load connects again. */
            if (!down)
                fprintf(stderr, "swf: following %s: %s; retrying until the database answers\n",
                        execution_id, swf_error_message(err));
            down = true;
            swf_error_free(err);
            sleep_ms(FOLLOW_RETRY_MS);
            continue;
        }
        if (err != NULL) {
            fprintf(stderr, "swf: following %s: %s\n", execution_id, swf_error_message(err));
            swf_error_free(err);
            code = SWF_EXIT_ERROR;
            break;
        }
        if (down)
            fprintf(stderr, "swf: following %s: the database answers again\n", execution_id);
        down = false;
        for (size_t i = 0; i < events.count && code < 0; i++) {
            const swf_event_t *ev = &events.items[i];
            assert(ev->id == last + 1);
            last = ev->id;
            fold(&f, ev);
            code = event_show(&f, ev);
        }
        fflush(out);
        if (code < 0 && events.count < FOLLOW_BATCH_EVENTS)
            sleep_ms(FOLLOW_POLL_MS);
    }
    swf_event_list_free(&events);
    swf_asl_exec_free(f.exec);
    json_object_put(f.labels);
    swf_history_store_free(s);
    return code;
}
