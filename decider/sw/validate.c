/*
 * validate.c - SPEC 13: a Serverless Workflow document checked completely
 * before anything runs.
 *
 * Like the ASL validator it never stops at the first problem: every rule
 * appends to the list and the walk carries on with what can still be
 * checked. Each problem starts with the JSON path of the offending field in
 * the notation of SPEC 13 ("$.states[1].actions[0].timeout"). Which members
 * an object may have is one table per kind of object (fields_* below); a
 * member outside it is reported once and its contents are not looked at.
 *
 * The walk is in two passes per state list: the names of the list are
 * gathered first (and checked for uniqueness across the whole document),
 * so a next-state can be checked against "the same state list" (SPEC 5.2)
 * whatever its position. The translator (translate.c) relies on every shape
 * checked here.
 *
 * Limits: the document is bounded by SWF_LIMIT_DEFINITION_BYTES when read,
 * its states by SWF_LIMIT_STATES, names by SWF_LIMIT_NAME_BYTES, and rule
 * and branch nesting by SWF_LIMIT_JSON_DEPTH (the parser's bound).
 */
#include "decider/sw/sw_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"

typedef struct vctx {
    swf_asl_problems_t *out;
    size_t problems;
    json_object *names;    /* the state names met so far (uniqueness) */
    json_object *all;      /* every state name of the document (targets) */
    json_object *triggers; /* trigger name -> true */
    size_t states;
} vctx_t;

static void problem(vctx_t *c, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(vctx_t *c, const char *where, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    swf_asl_problems_add(c->out, where, "%s", msg);
    c->problems++;
}

/* ---- reference paths (SPEC 2) --------------------------------------------- */

static bool name_char(char ch)
{
    return ch != '\0' && strchr(".[]'\"*?@(),$", ch) == NULL && !isspace((unsigned char)ch);
}

bool swf_sw_path_valid(const char *p, bool names_only)
{
    if (p == NULL || *p != '$' || strlen(p) > SWF_LIMIT_PATH_BYTES)
        return false;
    p++;
    while (*p) {
        if (*p == '.') {
            p++;
            if (!name_char(*p))
                return false;
            while (name_char(*p))
                p++;
        } else if (p[0] == '[' && p[1] == '\'') {
            p += 2;
            if (*p == '\'')
                return false;
            while (*p && *p != '\'')
                p++;
            if (p[0] != '\'' || p[1] != ']')
                return false;
            p += 2;
            if (names_only)
                continue;
        } else if (*p == '[') {
            if (names_only)
                return false;
            p++;
            if (*p == '0') {
                p++;
            } else if (*p >= '1' && *p <= '9') {
                while (*p >= '0' && *p <= '9')
                    p++;
            } else {
                return false;
            }
            if (*p != ']')
                return false;
            p++;
        } else {
            return false;
        }
    }
    return true;
}

/* ---- small checks ------------------------------------------------------------ */

static char *at(const char *base, const char *member)
{
    return swf_sw__printf("%s.%s", base, member);
}

static char *at_index(const char *base, size_t i)
{
    return swf_sw__printf("%s[%zu]", base, i);
}

/* Reports the members of `o` that `allowed` (NULL-terminated) does not list. */
static void fields_only(vctx_t *c, json_object *o, const char *where, const char *const *allowed,
                        const char *what)
{
    json_object_object_foreach(o, key, val)
    {
        (void)val;
        bool ok = false;
        for (size_t i = 0; allowed[i] != NULL && !ok; i++)
            ok = strcmp(key, allowed[i]) == 0;
        if (!ok) {
            char *w = at(where, key);
            problem(c, w, "is not a field of %s", what);
            free(w);
        }
    }
}

static bool nonempty_string(vctx_t *c, json_object *o, const char *key, const char *where,
                            bool required)
{
    json_object *v;
    char *w = at(where, key);
    bool ok = false;
    if (!swf_json_get(o, key, &v)) {
        if (required)
            problem(c, w, "is required");
    } else if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0) {
        problem(c, w, "must be a non-empty string");
    } else if (json_object_get_string_len(v) > SWF_LIMIT_NAME_BYTES) {
        problem(c, w, "must be at most %d bytes long", SWF_LIMIT_NAME_BYTES);
    } else {
        ok = true;
    }
    free(w);
    return ok;
}

