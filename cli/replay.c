/*
 * replay.c - `swf replay (ID | --file HISTORY) [--until EVENT_ID] [--step]
 * [--definition NEW.json] [--json]`: see what the decider saw, and catch
 * non-determinism.
 *
 * A replay folds the recorded history through the current interpreter
 * (decider/replay.c), which derives every decision task's decisions again and
 * compares them with the recorded decision events. The command only chooses
 * how far to go and how to show the result:
 *
 *   - by default, one summary line when everything matches (exit 0), or a
 *     report of the first divergence (exit 1): the event id, the ASL state
 *     and its path through Parallel branches and Map iterations, and the
 *     recorded and derived decisions side by side, field by field;
 *   - --until N stops after event N and prints the execution's state there
 *     (swf_asl_exec_snapshot), for a person or as JSON;
 *   - --step prints one screen per decision task: the events that arrived
 *     since the previous task and the decisions derived for this one; on a
 *     terminal it waits for Enter between screens;
 *   - --definition NEW replays against a changed definition and answers
 *     whether running executions could continue on it.
 *
 * The side-by-side table flattens the attributes into dotted field names
 * (input.orderId, control.path) so that the one field that differs stands
 * out; long histories of big payloads only show the differing rows.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/replay_common.h"
#include "decider/asl/validate.h"
#include "decider/sw/sw.h"
#include "decider/replay.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

/* Column widths of the side-by-side table. */
#define COL_FIELD 26
#define COL_VALUE 40
/* Above this many rows, the table shows only the rows that differ. */
#define TABLE_ROWS_MAX 24

/* ---- the side-by-side table --------------------------------------------------- */

typedef struct row {
    char *field;
    char *recorded; /* NULL: absent */
    char *derived;
} row_t;

typedef struct rows {
    row_t *items;
    size_t count, cap;
} rows_t;

static row_t *rows_find(rows_t *r, const char *field)
{
    for (size_t i = 0; i < r->count; i++) {
        if (strcmp(r->items[i].field, field) == 0)
            return &r->items[i];
    }
    return NULL;
}

static row_t *rows_add(rows_t *r, const char *field)
{
    row_t *row = rows_find(r, field);
    if (row != NULL)
        return row;
    SWF_ARRAY_RESERVE(r->items, r->count, r->cap, 16);
    row = &r->items[r->count++];
    row->field = strdup(field);
    row->recorded = row->derived = NULL;
    return row;
}

static void rows_free(rows_t *r)
{
    for (size_t i = 0; i < r->count; i++) {
        free(r->items[i].field);
        free(r->items[i].recorded);
        free(r->items[i].derived);
    }
    free(r->items);
}

/* Flattens objects into dotted fields; arrays and scalars are leaves. */
static void flatten(rows_t *r, const char *prefix, json_object *v, bool recorded)
{
    if (json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) {
        json_object_object_foreach(v, key, val)
        {
            /* The one field an event has that its decision has not. */
            if (prefix[0] == '\0' && strcmp(key, "decisionTaskCompletedEventId") == 0)
                continue;
            size_t n = strlen(prefix) + strlen(key) + 2;
            char *f = malloc(n);
            snprintf(f, n, "%s%s%s", prefix, prefix[0] ? "." : "", key);
            flatten(r, f, val, recorded);
            free(f);
        }
        return;
    }
    row_t *row = rows_add(r, prefix[0] ? prefix : "(attributes)");
    char **cell = recorded ? &row->recorded : &row->derived;
    free(*cell);
    *cell = strdup(swf_json_str(v));
}

/* Prints cells of fixed width, wrapping long values onto further lines. */
static void print_row(const char *mark, const char *field, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), lf = strlen(field);
    size_t oa = 0, ob = 0, of = 0;
    do {
        int wf = (int)(lf - of < COL_FIELD ? lf - of : COL_FIELD);
        int wa = (int)(la - oa < COL_VALUE ? la - oa : COL_VALUE);
        int wb = (int)(lb - ob < COL_VALUE ? lb - ob : COL_VALUE);
        printf("%s %-*.*s  %-*.*s  %.*s\n", of == 0 ? mark : " ", COL_FIELD, wf, field + of,
               COL_VALUE, wa, a + oa, wb, b + ob);
        of += (size_t)wf;
        oa += (size_t)wa;
        ob += (size_t)wb;
    } while (of < lf || oa < la || ob < lb);
}

