/*
 * translate.c - a valid Serverless Workflow document into the interpreter's
 * own form (README.md, "The interpreter form"; SPEC 15 sketches it).
 *
 * Every Serverless Workflow state becomes an ASL state of the same name, so
 * the timeline, the graph and error messages speak of the document's states;
 * the helper states it needs are named "<state>#<role>" ('#' cannot start
 * a role of a user's state name by accident: names with '#' are allowed but
 * the roles are fixed words). ASL already has the state filter (InputPath,
 * ResultPath, OutputPath on a Pass, Task or Parallel), retriers (per-entry
 * counters, the first matching one decides) and catchers; what ASL cannot
 * say is an action list whose result goes through its state's filters and
 * whose exits differ (an EVENT entry's next-state, a retry entry's
 * next-state that skips the state's ResultPath and OutputPath). For that the
 * translation wraps the list in a one-branch Parallel marked "swf:Route":
 * its branch ends with a route object {"next", "raw", "value"} that says
 * where the state goes and whether its filters apply (exec_children.c).
 * The list input that a retry's next-state receives is kept in a workflow
 * variable (Assign) at the start of the branch.
 *
 * Paths are rewritten in bracket notation ($['a'][0]) so that any name
 * SPEC 2 allows reads the same through the ASL path parser.
 */
#include "decider/sw/sw_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decider/asl/path.h"
#include "protocol/alloc.h"
#include "protocol/json.h"

typedef struct tctx {
    int wrappers; /* numbers the list-input variables */
    int order;    /* document order of EVENT states (SPEC 9.4) */
} tctx_t;

static json_object *jstr(const char *s)
{
    return json_object_new_string(s);
}

static char *cat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = swf_sw__alloc(n);
    snprintf(s, n, "%s%s", a, b);
    return s;
}

/* A reference path in bracket notation; `prefix` (an ASL path, or NULL
 * for "$") is put in front of its segments. */
static char *path_asl(const char *prefix, const char *p)
{
    size_t cap = strlen(p) * 2 + (prefix ? strlen(prefix) : 1) + 8, n = 0;
    char *out = swf_sw__alloc(cap);
    n = (size_t)snprintf(out, cap, "%s", prefix ? prefix : "$");
    p++; /* "$" */
    while (*p) {
        if (*p == '.') {
            p++;
            const char *s = p;
            while (*p && *p != '.' && *p != '[')
                p++;
            n += (size_t)snprintf(out + n, cap - n, "['%.*s']", (int)(p - s), s);
        } else {
            const char *s = p;
            if (p[1] == '\'') {
                p = strchr(p + 2, '\'') + 2;
            } else {
                p = strchr(p, ']') + 1;
            }
            n += (size_t)snprintf(out + n, cap - n, "%.*s", (int)(p - s), s);
        }
    }
    return out;
}

static void copy_path(json_object *to, const char *to_key, json_object *from, const char *key)
{
    const char *p = swf_json_get_string(from, key);
    if (p == NULL)
        return;
    char *a = path_asl(NULL, p);
    json_object_object_add(to, to_key, jstr(a));
    free(a);
}

static void copy_filters(json_object *to, json_object *from)
{
    copy_path(to, "InputPath", from, "InputPath");
    copy_path(to, "ResultPath", from, "ResultPath");
    copy_path(to, "OutputPath", from, "OutputPath");
}

static bool has_filters(json_object *s)
{
    return swf_sw__has(s, "InputPath") || swf_sw__has(s, "ResultPath") ||
           swf_sw__has(s, "OutputPath");
}

/* Next or End. */
static void set_next(json_object *st, const char *next)
{
    if (next != NULL)
        json_object_object_add(st, "Next", jstr(next));
    else
        json_object_object_add(st, "End", json_object_new_boolean(1));
}

static json_object *state_new(const char *type)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "Type", jstr(type));
    return o;
}

/* ---- actions ------------------------------------------------------------------- */

static const char *goto_name(json_object *states, const char *owner, const char *target)
{
    char *n = swf_sw__printf("%s#goto:%s", owner, target);
    json_object *st;
    if (!swf_json_get(states, n, &st)) {
        st = state_new("Fail");
        char *e = swf_sw__printf("swf:goto:%s", target);
        json_object_object_add(st, "Error", jstr(e));
        json_object_object_add(st, "Cause", jstr(""));
        free(e);
        json_object_object_add(states, n, st);
    }
    const char *key = NULL;
    json_object_object_foreach(states, k, v)
    {
        (void)v;
        if (strcmp(k, n) == 0)
            key = k;
    }
    free(n);
    return key;
}