/* An integer field: a JSON number without a fraction or an exponent (SPEC 2),
 * at least `min`. */
static void integer_field(vctx_t *c, json_object *o, const char *key, const char *where, int min,
                          bool required)
{
    json_object *v;
    char *w = at(where, key);
    if (!swf_json_get(o, key, &v)) {
        if (required)
            problem(c, w, "is required");
    } else if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < min ||
               json_object_get_int64(v) > SWF_LIMIT_STATE_SECONDS) {
        problem(c, w, "must be a %s integer (at most %d)", min > 0 ? "positive" : "non-negative",
                SWF_LIMIT_STATE_SECONDS);
    }
    free(w);
}

static void path_field(vctx_t *c, json_object *o, const char *key, const char *where,
                       bool names_only)
{
    json_object *v;
    if (!swf_json_get(o, key, &v))
        return;
    char *w = at(where, key);
    if (!json_object_is_type(v, json_type_string))
        problem(c, w, "must be a reference path string such as \"$.order.id\"");
    else if (!swf_sw_path_valid(json_object_get_string(v), names_only))
        problem(c, w, "'%s' is not a reference path%s", json_object_get_string(v),
                names_only ? " of names only (no indexes)" : "");
    free(w);
}

static void filters(vctx_t *c, json_object *o, const char *where)
{
    path_field(c, o, "InputPath", where, false);
    path_field(c, o, "ResultPath", where, true);
    path_field(c, o, "OutputPath", where, false);
}

/* A next-state (or default) naming a state of the same list. */
static void target(vctx_t *c, json_object *o, const char *key, const char *where,
                   json_object *list_names, bool required)
{
    json_object *v;
    char *w = at(where, key);
    if (!swf_json_get(o, key, &v)) {
        if (required)
            problem(c, w, "is required%s",
                    strcmp(key, "default") == 0 ? "" : " at the top level (SPEC 5.2)");
    } else if (!json_object_is_type(v, json_type_string)) {
        problem(c, w, "must be the name of a state");
    } else if (!swf_sw__has(list_names, json_object_get_string(v))) {
        if (swf_sw__has(c->all, json_object_get_string(v)))
            problem(c, w, "'%s' is not a state of the same state list", json_object_get_string(v));
        else
            problem(c, w, "'%s' names no state", json_object_get_string(v));
    }
    free(w);
}

static bool array_field(vctx_t *c, json_object *o, const char *key, const char *where,
                        bool required, bool nonempty, json_object **out)
{
    json_object *v;
    char *w = at(where, key);
    bool ok = false;
    *out = NULL;
    if (!swf_json_get(o, key, &v)) {
        if (required)
            problem(c, w, "is required");
    } else if (!json_object_is_type(v, json_type_array)) {
        problem(c, w, "must be an array");
    } else if (nonempty && json_object_array_length(v) == 0) {
        problem(c, w, "must not be empty");
    } else {
        *out = v;
        ok = true;
    }
    free(w);
    return ok;
}

static bool is_object(vctx_t *c, json_object *v, const char *where)
{
    if (json_object_is_type(v, json_type_object))
        return true;
    problem(c, where, "must be an object, not %s", swf_json_type_name(v));
    return false;
}

/* Checks an entry of a list, at `where` (a list's entries are objects with
 * only their allowed fields, checked before). */
typedef void entry_check_fn(vctx_t *c, json_object *e, const char *where, void *arg);

/* The list `key` of `o` (array_field's `required` and `nonempty`): each
 * entry must be an object with only the fields `allowed` (`what`: "an
 * action"), and is then given to `check` with `arg`. */
static void entries(vctx_t *c, json_object *o, const char *key, const char *where, bool required,
                    bool nonempty, const char *const *allowed, const char *what,
                    entry_check_fn *check, void *arg)
{
    json_object *list;
    char *lw = at(where, key);
    if (array_field(c, o, key, where, required, nonempty, &list)) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *e = json_object_array_get_idx(list, i);
            char *w = at_index(lw, i);
            if (is_object(c, e, w)) {
                fields_only(c, e, w, allowed, what);
                check(c, e, w, arg);
            }
            free(w);
        }
    }
    free(lw);
}

/* ---- actions and retries (SPEC 6, 7) --------------------------------------- */

static const char *const fields_action[] = {"function",   "timeout",    "retry", "InputPath",
                                            "ResultPath", "OutputPath", NULL};
