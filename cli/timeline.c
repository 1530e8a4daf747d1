/*
 * timeline.c - `swf timeline (ID | --file HISTORY) [--json]`, also reached as
 * `swf history ID --states`: an execution shown as ASL states entered and
 * exited, with inputs, outputs, times and durations, nested by Parallel
 * branch and Map iteration.
 *
 * Nothing of this is stored: the history only knows activities and timers.
 * The timeline is derived by replaying the history with the interpreter's
 * trace callback, which reports every state entered, exited, failed, retried
 * or caught, with the path of the frame it ran in ("Fulfil[0]/PackItems[2]").
 * That path also gives the nesting: a state at path "P/B[j]" belongs to
 * iteration (or branch) j of the state B entered at path P, which is still
 * open when its children start. Open entries are found by (path, state) in a
 * hash table, so a Map over 100,000 items costs linear time.
 *
 * Times are the decision tasks' times (the only clock an execution has), so
 * a state's duration is the time between the decision task that entered it
 * and the one that saw it finish.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/replay_common.h"
#include "decider/nested.h"
#include "decider/replay.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/time.h"

#define TIMELINE_USAGE "timeline (ID | --file HISTORY.jsonl) [--json]"
/* Inputs and outputs longer than this are cut in the text form. */
#define VALUE_CUT 100

typedef enum outcome {
    OUT_RUNNING,
    OUT_SUCCEEDED,
    OUT_FAILED,
    OUT_CAUGHT,
} outcome_t;

typedef struct entry {
    char *path;
    char *state;
    char *type;
    json_object *input;
    json_object *output; /* output, or the error object */
    int64_t enter_ms, exit_ms;
    int64_t enter_event, exit_event;
    outcome_t outcome;
    int retries;
    char *error; /* the last error seen (retried, caught or failed) */
    char *next;  /* the catcher's Next */
    long parent; /* index of the Parallel/Map entry, or -1 */
    long index;  /* branch or iteration index in the parent */
    long *kids;
    size_t nkids, capkids;
} entry_t;

typedef struct timeline {
    entry_t *items;
    size_t count, cap;
    json_object *open; /* "path\x1fstate" -> index of the open entry */
} timeline_t;

/* A copy of s, or of "" when s is NULL. */
static char *text_dup(const char *s)
{
    return swf_strdup(s ? s : "");
}

/* "path\x1fstate", malloc'd: paths of nested Parallels and Maps have no
 * length limit, and a key cut short would merge different states. */
static char *open_key(const char *path, size_t path_len, const char *state, size_t state_len)
{
    char *key = malloc(path_len + state_len + 2);
    if (key == NULL)
        abort();
    memcpy(key, path, path_len);
    key[path_len] = '\x1f';
    memcpy(key + path_len + 1, state, state_len);
    key[path_len + 1 + state_len] = '\0';
    return key;
}

static long open_find(timeline_t *tl, const char *path, size_t path_len, const char *state,
                      size_t state_len)
{
    char *key = open_key(path, path_len, state, state_len);
    json_object *v;
    long i = swf_json_get(tl->open, key, &v) ? (long)json_object_get_int64(v) : -1;
    free(key);
    return i;
}

static void open_del(timeline_t *tl, const entry_t *e)
{
    char *key = open_key(e->path, strlen(e->path), e->state, strlen(e->state));
    json_object_object_del(tl->open, key);
    free(key);
}

/* The parent of a frame path "P/B[j]": the open entry of state B at path P. */
static void find_parent(timeline_t *tl, const char *path, long *parent, long *index)
{
    *parent = -1;
    *index = 0;
    size_t len = strlen(path);
    if (len == 0 || path[len - 1] != ']')
        return;
    const char *br = strrchr(path, '[');
    if (br == NULL)
        return;
    const char *seg = br;
    while (seg > path && seg[-1] != '/')
        seg--;
    size_t plen = seg > path ? (size_t)(seg - path - 1) : 0;
    *index = strtol(br + 1, NULL, 10);
    *parent = open_find(tl, path, plen, seg, (size_t)(br - seg));
}