/* One action as a Task state named `name` in `states`; its catchers lead to
 * Fail states of the same list that either rethrow the error or raise
 * swf:goto:<target>, which the wrapper turns into a route. */
static void action_task(json_object *states, const char *name, const char *owner, json_object *a,
                        const char *next, json_object *targets)
{
    json_object *t = state_new("Task"), *v, *retry;
    json_object_object_add(t, "Resource", jstr(swf_json_get_string(a, "function")));
    copy_filters(t, a);
    if (swf_json_get(a, "timeout", &v))
        json_object_object_add(t, "TimeoutSeconds", json_object_get(v));
    if (swf_json_get(a, "retry", &retry) && json_object_array_length(retry) > 0) {
        json_object *retriers = json_object_new_array(), *catchers = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(retry); i++) {
            json_object *r = json_object_array_get_idx(retry, i);
            const char *m = swf_json_get_string(r, "match");
            json_object *eq = json_object_new_array();
            json_object_array_add(eq, jstr(strcmp(m, "SYS.MatchAny") == 0 ? "States.ALL" : m));
            json_object *rt = json_object_new_object();
            json_object_object_add(rt, "ErrorEquals", json_object_get(eq));
            json_object_object_add(rt, "MaxAttempts",
                                   json_object_new_int64(swf_json_get(r, "max-retry", &v)
                                                             ? json_object_get_int64(v)
                                                             : 0));
            json_object_object_add(rt, "IntervalSeconds",
                                   json_object_new_int64(swf_json_get(r, "retry-interval", &v)
                                                             ? json_object_get_int64(v)
                                                             : 0));
            json_object_object_add(rt, "BackoffRate", json_object_new_double(1.0));
            json_object_array_add(retriers, rt);
            json_object *c = json_object_new_object();
            json_object_object_add(c, "ErrorEquals", eq);
            const char *target = swf_json_get_string(r, "next-state");
            if (target != NULL) {
                json_object_object_add(c, "Next", jstr(goto_name(states, owner, target)));
                json_object_object_add(targets, target, json_object_new_boolean(1));
            } else {
                char *rn = cat(owner, "#rethrow");
                if (!swf_sw__has(states, rn)) {
                    json_object *f = state_new("Fail");
                    json_object_object_add(f, "ErrorPath", jstr("$.Error"));
                    json_object_object_add(f, "CausePath", jstr("$.Cause"));
                    json_object_object_add(states, rn, f);
                }
                json_object_object_add(c, "Next", jstr(rn));
                free(rn);
            }
            json_object_array_add(catchers, c);
        }
        json_object_object_add(t, "Retry", retriers);
        json_object_object_add(t, "Catch", catchers);
    }
    set_next(t, next);
    json_object_object_add(states, name, t);
}

/* The action list of `holder` (an OPERATION or an event entry) into
 * `states`, starting at the state named `first` and continuing at `next`.
 * `targets` collects the retry entries' next-states. */
static void action_list(json_object *states, const char *owner, const char *first,
                        json_object *holder, const char *next, json_object *targets)
{
    if (first == NULL) /* never: callers name the state (GCC -O3 cannot tell) */
        return;
    json_object *actions;
    swf_json_get(holder, "actions", &actions);
    size_t n = json_object_array_length(actions);
    const char *mode = swf_json_get_string(holder, "action-mode");
    if (mode == NULL || strcasecmp(mode, "SEQUENTIAL") == 0) {
        for (size_t i = 0; i < n; i++) {
            char *name = i == 0 ? swf_strdup(first) : swf_sw__printf("%s#%zu", first, i);
            char *after = i + 1 < n ? swf_sw__printf("%s#%zu", first, i + 1) : NULL;
            action_task(states, name, owner, json_object_array_get_idx(actions, i),
                        after ? after : next, targets);
            free(name);
            free(after);
        }
        return;
    }
    json_object *par = state_new("Parallel"), *branches = json_object_new_array();
    json_object *inner_targets = json_object_new_object();
    for (size_t i = 0; i < n; i++) {
        json_object *bstates = json_object_new_object(), *b = json_object_new_object();
        char *name = swf_sw__printf("%s#%zu", first, i);
        action_task(bstates, name, name, json_object_array_get_idx(actions, i), NULL,
                    inner_targets);
        json_object_object_add(b, "StartAt", jstr(name));
        json_object_object_add(b, "States", bstates);
        json_object_array_add(branches, b);
        free(name);
    }
    json_object_object_add(par, "Branches", branches);
    if (json_object_object_length(inner_targets) > 0) {
        json_object *catchers = json_object_new_array();
        json_object_object_foreach(inner_targets, target, v)
        {
            (void)v;
            json_object *c = json_object_new_object(), *eq = json_object_new_array();
            char *e = swf_sw__printf("swf:goto:%s", target);
            json_object_array_add(eq, jstr(e));
            free(e);
            json_object_object_add(c, "ErrorEquals", eq);
            json_object_object_add(c, "Next", jstr(goto_name(states, owner, target)));
            json_object_array_add(catchers, c);
            json_object_object_add(targets, target, json_object_new_boolean(1));
        }
        json_object_object_add(par, "Catch", catchers);
    }
    json_object_put(inner_targets);
    set_next(par, next);
    json_object_object_add(states, first, par);
}