static const char *const fields_retry[] = {"match", "retry-interval", "max-retry", "next-state",
                                           NULL};

static void retry_check(vctx_t *c, json_object *r, const char *where, void *list_names)
{
    nonempty_string(c, r, "match", where, true);
    integer_field(c, r, "retry-interval", where, 0, false);
    integer_field(c, r, "max-retry", where, 0, false);
    target(c, r, "next-state", where, list_names, false);
}

static void action_check(vctx_t *c, json_object *a, const char *where, void *list_names)
{
    nonempty_string(c, a, "function", where, true);
    integer_field(c, a, "timeout", where, 1, false);
    filters(c, a, where);
    entries(c, a, "retry", where, false, false, fields_retry, "a retry entry", retry_check,
            list_names);
}

static void action_list(vctx_t *c, json_object *o, const char *where, json_object *list_names)
{
    json_object *v;
    if (swf_json_get(o, "action-mode", &v)) {
        char *w = at(where, "action-mode");
        const char *m = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        if (strcasecmp(m, "SEQUENTIAL") != 0 && strcasecmp(m, "PARALLEL") != 0)
            problem(c, w, "must be SEQUENTIAL or PARALLEL");
        free(w);
    }
    entries(c, o, "actions", where, false, false, fields_action, "an action", action_check,
            list_names);
}

/* ---- SWITCH rules (SPEC 10.1) -------------------------------------------------- */

static const char *const operators[] = {"EQ",    "LT",      "LTEQ",  "GT",      "GTEQ", "StrEQ",
                                        "StrLT", "StrLTEQ", "StrGT", "StrGTEQ", NULL};

bool swf_sw_operator_numeric(const char *op)
{
    return strncmp(op, "Str", 3) != 0;
}