static void print_side_by_side(json_object *recorded, json_object *derived, int64_t event_id)
{
    rows_t rows = {0};
    json_object *rattrs = NULL, *dattrs = NULL;
    const char *rtype = NULL, *dtype = NULL;
    if (recorded != NULL) {
        rtype = swf_json_get_string(recorded, "eventType");
        swf_json_get(recorded, "attributes", &rattrs);
        rows_add(&rows, "eventType")->recorded = strdup(rtype ? rtype : "?");
    }
    if (derived != NULL) {
        dtype = swf_json_get_string(derived, "eventType");
        swf_json_get(derived, "attributes", &dattrs);
        rows_add(&rows, "eventType")->derived = strdup(dtype ? dtype : "?");
    }
    if (recorded != NULL)
        flatten(&rows, "", rattrs, true);
    if (derived != NULL)
        flatten(&rows, "", dattrs, false);

    size_t differing = 0;
    for (size_t i = 0; i < rows.count; i++) {
        row_t *r = &rows.items[i];
        if (r->recorded == NULL || r->derived == NULL || strcmp(r->recorded, r->derived) != 0)
            differing++;
    }
    bool only_diff = rows.count > TABLE_ROWS_MAX;
    char head[64];
    snprintf(head, sizeof(head), "RECORDED (event %lld)", (long long)event_id);
    printf("  %-*s  %-*s  %s\n", COL_FIELD, "FIELD", COL_VALUE, head, "DERIVED (by replay)");
    for (size_t i = 0; i < rows.count; i++) {
        row_t *r = &rows.items[i];
        const char *a = recorded == NULL ? "(no event recorded)"
                        : r->recorded    ? r->recorded
                                         : "(absent)";
        const char *b = derived == NULL ? "(nothing derived)"
                        : r->derived    ? r->derived
                                        : "(absent)";
        bool same = r->recorded && r->derived && strcmp(r->recorded, r->derived) == 0;
        if (only_diff && same && strcmp(r->field, "eventType") != 0)
            continue;
        print_row(same ? " " : "!", r->field, a, b);
    }
    if (only_diff)
        printf("  (%zu identical fields not shown; --json prints both decisions whole)\n",
               rows.count - differing);
    printf("  ! marks the %zu field%s that differ%s\n", differing, differing == 1 ? "" : "s",
           differing == 1 ? "s" : "");
    rows_free(&rows);
}

/* ---- reports ------------------------------------------------------------------- */

static const char *event_type_at(const swf_event_list_t *events, int64_t id)
{
    if (id < 1 || id > (int64_t)events->count)
        return "past the end of the history";
    return swf_event_type_name(events->items[id - 1].type);
}