static void on_trace(void *ctx, const swf_asl_trace_t *t)
{
    timeline_t *tl = ctx;
    long i = open_find(tl, t->path, strlen(t->path), t->state, strlen(t->state));
    if (t->kind == SWF_ASL_STATE_ENTERED) {
        if (i >= 0)
            return; /* entered again after a retry: the same visit */
        SWF_ARRAY_RESERVE(tl->items, tl->count, tl->cap, 64);
        entry_t *e = &tl->items[tl->count];
        memset(e, 0, sizeof(*e));
        e->path = text_dup(t->path);
        e->state = text_dup(t->state);
        e->type = text_dup(t->state_type);
        e->input = swf_json_ref(t->data);
        e->enter_ms = t->time_ms;
        e->enter_event = t->event_id;
        find_parent(tl, t->path, &e->parent, &e->index);
        if (e->parent >= 0) {
            entry_t *p = &tl->items[e->parent];
            SWF_ARRAY_RESERVE(p->kids, p->nkids, p->capkids, 4);
            p->kids[p->nkids++] = (long)tl->count;
        }
        char *key = open_key(t->path, strlen(t->path), t->state, strlen(t->state));
        json_object_object_add(tl->open, key, json_object_new_int64((int64_t)tl->count));
        free(key);
        tl->count++;
        return;
    }
    if (i < 0)
        return;
    entry_t *e = &tl->items[i];
    const char *error = swf_json_get_string(t->data, "Error");
    if (error != NULL) {
        free(e->error);
        e->error = text_dup(error);
    }
    if (t->kind == SWF_ASL_STATE_RETRIED) {
        e->retries++;
        return;
    }
    e->exit_ms = t->time_ms;
    e->exit_event = t->event_id;
    json_object_put(e->output);
    e->output = swf_json_ref(t->data);
    if (t->kind == SWF_ASL_STATE_EXITED) {
        e->outcome = OUT_SUCCEEDED;
    } else if (t->kind == SWF_ASL_STATE_CAUGHT) {
        e->outcome = OUT_CAUGHT;
        e->next = text_dup(swf_json_get_string(t->data, "Next"));
    } else {
        e->outcome = OUT_FAILED;
    }
    open_del(tl, e);
}

static void timeline_free(timeline_t *tl)
{
    for (size_t i = 0; i < tl->count; i++) {
        entry_t *e = &tl->items[i];
        free(e->path);
        free(e->state);
        free(e->type);
        free(e->error);
        free(e->next);
        free(e->kids);
        json_object_put(e->input);
        json_object_put(e->output);
    }
    free(tl->items);
    json_object_put(tl->open);
}

/* "2.000s", "1m05.250s", "3h00m00.000s". */
static const char *duration_str(int64_t ms, char *buf, size_t size)
{
    if (ms < 0)
        ms = 0;
    int64_t s = ms / 1000, frac = ms % 1000;
    if (s < 60)
        snprintf(buf, size, "%lld.%03llds", (long long)s, (long long)frac);
    else if (s < 3600)
        snprintf(buf, size, "%lldm%02lld.%03llds", (long long)(s / 60), (long long)(s % 60),
                 (long long)frac);
    else
        snprintf(buf, size, "%lldh%02lldm%02lld.%03llds", (long long)(s / 3600),
                 (long long)(s / 60 % 60), (long long)(s % 60), (long long)frac);
    return buf;
}

static const char *outcome_str(const entry_t *e, bool closed, char *buf, size_t size)
{
    char retries[64] = "";
    if (e->retries > 0)
        snprintf(retries, sizeof(retries), " after %d retr%s", e->retries,
                 e->retries == 1 ? "y" : "ies");
    switch (e->outcome) {
    case OUT_SUCCEEDED:
        snprintf(buf, size, "succeeded%s", retries);
        break;
    case OUT_FAILED:
        snprintf(buf, size, "FAILED%s: %s", retries, e->error ? e->error : "");
        break;
    case OUT_CAUGHT:
        snprintf(buf, size, "caught %s%s -> %s", e->error ? e->error : "", retries,
                 e->next ? e->next : "?");
        break;
    case OUT_RUNNING:
        snprintf(buf, size, "%s%s",
                 closed ? "abandoned (the execution or its branch ended)" : "running", retries);
        break;
    }
    return buf;
}