/* A JSON number written as a string: "-2.5", "1e3". */
static bool json_number_text(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

static void rule(vctx_t *c, json_object *r, const char *where, bool choice, int depth)
{
    static const char *const fields_choice[] = {"path", "value", "operator",   "Not",
                                                "And",  "Or",    "next-state", NULL};
    if (!is_object(c, r, where))
        return;
    if (depth > 64) {
        problem(c, where, "nests rules deeper than 64");
        return;
    }
    fields_only(c, r, where, fields_choice, choice ? "a choice" : "a rule");
    if (!choice && swf_sw__has(r, "next-state")) {
        char *w = at(where, "next-state");
        problem(c, w, "is not allowed on a rule nested in Not, And or Or");
        free(w);
    }
    bool cmp = swf_sw__has(r, "path") || swf_sw__has(r, "value") || swf_sw__has(r, "operator");
    int forms = cmp + swf_sw__has(r, "Not") + swf_sw__has(r, "And") + swf_sw__has(r, "Or");
    if (forms != 1) {
        problem(c, where,
                "must have exactly one of a comparison (path, value, operator), Not, "
                "And and Or");
        return;
    }
    json_object *v;
    if (cmp) {
        char *pw = at(where, "path");
        if (!swf_json_get(r, "path", &v))
            problem(c, pw, "is required");
        else
            path_field(c, r, "path", where, false);
        free(pw);
        const char *op = swf_json_get_string(r, "operator");
        bool op_ok = false;
        for (size_t i = 0; op != NULL && operators[i] != NULL && !op_ok; i++)
            op_ok = strcmp(op, operators[i]) == 0;
        char *ow = at(where, "operator");
        if (!op_ok)
            problem(c, ow,
                    "must be one of EQ, LT, LTEQ, GT, GTEQ, StrEQ, StrLT, StrLTEQ, "
                    "StrGT, StrGTEQ");
        free(ow);
        char *vw = at(where, "value");
        if (!swf_json_get(r, "value", &v))
            problem(c, vw, "is required");
        else if (!json_object_is_type(v, json_type_string))
            problem(c, vw, "must be a string (a number is written as a string: \"10\")");
        else if (op_ok && swf_sw_operator_numeric(op) &&
                 !json_number_text(json_object_get_string(v)))
            problem(c, vw, "must be a JSON number written as a string for %s", op);
        free(vw);
    } else if (swf_json_get(r, "Not", &v)) {
        char *w = at(where, "Not");
        rule(c, v, w, false, depth + 1);
        free(w);
    } else {
        const char *key = swf_sw__has(r, "And") ? "And" : "Or";
        json_object *arr;
        char *w = at(where, key);
        if (array_field(c, r, key, where, true, true, &arr)) {
            for (size_t i = 0; i < json_object_array_length(arr); i++) {
                char *iw = at_index(w, i);
                rule(c, json_object_array_get_idx(arr, i), iw, false, depth + 1);
                free(iw);
            }
        }
        free(w);
    }
}

/* ---- states (SPEC 5, 8, 9, 10) ----------------------------------------------------- */

static const char *const state_types[] = {"EVENT", "OPERATION", "SWITCH", "DELAY",
                                          "END",   "PARALLEL",  NULL};

static void state_list(vctx_t *c, json_object *states, const char *where, bool top, int depth);

static bool trigger_operand(const char *name, size_t len, void *ctx)
{
    vctx_t *c = ctx;
    char *n = swf_sw__printf("%.*s", (int)len, name);
    bool ok = swf_sw__has(c->triggers, n);
    free(n);
    return ok;
}

typedef struct undefined_ctx {
    vctx_t *c;
    const char *where;
} undefined_ctx_t;

static bool report_undefined(const char *name, size_t len, void *ctx)
{
    undefined_ctx_t *u = ctx;
    if (!trigger_operand(name, len, u->c))
        problem(u->c, u->where, "'%.*s' is not a trigger of trigger-defs", (int)len, name);
    return true;
}

typedef struct event_ctx {
    json_object *list_names;
    bool top;
} event_ctx_t;

static void event_check(vctx_t *c, json_object *e, const char *where, void *arg)
{
    const event_ctx_t *ev = arg;
    if (nonempty_string(c, e, "event-expression", where, true)) {
        char *xw = at(where, "event-expression");
        const char *why;
        undefined_ctx_t u = {c, xw};
        if (swf_sw_expr_eval(swf_json_get_string(e, "event-expression"), report_undefined, &u,
                             &why) < 0)
            problem(c, xw, "does not parse: the expression %s", why);
        free(xw);
    }
    integer_field(c, e, "timeout", where, 1, false);
    action_list(c, e, where, ev->list_names);
    path_field(c, e, "InputPath", where, false);
    path_field(c, e, "ResultPath", where, true);
    target(c, e, "next-state", where, ev->list_names, ev->top);
}

static void event_state(vctx_t *c, json_object *s, const char *where, json_object *list_names,
                        bool top)
{
    static const char *const fields_entry[] = {"event-expression", "timeout",   "action-mode",
                                               "actions",          "InputPath", "ResultPath",
                                               "next-state",       NULL};
    entries(c, s, "events", where, true, true, fields_entry, "an event entry", event_check,
            &(event_ctx_t){list_names, top});
}

static void switch_state(vctx_t *c, json_object *s, const char *where, json_object *list_names)
{
    json_object *choices;
    char *cw = at(where, "choices");
    if (array_field(c, s, "choices", where, true, true, &choices)) {
        for (size_t i = 0; i < json_object_array_length(choices); i++) {
            json_object *ch = json_object_array_get_idx(choices, i);
            char *w = at_index(cw, i);
            rule(c, ch, w, true, 0);
            if (json_object_is_type(ch, json_type_object)) {
                json_object *nv;
                if (!swf_json_get(ch, "next-state", &nv)) {
                    char *nw = at(w, "next-state");
                    problem(c, nw, "is required on a choice");
                    free(nw);
                } else {
                    target(c, ch, "next-state", w, list_names, true);
                }
            }
            free(w);
        }
    }
    free(cw);
    target(c, s, "default", where, list_names, true);
}

typedef struct branch_ctx {
    json_object *seen; /* the branch names so far */
    int depth;
} branch_ctx_t;

static void branch_check(vctx_t *c, json_object *b, const char *where, void *arg)
{
    branch_ctx_t *br = arg;
    json_object *st;
    if (nonempty_string(c, b, "name", where, true)) {
        const char *n = swf_json_get_string(b, "name");
        if (swf_sw__has(br->seen, n)) {
            char *nw = at(where, "name");
            problem(c, nw, "'%s' names another branch of this state too", n);
            free(nw);
        }
        json_object_object_add(br->seen, n, NULL);
    }
    char *sw = at(where, "states");
    if (array_field(c, b, "states", where, true, true, &st))
        state_list(c, st, sw, false, br->depth + 1);
    free(sw);
}

static void parallel_state(vctx_t *c, json_object *s, const char *where, int depth)
{
    static const char *const fields_branch[] = {"name", "states", NULL};
    branch_ctx_t br = {json_object_new_object(), depth};
    entries(c, s, "branches", where, true, true, fields_branch, "a branch", branch_check, &br);
    json_object_put(br.seen);
}

static void state(vctx_t *c, json_object *s, const char *where, json_object *list_names, bool top,
                  int depth)
{
    static const char *const common[] = {"name",      "type",       "start",
                                         "InputPath", "ResultPath", "OutputPath"};
    static const char *const own[][4] = {
        {"events", NULL},
        {"action-mode", "actions", "next-state", NULL},
        {"choices", "default", NULL},
        {"time-delay", "next-state", NULL},
        {"status", NULL},
        {"branches", "next-state", NULL},
    };
    const char *type = swf_json_get_string(s, "type");
    int t = -1;
    for (int i = 0; type != NULL && state_types[i] != NULL; i++)
        if (strcmp(type, state_types[i]) == 0)
            t = i;
    json_object *v;
    char *w;
    if (t < 0) {
        w = at(where, "type");
        if (!swf_sw__has(s, "type"))
            problem(c, w, "is required");
        else
            problem(c, w,
                    "must be one of EVENT, OPERATION, SWITCH, DELAY, END, PARALLEL "
                    "(upper case)");
        free(w);
    } else {
        const char *allowed[12];
        size_t n = 0;
        for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
            allowed[n++] = common[i];
        for (size_t i = 0; own[t][i] != NULL; i++)
            allowed[n++] = own[t][i];
        allowed[n] = NULL;
        char what[64];
        snprintf(what, sizeof(what), "a%s %s state", t == 0 || t == 1 || t == 4 ? "n" : "", type);
        fields_only(c, s, where, allowed, what);
    }
    if (swf_json_get(s, "start", &v) && !json_object_is_type(v, json_type_boolean)) {
        w = at(where, "start");
        problem(c, w, "must be a boolean");
        free(w);
    }
    filters(c, s, where);
    switch (t) {
    case 0:
        event_state(c, s, where, list_names, top);
        break;
    case 1:
        action_list(c, s, where, list_names);
        target(c, s, "next-state", where, list_names, top);
        break;
    case 2:
        switch_state(c, s, where, list_names);
        break;
    case 3:
        integer_field(c, s, "time-delay", where, 1, true);
        target(c, s, "next-state", where, list_names, top);
        break;
    case 4:
        if (!top) {
            w = at(where, "type");
            problem(c, w, "END is not allowed inside a branch (SPEC 10.4)");
            free(w);
        }
        if (swf_json_get(s, "status", &v)) {
            const char *st =
                json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
            if (strcmp(st, "SUCCESS") != 0 && strcmp(st, "FAILURE") != 0) {
                w = at(where, "status");
                problem(c, w, "must be SUCCESS or FAILURE");
                free(w);
            }
        }
        break;
    case 5:
        parallel_state(c, s, where, depth);
        target(c, s, "next-state", where, list_names, top);
        break;
    default:
        break;
    }
}

static void state_list(vctx_t *c, json_object *states, const char *where, bool top, int depth)
{
    size_t n = json_object_array_length(states), starts = 0;
    json_object *list_names = json_object_new_object();
    if (depth > 64) {
        problem(c, where, "nests PARALLEL states deeper than 64");
        json_object_put(list_names);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_array_get_idx(states, i), *v;
        char *w = at_index(where, i);
        if (++c->states == SWF_LIMIT_STATES + 1)
            problem(c, w, "is one state more than the limit of %d", SWF_LIMIT_STATES);
        if (is_object(c, s, w)) {
            if (nonempty_string(c, s, "name", w, true)) {
                const char *name = swf_json_get_string(s, "name");
                if (swf_sw__has(c->names, name)) {
                    char *nw = at(w, "name");
                    problem(c, nw,
                            "'%s' names another state too (names are unique in the whole "
                            "document)",
                            name);
                    free(nw);
                }
                json_object_object_add(c->names, name, json_object_new_boolean(1));
                json_object_object_add(list_names, name, json_object_new_boolean(1));
            }
            if (swf_json_get(s, "start", &v) && json_object_is_type(v, json_type_boolean) &&
                json_object_get_boolean(v))
                starts++;
        }
        free(w);
    }
    if (starts != 1)
        problem(c, where, "must have exactly one state with \"start\": true, not %zu", starts);
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_array_get_idx(states, i);
        if (!json_object_is_type(s, json_type_object))
            continue;
        char *w = at_index(where, i);
        state(c, s, w, list_names, top, depth);
        free(w);
    }
    json_object_put(list_names);
}

