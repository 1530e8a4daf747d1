/*
 * validate.c - static validation of an ASL definition, before anything runs.
 *
 * The interpreter trusts the shapes checked here (a Next always names a state
 * of the same scope, a Wait has exactly one duration field, a retrier's
 * numbers are in range), so this file is the one place that says what
 * CreateStateMachine would refuse. It never stops at the first problem: a
 * user fixing a definition wants the whole list, so every check appends to
 * the problem list and carries on with whatever can still be checked.
 *
 * Which fields a state may have is one table (state_fields below) indexed by
 * state type and query language, rather than per-type code: that keeps "is
 * this field allowed here" answerable in one place, and the per-type checks
 * only look at fields the table allowed, so a forbidden field is reported
 * once and not again for its contents.
 *
 * Where a problem is, is the JSON path of the offending field, built in one
 * growable buffer that is extended on the way down and cut back on the way
 * up. Path and intrinsic syntax are checked by path.c and intrinsic.c; this
 * file only adds what depends on the field (a ResultPath must start at "$",
 * a ".$" key must hold a string).
 *
 * Deliberately not done: JSONata expressions are not parsed (only the
 * "{% ... %}" framing is checked), and Resource ARNs are not interpreted.
 */
#include "decider/asl/validate.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/intrinsic.h"
#include "decider/asl/jsonata.h"
#include "decider/asl/path.h"
#include "decider/asl/reader.h"
#include "decider/asl/writer.h"
#include "decider/asl/resource.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/task_list.h"
#include "protocol/time.h"

/* AWS limits that are part of the language rather than of our resources. */
#define STATE_NAME_CHARS_MAX 80
#define RETRY_ATTEMPTS_MAX 99999999
#define SECONDS_MAX SWF_LIMIT_STATE_SECONDS

/* ---- the problem list ---------------------------------------------------- */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (q == NULL)
        abort(); /* as swf_error_new: there is no way to report running out */
    return q;
}

static void problems_vadd(swf_asl_problems_t *p, const char *where, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *msg = xrealloc(NULL, (size_t)(n < 0 ? 0 : n) + 1);
    vsnprintf(msg, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    SWF_ARRAY_RESERVE(p->items, p->count, p->cap, 8);
    p->items[p->count].where = swf_strdup(where);
    p->items[p->count].message = msg;
    p->count++;
}

void swf_asl_problems_add(swf_asl_problems_t *p, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problems_vadd(p, where, fmt, ap);
    va_end(ap);
}

void swf_asl_problems_free(swf_asl_problems_t *p)
{
    for (size_t i = 0; i < p->count; i++) {
        free(p->items[i].where);
        free(p->items[i].message);
    }
    free(p->items);
    p->items = NULL;
    p->count = 0;
    p->cap = 0;
}

/* ---- the JSON path of where we are -------------------------------------- */

typedef struct pathbuf {
    char *s;
    size_t len;
    size_t cap;
} pathbuf_t;

static void pb_append(pathbuf_t *pb, const char *s, size_t n)
{
    if (pb->len + n + 1 > pb->cap) {
        while (pb->len + n + 1 > pb->cap)
            pb->cap = pb->cap ? pb->cap * 2 : 256;
        pb->s = xrealloc(pb->s, pb->cap);
    }
    memcpy(pb->s + pb->len, s, n);
    pb->len += n;
    pb->s[pb->len] = '\0';
}

static bool is_plain_name(const char *key)
{
    if (*key == '\0')
        return false;
    for (const char *k = key; *k; k++) {
        char ch = *k;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                  (k != key && ch >= '0' && ch <= '9');
        if (!ok)
            return false;
    }
    return true;
}

/* Appends ".key", or "['key']" when the key is not an identifier; returns the
 * length to cut back to. */
static size_t pb_key(pathbuf_t *pb, const char *key)
{
    size_t mark = pb->len;
    if (is_plain_name(key)) {
        pb_append(pb, ".", 1);
        pb_append(pb, key, strlen(key));
        return mark;
    }
    pb_append(pb, "['", 2);
    for (const char *k = key; *k; k++) {
        if (*k == '\'' || *k == '\\')
            pb_append(pb, "\\", 1);
        pb_append(pb, k, 1);
    }
    pb_append(pb, "']", 2);
    return mark;
}

static size_t pb_index(pathbuf_t *pb, size_t i)
{
    size_t mark = pb->len;
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "[%zu]", i);
    pb_append(pb, buf, (size_t)n);
    return mark;
}

static void pb_cut(pathbuf_t *pb, size_t mark)
{
    pb->len = mark;
    pb->s[mark] = '\0';
}

/* ---- the walk ------------------------------------------------------------ */

typedef enum lang {
    LANG_JSONPATH,
    LANG_JSONATA,
} lang_t;

typedef struct vctx {
    swf_asl_problems_t *out;
    size_t found;        /* problems added by this call */
    pathbuf_t pb;        /* where we are */
    json_object *names;  /* every state name met so far, across all scopes */
    json_object *labels; /* every Map Label met so far, across all scopes */
    size_t states;       /* states met so far, across all scopes */
    lang_t top_lang;     /* the machine's QueryLanguage, inherited by every state */
} vctx_t;

__attribute__((format(printf, 2, 3))) static void problem(vctx_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problems_vadd(c->out, c->pb.s, fmt, ap);
    va_end(ap);
    c->found++;
}

/* A problem of the member `key` of the current object. */
__attribute__((format(printf, 3, 4))) static void problem_at(vctx_t *c, const char *key,
                                                             const char *fmt, ...)
{
    size_t mark = pb_key(&c->pb, key);
    va_list ap;
    va_start(ap, fmt);
    problems_vadd(c->out, c->pb.s, fmt, ap);
    va_end(ap);
    c->found++;
    pb_cut(&c->pb, mark);
}

static bool is_object(json_object *v)
{
    return json_object_is_type(v, json_type_object);
}

static bool is_array(json_object *v)
{
    return json_object_is_type(v, json_type_array);
}

static bool is_string(json_object *v)
{
    return json_object_is_type(v, json_type_string);
}

static bool is_int(json_object *v)
{
    return json_object_is_type(v, json_type_int);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A JSONata expression: a string framed by "{%" and "%}". */
static bool is_jsonata_expr(json_object *v)
{
    if (!is_string(v))
        return false;
    const char *s = json_object_get_string(v);
    return strncmp(s, "{%", 2) == 0 && strlen(s) >= 4 && ends_with(s, "%}");
}

/* Whether v is a JSONata expression, reporting its syntax errors: as in
 * Step Functions, an expression that cannot be parsed makes the definition
 * invalid, rather than the state fail when it is reached. */
static bool jsonata_expr(vctx_t *c, json_object *v)
{
    if (!is_jsonata_expr(v))
        return false;
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    char *inner = strndup(s + 2, n - 4);
    if (inner == NULL)
        abort();
    swf_error_t *err = swf_asl_jsonata_check(inner);
    if (err != NULL)
        problem(c, "%s", swf_error_message(err));
    swf_error_free(err);
    free(inner);
    return true;
}

/* Checks every JSONata expression inside a value (Output, Arguments,
 * Assign of a JSONata state): its syntax, and its framing (a string that
 * opens with "{%" must close with "%}", or it would silently be taken as a
 * literal). */
static void check_jsonata_value(vctx_t *c, json_object *v)
{
    if (is_string(v)) {
        const char *s = json_object_get_string(v);
        if (strncmp(s, "{%", 2) == 0 && !jsonata_expr(c, v))
            problem(c, "a JSONata expression must end with \"%%}\"");
    } else if (is_object(v)) {
        json_object_object_foreach(v, key, val)
        {
            size_t mark = pb_key(&c->pb, key);
            check_jsonata_value(c, val);
            pb_cut(&c->pb, mark);
        }
    } else if (is_array(v)) {
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
            size_t mark = pb_index(&c->pb, i);
            check_jsonata_value(c, json_object_array_get_idx(v, i));
            pb_cut(&c->pb, mark);
        }
    }
}

