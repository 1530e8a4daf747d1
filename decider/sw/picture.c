/*
 * picture.c - the picture form of a Serverless Workflow document, for
 * `swf graph`.
 *
 * The graph of a document shows the document's states, not the helper
 * states of its translation (translate.c), so `swf graph` draws this form
 * instead: an ASL-shaped machine with the document's state names, whose
 * "Type" gives the shape and the kind of edges (Choice edges carry labels,
 * Catch edges are dashed, a Parallel is a cluster of branches) and whose
 * "swf:ServerlessWorkflow:Type" is what the node says:
 *
 *   EVENT      a Choice: one edge per event entry, labelled with its
 *              expression and timeout; the node lists the triggers with
 *              their source and type;
 *   OPERATION  a Task naming its functions; retry entries with a
 *              next-state are dashed edges labelled with their match;
 *   SWITCH     a Choice: each choice's rule on its edge, "default";
 *   DELAY      a Wait; END a Succeed (or a Fail for FAILURE);
 *   PARALLEL   a Parallel with its branches.
 *
 * The form is only drawn, never run.
 */
#include "decider/sw/sw_internal.h"

#include <string.h>
#include <strings.h>

#include "protocol/json.h"

typedef struct buf {
    char s[1024];
    size_t n;
} buf_t;

static void put(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf_t *b, const char *fmt, ...)
{
    if (b->n + 1 >= sizeof(b->s))
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
    va_end(ap);
    b->n = k < 0 ? b->n : b->n + (size_t)k >= sizeof(b->s) ? sizeof(b->s) - 1 : b->n + (size_t)k;
}

static void rule_text(json_object *r, buf_t *b)
{
    json_object *v;
    if (swf_json_get(r, "Not", &v)) {
        put(b, "not (");
        rule_text(v, b);
        put(b, ")");
        return;
    }
    const char *key = swf_sw__has(r, "And") ? "And" : swf_sw__has(r, "Or") ? "Or" : NULL;
    if (key != NULL) {
        swf_json_get(r, key, &v);
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            put(b, "%s(", i ? (key[0] == 'A' ? " and " : " or ") : "");
            rule_text(json_object_array_get_idx(v, i), b);
            put(b, ")");
        }
        return;
    }
    put(b, "%s %s \"%s\"", swf_json_get_string(r, "path"), swf_json_get_string(r, "operator"),
        swf_json_get_string(r, "value"));
}

static json_object *jstr(const char *s)
{
    return json_object_new_string(s);
}

static json_object *edge(const char *text, const char *next)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "Condition", jstr(text));
    json_object_object_add(c, "Next", jstr(next));
    return c;
}

static json_object *list_picture(json_object *list, json_object *triggers);