/* The names of all states first, so that a next-state into another list is
 * told apart from one naming no state at all. */
static void names_collect(json_object *states, json_object *all, int depth)
{
    if (depth > 64 || !json_object_is_type(states, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(states); i++) {
        json_object *s = json_object_array_get_idx(states, i), *branches;
        const char *n = swf_json_get_string(s, "name");
        if (n != NULL)
            json_object_object_add(all, n, json_object_new_boolean(1));
        if (swf_json_get(s, "branches", &branches) &&
            json_object_is_type(branches, json_type_array))
            for (size_t j = 0; j < json_object_array_length(branches); j++) {
                json_object *st;
                if (swf_json_get(json_object_array_get_idx(branches, j), "states", &st))
                    names_collect(st, all, depth + 1);
            }
    }
}

/* ---- triggers (SPEC 4) ------------------------------------------------------------------ */

static void triggers(vctx_t *c, json_object *defs)
{
    static const char *const fields_trigger[] = {"name", "source", "eventID", "correlation-token",
                                                 NULL};
    size_t n = json_object_array_length(defs);
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(defs, i);
        char *w = at_index("$.trigger-defs", i);
        if (is_object(c, t, w)) {
            fields_only(c, t, w, fields_trigger, "a trigger definition");
            if (nonempty_string(c, t, "name", w, true)) {
                const char *name = swf_json_get_string(t, "name");
                char *nw = at(w, "name");
                bool bad = strcasecmp(name, "and") == 0 || strcasecmp(name, "or") == 0;
                for (const char *p = name; *p && !bad; p++)
                    bad = isspace((unsigned char)*p) || *p == '(' || *p == ')';
                if (bad)
                    problem(c, nw,
                            "'%s' is not a trigger name (no white space, parentheses, "
                            "`and` or `or`)",
                            name);
                else if (swf_sw__has(c->triggers, name))
                    problem(c, nw, "'%s' names another trigger too", name);
                json_object_object_add(c->triggers, name, json_object_new_boolean(1));
                free(nw);
            }
            nonempty_string(c, t, "source", w, true);
            nonempty_string(c, t, "eventID", w, false);
            path_field(c, t, "correlation-token", w, false);
            if (n >= 2 && !swf_sw__has(t, "correlation-token")) {
                char *cw = at(w, "correlation-token");
                problem(c, cw, "is required when there are two or more triggers (SPEC 4)");
                free(cw);
            }
        }
        free(w);
    }
}