/* Checks the path held by the value at the current position. */
static void check_path_value(vctx_t *c, json_object *v, const char *field, swf_asl_path_kind_t kind,
                             bool nullable)
{
    if (v == NULL && nullable)
        return;
    if (!is_string(v)) {
        problem(c, "%s must be a string holding a path%s, not %s", field,
                nullable ? " or null" : "", swf_json_type_name(v));
        return;
    }
    const char *s = json_object_get_string(v);
    if (s[0] != '$') {
        problem(c, "%s must be a path beginning with \"$\"", field);
        return;
    }
    swf_error_t *err = swf_asl_path_check(s, kind);
    if (err != NULL) {
        problem(c, "%s", swf_error_message(err));
        swf_error_free(err);
    }
}

/* A path or an intrinsic call: the value of a ".$" key, ErrorPath, CausePath.
 */
static void check_dynamic_value(vctx_t *c, json_object *v, const char *what)
{
    if (!is_string(v)) {
        problem(c,
                "%s must be a string holding a path or an intrinsic function call, "
                "not %s",
                what, swf_json_type_name(v));
        return;
    }
    const char *s = json_object_get_string(v);
    swf_error_t *err = NULL;
    if (swf_asl_intrinsic_is_call(s))
        err = swf_asl_intrinsic_check(s);
    else if (s[0] != '$')
        problem(c, "%s must be a path beginning with \"$\" or an intrinsic function call", what);
    else
        err = swf_asl_path_check(s, SWF_ASL_PATH_ANY);
    if (err != NULL) {
        problem(c, "%s", swf_error_message(err));
        swf_error_free(err);
    }
}

/* A payload template (Parameters, ResultSelector, ItemSelector, and Assign of
 * a JSONPath state): keys ending in ".$" hold paths or intrinsic calls, every
 * other value is data, whatever its key ("Next" inside Parameters is data). */
static void check_template(vctx_t *c, json_object *v)
{
    if (is_object(v)) {
        json_object_object_foreach(v, key, val)
        {
            size_t mark = pb_key(&c->pb, key);
            if (ends_with(key, ".$"))
                check_dynamic_value(c, val, "the value of a \".$\" field");
            else
                check_template(c, val);
            pb_cut(&c->pb, mark);
        }
    } else if (is_array(v)) {
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
            size_t mark = pb_index(&c->pb, i);
            check_template(c, json_object_array_get_idx(v, i));
            pb_cut(&c->pb, mark);
        }
    }
}

/* Assign: a template in JSONPath states, JSONata values otherwise. */
static void check_assign(vctx_t *c, json_object *v, lang_t lang)
{
    if (!is_object(v)) {
        problem(c, "Assign must be an object, not %s", swf_json_type_name(v));
        return;
    }
    if (lang == LANG_JSONATA)
        check_jsonata_value(c, v);
    else
        check_template(c, v);
}

/* An integer field in [min, max]; in a JSONata state a "{% %}" expression
 * stands for the number. */
static void check_int_value(vctx_t *c, json_object *v, const char *field, int64_t min, int64_t max,
                            lang_t lang)
{
    if (lang == LANG_JSONATA && jsonata_expr(c, v))
        return;
    if (!is_int(v)) {
        problem(c, "%s must be an integer, not %s", field, swf_json_type_name(v));
        return;
    }
    int64_t n = json_object_get_int64(v);
    if (n < min || n > max)
        problem(c, "%s must be between %lld and %lld", field, (long long)min, (long long)max);
}

/* A string field; in a JSONata state a "{% %}" expression also is a string. */
static void check_string_value(vctx_t *c, json_object *v, const char *field)
{
    if (!is_string(v))
        problem(c, "%s must be a string, not %s", field, swf_json_type_name(v));
    else
        check_jsonata_value(c, v);
}

/* A transition (Next, Default, a rule's or catcher's Next): a state of the
 * same States object. Parallel branches and Map processors are scopes of
 * their own, so naming a state outside them is this same error. */
static void check_target(vctx_t *c, json_object *states, json_object *v, const char *field)
{
    if (!is_string(v)) {
        problem(c, "%s must be a string naming a state, not %s", field, swf_json_type_name(v));
        return;
    }
    const char *name = json_object_get_string(v);
    if (!json_object_object_get_ex(states, name, NULL))
        problem(c, "%s names \"%s\", which is not a state of the same States object", field, name);
}

/* ---- the table of fields --------------------------------------------------
 */

enum {
    T_PASS = 1 << 0,
    T_TASK = 1 << 1,
    T_CHOICE = 1 << 2,
    T_WAIT = 1 << 3,
    T_SUCCEED = 1 << 4,
    T_FAIL = 1 << 5,
    T_PARALLEL = 1 << 6,
    T_MAP = 1 << 7,
    T_ALL = 0xff,
    T_FLOW = T_PASS | T_TASK | T_WAIT | T_PARALLEL | T_MAP, /* Next or End */
    T_RUN = T_TASK | T_PARALLEL | T_MAP,                    /* Retry, Catch, ResultSelector */
    T_IO = T_ALL & ~T_FAIL,                                 /* InputPath, OutputPath, Output */
};

static const char *const type_names[] = {"Pass",    "Task", "Choice",   "Wait",
                                         "Succeed", "Fail", "Parallel", "Map"};

typedef enum field_lang {
    FL_BOTH,
    FL_JSONPATH,
    FL_JSONATA,
} field_lang_t;

typedef struct field {
    const char *name;
    unsigned types;
    field_lang_t lang;
} field_t;

static const field_t state_fields[] = {
    {"Type", T_ALL, FL_BOTH},
    {"Comment", T_ALL, FL_BOTH},
    {"QueryLanguage", T_ALL, FL_BOTH},
    {"Next", T_FLOW, FL_BOTH},
    {"End", T_FLOW, FL_BOTH},
    {"Assign", T_ALL & ~(T_SUCCEED | T_FAIL), FL_BOTH},
    {"InputPath", T_IO, FL_JSONPATH},
    {"OutputPath", T_IO, FL_JSONPATH},
    {"Output", T_IO, FL_JSONATA},
    {"Parameters", T_PASS | T_RUN, FL_JSONPATH},
    {"Arguments", T_TASK | T_PARALLEL, FL_JSONATA},
    {"ResultPath", T_PASS | T_RUN, FL_JSONPATH},
    {"ResultSelector", T_RUN, FL_JSONPATH},
    {"Retry", T_RUN, FL_BOTH},
    {"Catch", T_RUN, FL_BOTH},
    {"Result", T_PASS, FL_BOTH},
    {"Resource", T_TASK, FL_BOTH},
    {"Credentials", T_TASK, FL_BOTH},
    {"TimeoutSeconds", T_TASK, FL_BOTH},
    {"TimeoutSecondsPath", T_TASK, FL_JSONPATH},
    {"HeartbeatSeconds", T_TASK, FL_BOTH},
    {"HeartbeatSecondsPath", T_TASK, FL_JSONPATH},
    {"Choices", T_CHOICE, FL_BOTH},
    {"Default", T_CHOICE, FL_BOTH},
    {"Seconds", T_WAIT, FL_BOTH},
    {"SecondsPath", T_WAIT, FL_JSONPATH},
    {"Timestamp", T_WAIT, FL_BOTH},
    {"TimestampPath", T_WAIT, FL_JSONPATH},
    {"Error", T_FAIL, FL_BOTH},
    {"ErrorPath", T_FAIL, FL_JSONPATH},
    {"Cause", T_FAIL, FL_BOTH},
    {"CausePath", T_FAIL, FL_JSONPATH},
    {"Branches", T_PARALLEL, FL_BOTH},
    {"ItemsPath", T_MAP, FL_JSONPATH},
    {"Items", T_MAP, FL_JSONATA},
    {"ItemSelector", T_MAP, FL_BOTH},
    {"ItemProcessor", T_MAP, FL_BOTH},
    {"Iterator", T_MAP, FL_BOTH},
    {"ItemReader", T_MAP, FL_BOTH},
    {"ItemBatcher", T_MAP, FL_BOTH},
    {"ResultWriter", T_MAP, FL_BOTH},
    {"MaxConcurrency", T_MAP, FL_BOTH},
    {"MaxConcurrencyPath", T_MAP, FL_JSONPATH},
    {"ToleratedFailureCount", T_MAP, FL_BOTH},
    {"ToleratedFailureCountPath", T_MAP, FL_JSONPATH},
    {"ToleratedFailurePercentage", T_MAP, FL_BOTH},
    {"ToleratedFailurePercentagePath", T_MAP, FL_JSONPATH},
    {"Label", T_MAP, FL_BOTH},
};

