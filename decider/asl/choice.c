/*
 * choice.c - the rules of a Choice state.
 *
 * A rule is either a combination (And, Or, Not) of nested rules, or one
 * comparison: a Variable path, one operator and an operand. The file has two
 * layers. The outer one walks the rule tree and resolves paths: the Variable
 * and, for the *Path operators, the operand. The inner one,
 * swf_asl__choice_apply, applies an operator to values that are already
 * resolved; it reads nothing but its arguments, so it is tested directly,
 * without the path evaluator.
 *
 * The semantics follow AWS Step Functions, which runs on the JVM: a value of
 * the wrong type simply does not match (there is no coercion, so "1" is not
 * NumericEquals 1 and "true" is not BooleanEquals true); numbers compare by
 * value (1 equals 1.0, and an integer is compared with a double exactly, not
 * through a lossy conversion); strings order as Java's String.compareTo, by
 * UTF-16 code units, which differs from UTF-8 byte order for characters
 * outside the Basic Multilingual Plane. StringMatches is a whole-string glob
 * where only '*' is special. A Variable that selects nothing is
 * States.Runtime, except under IsPresent, whose whole purpose is to ask.
 *
 * And and Or short-circuit, as Java's evaluation does: a later sub-rule whose
 * Variable is missing raises no error when an earlier one already decided.
 *
 * The definition is normally checked by validate.c before it runs; malformed
 * rules met here anyway are States.Runtime errors, never crashes.
 */
#include "decider/asl/choice.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/path.h"
#include "protocol/json.h"
#include "protocol/time.h"

typedef enum op_kind {
    OP_STRING,
    OP_MATCHES,
    OP_NUMERIC,
    OP_BOOLEAN,
    OP_TIMESTAMP,
    OP_IS_NULL,
    OP_IS_PRESENT,
    OP_IS_NUMERIC,
    OP_IS_STRING,
    OP_IS_BOOLEAN,
    OP_IS_TIMESTAMP,
} op_kind_t;

typedef enum op_rel { REL_EQ, REL_LT, REL_LE, REL_GT, REL_GE, REL_NONE } op_rel_t;

typedef struct op {
    const char *name; /* without the Path suffix */
    op_kind_t kind;
    op_rel_t rel;
    bool has_path; /* a "<name>Path" variant exists */
} op_t;

static const op_t ops[] = {
    {"StringEquals", OP_STRING, REL_EQ, true},
    {"StringLessThan", OP_STRING, REL_LT, true},
    {"StringLessThanEquals", OP_STRING, REL_LE, true},
    {"StringGreaterThan", OP_STRING, REL_GT, true},
    {"StringGreaterThanEquals", OP_STRING, REL_GE, true},
    {"StringMatches", OP_MATCHES, REL_NONE, false},
    {"NumericEquals", OP_NUMERIC, REL_EQ, true},
    {"NumericLessThan", OP_NUMERIC, REL_LT, true},
    {"NumericLessThanEquals", OP_NUMERIC, REL_LE, true},
    {"NumericGreaterThan", OP_NUMERIC, REL_GT, true},
    {"NumericGreaterThanEquals", OP_NUMERIC, REL_GE, true},
    {"BooleanEquals", OP_BOOLEAN, REL_EQ, true},
    {"TimestampEquals", OP_TIMESTAMP, REL_EQ, true},
    {"TimestampLessThan", OP_TIMESTAMP, REL_LT, true},
    {"TimestampLessThanEquals", OP_TIMESTAMP, REL_LE, true},
    {"TimestampGreaterThan", OP_TIMESTAMP, REL_GT, true},
    {"TimestampGreaterThanEquals", OP_TIMESTAMP, REL_GE, true},
    {"IsNull", OP_IS_NULL, REL_NONE, false},
    {"IsPresent", OP_IS_PRESENT, REL_NONE, false},
    {"IsNumeric", OP_IS_NUMERIC, REL_NONE, false},
    {"IsString", OP_IS_STRING, REL_NONE, false},
    {"IsBoolean", OP_IS_BOOLEAN, REL_NONE, false},
    {"IsTimestamp", OP_IS_TIMESTAMP, REL_NONE, false},
};