static void print_entry(const timeline_t *tl, long i, int depth, int64_t start_ms, bool closed)
{
    const entry_t *e = &tl->items[i];
    char off[48], dur[48], out[512], v[VALUE_CUT + 4];
    int64_t end = e->outcome == OUT_RUNNING ? -1 : e->exit_ms;
    printf("  +%-13s %-13s %*s%s (%s)  %s\n",
           duration_str(e->enter_ms - start_ms, off, sizeof(off)),
           end < 0 ? "-" : duration_str(end - e->enter_ms, dur, sizeof(dur)), depth * 2, "",
           e->state, e->type, outcome_str(e, closed, out, sizeof(out)));
    int pad = 31 + depth * 2;
    printf("%*sin   %s\n", pad, "", swf_cli_replay_json_cut(e->input, v, VALUE_CUT));
    if (e->outcome != OUT_RUNNING)
        printf("%*s%-4s %s\n", pad, "", e->outcome == OUT_SUCCEEDED ? "out" : "err",
               swf_cli_replay_json_cut(e->output, v, VALUE_CUT));
    if (e->nkids == 0)
        return;
    /* Children grouped by branch or iteration, each group in its order. */
    long max_index = 0;
    for (size_t k = 0; k < e->nkids; k++) {
        if (tl->items[e->kids[k]].index > max_index)
            max_index = tl->items[e->kids[k]].index;
    }
    bool map = strcmp(e->type, "Map") == 0;
    for (long idx = 0; idx <= max_index; idx++) {
        bool header = false;
        for (size_t k = 0; k < e->nkids; k++) {
            if (tl->items[e->kids[k]].index != idx)
                continue;
            if (!header) {
                printf("  %-14s %-13s %*s%s %ld\n", "", "", depth * 2 + 2, "",
                       map ? "iteration" : "branch", idx);
                header = true;
            }
            print_entry(tl, e->kids[k], depth + 2, start_ms, closed);
        }
    }
}

static json_object *entry_json(const timeline_t *tl, long i)
{
    const entry_t *e = &tl->items[i];
    static const char *const names[] = {"RUNNING", "SUCCEEDED", "FAILED", "CAUGHT"};
    char t[SWF_TIME_BUF];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", json_object_new_string(e->path));
    json_object_object_add(o, "state", json_object_new_string(e->state));
    json_object_object_add(o, "type", json_object_new_string(e->type));
    if (e->parent >= 0)
        json_object_object_add(o, "index", json_object_new_int64(e->index));
    swf_time_format_ms(e->enter_ms, t);
    json_object_object_add(o, "enteredAt", json_object_new_string(t));
    json_object_object_add(o, "enteredEventId", json_object_new_int64(e->enter_event));
    if (e->outcome != OUT_RUNNING) {
        swf_time_format_ms(e->exit_ms, t);
        json_object_object_add(o, "exitedAt", json_object_new_string(t));
        json_object_object_add(o, "exitedEventId", json_object_new_int64(e->exit_event));
        json_object_object_add(o, "durationMs", json_object_new_int64(e->exit_ms - e->enter_ms));
    }
    json_object_object_add(o, "outcome", json_object_new_string(names[e->outcome]));
    if (e->retries > 0)
        json_object_object_add(o, "retries", json_object_new_int(e->retries));
    json_object_object_add(o, "input", swf_json_ref(e->input));
    if (e->outcome == OUT_SUCCEEDED)
        json_object_object_add(o, "output", swf_json_ref(e->output));
    else if (e->outcome != OUT_RUNNING)
        json_object_object_add(o, "error", swf_json_ref(e->output));
    if (e->outcome == OUT_CAUGHT && e->next)
        json_object_object_add(o, "next", json_object_new_string(e->next));
    if (e->nkids > 0) {
        json_object *kids = json_object_new_array();
        for (size_t k = 0; k < e->nkids; k++)
            json_object_array_add(kids, entry_json(tl, e->kids[k]));
        json_object_object_add(o, "children", kids);
    }
    return o;
}

static const swf_cli_cmd_t timeline_cmd = {
    "swf timeline", "(ID | --workflow-id WORKFLOW_ID | --file HISTORY) [--json]",
    "Show an execution as the ASL states it entered and exited, with their times, retries and "
    "outcomes, nested by Parallel branch and Map iteration (derived by replaying the history). "
    "swf history ID --states is the same.",
    (const swf_cli_opt_t[]){
        SWF_CLI_OPTS_EXECUTION("timeline"),
        {"--file", "HISTORY", 0,
         "instead of ID: a history exported by swf export or swf run --local --history (- reads "
         "standard input)",
         "swf timeline --file order-7.jsonl"},
        {"--json", NULL, 0, "one JSON object, the states as a tree",
         "swf timeline --workflow-id order-7 --json"},
        {"--states", NULL, SWF_CLI_HIDDEN, "what swf history --states passes on", NULL},
        SWF_CLI_OPTS_END},
    NULL};