static const field_t *field_find(const char *name)
{
    for (size_t i = 0; i < sizeof(state_fields) / sizeof(state_fields[0]); i++) {
        if (strcmp(state_fields[i].name, name) == 0)
            return &state_fields[i];
    }
    return NULL;
}

/* A state being checked: its object, its type bit and effective language. */
typedef struct state {
    json_object *obj;
    json_object *states; /* the States object of its scope */
    unsigned type;
    const char *type_name;
    lang_t lang;
} state_t;

static bool field_allowed(const state_t *s, const char *name)
{
    const field_t *f = field_find(name);
    if (f == NULL || !(f->types & s->type))
        return false;
    if (f->lang == FL_JSONPATH && s->lang != LANG_JSONPATH)
        return false;
    if (f->lang == FL_JSONATA && s->lang != LANG_JSONATA)
        return false;
    return true;
}

/* Looks a field up only when the table allows it for this state, so that a
 * forbidden field, already reported, is not checked a second time. *v is
 * borrowed (NULL for a JSON null). */
static bool field_get(const state_t *s, const char *name, json_object **v)
{
    /* Most fields are absent: the hash lookup first, the table scan after. */
    return json_object_object_get_ex(s->obj, name, v) && field_allowed(s, name);
}

static void check_fields_known(vctx_t *c, const state_t *s)
{
    json_object_object_foreach(s->obj, key, val)
    {
        (void)val;
        const field_t *f = field_find(key);
        if (f == NULL || !(f->types & s->type))
            problem_at(c, key, "field \"%s\" is not allowed in a %s state", key, s->type_name);
        else if (f->lang == FL_JSONPATH && s->lang != LANG_JSONPATH)
            problem_at(c, key, "%s is not allowed in a JSONata state", key);
        else if (f->lang == FL_JSONATA && s->lang != LANG_JSONATA)
            problem_at(c, key, "%s is only allowed when QueryLanguage is JSONata", key);
    }
}

/* ---- Retry and Catch ------------------------------------------------------
 */

static void check_error_equals(vctx_t *c, json_object *obj, bool last, const char *what)
{
    json_object *names = NULL;
    if (!json_object_object_get_ex(obj, "ErrorEquals", &names)) {
        problem(c, "a %s needs ErrorEquals", what);
        return;
    }
    size_t mark = pb_key(&c->pb, "ErrorEquals");
    size_t n = is_array(names) ? json_object_array_length(names) : 0;
    if (!is_array(names)) {
        problem(c, "ErrorEquals must be an array of error names, not %s",
                swf_json_type_name(names));
    } else if (n == 0) {
        problem(c, "ErrorEquals must not be empty");
    }
    bool all = false;
    for (size_t i = 0; i < n; i++) {
        json_object *name = json_object_array_get_idx(names, i);
        if (!is_string(name)) {
            size_t m = pb_index(&c->pb, i);
            problem(c, "an error name must be a string, not %s", swf_json_type_name(name));
            pb_cut(&c->pb, m);
        } else if (strcmp(json_object_get_string(name), "States.ALL") == 0) {
            all = true;
        }
    }
    if (all && n > 1)
        problem(c, "\"States.ALL\" must be the only error name");
    if (all && !last)
        problem(c, "\"States.ALL\" must appear only in the last %s", what);
    pb_cut(&c->pb, mark);
}

static void check_retrier(vctx_t *c, json_object *r, bool last)
{
    if (!is_object(r)) {
        problem(c, "a retrier must be an object, not %s", swf_json_type_name(r));
        return;
    }
    check_error_equals(c, r, last, "retrier");
    json_object_object_foreach(r, key, val)
    {
        size_t mark = pb_key(&c->pb, key);
        if (strcmp(key, "ErrorEquals") == 0) {
            /* checked above */
        } else if (strcmp(key, "Comment") == 0) {
            check_string_value(c, val, key);
        } else if (strcmp(key, "IntervalSeconds") == 0) {
            check_int_value(c, val, key, 1, SECONDS_MAX, LANG_JSONPATH);
        } else if (strcmp(key, "MaxAttempts") == 0) {
            check_int_value(c, val, key, 0, RETRY_ATTEMPTS_MAX, LANG_JSONPATH);
        } else if (strcmp(key, "MaxDelaySeconds") == 0) {
            check_int_value(c, val, key, 1, SECONDS_MAX, LANG_JSONPATH);
        } else if (strcmp(key, "BackoffRate") == 0) {
            if (!swf_json_is_number(val))
                problem(c, "BackoffRate must be a number, not %s", swf_json_type_name(val));
            else if (json_object_get_double(val) < 1.0)
                problem(c, "BackoffRate must be at least 1.0");
        } else if (strcmp(key, "JitterStrategy") == 0) {
            const char *s = is_string(val) ? json_object_get_string(val) : "";
            if (strcmp(s, "FULL") != 0 && strcmp(s, "NONE") != 0)
                problem(c, "JitterStrategy must be \"FULL\" or \"NONE\"");
        } else {
            problem(c, "field \"%s\" is not allowed in a retrier", key);
        }
        pb_cut(&c->pb, mark);
    }
}

static void check_catcher(vctx_t *c, const state_t *s, json_object *k, bool last)
{
    if (!is_object(k)) {
        problem(c, "a catcher must be an object, not %s", swf_json_type_name(k));
        return;
    }
    check_error_equals(c, k, last, "catcher");
    if (!json_object_object_get_ex(k, "Next", NULL))
        problem(c, "a catcher needs Next");
    json_object_object_foreach(k, key, val)
    {
        size_t mark = pb_key(&c->pb, key);
        if (strcmp(key, "ErrorEquals") == 0) {
            /* checked above */
        } else if (strcmp(key, "Next") == 0) {
            check_target(c, s->states, val, "Next");
        } else if (strcmp(key, "Comment") == 0) {
            check_string_value(c, val, key);
        } else if (strcmp(key, "Assign") == 0) {
            check_assign(c, val, s->lang);
        } else if (strcmp(key, "ResultPath") == 0 && s->lang == LANG_JSONPATH) {
            check_path_value(c, val, key, SWF_ASL_PATH_REFERENCE, true);
            if (is_string(val) && strcmp(json_object_get_string(val), "$") != 0 &&
                strncmp(json_object_get_string(val), "$.", 2) != 0 &&
                strncmp(json_object_get_string(val), "$[", 2) != 0)
                problem(c, "ResultPath must be a path into the state's input (\"$\" or "
                           "\"$.x\")");
        } else if (strcmp(key, "Output") == 0 && s->lang == LANG_JSONATA) {
            check_jsonata_value(c, val);
        } else {
            problem(c, "field \"%s\" is not allowed in a catcher", key);
        }
        pb_cut(&c->pb, mark);
    }
}