/* The route that ends a wrapper's branch: where the state goes next. */
static json_object *route_pass(const char *next, bool raw, const char *input_path)
{
    json_object *p = state_new("Pass"), *params = json_object_new_object();
    if (input_path != NULL)
        json_object_object_add(p, "InputPath", jstr(input_path));
    json_object_object_add(params, "next", next ? jstr(next) : NULL);
    json_object_object_add(params, "raw", json_object_new_boolean(raw));
    json_object_object_add(params, "value.$", jstr("$"));
    json_object_object_add(p, "Parameters", params);
    json_object_object_add(p, "End", json_object_new_boolean(1));
    return p;
}

/* Turns each "<owner>#goto:T" Fail state of the wrapper's branch into the
 * route to T with the list input kept in `var`. */
static void gotos_route(json_object *bstates, const char *owner, const char *var)
{
    char *prefix = swf_sw__printf("%s#goto:", owner);
    size_t plen = strlen(prefix);
    json_object_object_foreach(bstates, k, v)
    {
        (void)v;
        if (strncmp(k, prefix, plen) == 0) {
            char *path = swf_sw__printf("$%s", var);
            json_object_object_add(bstates, k, route_pass(k + plen, true, path));
            free(path);
        }
    }
    free(prefix);
}

/* ---- states ------------------------------------------------------------------------ */

static void state_list(tctx_t *t, json_object *list, json_object *states, const char **start);