static json_object *state_picture(json_object *s, json_object *triggers)
{
    const char *type = swf_json_get_string(s, "type");
    const char *next = swf_json_get_string(s, "next-state");
    json_object *p = json_object_new_object(), *v;
    buf_t label = {.n = 0};
    put(&label, "%s", type);
    const char *asl = "Pass";
    if (strcmp(type, "EVENT") == 0) {
        asl = "Choice";
        json_object *choices = json_object_new_array(), *events;
        swf_json_get(s, "events", &events);
        json_object *named = json_object_new_object();
        for (size_t i = 0; i < json_object_array_length(events); i++) {
            json_object *e = json_object_array_get_idx(events, i);
            const char *x = swf_json_get_string(e, "event-expression");
            buf_t t = {.n = 0};
            put(&t, "on %s", x);
            if (swf_json_get(e, "timeout", &v))
                put(&t, " (timeout %llds)", (long long)json_object_get_int64(v));
            const char *en = swf_json_get_string(e, "next-state");
            if (en != NULL)
                json_object_array_add(choices, edge(t.s, en));
            for (size_t k = 0; triggers && k < json_object_array_length(triggers); k++) {
                json_object *tr = json_object_array_get_idx(triggers, k);
                const char *tn = swf_json_get_string(tr, "name");
                if (strstr(x, tn) != NULL && !swf_sw__has(named, tn)) {
                    json_object_object_add(named, tn, json_object_new_boolean(1));
                    const char *eid = swf_json_get_string(tr, "eventID");
                    put(&label, "\n%s: %s%s%s", tn, swf_json_get_string(tr, "source"),
                        eid ? " " : "", eid ? eid : "");
                }
            }
        }
        json_object_put(named);
        json_object_object_add(p, "Choices", choices);
    } else if (strcmp(type, "OPERATION") == 0) {
        asl = "Task";
        json_object *actions, *catchers = json_object_new_array();
        const char *mode = swf_json_get_string(s, "action-mode");
        if (swf_json_get(s, "actions", &actions)) {
            for (size_t i = 0; i < json_object_array_length(actions); i++) {
                json_object *a = json_object_array_get_idx(actions, i), *retry;
                put(&label, "%s%s",
                    i ? (mode && strcasecmp(mode, "PARALLEL") == 0 ? " | " : ", ") : "\n",
                    swf_json_get_string(a, "function"));
                if (!swf_json_get(a, "retry", &retry))
                    continue;
                for (size_t k = 0; k < json_object_array_length(retry); k++) {
                    json_object *r = json_object_array_get_idx(retry, k);
                    const char *to = swf_json_get_string(r, "next-state");
                    if (to == NULL)
                        continue;
                    json_object *c = json_object_new_object(), *eq = json_object_new_array();
                    json_object_array_add(eq, jstr(swf_json_get_string(r, "match")));
                    json_object_object_add(c, "ErrorEquals", eq);
                    json_object_object_add(c, "Next", jstr(to));
                    json_object_array_add(catchers, c);
                }
            }
        }
        json_object_object_add(p, "Catch", catchers);
    } else if (strcmp(type, "SWITCH") == 0) {
        asl = "Choice";
        json_object *choices = json_object_new_array(), *in;
        swf_json_get(s, "choices", &in);
        for (size_t i = 0; i < json_object_array_length(in); i++) {
            json_object *ch = json_object_array_get_idx(in, i);
            buf_t t = {.n = 0};
            rule_text(ch, &t);
            json_object_array_add(choices, edge(t.s, swf_json_get_string(ch, "next-state")));
        }
        json_object_object_add(p, "Choices", choices);
        json_object_object_add(p, "Default", jstr(swf_json_get_string(s, "default")));
    } else if (strcmp(type, "DELAY") == 0) {
        asl = "Wait";
        swf_json_get(s, "time-delay", &v);
        put(&label, " %llds", (long long)json_object_get_int64(v));
    } else if (strcmp(type, "END") == 0) {
        const char *st = swf_json_get_string(s, "status");
        asl = st && strcmp(st, "FAILURE") == 0 ? "Fail" : "Succeed";
        put(&label, " %s", st ? st : "SUCCESS");
    } else if (strcmp(type, "PARALLEL") == 0) {
        asl = "Parallel";
        json_object *branches, *arr = json_object_new_array();
        swf_json_get(s, "branches", &branches);
        for (size_t i = 0; i < json_object_array_length(branches); i++) {
            json_object *b = json_object_array_get_idx(branches, i), *st;
            swf_json_get(b, "states", &st);
            json_object_array_add(arr, list_picture(st, triggers));
        }
        json_object_object_add(p, "Branches", arr);
    }
    json_object_object_add(p, "Type", jstr(asl));
    json_object_object_add(p, SWF_SW_MARKER ":Type", jstr(label.s));
    if (next != NULL)
        json_object_object_add(p, "Next", jstr(next));
    else if (strcmp(type, "SWITCH") != 0 && strcmp(type, "EVENT") != 0 &&
             strcmp(asl, "Succeed") != 0 && strcmp(asl, "Fail") != 0)
        json_object_object_add(p, "End", json_object_new_boolean(1));
    return p;
}

static json_object *list_picture(json_object *list, json_object *triggers)
{
    json_object *m = json_object_new_object(), *states = json_object_new_object(), *v;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *s = json_object_array_get_idx(list, i);
        const char *name = swf_json_get_string(s, "name");
        if (swf_json_get(s, "start", &v) && json_object_get_boolean(v))
            json_object_object_add(m, "StartAt", jstr(name));
        json_object_object_add(states, name, state_picture(s, triggers));
    }
    json_object_object_add(m, "States", states);
    return m;
}

json_object *swf_sw_picture(json_object *doc)
{
    swf_asl_problems_t problems = {0};
    size_t n = swf_sw_validate(doc, &problems);
    swf_asl_problems_free(&problems);
    if (n > 0)
        return NULL;
    json_object *list, *triggers = NULL;
    swf_json_get(doc, "states", &list);
    swf_json_get(doc, "trigger-defs", &triggers);
    return list_picture(list, triggers);
}