static void check_handlers(vctx_t *c, const state_t *s, const char *field)
{
    json_object *list = NULL;
    if (!field_get(s, field, &list))
        return;
    size_t mark = pb_key(&c->pb, field);
    if (!is_array(list)) {
        problem(c, "%s must be an array, not %s", field, swf_json_type_name(list));
    } else {
        size_t n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
            size_t m = pb_index(&c->pb, i);
            json_object *h = json_object_array_get_idx(list, i);
            if (strcmp(field, "Retry") == 0)
                check_retrier(c, h, i + 1 == n);
            else
                check_catcher(c, s, h, i + 1 == n);
            pb_cut(&c->pb, m);
        }
    }
    pb_cut(&c->pb, mark);
}

/* ---- Choice rules ------------------------------------------------------- */

typedef enum operand {
    OP_NONE,
    OP_STRING,
    OP_NUMBER,
    OP_BOOLEAN,
    OP_TIMESTAMP,
    OP_PATH,
    OP_IS,
    OP_AND_OR,
    OP_NOT,
} operand_t;

/* What a Choice rule key is: a comparison operator (and the type of its
 * operand), And/Or/Not, or none of these. */
static operand_t rule_operator(const char *key)
{
    static const struct {
        const char *prefix;
        operand_t operand;
    } families[] = {
        {"String", OP_STRING},
        {"Numeric", OP_NUMBER},
        {"Boolean", OP_BOOLEAN},
        {"Timestamp", OP_TIMESTAMP},
    };
    static const char *const tests[] = {"Equals", "LessThan", "GreaterThan", "LessThanEquals",
                                        "GreaterThanEquals"};
    static const char *const is_tests[] = {"IsNull",   "IsPresent", "IsNumeric",
                                           "IsString", "IsBoolean", "IsTimestamp"};
    if (strcmp(key, "And") == 0 || strcmp(key, "Or") == 0)
        return OP_AND_OR;
    if (strcmp(key, "Not") == 0)
        return OP_NOT;
    if (strcmp(key, "StringMatches") == 0)
        return OP_STRING;
    for (size_t i = 0; i < sizeof(is_tests) / sizeof(is_tests[0]); i++) {
        if (strcmp(key, is_tests[i]) == 0)
            return OP_IS;
    }
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
        size_t plen = strlen(families[f].prefix);
        if (strncmp(key, families[f].prefix, plen) != 0)
            continue;
        const char *rest = key + plen;
        /* Booleans only compare for equality. */
        size_t ntests = families[f].operand == OP_BOOLEAN ? 1 : sizeof(tests) / sizeof(tests[0]);
        for (size_t t = 0; t < ntests; t++) {
            size_t tlen = strlen(tests[t]);
            if (strncmp(rest, tests[t], tlen) != 0)
                continue;
            if (rest[tlen] == '\0')
                return families[f].operand;
            if (strcmp(rest + tlen, "Path") == 0)
                return OP_PATH;
        }
    }
    return OP_NONE;
}

static void check_rule(vctx_t *c, const state_t *s, json_object *rule, bool top);

static void check_operand(vctx_t *c, const state_t *s, const char *op, operand_t kind,
                          json_object *v)
{
    switch (kind) {
    case OP_STRING:
        if (!is_string(v))
            problem(c, "%s must compare with a string, not %s", op, swf_json_type_name(v));
        break;
    case OP_NUMBER:
        if (!swf_json_is_number(v))
            problem(c, "%s must compare with a number, not %s", op, swf_json_type_name(v));
        break;
    case OP_BOOLEAN:
    case OP_IS:
        if (!json_object_is_type(v, json_type_boolean))
            problem(c, "%s must be given a boolean, not %s", op, swf_json_type_name(v));
        break;
    case OP_TIMESTAMP: {
        swf_time_t t;
        if (!is_string(v) || !swf_time_parse(json_object_get_string(v), &t))
            problem(c,
                    "%s must compare with an RFC 3339 timestamp such as "
                    "\"2016-03-14T01:59:00Z\"",
                    op);
        break;
    }
    case OP_PATH:
        check_path_value(c, v, op, SWF_ASL_PATH_ANY, false);
        break;
    case OP_AND_OR: {
        size_t n = is_array(v) ? json_object_array_length(v) : 0;
        if (n == 0) {
            problem(c, "%s must be a non-empty array of rules", op);
            break;
        }
        for (size_t i = 0; i < n; i++) {
            size_t mark = pb_index(&c->pb, i);
            check_rule(c, s, json_object_array_get_idx(v, i), false);
            pb_cut(&c->pb, mark);
        }
        break;
    }
    case OP_NOT:
        check_rule(c, s, v, false);
        break;
    case OP_NONE:
        break;
    }
}

static void check_rule_jsonata(vctx_t *c, const state_t *s, json_object *rule, bool top)
{
    json_object *cond = NULL;
    if (!json_object_object_get_ex(rule, "Condition", &cond))
        problem(c, "a Choice rule of a JSONata state needs Condition");
    json_object_object_foreach(rule, key, val)
    {
        size_t mark = pb_key(&c->pb, key);
        if (strcmp(key, "Condition") == 0) {
            if (!json_object_is_type(val, json_type_boolean) && !jsonata_expr(c, val))
                problem(c, "Condition must be a boolean or a JSONata expression \"{%% "
                           "... %%}\"");
        } else if (strcmp(key, "Next") == 0 && top) {
            check_target(c, s->states, val, "Next");
        } else if (strcmp(key, "Comment") == 0) {
            check_string_value(c, val, key);
        } else if ((strcmp(key, "Assign") == 0 || strcmp(key, "Output") == 0) && top) {
            check_jsonata_value(c, val);
        } else {
            problem(c, "field \"%s\" is not allowed in a Choice rule of a JSONata state", key);
        }
        pb_cut(&c->pb, mark);
    }
}

static void check_rule(vctx_t *c, const state_t *s, json_object *rule, bool top)
{
    if (!is_object(rule)) {
        problem(c, "a Choice rule must be an object, not %s", swf_json_type_name(rule));
        return;
    }
    if (top && !json_object_object_get_ex(rule, "Next", NULL))
        problem(c, "a Choice rule needs Next");
    if (s->lang == LANG_JSONATA) {
        check_rule_jsonata(c, s, rule, top);
        return;
    }
    const char *op = NULL;
    operand_t kind = OP_NONE;
    size_t ops = 0;
    json_object_object_foreach(rule, key, val)
    {
        operand_t k = rule_operator(key);
        size_t mark = pb_key(&c->pb, key);
        if (k != OP_NONE) {
            ops++;
            op = key;
            kind = k;
            check_operand(c, s, key, k, val);
        } else if (strcmp(key, "Variable") == 0) {
            check_path_value(c, val, key, SWF_ASL_PATH_ANY, false);
        } else if (strcmp(key, "Next") == 0) {
            if (top)
                check_target(c, s->states, val, "Next");
            else
                problem(c, "a rule inside And, Or or Not must not have Next");
        } else if (strcmp(key, "Comment") == 0) {
            check_string_value(c, val, key);
        } else if (strcmp(key, "Assign") == 0 && top) {
            check_assign(c, val, s->lang);
        } else if (strcmp(key, "Condition") == 0 || strcmp(key, "Output") == 0) {
            problem(c, "%s is only allowed when QueryLanguage is JSONata", key);
        } else {
            problem(c, "field \"%s\" is not allowed in a Choice rule", key);
        }
        pb_cut(&c->pb, mark);
    }
    if (ops == 0) {
        problem(c, "a Choice rule needs a comparison operator, And, Or or Not");
        return;
    }
    if (ops > 1) {
        problem(c, "a Choice rule must have exactly one comparison operator, And, "
                   "Or or Not");
        return;
    }
    bool has_var = json_object_object_get_ex(rule, "Variable", NULL);
    bool compound = kind == OP_AND_OR || kind == OP_NOT;
    if (!compound && !has_var)
        problem(c, "the comparison %s needs Variable", op);
    else if (compound && has_var)
        problem_at(c, "Variable", "Variable is not allowed with %s", op);
}