/* OPERATION with actions, and EVENT: the routing wrapper (see the top). */
static json_object *wrapper(tctx_t *t, json_object *s, const char *name, const char *next,
                            bool event)
{
    json_object *w = state_new("Parallel"), *bstates = json_object_new_object();
    json_object *targets = json_object_new_object();
    copy_filters(w, s);
    json_object_object_add(w, SWF_SW_MARKER ":Route", json_object_new_boolean(1));
    set_next(w, next);
    char *var = swf_sw__printf("swf_list%d", ++t->wrappers);
    char *keep = cat(name, "#list");
    char *first = NULL;
    if (!event) {
        first = cat(name, "#action");
        char *route = cat(name, "#route");
        action_list(bstates, name, first, s, route, targets);
        json_object_object_add(bstates, route, route_pass(next, false, NULL));
        free(route);
    } else {
        json_object *events, *entries = json_object_new_array();
        swf_json_get(s, "events", &events);
        first = cat(name, "#wait");
        json_object *wait = state_new(SWF_SW_MARKER ":Event");
        json_object_object_add(wait, "Order", json_object_new_int(t->order));
        for (size_t i = 0; i < json_object_array_length(events); i++) {
            json_object *e = json_object_array_get_idx(events, i), *v, *actions;
            json_object *en = json_object_new_object();
            json_object_object_add(en, "event-expression",
                                   jstr(swf_json_get_string(e, "event-expression")));
            if (swf_json_get(e, "timeout", &v))
                json_object_object_add(en, "timeout", json_object_get(v));
            copy_path(en, "InputPath", e, "InputPath");
            copy_path(en, "ResultPath", e, "ResultPath");
            const char *enext = swf_json_get_string(e, "next-state");
            char *route = swf_sw__printf("%s#route%zu", name, i);
            json_object_object_add(bstates, route, route_pass(enext, false, NULL));
            char *list = swf_sw__printf("%s#entry%zu", name, i);
            if (swf_json_get(e, "actions", &actions) && json_object_array_length(actions) > 0) {
                /* The list input is kept for a retry's next-state. */
                json_object *keep_st = state_new("Pass"), *assign = json_object_new_object();
                char *key = swf_sw__printf("%s.$", var);
                json_object_object_add(assign, key, jstr("$"));
                free(key);
                json_object_object_add(keep_st, "Assign", assign);
                char *act = swf_sw__printf("%s#action%zu", name, i);
                json_object_object_add(keep_st, "Next", jstr(act));
                json_object_object_add(bstates, list, keep_st);
                action_list(bstates, name, act, e, route, targets);
                free(act);
                json_object_object_add(en, "Next", jstr(list));
            } else {
                json_object_object_add(en, "Next", jstr(route));
            }
            free(list);
            free(route);
            json_object_array_add(entries, en);
        }
        json_object_object_add(wait, "Entries", entries);
        json_object_object_add(bstates, first, wait);
    }
    const char *start = first;
    if (!event && json_object_object_length(targets) > 0) {
        json_object *keep_st = state_new("Pass"), *assign = json_object_new_object();
        char *key = swf_sw__printf("%s.$", var);
        json_object_object_add(assign, key, jstr("$"));
        free(key);
        json_object_object_add(keep_st, "Assign", assign);
        json_object_object_add(keep_st, "Next", jstr(first));
        json_object_object_add(bstates, keep, keep_st);
        start = keep;
    }
    gotos_route(bstates, name, var);
    json_object *b = json_object_new_object(), *branches = json_object_new_array();
    json_object_object_add(b, "StartAt", jstr(start));
    json_object_object_add(b, "States", bstates);
    json_object_array_add(branches, b);
    json_object_object_add(w, "Branches", branches);
    json_object_put(targets);
    free(var);
    free(keep);
    free(first);
    return w;
}

static const char *const op_names[][2] = {
    {"EQ", "NumericEquals"},
    {"LT", "NumericLessThan"},
    {"LTEQ", "NumericLessThanEquals"},
    {"GT", "NumericGreaterThan"},
    {"GTEQ", "NumericGreaterThanEquals"},
    {"StrEQ", "StringEquals"},
    {"StrLT", "StringLessThan"},
    {"StrLTEQ", "StringLessThanEquals"},
    {"StrGT", "StringGreaterThan"},
    {"StrGTEQ", "StringGreaterThanEquals"},
};

static json_object *test_rule(const char *var, const char *test, json_object *value)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "Variable", jstr(var));
    json_object_object_add(r, test, value);
    return r;
}

/* A rule as an ASL Choice rule over the raw input: the comparison's path
 * is read below the state's InputPath (`prefix`), and a missing value or
 * one of the wrong type makes it false (SPEC 10.1). */
static json_object *rule(json_object *r, const char *prefix)
{
    json_object *v, *out = json_object_new_object();
    if (swf_json_get(r, "Not", &v)) {
        json_object_object_add(out, "Not", rule(v, prefix));
        return out;
    }
    const char *key = swf_sw__has(r, "And") ? "And" : swf_sw__has(r, "Or") ? "Or" : NULL;
    if (key != NULL) {
        json_object *arr = json_object_new_array(), *in;
        swf_json_get(r, key, &in);
        for (size_t i = 0; i < json_object_array_length(in); i++)
            json_object_array_add(arr, rule(json_object_array_get_idx(in, i), prefix));
        json_object_object_add(out, key, arr);
        return out;
    }
    const char *op = swf_json_get_string(r, "operator");
    const char *value = swf_json_get_string(r, "value");
    char *var = path_asl(prefix, swf_json_get_string(r, "path"));
    const char *asl_op = "StringEquals";
    for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
        if (strcmp(op, op_names[i][0]) == 0)
            asl_op = op_names[i][1];
    bool numeric = swf_sw_operator_numeric(op);
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, test_rule(var, "IsPresent", json_object_new_boolean(1)));
    json_object_array_add(
        arr, test_rule(var, numeric ? "IsNumeric" : "IsString", json_object_new_boolean(1)));
    json_object_array_add(
        arr, test_rule(var, asl_op, numeric ? json_tokener_parse(value) : jstr(value)));
    json_object_object_add(out, "And", arr);
    free(var);
    return out;
}