#define PATH_SUFFIX "Path"
#define PATH_SUFFIX_LEN (sizeof(PATH_SUFFIX) - 1)

/* Finds the operator a rule key names; *is_path says whether it was the
 * *Path variant. NULL when the key is no operator. */
static const op_t *swf_asl_choice_op_find(const char *key, bool *is_path)
{
    size_t len = strlen(key);
    *is_path = false;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (strcmp(key, ops[i].name) == 0)
            return &ops[i];
    }
    if (len <= PATH_SUFFIX_LEN || strcmp(key + len - PATH_SUFFIX_LEN, PATH_SUFFIX) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (ops[i].has_path && strlen(ops[i].name) == len - PATH_SUFFIX_LEN &&
            strncmp(key, ops[i].name, len - PATH_SUFFIX_LEN) == 0) {
            *is_path = true;
            return &ops[i];
        }
    }
    return NULL;
}

static bool swf_asl_choice_rel_holds(op_rel_t rel, int cmp)
{
    switch (rel) {
    case REL_EQ:
        return cmp == 0;
    case REL_LT:
        return cmp < 0;
    case REL_LE:
        return cmp <= 0;
    case REL_GT:
        return cmp > 0;
    case REL_GE:
        return cmp >= 0;
    case REL_NONE:
        break;
    }
    return false;
}

/* Compares an integer with a double exactly. Converting a large int64 to a
 * double rounds, so 2^53 + 1 would wrongly equal 2^53; instead the double
 * is split into its integral part (when that fits an int64) and fraction. */