/* ---- per-type checks ---------------------------------------------------- */

static void check_machine(vctx_t *c, json_object *m, const char *what, bool processor);

static void check_transition(vctx_t *c, const state_t *s)
{
    if (!(s->type & T_FLOW))
        return; /* the table has already refused Next and End elsewhere */
    json_object *next = NULL, *end = NULL;
    bool has_next = json_object_object_get_ex(s->obj, "Next", &next);
    bool has_end = json_object_object_get_ex(s->obj, "End", &end);
    if (has_end && !json_object_is_type(end, json_type_boolean)) {
        problem_at(c, "End", "End must be a boolean, not %s", swf_json_type_name(end));
        has_end = false;
    } else if (has_end) {
        has_end = json_object_get_boolean(end);
    }
    if (has_next) {
        size_t mark = pb_key(&c->pb, "Next");
        check_target(c, s->states, next, "Next");
        pb_cut(&c->pb, mark);
    }
    if (has_next && has_end)
        problem(c, "a %s state must have either Next or \"End\": true, not both", s->type_name);
    else if (!has_next && !has_end)
        problem(c, "a %s state needs Next or \"End\": true", s->type_name);
}

static void check_io(vctx_t *c, const state_t *s)
{
    static const char *const templates[] = {"Parameters", "ResultSelector", "ItemSelector"};
    json_object *v = NULL;
    const char *const any_paths[] = {"InputPath", "OutputPath"};
    for (size_t i = 0; i < 2; i++) {
        if (field_get(s, any_paths[i], &v)) {
            size_t mark = pb_key(&c->pb, any_paths[i]);
            check_path_value(c, v, any_paths[i], SWF_ASL_PATH_ANY, true);
            pb_cut(&c->pb, mark);
        }
    }
    if (field_get(s, "ResultPath", &v)) {
        size_t mark = pb_key(&c->pb, "ResultPath");
        check_path_value(c, v, "ResultPath", SWF_ASL_PATH_REFERENCE, true);
        /* The result goes into the state's input: not the context, not a variable.
         */
        const char *p = is_string(v) ? json_object_get_string(v) : "$";
        if (p[0] == '$' && strcmp(p, "$") != 0 && strncmp(p, "$.", 2) != 0 &&
            strncmp(p, "$[", 2) != 0)
            problem(c, "ResultPath must be a path into the state's input (\"$\" or "
                       "\"$.x\")");
        pb_cut(&c->pb, mark);
    }
    for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
        if (!field_get(s, templates[i], &v))
            continue;
        size_t mark = pb_key(&c->pb, templates[i]);
        if (s->lang == LANG_JSONATA)
            check_jsonata_value(c, v);
        else
            check_template(c, v);
        pb_cut(&c->pb, mark);
    }
    const char *const jsonata_values[] = {"Output", "Arguments"};
    for (size_t i = 0; i < 2; i++) {
        if (field_get(s, jsonata_values[i], &v)) {
            size_t mark = pb_key(&c->pb, jsonata_values[i]);
            check_jsonata_value(c, v);
            pb_cut(&c->pb, mark);
        }
    }
    if (field_get(s, "Assign", &v)) {
        size_t mark = pb_key(&c->pb, "Assign");
        check_assign(c, v, s->lang);
        pb_cut(&c->pb, mark);
    }
    if (field_get(s, "Comment", &v)) {
        size_t mark = pb_key(&c->pb, "Comment");
        check_string_value(c, v, "Comment");
        pb_cut(&c->pb, mark);
    }
}

/* Checks a pair of a literal field and its *Path twin: at most one (or
 * exactly one when `required`); returns the literal, or NULL. */
static json_object *check_pair(vctx_t *c, const state_t *s, const char *lit, const char *path,
                               int64_t min, int64_t max)
{
    json_object *v = NULL, *p = NULL;
    bool has_lit = field_get(s, lit, &v);
    bool has_path = field_get(s, path, &p);
    if (has_lit && has_path)
        problem(c, "%s and %s are mutually exclusive", lit, path);
    if (has_lit) {
        size_t mark = pb_key(&c->pb, lit);
        check_int_value(c, v, lit, min, max, s->lang);
        pb_cut(&c->pb, mark);
    }
    if (has_path) {
        size_t mark = pb_key(&c->pb, path);
        check_path_value(c, p, path, SWF_ASL_PATH_REFERENCE, false);
        pb_cut(&c->pb, mark);
    }
    return has_lit && is_int(v) ? v : NULL;
}

/* Credentials, as AWS checks it when the state machine is created (recorded:
 * an empty object or an unknown field is an invalid definition): an object of
 * exactly one field, RoleArn (a string; an expression in JSONata) or, in
 * JSONPath, RoleArn.$ (a path or an intrinsic function, checked as a
 * payload template). https://docs.aws.amazon.com/step-functions/latest/dg/state-task.html */
static void check_credentials(vctx_t *c, const state_t *s, json_object *v)
{
    if (!is_object(v)) {
        problem_at(c, "Credentials", "Credentials must be an object, not %s",
                   swf_json_type_name(v));
        return;
    }
    int n = 0;
    json_object_object_foreach(v, key, val)
    {
        n++;
        bool dollar = strcmp(key, "RoleArn.$") == 0;
        if (strcmp(key, "RoleArn") != 0 && !(dollar && s->lang == LANG_JSONPATH))
            problem_at(c, "Credentials", "field \"%s\" is not allowed in Credentials%s", key,
                       dollar ? " of a JSONata state (use RoleArn)" : "; it takes RoleArn");
        else if (!is_string(val))
            problem_at(c, "Credentials", "Credentials.%s must be a string, not %s", key,
                       swf_json_type_name(val));
    }
    if (n == 0)
        problem_at(c, "Credentials", "Credentials must name the role to assume: RoleArn%s",
                   s->lang == LANG_JSONPATH ? " or RoleArn.$" : "");
}

static void check_task(vctx_t *c, const state_t *s)
{
    json_object *v = NULL;
    char list[SWF_TASK_LIST_BYTES];
    swf_error_t *err = NULL;
    if (!field_get(s, "Resource", &v))
        problem(c, "a Task state needs Resource");
    else if (!is_string(v))
        problem_at(c, "Resource", "Resource must be a string, not %s", swf_json_type_name(v));
    else if ((err = swf_asl_task_list(s->obj, s->lang == LANG_JSONATA, NULL, list, sizeof list)))
        problem_at(c, "Resource", "%s", swf_error_message(err)); /* one swf cannot serve */
    swf_error_free(err);
    json_object *timeout = check_pair(c, s, "TimeoutSeconds", "TimeoutSecondsPath", 1, SECONDS_MAX);
    json_object *heartbeat =
        check_pair(c, s, "HeartbeatSeconds", "HeartbeatSecondsPath", 1, SECONDS_MAX);
    if (timeout && heartbeat && json_object_get_int64(heartbeat) >= json_object_get_int64(timeout))
        problem_at(c, "HeartbeatSeconds", "HeartbeatSeconds must be smaller than TimeoutSeconds");
    if (field_get(s, "Credentials", &v))
        check_credentials(c, s, v);
}