/* A SWITCH: a Choice over the raw input; with state filters, each target is
 * reached through a Pass that applies them. */
static void switch_state(json_object *s, const char *name, json_object *states)
{
    json_object *c = state_new("Choice"), *choices, *arr = json_object_new_array();
    const char *ip = swf_json_get_string(s, "InputPath");
    char *prefix = ip ? path_asl(NULL, ip) : NULL;
    bool filters = has_filters(s);
    swf_json_get(s, "choices", &choices);
    for (size_t i = 0; i <= json_object_array_length(choices); i++) {
        bool dflt = i == json_object_array_length(choices);
        json_object *ch = dflt ? NULL : json_object_array_get_idx(choices, i);
        const char *target = swf_json_get_string(dflt ? s : ch, dflt ? "default" : "next-state");
        char *via = filters ? swf_sw__printf("%s#to:%s", name, target) : swf_strdup(target);
        if (filters && !swf_sw__has(states, via)) {
            json_object *p = state_new("Pass");
            copy_filters(p, s);
            json_object_object_add(p, "Next", jstr(target));
            json_object_object_add(states, via, p);
        }
        if (dflt) {
            json_object_object_add(c, "Default", jstr(via));
        } else {
            json_object *r = rule(ch, prefix);
            json_object_object_add(r, "Next", jstr(via));
            json_object_array_add(arr, r);
        }
        free(via);
    }
    json_object_object_add(c, "Choices", arr);
    json_object_object_add(states, name, c);
    free(prefix);
}

static void state(tctx_t *t, json_object *s, json_object *states)
{
    t->order++;
    const char *name = swf_json_get_string(s, "name");
    const char *type = swf_json_get_string(s, "type");
    const char *next = swf_json_get_string(s, "next-state");
    json_object *st = NULL, *v;
    if (strcmp(type, "OPERATION") == 0) {
        if (swf_json_get(s, "actions", &v) && json_object_array_length(v) > 0) {
            st = wrapper(t, s, name, next, false);
        } else {
            st = state_new("Pass");
            copy_filters(st, s);
            set_next(st, next);
        }
    } else if (strcmp(type, "EVENT") == 0) {
        st = wrapper(t, s, name, NULL, true);
    } else if (strcmp(type, "SWITCH") == 0) {
        switch_state(s, name, states);
    } else if (strcmp(type, "DELAY") == 0) {
        swf_json_get(s, "time-delay", &v);
        json_object *w = state_new("Wait");
        json_object_object_add(w, "Seconds", json_object_get(v));
        set_next(w, next);
        if (has_filters(s)) {
            char *dn = cat(name, "#delay");
            st = state_new("Pass");
            copy_filters(st, s);
            json_object_object_add(st, "Next", jstr(dn));
            json_object_object_add(states, dn, w);
            free(dn);
        } else {
            st = w;
        }
    } else if (strcmp(type, "END") == 0) {
        const char *status = swf_json_get_string(s, "status");
        if (status != NULL && strcmp(status, "FAILURE") == 0) {
            st = state_new("Fail");
            json_object_object_add(st, "Error", jstr("SYS.Fail"));
            json_object_object_add(st, "Cause", jstr(name));
        } else {
            st = state_new("Pass");
            copy_filters(st, s);
            set_next(st, NULL);
        }
    } else { /* PARALLEL */
        json_object *branches, *arr = json_object_new_array();
        swf_json_get(s, "branches", &branches);
        for (size_t i = 0; i < json_object_array_length(branches); i++) {
            json_object *b = json_object_array_get_idx(branches, i), *list;
            json_object *bo = json_object_new_object(), *bstates = json_object_new_object();
            const char *start = NULL;
            swf_json_get(b, "states", &list);
            state_list(t, list, bstates, &start);
            json_object_object_add(bo, "StartAt", jstr(start));
            json_object_object_add(bo, "States", bstates);
            json_object_array_add(arr, bo);
        }
        st = state_new("Parallel");
        copy_filters(st, s);
        json_object_object_add(st, "Branches", arr);
        set_next(st, next);
    }
    if (st == NULL)
        swf_json_get(states, name, &st); /* SWITCH */
    json_object_object_add(st, SWF_SW_MARKER ":Type", jstr(type));
    if (st != NULL && !swf_sw__has(states, name))
        json_object_object_add(states, name, st);
}