int swf_cli_timeline(int argc, char **argv)
{
    swf_cli_args_t a;
    char *id = NULL;
    if (!swf_cli_args_parse(&timeline_cmd, argc, argv, &a) ||
        !swf_cli_args_execution(&a, "--file", &id))
        return a.status;
    const char *file = swf_cli_args_get(&a, "--file");
    bool json = swf_cli_args_has(&a, "--json");

    int rc = SWF_EXIT_ERROR;
    swf_event_list_t events = {0};
    timeline_t tl = {.open = json_object_new_object()};
    swf_decider_replay_result_t res = {0};
    swf_error_t *err = swf_cli_replay_history_load(id, file, &events);
    if (err == NULL) {
        swf_decider_replay_options_t opt = {.trace = on_trace, .trace_ctx = &tl};
        err = swf_decider_replay_run(&events, &opt, &res);
    }
    if (err != NULL) {
        rc = swf_cli_replay_fail(argv[0], err);
        goto done;
    }
    swf_asl_status_t status = swf_asl_exec_status(res.exec);
    bool closed = status != SWF_ASL_RUNNING && status != SWF_ASL_NOT_STARTED;
    int64_t start = events.items[0].time_ms, last = events.items[events.count - 1].time_ms;
    /* Nested executions: the parent and the children (decider/nested.h). */
    json_object *links = swf_nested_links(&events), *parent = NULL, *children = NULL;
    swf_json_get(links, "parent", &parent);
    swf_json_get(links, "children", &children);
    if (json) {
        json_object *o = json_object_new_object(), *states = json_object_new_array();
        json_object_object_add(o, "executionId",
                               json_object_new_string(swf_cli_replay_execution_id(&events)));
        json_object_object_add(o, "status", json_object_new_string(swf_asl_status_name(status)));
        if (parent != NULL)
            json_object_object_add(o, "parent", swf_json_ref(parent));
        json_object_object_add(o, "children", swf_json_ref(children));
        for (size_t i = 0; i < tl.count; i++) {
            if (tl.items[i].parent < 0)
                json_object_array_add(states, entry_json(&tl, (long)i));
        }
        json_object_object_add(o, "states", states);
        if (res.error != NULL)
            json_object_object_add(o, "replayError",
                                   json_object_new_string(swf_error_message(res.error)));
        printf("%s\n", swf_json_str(o));
        json_object_put(o);
    } else {
        char t[SWF_TIME_BUF], d[48];
        swf_time_format_ms(start, t);
        printf("execution %s: %s; started %s, %zu events, %s\n",
               swf_cli_replay_execution_id(&events), swf_asl_status_name(status), t, events.count,
               duration_str(last - start, d, sizeof(d)));
        if (swf_asl_exec_error(res.exec) != NULL)
            printf("  error %s: %s\n", swf_asl_exec_error(res.exec),
                   swf_asl_exec_cause(res.exec) ? swf_asl_exec_cause(res.exec) : "");
        if (parent != NULL)
            printf("  parent %s (its event %lld)\n", swf_json_get_string(parent, "executionId"),
                   (long long)json_object_get_int64(
                       json_object_object_get(parent, "initiatedEventId")));
        for (size_t i = 0; i < json_object_array_length(children); i++) {
            json_object *c = json_object_array_get_idx(children, i);
            printf("  child %s (started by %s, event %lld)\n",
                   swf_json_get_string(c, "executionId"), swf_json_get_string(c, "state"),
                   (long long)json_object_get_int64(json_object_object_get(c, "scheduledEventId")));
        }
        printf("\n  %-14s %-13s %s\n", "STARTED", "TOOK", "STATE");
        for (size_t i = 0; i < tl.count; i++) {
            if (tl.items[i].parent < 0)
                print_entry(&tl, (long)i, 0, start, closed);
        }
    }
    json_object_put(links);
    rc = SWF_EXIT_OK;
    if (res.error != NULL) {
        /* What replayed is shown; the divergence is `swf replay`'s to explain. */
        fprintf(stderr, "swf %s: the timeline stops at a divergence: %s (swf replay shows it)\n",
                argv[0], swf_error_message(res.error));
        rc = SWF_EXIT_NO;
    }
done:
    swf_decider_replay_result_free(&res);
    timeline_free(&tl);
    swf_event_list_free(&events);
    free(id);
    return rc;
}