static void check_choice(vctx_t *c, const state_t *s)
{
    json_object *v = NULL;
    if (!field_get(s, "Choices", &v)) {
        problem(c, "a Choice state needs Choices");
    } else {
        size_t mark = pb_key(&c->pb, "Choices");
        size_t n = is_array(v) ? json_object_array_length(v) : 0;
        if (n == 0)
            problem(c, "Choices must be a non-empty array of rules");
        for (size_t i = 0; i < n; i++) {
            size_t m = pb_index(&c->pb, i);
            check_rule(c, s, json_object_array_get_idx(v, i), true);
            pb_cut(&c->pb, m);
        }
        pb_cut(&c->pb, mark);
    }
    if (field_get(s, "Default", &v)) {
        size_t mark = pb_key(&c->pb, "Default");
        check_target(c, s->states, v, "Default");
        pb_cut(&c->pb, mark);
    }
}

static void check_wait(vctx_t *c, const state_t *s)
{
    static const char *const ways[] = {"Seconds", "SecondsPath", "Timestamp", "TimestampPath"};
    size_t n = 0;
    json_object *v = NULL;
    for (size_t i = 0; i < 4; i++) {
        if (!field_get(s, ways[i], &v))
            continue;
        n++;
        size_t mark = pb_key(&c->pb, ways[i]);
        if (i == 0) {
            check_int_value(c, v, ways[i], 0, SECONDS_MAX, s->lang);
        } else if (i == 2) {
            swf_time_t t;
            if (!(s->lang == LANG_JSONATA && jsonata_expr(c, v)) &&
                (!is_string(v) || !swf_time_parse(json_object_get_string(v), &t)))
                problem(c, "Timestamp must be an RFC 3339 timestamp such as "
                           "\"2016-03-14T01:59:00Z\"");
        } else {
            check_path_value(c, v, ways[i], SWF_ASL_PATH_REFERENCE, false);
        }
        pb_cut(&c->pb, mark);
    }
    if (n != 1)
        problem(c, "a Wait state needs exactly one of Seconds, SecondsPath, Timestamp and "
                   "TimestampPath");
}

static void check_fail(vctx_t *c, const state_t *s)
{
    static const char *const pairs[][2] = {{"Error", "ErrorPath"}, {"Cause", "CausePath"}};
    for (size_t i = 0; i < 2; i++) {
        json_object *lit = NULL, *path = NULL;
        bool has_lit = field_get(s, pairs[i][0], &lit);
        bool has_path = field_get(s, pairs[i][1], &path);
        if (has_lit && has_path)
            problem(c, "%s and %s are mutually exclusive", pairs[i][0], pairs[i][1]);
        if (has_lit) {
            size_t mark = pb_key(&c->pb, pairs[i][0]);
            check_string_value(c, lit, pairs[i][0]);
            pb_cut(&c->pb, mark);
        }
        if (has_path) {
            size_t mark = pb_key(&c->pb, pairs[i][1]);
            check_dynamic_value(c, path, pairs[i][1]);
            pb_cut(&c->pb, mark);
        }
    }
}

static void check_parallel(vctx_t *c, const state_t *s)
{
    json_object *v = NULL;
    if (!field_get(s, "Branches", &v)) {
        problem(c, "a Parallel state needs Branches");
        return;
    }
    size_t mark = pb_key(&c->pb, "Branches");
    size_t n = is_array(v) ? json_object_array_length(v) : 0;
    if (n == 0)
        problem(c, "Branches must be a non-empty array of state machines");
    for (size_t i = 0; i < n; i++) {
        size_t m = pb_index(&c->pb, i);
        check_machine(c, json_object_array_get_idx(v, i), "a branch", false);
        pb_cut(&c->pb, m);
    }
    pb_cut(&c->pb, mark);
}

/* A Map Label (AWS, "Distributed Map state fields"): at most 40
 * characters, unique within the definition, and without white space,
 * wildcards (? *), brackets (< > { } [ ]), the special characters
 * : ; , \ | ^ ~ $ # % & ` " and control characters (U+0000-001F,
 * U+007F-009F). */
static void check_label(vctx_t *c, const char *label)
{
    size_t chars = 0;
    bool bad = false;
    const unsigned char *p = (const unsigned char *)label;
    while (*p != '\0') {
        unsigned cp = *p;
        size_t n = cp < 0x80 ? 1 : (cp & 0xE0) == 0xC0 ? 2 : (cp & 0xF0) == 0xE0 ? 3 : 4;
        if (n == 2 && p[1] != '\0')
            cp = ((cp & 0x1Fu) << 6) | (p[1] & 0x3Fu);
        if (cp <= 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xA0 ||
            (cp < 0x80 && strchr("?*<>{}[]:;,\\|^~$#%&`\"", (int)cp) != NULL))
            bad = true;
        for (size_t k = 0; k < n && *p != '\0'; k++)
            p++;
        chars++;
    }
    if (chars == 0 || chars > 40)
        problem_at(c, "Label", "Label must be 1 to 40 characters long, not %zu", chars);
    if (bad)
        problem_at(c, "Label",
                   "Label must not contain white space, control characters or any of "
                   "? * < > { } [ ] : ; , \\ | ^ ~ $ # %% & ` \"");
    if (json_object_object_get_ex(c->labels, label, NULL))
        problem_at(c, "Label", "Label \"%s\" is used by another Map state; labels must be unique",
                   label);
    else
        json_object_object_add(c->labels, label, NULL);
}

/* A Map's ItemReader or ResultWriter (name): a task (its Resource maps to a
 * task list, resource.h; for the writer the Resource may be absent) with
 * Parameters or Arguments, and a configuration (config: ReaderConfig or
 * WriterConfig) swf applies (reader.h, writer.h). */
static void check_map_task(vctx_t *c, const state_t *s, json_object *holder, const char *name,
                           const char *config)
{
    size_t mark = pb_key(&c->pb, name);
    json_object_object_foreach(holder, key, val)
    {
        bool ok = strcmp(key, "Resource") == 0 || strcmp(key, config) == 0 ||
                  strcmp(key, s->lang == LANG_JSONATA ? "Arguments" : "Parameters") == 0;
        if (!ok)
            problem_at(c, key, "field \"%s\" is not allowed in %s", key, name);
        else if (strcmp(key, "Parameters") == 0)
            check_template(c, val);
        else if (strcmp(key, "Arguments") == 0)
            check_jsonata_value(c, val);
    }
    bool reader = strcmp(name, "ItemReader") == 0;
    json_object *res = NULL, *cfg = NULL;
    char list[SWF_TASK_LIST_BYTES];
    swf_error_t *err = NULL;
    bool has_res = json_object_object_get_ex(holder, "Resource", &res);
    if (reader && (!has_res || !is_string(res)))
        problem(c, "ItemReader needs a Resource (a string), the task that reads the items");
    else if (has_res && !is_string(res))
        problem_at(c, "Resource", "Resource must be a string, the task that writes the results");
    else if (has_res &&
             (err = swf_asl_task_list(holder, s->lang == LANG_JSONATA, NULL, list, sizeof list)))
        problem_at(c, "Resource", "%s", swf_error_message(err));
    swf_error_free(err);
    json_object_object_get_ex(holder, config, &cfg);
    const char *why = reader ? swf_asl_reader_config_problem(cfg) : swf_asl_writer_problem(holder);
    json_object *mp = NULL;
    if (why == NULL && reader && json_object_object_get_ex(cfg, "MaxItems", &mp) && is_string(mp)) {
        size_t m2 = pb_key(&c->pb, config);
        pb_key(&c->pb, "MaxItems");
        if (s->lang != LANG_JSONATA)
            problem(c, "MaxItems is an expression only in JSONata; in JSONPath give MaxItemsPath");
        else if (!jsonata_expr(c, mp))
            problem(c, "MaxItems must be an integer or a JSONata expression \"{%% ... %%}\"");
        pb_cut(&c->pb, m2);
    }
    if (why == NULL && reader && json_object_object_get_ex(cfg, "MaxItemsPath", &mp)) {
        size_t m2 = pb_key(&c->pb, config);
        pb_key(&c->pb, "MaxItemsPath");
        if (s->lang == LANG_JSONATA)
            problem(c, "MaxItemsPath is a JSONPath field; in JSONata give MaxItems");
        else
            check_path_value(c, mp, "MaxItemsPath", SWF_ASL_PATH_REFERENCE, false);
        pb_cut(&c->pb, m2);
    }
    if (why != NULL && reader)
        problem_at(c, config, "%s", why);
    else if (why != NULL)
        problem(c, "%s", why);
    pb_cut(&c->pb, mark);
}