static void state_list(tctx_t *t, json_object *list, json_object *states, const char **start)
{
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *s = json_object_array_get_idx(list, i), *v;
        if (swf_json_get(s, "start", &v) && json_object_get_boolean(v))
            *start = swf_json_get_string(s, "name");
        state(t, s, states);
    }
}

json_object *swf_sw_translate(json_object *doc)
{
    swf_asl_problems_t problems = {0};
    size_t n = swf_sw_validate(doc, &problems);
    swf_asl_problems_free(&problems);
    if (n > 0)
        return NULL;
    tctx_t t = {0};
    json_object *m = json_object_new_object(), *states = json_object_new_object(), *list, *defs;
    const char *start = NULL;
    swf_json_get(doc, "states", &list);
    state_list(&t, list, states, &start);
    json_object_object_add(m, "Comment",
                           jstr("translated from a Serverless Workflow 0.1 document by swf"));
    json_object_object_add(m, SWF_SW_MARKER, jstr("0.1"));
    if (swf_json_get(doc, "trigger-defs", &defs)) {
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(defs); i++) {
            json_object *d = json_object_array_get_idx(defs, i), *tr = json_object_new_object();
            json_object_object_foreach(d, k, v)
            {
                if (strcmp(k, "correlation-token") == 0)
                    copy_path(tr, k, d, k);
                else
                    json_object_object_add(tr, k, json_object_get(v));
            }
            json_object_array_add(arr, tr);
        }
        json_object_object_add(m, SWF_SW_MARKER ":Triggers", arr);
    }
    json_object_object_add(m, "StartAt", jstr(start));
    json_object_object_add(m, "States", states);
    return m;
}

/* ---- starting by an event (SPEC 11) --------------------------------------------- */

typedef struct named {
    const char *name;
    bool found;
} named_t;

static bool operand_names(const char *name, size_t len, void *ctx)
{
    named_t *n = ctx;
    if (strlen(n->name) == len && strncmp(name, n->name, len) == 0)
        n->found = true;
    return true;
}

bool swf_sw_event_trigger(json_object *doc, json_object *ce, const char **name, json_object **value)
{
    const char *source = swf_json_get_string(ce, "source"), *type = swf_json_get_string(ce, "type");
    json_object *defs, *trig = NULL;
    *name = NULL;
    *value = NULL;
    if (source == NULL || type == NULL || swf_json_get_string(ce, "id") == NULL ||
        !swf_json_get(doc, "trigger-defs", &defs) || !json_object_is_type(defs, json_type_array))
        return false;
    for (size_t i = 0; i < json_object_array_length(defs) && trig == NULL; i++) {
        json_object *t = json_object_array_get_idx(defs, i);
        const char *eid = swf_json_get_string(t, "eventID");
        if (strcmp(swf_json_get_string(t, "source"), source) == 0 &&
            (eid == NULL || strcmp(eid, type) == 0))
            trig = t;
    }
    if (trig == NULL)
        return false;
    const char *token = swf_json_get_string(trig, "correlation-token");
    if (token != NULL) {
        char *p = path_asl(NULL, token);
        swf_asl_env_t env;
        memset(&env, 0, sizeof(env));
        swf_error_t *err = swf_asl_path_eval(p, ce, &env, value);
        free(p);
        bool none = err != NULL || *value == NULL;
        swf_error_free(err);
        if (none) {
            json_object_put(*value);
            *value = NULL;
            return false;
        }
    }
    *name = swf_json_get_string(trig, "name");
    return true;
}

bool swf_sw_event_starts(json_object *doc, json_object *ce)
{
    json_object *states, *v, *value;
    const char *tname;
    if (!swf_json_get(doc, "states", &states) || !swf_sw_event_trigger(doc, ce, &tname, &value))
        return false;
    json_object_put(value);
    for (size_t i = 0; i < json_object_array_length(states); i++) {
        json_object *s = json_object_array_get_idx(states, i), *events;
        if (!swf_json_get(s, "start", &v) || !json_object_get_boolean(v))
            continue;
        if (strcmp(swf_json_get_string(s, "type"), "EVENT") != 0 ||
            !swf_json_get(s, "events", &events))
            return false;
        for (size_t k = 0; k < json_object_array_length(events); k++) {
            const char *x =
                swf_json_get_string(json_object_array_get_idx(events, k), "event-expression");
            named_t n = {tname, false};
            swf_sw_expr_eval(x, operand_names, &n, NULL);
            if (n.found)
                return true;
        }
        return false;
    }
    return false;
}