static int swf_asl_choice_int_double_cmp(int64_t i, double d)
{
    if (d < -9223372036854775808.0)
        return 1;
    if (d >= 9223372036854775808.0)
        return -1;
    double whole = trunc(d);
    int64_t w = (int64_t)whole;
    if (i != w)
        return i < w ? -1 : 1;
    double frac = d - whole;
    return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

/* Both arguments must be JSON numbers. */
static int swf_asl_choice_number_cmp(json_object *a, json_object *b)
{
    bool ai = json_object_is_type(a, json_type_int), bi = json_object_is_type(b, json_type_int);
    if (ai && bi) {
        int64_t x = json_object_get_int64(a), y = json_object_get_int64(b);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (ai)
        return swf_asl_choice_int_double_cmp(json_object_get_int64(a), json_object_get_double(b));
    if (bi)
        return -swf_asl_choice_int_double_cmp(json_object_get_int64(b), json_object_get_double(a));
    double x = json_object_get_double(a), y = json_object_get_double(b);
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Reads the next UTF-16 code unit of a UTF-8 string. `pending` holds the
 * low surrogate of a supplementary character between calls (0 when none).
 * A byte that does not start a valid sequence counts as one unit of its own
 * value: the order stays total and deterministic on malformed input. */
static unsigned swf_asl_choice_utf16_next(const unsigned char *s, size_t len, size_t *pos,
                                          unsigned *pending)
{
    if (*pending != 0) {
        unsigned u = *pending;
        *pending = 0;
        return u;
    }
    unsigned c = s[*pos];
    size_t n = c < 0x80             ? 1
               : (c & 0xE0) == 0xC0 ? 2
               : (c & 0xF0) == 0xE0 ? 3
               : (c & 0xF8) == 0xF0 ? 4
                                    : 0;
    if (n <= 1 || *pos + n > len) {
        (*pos)++;
        return c;
    }
    unsigned cp = c & (0xFFu >> (n + 1));
    for (size_t k = 1; k < n; k++) {
        unsigned cc = s[*pos + k];
        if ((cc & 0xC0) != 0x80) {
            (*pos)++;
            return c;
        }
        cp = (cp << 6) | (cc & 0x3F);
    }
    *pos += n;
    if (cp < 0x10000)
        return cp;
    cp -= 0x10000;
    *pending = 0xDC00 + (cp & 0x3FF);
    return 0xD800 + (cp >> 10);
}

/* Java's String.compareTo over UTF-8 input: code unit by code unit, then
 * the shorter string first. Both arguments must be JSON strings. */
static int swf_asl_choice_string_cmp(json_object *a, json_object *b)
{
    const unsigned char *x = (const unsigned char *)json_object_get_string(a);
    const unsigned char *y = (const unsigned char *)json_object_get_string(b);
    size_t xl = (size_t)json_object_get_string_len(a), yl = (size_t)json_object_get_string_len(b);
    size_t xi = 0, yi = 0;
    unsigned xp = 0, yp = 0;
    while ((xi < xl || xp != 0) && (yi < yl || yp != 0)) {
        unsigned u = swf_asl_choice_utf16_next(x, xl, &xi, &xp);
        unsigned v = swf_asl_choice_utf16_next(y, yl, &yi, &yp);
        if (u != v)
            return u < v ? -1 : 1;
    }
    bool xmore = xi < xl || xp != 0, ymore = yi < yl || yp != 0;
    return xmore ? 1 : ymore ? -1 : 0;
}

/* StringMatches: the whole of `s` against `pat`, where '*' matches any run
 * (including none), "\*" is a literal star, "\\" a literal backslash, and
 * every other character only itself. Bytes are compared: a literal run is
 * whole UTF-8 characters, and UTF-8 is self-synchronising, so a match never
 * splits a character. The greedy walk with one backtrack point (the last
 * star) is correct for globs and takes O(len(s) * len(pat)) at worst. */
static bool swf_asl_choice_glob_match(const char *pat, size_t pl, const char *s, size_t sl)
{
    size_t pi = 0, si = 0;
    size_t star_pi = SIZE_MAX, star_si = 0;
    while (si < sl) {
        if (pi < pl && pat[pi] == '*') {
            star_pi = ++pi;
            star_si = si;
            continue;
        }
        if (pi < pl) {
            /* A backslash escapes the next character; a lone final one is
             * itself. */
            size_t width = pat[pi] == '\\' && pi + 1 < pl ? 2 : 1;
            char lit = pat[pi + width - 1];
            if (lit == s[si]) {
                pi += width;
                si++;
                continue;
            }
        }
        if (star_pi == SIZE_MAX)
            return false;
        pi = star_pi;
        si = ++star_si;
    }
    while (pi < pl && pat[pi] == '*')
        pi++;
    return pi == pl;
}

static bool swf_asl_choice_timestamp(json_object *v, swf_time_t *t)
{
    return json_object_is_type(v, json_type_string) && swf_time_parse(json_object_get_string(v), t);
}

/*
 * Applies the operator `name` (without the Path suffix) to a resolved
 * Variable value and operand. `present` is false when the Variable selected
 * nothing (only IsPresent accepts that). Internal to the module, not in
 * choice.h: exported so that tests reach the comparison logic directly.
 */
swf_error_t *swf_asl__choice_apply(const char *name, bool present, json_object *value,
                                   json_object *operand, bool *matched);

swf_error_t *swf_asl__choice_apply(const char *name, bool present, json_object *value,
                                   json_object *operand, bool *matched)
{
    *matched = false;
    bool is_path;
    const op_t *op = swf_asl_choice_op_find(name, &is_path);
    if (op == NULL || is_path)
        return swf_error_states("States.Runtime", "'%s' is not a Choice rule operator", name);
    bool want = true;
    if (op->kind >= OP_IS_NULL) {
        if (!json_object_is_type(operand, json_type_boolean))
            return swf_error_states("States.Runtime", "the operand of %s must be a boolean, not %s",
                                    op->name, swf_json_type_name(operand));
        want = json_object_get_boolean(operand);
    }
    if (!present && op->kind != OP_IS_PRESENT)
        return swf_error_states("States.Runtime",
                                "%s needs a value, and the Variable selected nothing", op->name);

    swf_time_t ta, tb;
    bool is;
    switch (op->kind) {
    case OP_STRING:
        *matched = json_object_is_type(value, json_type_string) &&
                   json_object_is_type(operand, json_type_string) &&
                   swf_asl_choice_rel_holds(op->rel, swf_asl_choice_string_cmp(value, operand));
        return NULL;
    case OP_MATCHES:
        *matched = json_object_is_type(value, json_type_string) &&
                   json_object_is_type(operand, json_type_string) &&
                   swf_asl_choice_glob_match(
                       json_object_get_string(operand), (size_t)json_object_get_string_len(operand),
                       json_object_get_string(value), (size_t)json_object_get_string_len(value));
        return NULL;
    case OP_NUMERIC:
        *matched = swf_json_is_number(value) && swf_json_is_number(operand) &&
                   swf_asl_choice_rel_holds(op->rel, swf_asl_choice_number_cmp(value, operand));
        return NULL;
    case OP_BOOLEAN:
        *matched = json_object_is_type(value, json_type_boolean) &&
                   json_object_is_type(operand, json_type_boolean) &&
                   json_object_get_boolean(value) == json_object_get_boolean(operand);
        return NULL;
    case OP_TIMESTAMP:
        *matched = swf_asl_choice_timestamp(value, &ta) && swf_asl_choice_timestamp(operand, &tb) &&
                   swf_asl_choice_rel_holds(op->rel, swf_time_cmp(ta, tb));
        return NULL;
    case OP_IS_NULL:
        is = value == NULL;
        break;
    case OP_IS_PRESENT:
        is = present;
        break;
    case OP_IS_NUMERIC:
        is = swf_json_is_number(value);
        break;
    case OP_IS_STRING:
        is = json_object_is_type(value, json_type_string);
        break;
    case OP_IS_BOOLEAN:
        is = json_object_is_type(value, json_type_boolean);
        break;
    case OP_IS_TIMESTAMP:
        is = swf_asl_choice_timestamp(value, &ta);
        break;
    default:
        return swf_error_states("States.Runtime", "unknown operator %s", op->name);
    }
    *matched = is == want;
    return NULL;
}

/* True for an error that only says a path selected nothing. */
static bool swf_asl_choice_error_is_missing(const swf_error_t *err)
{
    const char *ename = swf_error_name(err);
    return swf_error_code(err) == SWF_E_STATES && ename != NULL &&
           strcmp(ename, "States.Runtime") == 0;
}

/* Evaluates `path` for the role `role` ("Variable", or an operator name).
 * A path selecting nothing is States.Runtime naming the path, with the path
 * evaluator's own message as the cause; under IsPresent (allow_missing) it
 * sets *present to false instead. */
static swf_error_t *swf_asl_choice_resolve(const char *role, const char *path, json_object *input,
                                           const swf_asl_env_t *env, bool allow_missing,
                                           bool *present, json_object **out)
{
    *present = false;
    *out = NULL;
    swf_error_t *err = swf_asl_path_eval(path, input, env, out);
    if (err == NULL) {
        *present = true;
        return NULL;
    }
    if (!swf_asl_choice_error_is_missing(err))
        return err;
    if (allow_missing) {
        swf_error_free(err);
        return NULL;
    }
    swf_error_t *wrapped = swf_error_states(
        "States.Runtime", "invalid path '%s': the Choice rule's %s selects nothing", path, role);
    swf_error_set_cause(wrapped, swf_error_message(err));
    swf_error_free(err);
    return wrapped;
}

/* And / Or over an array of rules, short-circuiting. */
static swf_error_t *swf_asl_choice_combine(const char *name, json_object *rules, bool is_and,
                                           json_object *input, const swf_asl_env_t *env,
                                           bool *matched)
{
    if (!json_object_is_type(rules, json_type_array) || json_object_array_length(rules) == 0)
        return swf_error_states("States.Runtime", "%s must be a non-empty array of rules", name);
    size_t n = json_object_array_length(rules);
    for (size_t i = 0; i < n; i++) {
        bool m = false;
        swf_error_t *err =
            swf_asl_choice_rule_eval(json_object_array_get_idx(rules, i), input, env, &m);
        if (err != NULL) {
            swf_error_prefix(err, "%s[%zu]", name, i);
            return err;
        }
        if (m != is_and) {
            *matched = m;
            return NULL;
        }
    }
    *matched = is_and;
    return NULL;
}

swf_error_t *swf_asl_choice_rule_eval(json_object *rule, json_object *input,
                                      const swf_asl_env_t *env, bool *matched)
{
    *matched = false;
    if (!json_object_is_type(rule, json_type_object))
        return swf_error_states("States.Runtime", "a Choice rule must be an object, not %s",
                                swf_json_type_name(rule));
    json_object *sub;
    if (swf_json_get(rule, "And", &sub))
        return swf_asl_choice_combine("And", sub, true, input, env, matched);
    if (swf_json_get(rule, "Or", &sub))
        return swf_asl_choice_combine("Or", sub, false, input, env, matched);
    if (swf_json_get(rule, "Not", &sub)) {
        bool m = false;
        swf_error_t *err = swf_asl_choice_rule_eval(sub, input, env, &m);
        if (err != NULL) {
            swf_error_prefix(err, "Not");
            return err;
        }
        *matched = !m;
        return NULL;
    }

    /* A comparison: exactly one operator key beside Variable and Next. */
    const op_t *op = NULL;
    bool is_path = false;
    json_object *operand = NULL;
    json_object_object_foreach(rule, key, val)
    {
        bool p;
        const op_t *found = swf_asl_choice_op_find(key, &p);
        if (found == NULL)
            continue;
        if (op != NULL)
            return swf_error_states("States.Runtime", "a Choice rule has two operators, %s and %s",
                                    op->name, key);
        op = found;
        is_path = p;
        operand = val;
    }
    if (op == NULL)
        return swf_error_states("States.Runtime",
                                "a Choice rule needs And, Or, Not or a comparison operator");
    const char *variable = swf_json_get_string(rule, "Variable");
    if (variable == NULL)
        return swf_error_states("States.Runtime", "the %s rule needs a string Variable", op->name);

    swf_error_t *err = NULL;
    json_object *value = NULL, *resolved = NULL;
    bool present = false, operand_present = false;
    err = swf_asl_choice_resolve("Variable", variable, input, env, op->kind == OP_IS_PRESENT,
                                 &present, &value);
    if (err != NULL)
        goto done;
    if (is_path) {
        if (!json_object_is_type(operand, json_type_string)) {
            err = swf_error_states("States.Runtime", "the operand of %sPath must be a path string",
                                   op->name);
            goto done;
        }
        char role[64];
        snprintf(role, sizeof(role), "%sPath", op->name);
        err = swf_asl_choice_resolve(role, json_object_get_string(operand), input, env, false,
                                     &operand_present, &resolved);
        if (err != NULL)
            goto done;
        operand = resolved;
    }
    err = swf_asl__choice_apply(op->name, present, value, operand, matched);
done:
    json_object_put(value);
    json_object_put(resolved);
    return err;
}

swf_error_t *swf_asl_choice_eval(json_object *state, json_object *input, const swf_asl_env_t *env,
                                 json_object **rule)
{
    *rule = NULL;
    json_object *choices;
    if (!swf_json_get(state, "Choices", &choices) || !json_object_is_type(choices, json_type_array))
        return swf_error_states("States.Runtime", "a Choice state needs a Choices array");
    size_t n = json_object_array_length(choices);
    for (size_t i = 0; i < n; i++) {
        json_object *candidate = json_object_array_get_idx(choices, i);
        bool matched = false;
        swf_error_t *err = swf_asl_choice_rule_eval(candidate, input, env, &matched);
        if (err != NULL) {
            swf_error_prefix(err, "Choices[%zu]", i);
            return err;
        }
        if (matched) {
            *rule = candidate;
            return NULL;
        }
    }
    return NULL;
}