static void check_map(vctx_t *c, const state_t *s)
{
    json_object *v = NULL, *p = NULL;
    bool has_proc = field_get(s, "ItemProcessor", &p);
    bool has_iter = field_get(s, "Iterator", &v);
    if (has_proc && has_iter)
        problem(c, "a Map state must have ItemProcessor or Iterator, not both");
    else if (!has_proc && !has_iter)
        problem(c, "a Map state needs ItemProcessor (or the older Iterator)");
    if (has_proc) {
        size_t mark = pb_key(&c->pb, "ItemProcessor");
        check_machine(c, p, "ItemProcessor", true);
        pb_cut(&c->pb, mark);
    }
    if (has_iter) {
        size_t mark = pb_key(&c->pb, "Iterator");
        /* AWS accepts ProcessorConfig in the older Iterator too (recorded),
         * inline and distributed, and runs it as an ItemProcessor. */
        check_machine(c, v, "Iterator", true);
        pb_cut(&c->pb, mark);
    }
    if (json_object_object_get_ex(s->obj, "Parameters", NULL) &&
        json_object_object_get_ex(s->obj, "ItemSelector", NULL))
        problem(c, "Parameters and ItemSelector are mutually exclusive");
    if (field_get(s, "ItemsPath", &v)) {
        size_t mark = pb_key(&c->pb, "ItemsPath");
        check_path_value(c, v, "ItemsPath", SWF_ASL_PATH_REFERENCE, false);
        pb_cut(&c->pb, mark);
    }
    if (field_get(s, "Items", &v)) {
        size_t mark = pb_key(&c->pb, "Items");
        if (is_array(v))
            check_jsonata_value(c, v);
        else if (!jsonata_expr(c, v))
            problem(c, "Items must be an array or a JSONata expression \"{%% ... %%}\"");
        pb_cut(&c->pb, mark);
    }
    check_pair(c, s, "MaxConcurrency", "MaxConcurrencyPath", 0, INT64_MAX);
    check_pair(c, s, "ToleratedFailureCount", "ToleratedFailureCountPath", 0, INT64_MAX);
    json_object *pct = NULL, *pct_path = NULL;
    bool has_pct = field_get(s, "ToleratedFailurePercentage", &pct);
    bool has_pct_path = field_get(s, "ToleratedFailurePercentagePath", &pct_path);
    if (has_pct && has_pct_path)
        problem(c, "ToleratedFailurePercentage and ToleratedFailurePercentagePath "
                   "are mutually "
                   "exclusive");
    size_t pct_mark = pb_key(&c->pb, "ToleratedFailurePercentage");
    bool pct_expr = has_pct && s->lang == LANG_JSONATA && jsonata_expr(c, pct);
    pb_cut(&c->pb, pct_mark);
    if (has_pct && !pct_expr &&
        (!swf_json_is_number(pct) || json_object_get_double(pct) < 0 ||
         json_object_get_double(pct) > 100))
        problem_at(c, "ToleratedFailurePercentage",
                   "ToleratedFailurePercentage must be a number from 0 to 100");
    if (has_pct_path) {
        size_t mark = pb_key(&c->pb, "ToleratedFailurePercentagePath");
        check_path_value(c, pct_path, "ToleratedFailurePercentagePath", SWF_ASL_PATH_REFERENCE,
                         false);
        pb_cut(&c->pb, mark);
    }
    static const char *const objects[] = {"ItemReader", "ItemBatcher", "ResultWriter"};
    for (size_t i = 0; i < 3; i++) {
        if (field_get(s, objects[i], &v) && !is_object(v))
            problem_at(c, objects[i], "%s must be an object, not %s", objects[i],
                       swf_json_type_name(v));
    }
    /* Refused here rather than accepted and failed at run time. */
    if (field_get(s, "ItemReader", &v) && is_object(v))
        check_map_task(c, s, v, "ItemReader", "ReaderConfig");
    if (field_get(s, "ResultWriter", &v) && is_object(v))
        check_map_task(c, s, v, "ResultWriter", "WriterConfig");
    if (field_get(s, "Label", &v)) {
        if (!is_string(v))
            problem_at(c, "Label", "Label must be a string, not %s", swf_json_type_name(v));
        else
            check_label(c, json_object_get_string(v));
    }
}

static void check_state(vctx_t *c, json_object *states, json_object *obj)
{
    if (!is_object(obj)) {
        problem(c, "a state must be an object, not %s", swf_json_type_name(obj));
        return;
    }
    state_t s = {.obj = obj, .states = states, .lang = c->top_lang};
    const char *type = swf_json_get_string(obj, "Type");
    if (!json_object_object_get_ex(obj, "Type", NULL)) {
        problem(c, "a state needs Type");
        return;
    }
    for (size_t i = 0; type != NULL && i < sizeof(type_names) / sizeof(type_names[0]); i++) {
        if (strcmp(type, type_names[i]) == 0) {
            s.type = 1u << i;
            s.type_name = type_names[i];
        }
    }
    if (s.type == 0) {
        problem_at(c, "Type",
                   "Type must be one of Pass, Task, Choice, Wait, Succeed, Fail, "
                   "Parallel, Map");
        return; /* without a type, no field can be judged */
    }
    json_object *ql = NULL;
    if (json_object_object_get_ex(obj, "QueryLanguage", &ql)) {
        const char *q = is_string(ql) ? json_object_get_string(ql) : "";
        if (strcmp(q, "JSONata") == 0)
            s.lang = LANG_JSONATA;
        else if (strcmp(q, "JSONPath") != 0)
            problem_at(c, "QueryLanguage", "QueryLanguage must be \"JSONPath\" or \"JSONata\"");
        else if (c->top_lang == LANG_JSONATA)
            problem_at(c, "QueryLanguage",
                       "a state cannot use JSONPath when the machine's QueryLanguage "
                       "is JSONata");
    }
    check_fields_known(c, &s);
    check_transition(c, &s);
    check_io(c, &s);
    check_handlers(c, &s, "Retry");
    check_handlers(c, &s, "Catch");
    switch (s.type) {
    case T_TASK:
        check_task(c, &s);
        break;
    case T_CHOICE:
        check_choice(c, &s);
        break;
    case T_WAIT:
        check_wait(c, &s);
        break;
    case T_FAIL:
        check_fail(c, &s);
        break;
    case T_PARALLEL:
        check_parallel(c, &s);
        break;
    case T_MAP:
        check_map(c, &s);
        break;
    default:
        break; /* Pass and Succeed have nothing of their own beyond the table */
    }
}