/* Prints why the history does not replay; returns the exit status. */
static int report_divergence(const swf_event_list_t *events, const swf_decider_replay_result_t *res,
                             const char *against, bool json)
{
    swf_error_t *err = res->error;
    json_object *detail = NULL;
    const char *cause = swf_error_cause(err);
    if (swf_error_code(err) == SWF_E_NONDETERMINISM && cause != NULL) {
        swf_error_t *perr = swf_json_parse(cause, strlen(cause), SWF_LIMIT_JSON_BYTES, &detail);
        swf_error_free(perr);
    }
    if (json) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "executionId",
                               json_object_new_string(swf_cli_replay_execution_id(events)));
        json_object_object_add(o, "match", json_object_new_boolean(0));
        json_object_object_add(o, "kind",
                               json_object_new_string(swf_code_name(swf_error_code(err))));
        json_object_object_add(o, "message", json_object_new_string(swf_error_message(err)));
        json_object_object_add(o, "eventsReplayed",
                               json_object_new_int64((int64_t)res->events_applied));
        json_object_object_add(o, "decisionTasks",
                               json_object_new_int64((int64_t)res->decision_tasks));
        json_object_object_add(o, "detail", swf_json_ref(detail));
        printf("%s\n", swf_json_str(o));
        json_object_put(o);
        json_object_put(detail);
        return SWF_EXIT_NO;
    }
    if (detail == NULL) {
        /* Not a decision mismatch: an event that does not fit (an id out of
         * order, a result for an activity never scheduled). */
        printf("the history does not replay: %s\n", swf_error_message(err));
        printf("  execution  %s; %zu events replayed before it, %zu decision tasks matched\n",
               swf_cli_replay_execution_id(events), res->events_applied, res->decision_tasks);
        return SWF_EXIT_NO;
    }
    json_object *v;
    int64_t id = swf_json_get(detail, "eventId", &v) ? json_object_get_int64(v) : 0;
    const char *state = swf_json_get_string(detail, "state");
    const char *path = swf_json_get_string(detail, "path");
    json_object *rec = NULL, *der = NULL;
    swf_json_get(detail, "recorded", &rec);
    swf_json_get(detail, "derived", &der);
    printf("NON-DETERMINISM at event %lld (%s)%s%s\n", (long long)id, event_type_at(events, id),
           against ? " with " : "", against ? against : "");
    printf("  %s\n", swf_error_message(err));
    printf("  execution  %s\n", swf_cli_replay_execution_id(events));
    printf("  state      %s\n", state ? state
                                : id >= 1 && id <= (int64_t)events->count &&
                                        swf_event_type_is_close(events->items[id - 1].type)
                                    ? "(closing the execution)"
                                    : "(none)");
    printf("  path       %s\n", path == NULL ? "(none)" : path[0] ? path : "(top level)");
    printf("  before it  %zu events replayed, %zu decision tasks, %zu decisions matched\n\n",
           res->events_applied, res->decision_tasks, res->decisions);
    print_side_by_side(rec, der, id);
    json_object_put(detail);
    return SWF_EXIT_NO;
}

static int report_clean(const swf_event_list_t *events, const swf_decider_replay_result_t *res,
                        const char *against, bool json)
{
    const char *status = swf_asl_status_name(swf_asl_exec_status(res->exec));
    if (json) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "executionId",
                               json_object_new_string(swf_cli_replay_execution_id(events)));
        json_object_object_add(o, "match", json_object_new_boolean(1));
        json_object_object_add(o, "events", json_object_new_int64((int64_t)res->events_applied));
        json_object_object_add(o, "decisionTasks",
                               json_object_new_int64((int64_t)res->decision_tasks));
        json_object_object_add(o, "decisions", json_object_new_int64((int64_t)res->decisions));
        json_object_object_add(o, "status", json_object_new_string(status));
        if (against != NULL)
            json_object_object_add(o, "definition", json_object_new_string(against));
        printf("%s\n", swf_json_str(o));
        json_object_put(o);
    } else if (against != NULL) {
        printf("compatible: all %zu recorded decisions are derived the same with %s "
               "(%zu events, %zu decision tasks of execution %s; status %s)\n",
               res->decisions, against, res->events_applied, res->decision_tasks,
               swf_cli_replay_execution_id(events), status);
    } else {
        printf("replayed %zu events of execution %s: %zu decision tasks, all %zu decisions "
               "match; status %s\n",
               res->events_applied, swf_cli_replay_execution_id(events), res->decision_tasks,
               res->decisions, status);
    }
    return SWF_EXIT_OK;
}

/* ---- --until: the execution's state, for a person ----------------------------------- */

static void print_value(int indent, const char *label, json_object *v)
{
    char buf[204];
    printf("%*s%-16s %s\n", indent, "", label, swf_cli_replay_json_cut(v, buf, 200));
}