/* ---- the document ---------------------------------------------------------------------- */

bool swf_sw_is_document(json_object *doc)
{
    return swf_sw__has(doc, "states");
}

size_t swf_sw_validate(json_object *doc, swf_asl_problems_t *out)
{
    vctx_t c = {.out = out,
                .names = json_object_new_object(),
                .all = json_object_new_object(),
                .triggers = json_object_new_object()};
    json_object *defs, *states;
    if (!json_object_is_type(doc, json_type_object)) {
        problem(&c, "$", "must be an object");
        goto done;
    }
    static const char *const fields_top[] = {"trigger-defs", "states", NULL};
    fields_only(&c, doc, "$", fields_top, "a Serverless Workflow document");
    if (array_field(&c, doc, "trigger-defs", "$", false, false, &defs))
        triggers(&c, defs);
    if (array_field(&c, doc, "states", "$", true, true, &states)) {
        names_collect(states, c.all, 0);
        state_list(&c, states, "$.states", true, 0);
    }
done:
    json_object_put(c.names);
    json_object_put(c.all);
    json_object_put(c.triggers);
    return c.problems;
}

size_t swf_sw_validate_any(json_object *doc, swf_asl_problems_t *out)
{
    return swf_sw_is_document(doc) ? swf_sw_validate(doc, out) : swf_asl_validate(doc, out);
}