/* ---- scopes -------------------------------------------------------------- */

static void reach_push(json_object *states, json_object *seen, json_object *work, json_object *v)
{
    if (!is_string(v))
        return;
    const char *name = json_object_get_string(v);
    if (!json_object_object_get_ex(states, name, NULL) ||
        json_object_object_get_ex(seen, name, NULL))
        return;
    json_object_object_add(seen, name, NULL);
    json_object_array_add(work, json_object_new_string(name));
}

static void reach_push_list(json_object *states, json_object *seen, json_object *work,
                            json_object *list, const char *key)
{
    size_t n = is_array(list) ? json_object_array_length(list) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *v = NULL;
        if (swf_json_get(json_object_array_get_idx(list, i), key, &v))
            reach_push(states, seen, work, v);
    }
}

/* Reports every state of one States object that no chain of transitions
 * from StartAt reaches. A worklist rather than recursion: a chain of ten
 * thousand states must not exhaust the stack. */
static void check_reachable(vctx_t *c, json_object *states, json_object *start)
{
    json_object *seen = json_object_new_object();
    json_object *work = json_object_new_array();
    reach_push(states, seen, work, start);
    for (size_t i = 0; i < json_object_array_length(work); i++) {
        json_object *st = NULL, *v = NULL;
        json_object_object_get_ex(states,
                                  json_object_get_string(json_object_array_get_idx(work, i)), &st);
        if (swf_json_get(st, "Next", &v))
            reach_push(states, seen, work, v);
        if (swf_json_get(st, "Default", &v))
            reach_push(states, seen, work, v);
        if (swf_json_get(st, "Choices", &v))
            reach_push_list(states, seen, work, v, "Next");
        if (swf_json_get(st, "Catch", &v))
            reach_push_list(states, seen, work, v, "Next");
    }
    size_t mark = pb_key(&c->pb, "States");
    json_object_object_foreach(states, name, st)
    {
        (void)st;
        if (!json_object_object_get_ex(seen, name, NULL))
            problem_at(c, name, "state \"%s\" is not reachable from StartAt", name);
    }
    pb_cut(&c->pb, mark);
    json_object_put(work);
    json_object_put(seen);
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void check_state_name(vctx_t *c, const char *name)
{
    size_t chars = utf8_chars(name);
    if (chars == 0)
        problem(c, "a state name must not be empty");
    else if (chars > STATE_NAME_CHARS_MAX)
        problem(c, "a state name must be at most %d characters long", STATE_NAME_CHARS_MAX);
    if (json_object_object_get_ex(c->names, name, NULL))
        problem(c, "state name \"%s\" is already used elsewhere in the machine", name);
    else
        json_object_object_add(c->names, name, NULL);
    if (++c->states == SWF_LIMIT_STATES + 1)
        problem(c, "the definition has more than %d states", SWF_LIMIT_STATES);
}

static void check_processor_config(vctx_t *c, json_object *cfg)
{
    if (!is_object(cfg)) {
        problem(c, "ProcessorConfig must be an object, not %s", swf_json_type_name(cfg));
        return;
    }
    json_object_object_foreach(cfg, key, val)
    {
        const char *s = is_string(val) ? json_object_get_string(val) : "";
        if (strcmp(key, "Mode") == 0) {
            if (strcmp(s, "INLINE") != 0 && strcmp(s, "DISTRIBUTED") != 0)
                problem_at(c, key, "Mode must be \"INLINE\" or \"DISTRIBUTED\"");
        } else if (strcmp(key, "ExecutionType") == 0) {
            if (strcmp(s, "STANDARD") != 0 && strcmp(s, "EXPRESS") != 0)
                problem_at(c, key, "ExecutionType must be \"STANDARD\" or \"EXPRESS\"");
        } else {
            problem_at(c, key, "field \"%s\" is not allowed in ProcessorConfig", key);
        }
    }
}

/* One scope: the whole machine, a Parallel branch or a Map processor. Each
 * has its own StartAt and States, and transitions never cross scopes. */
static void check_machine(vctx_t *c, json_object *m, const char *what, bool processor)
{
    bool top = c->pb.len == 1;
    if (!is_object(m)) {
        problem(c, "%s must be an object, not %s", what, swf_json_type_name(m));
        return;
    }
    json_object_object_foreach(m, key, val)
    {
        size_t mark = pb_key(&c->pb, key);
        if (strcmp(key, "StartAt") == 0 || strcmp(key, "States") == 0) {
            /* checked below */
        } else if (strcmp(key, "Comment") == 0) {
            check_string_value(c, val, key);
        } else if (top && strcmp(key, "Version") == 0) {
            if (!is_string(val))
                problem(c, "Version must be a string, not %s", swf_json_type_name(val));
        } else if (top && strcmp(key, "TimeoutSeconds") == 0) {
            check_int_value(c, val, key, 1, SECONDS_MAX, LANG_JSONPATH);
        } else if (top && strcmp(key, "QueryLanguage") == 0) {
            const char *q = is_string(val) ? json_object_get_string(val) : "";
            if (strcmp(q, "JSONata") == 0)
                c->top_lang = LANG_JSONATA;
            else if (strcmp(q, "JSONPath") != 0)
                problem(c, "QueryLanguage must be \"JSONPath\" or \"JSONata\"");
        } else if (processor && strcmp(key, "ProcessorConfig") == 0) {
            check_processor_config(c, val);
        } else {
            problem(c, "field \"%s\" is not allowed in %s", key, what);
        }
        pb_cut(&c->pb, mark);
    }
    json_object *start = NULL, *states = NULL;
    bool has_start = json_object_object_get_ex(m, "StartAt", &start);
    bool has_states = json_object_object_get_ex(m, "States", &states);
    if (!has_start)
        problem(c, "%s needs StartAt", what);
    else if (!is_string(start))
        problem_at(c, "StartAt", "StartAt must be a string naming a state, not %s",
                   swf_json_type_name(start));
    if (!has_states) {
        problem(c, "%s needs States", what);
        return;
    }
    if (!is_object(states)) {
        problem_at(c, "States", "States must be an object, not %s", swf_json_type_name(states));
        return;
    }
    if (json_object_object_length(states) == 0) {
        problem_at(c, "States", "States must not be empty");
        return;
    }
    size_t mark = pb_key(&c->pb, "States");
    json_object_object_foreach(states, name, st)
    {
        size_t m2 = pb_key(&c->pb, name);
        check_state_name(c, name);
        check_state(c, states, st);
        pb_cut(&c->pb, m2);
    }
    pb_cut(&c->pb, mark);
    if (is_string(start)) {
        if (!json_object_object_get_ex(states, json_object_get_string(start), NULL))
            problem_at(c, "StartAt", "StartAt names \"%s\", which is not a state in States",
                       json_object_get_string(start));
        else
            check_reachable(c, states, start);
    }
}

size_t swf_asl_validate(json_object *definition, swf_asl_problems_t *out)
{
    vctx_t c = {.out = out,
                .names = json_object_new_object(),
                .labels = json_object_new_object(),
                .top_lang = LANG_JSONPATH};
    pb_append(&c.pb, "$", 1);
    /* The machine's QueryLanguage is needed before any state is judged, and
     * the walk meets it in document order, so read it first. */
    const char *ql = swf_json_get_string(definition, "QueryLanguage");
    if (ql != NULL && strcmp(ql, "JSONata") == 0)
        c.top_lang = LANG_JSONATA;
    check_machine(&c, definition, "a state machine definition", false);
    json_object_put(c.names);
    json_object_put(c.labels);
    free(c.pb.s);
    return c.found;
}