static void print_frame(json_object *f, int indent)
{
    const char *path = swf_json_get_string(f, "path");
    const char *state = swf_json_get_string(f, "state");
    const char *type = swf_json_get_string(f, "type");
    const char *phase = swf_json_get_string(f, "phase");
    json_object *v;
    printf("%*s%s%s%s  (%s, %s", indent, "", path && path[0] ? path : "",
           path && path[0] ? " / " : "", state ? state : "?", type ? type : "?",
           phase ? phase : "?");
    const char *act = swf_json_get_string(f, "activityId");
    const char *timer = swf_json_get_string(f, "timerId");
    if (act)
        printf(" %s", act);
    if (timer)
        printf(" %s", timer);
    if (swf_json_get(f, "retryCount", &v))
        printf(", retried %d time%s", json_object_get_int(v),
               json_object_get_int(v) == 1 ? "" : "s");
    printf(")\n");
    json_object *input = NULL, *eff = NULL, *kids = NULL, *ch = NULL;
    if (swf_json_get(f, "input", &input))
        print_value(indent + 4, "input", input);
    /* The effective input (after InputPath and Parameters) only when it
     * tells something the input does not. */
    if (swf_json_get(f, "effectiveInput", &eff) && !swf_json_equal(eff, input))
        print_value(indent + 4, "effective input", eff);
    if (swf_json_get(f, "children", &ch)) {
        json_object *t, *d, *r, *w, *fl;
        swf_json_get(ch, "total", &t);
        swf_json_get(ch, "done", &d);
        swf_json_get(ch, "running", &r);
        swf_json_get(ch, "waiting", &w);
        swf_json_get(ch, "failed", &fl);
        printf("%*s%-16s %d total, %d done, %d running, %d not started, %d failed\n", indent + 4,
               "", strcmp(type ? type : "", "Map") == 0 ? "iterations" : "branches",
               json_object_get_int(t), json_object_get_int(d), json_object_get_int(r),
               json_object_get_int(w), json_object_get_int(fl));
    }
    if (swf_json_get(f, "active", &kids)) {
        for (size_t i = 0; i < json_object_array_length(kids); i++)
            print_frame(json_object_array_get_idx(kids, i), indent + 4);
    }
}

static void print_waiters(const char *title, json_object *list, const char *idkey)
{
    size_t n = list ? json_object_array_length(list) : 0;
    printf("\n%s: %zu\n", title, n);
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(list, i), *v;
        const char *path = swf_json_get_string(o, "path");
        printf("  %-6s %-24s %-28s scheduled by event %lld\n", swf_json_get_string(o, idkey),
               swf_json_get_string(o, "state"), path && path[0] ? path : "(top level)",
               swf_json_get(o, "scheduledEventId", &v) ? (long long)json_object_get_int64(v) : 0LL);
    }
}

static void print_snapshot(const swf_event_list_t *events, json_object *snap, bool json)
{
    if (json) {
        printf("%s\n", json_object_to_json_string_ext(snap, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
        return;
    }
    json_object *v, *m, *acts = NULL, *timers = NULL;
    int64_t last = swf_json_get(snap, "lastEventId", &v) ? json_object_get_int64(v) : 0;
    char t[SWF_TIME_BUF] = "";
    if (last >= 1 && last <= (int64_t)events->count)
        swf_time_format_ms(events->items[last - 1].time_ms, t);
    printf("execution %s after event %lld (%s, %s): %s\n", swf_cli_replay_execution_id(events),
           (long long)last, event_type_at(events, last), t, swf_json_get_string(snap, "status"));
    if (last < (int64_t)events->count)
        printf("next event: %lld %s\n", (long long)last + 1, event_type_at(events, last + 1));
    printf("\nactive states:\n");
    if (swf_json_get(snap, "machine", &m) && m != NULL)
        print_frame(m, 2);
    else
        printf("  none\n");
    swf_json_get(snap, "openActivities", &acts);
    swf_json_get(snap, "openTimers", &timers);
    print_waiters("open activities", acts, "activityId");
    print_waiters("open timers", timers, "timerId");
    if (swf_json_get(snap, "output", &v))
        print_value(0, "\noutput", v);
    if (swf_json_get_string(snap, "error") != NULL)
        printf("\nerror: %s\ncause: %s\n", swf_json_get_string(snap, "error"),
               swf_json_get_string(snap, "cause") ? swf_json_get_string(snap, "cause") : "");
}

/* ---- --step: one screen per decision task ------------------------------------------ */

typedef struct step_ctx {
    bool json;
    bool interactive;
    bool quiet; /* the user typed q */
} step_ctx_t;

static void print_event_line(const swf_event_t *ev)
{
    char buf[124];
    printf("  %6lld  %-32s %s\n", (long long)ev->id, swf_event_type_name(ev->type),
           json_object_object_length(ev->attrs) ? swf_cli_replay_json_cut(ev->attrs, buf, 120)
                                                : "");
}

static void print_decision_line(const swf_asl_decision_t *d)
{
    json_object *c = NULL;
    swf_json_get(d->attrs, "control", &c);
    const char *state = c ? swf_json_get_string(c, "state") : NULL;
    const char *path = c ? swf_json_get_string(c, "path") : NULL;
    char buf[124];
    printf("  %-30s %-20s %-24s %s\n", swf_event_type_name(d->type), state ? state : "-",
           path && path[0] ? path : "-", swf_cli_replay_json_cut(d->attrs, buf, 120));
}

static void on_task(void *vctx, const swf_event_list_t *events, size_t from, size_t to,
                    size_t number, const swf_asl_decisions_t *derived)
{
    step_ctx_t *ctx = vctx;
    if (ctx->quiet)
        return;
    if (ctx->json) {
        json_object *o = json_object_new_object(), *evs = json_object_new_array();
        json_object *ds = json_object_new_array();
        json_object_object_add(o, "decisionTask", json_object_new_int64((int64_t)number));
        json_object_object_add(o, "startedEventId", json_object_new_int64(events->items[to].id));
        for (size_t i = from; i <= to; i++)
            json_object_array_add(evs, swf_event_to_json(&events->items[i]));
        for (size_t i = 0; i < derived->count; i++) {
            json_object *d = json_object_new_object();
            json_object_object_add(
                d, "eventType",
                json_object_new_string(swf_event_type_name(derived->items[i].type)));
            json_object_object_add(d, "attributes", swf_json_ref(derived->items[i].attrs));
            json_object_array_add(ds, d);
        }
        json_object_object_add(o, "newEvents", evs);
        json_object_object_add(o, "derived", ds);
        printf("%s\n", swf_json_str(o));
        json_object_put(o);
        return;
    }
    char t[SWF_TIME_BUF];
    swf_time_format_ms(events->items[to].time_ms, t);
    if (number > 1)
        printf("\n");
    printf("======== decision task %zu: events %lld-%lld, %s ========\n", number,
           (long long)events->items[from].id, (long long)events->items[to].id, t);
    printf("new events:\n");
    for (size_t i = from; i <= to; i++)
        print_event_line(&events->items[i]);
    printf("decisions derived: %zu\n", derived->count);
    for (size_t i = 0; i < derived->count; i++)
        print_decision_line(&derived->items[i]);
    if (ctx->interactive) {
        printf("-- Enter: next decision task, q: run to the end --");
        fflush(stdout);
        char line[64];
        if (fgets(line, sizeof(line), stdin) == NULL || line[0] == 'q')
            ctx->quiet = true;
    }
}

/* ---- the command ------------------------------------------------------------------- */

static const swf_cli_cmd_t replay_cmd = {
    "swf replay",
    "(ID | --workflow-id WORKFLOW_ID | --file HISTORY) [--until EVENT_ID] [--step] "
    "[--definition NEW.json] [--json]",
    "Replay a history through this interpreter: re-derive every decision and report the first "
    "one that differs from the recorded one (exit 1), or that all match (exit 0).",
    (const swf_cli_opt_t[]){
        SWF_CLI_OPTS_EXECUTION("replay"),
        {"--file", "HISTORY", 0,
         "instead of ID: a history exported by swf export or swf run --local --history (- reads "
         "standard input)",
         "swf replay --file order-7.jsonl"},
        {"--until", "EVENT_ID", 0, "stop after this event and show the execution's state there",
         "swf replay --file order-7.jsonl --until 12"},
        {"--step", NULL, 0,
         "one screen per decision task: the events that came and the decisions derived (on a "
         "terminal, Enter for the next)",
         "swf replay --file order-7.jsonl --step"},
        {"--definition", "NEW.json", 0,
         "replay against a changed definition: can the running executions go on with it?",
         "swf replay --workflow-id order-7 --definition order-v2.asl.json"},
        {"--json", NULL, 0, "the report as JSON", "swf replay --workflow-id order-7 --json"},
        SWF_CLI_OPTS_END},
    NULL};

int swf_cli_replay(int argc, char **argv)
{
    swf_cli_args_t a;
    char *id = NULL;
    if (!swf_cli_args_parse(&replay_cmd, argc, argv, &a) ||
        !swf_cli_args_execution(&a, "--file", &id))
        return a.status;
    const char *file = swf_cli_args_get(&a, "--file"),
               *def_path = swf_cli_args_get(&a, "--definition");
    int64_t until = 0;
    bool json = swf_cli_args_has(&a, "--json"), step = swf_cli_args_has(&a, "--step");
    if (swf_cli_args_has(&a, "--until") && !swf_cli_args_int(&a, "--until", 1, INT64_MAX, &until)) {
        free(id);
        return a.status;
    }

    int rc = SWF_EXIT_ERROR;
    swf_event_list_t events = {0};
    json_object *def = NULL, *snap = NULL;
    swf_decider_replay_result_t res = {0};
    swf_asl_problems_t problems = {0};
    swf_error_t *err = NULL;
    if (def_path != NULL) {
        err = swf_json_read_file(def_path, SWF_LIMIT_DEFINITION_BYTES, &def);
        if (err != NULL) {
            rc = swf_cli_replay_fail("replay", err);
            goto done;
        }
        if (swf_sw_validate_any(def, &problems) > 0) {
            fprintf(stderr, "swf replay: %s is not a valid definition:\n", def_path);
            for (size_t i = 0; i < problems.count; i++)
                fprintf(stderr, "  %s: %s\n", problems.items[i].where, problems.items[i].message);
            rc = SWF_EXIT_NO;
            goto done;
        }
    }
    err = swf_cli_replay_history_load(id, file, &events);
    if (err != NULL) {
        rc = swf_cli_replay_fail("replay", err);
        goto done;
    }
    if (until > (int64_t)events.count) { /* a usage error, not the history's */
        fprintf(stderr, "swf replay: --until %lld: the history has events 1 to %zu\n",
                (long long)until, events.count);
        rc = SWF_EXIT_USAGE;
        goto done;
    }
    step_ctx_t sctx = {.json = json, .interactive = !json && isatty(0) && isatty(1)};
    swf_decider_replay_options_t opt = {
        .until_event_id = until,
        .definition = def,
        .task = step ? on_task : NULL,
        .task_ctx = &sctx,
    };
    err = swf_decider_replay_run(&events, &opt, &res);
    if (err != NULL) {
        rc = swf_cli_replay_fail("replay", err);
        goto done;
    }
    if (step && !json)
        printf("\n");
    if (res.error != NULL) {
        rc = report_divergence(&events, &res, def_path, json);
    } else if (until > 0) {
        snap = swf_asl_exec_snapshot(res.exec);
        print_snapshot(&events, snap, json);
        rc = SWF_EXIT_OK;
    } else {
        rc = report_clean(&events, &res, def_path, json);
    }
done:
    json_object_put(snap);
    json_object_put(def);
    swf_asl_problems_free(&problems);
    swf_decider_replay_result_free(&res);
    swf_event_list_free(&events);
    free(id);
    return rc;
}
