/*
 * builtin.c - the table of built-in functions (name, implementation, the
 * numbers of arguments, whether a missing first argument is the context
 * value) and jn__builtin_find; the argument helpers every built-in uses
 * (jn__want_string, jn__want_number, ...); and the built-ins that have no
 * file of their own: casts ($string, $number, $boolean, $not, $exists,
 * $type), aggregates, arrays and objects ($keys, $lookup, $append, $reverse,
 * $zip, $spread, $distinct, $merge), $error and $assert, arithmetic ($round,
 * $floor, $power, ...), the draws from the decision's generator ($random,
 * $uuid, $shuffle), and Step Functions' own $partition, $range, $hash and
 * $parse. Strings are string.c's, times time.c's, number formats format.c's,
 * $sort sort.c's, the higher-order ones hof.c's.
 */
#include "decider/asl/jsonata/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/hash.h"

/* The argument helpers (jn__want_string, jn__want_number, ...): each checks
 * argument i and sets its outputs, to zero or empty where it refuses, so
 * that no path leaves them unset. */
swf_error_t *jn__want_string(const call_t *c, size_t i, const char **s, size_t *n)
{
    const val_t *v = jn__arg(c, i);
    *s = "";
    *n = 0;
    if (!jn__defined(v) || jn__is_func(v) || !jn__is_string(v->j))
        return qerr("argument %zu must be a string, not %s", i + 1, jn__type_name(v));
    *s = json_object_get_string(v->j);
    *n = (size_t)json_object_get_string_len(v->j);
    return NULL;
}

/* Argument i as a string, for a built-in whose result is undefined when
 * the argument is: false when the built-in returns at once, with *err NULL
 * for an undefined argument or the error of one that is not a string. */
bool jn__string_arg(const call_t *c, size_t i, const char **s, size_t *n, swf_error_t **err)
{
    *err = NULL;
    if (!jn__has_arg(c, i)) {
        *s = "";
        *n = 0;
        return false;
    }
    *err = jn__want_string(c, i, s, n);
    return *err == NULL;
}

swf_error_t *jn__want_number(const call_t *c, size_t i, double *d)
{
    const val_t *v = jn__arg(c, i);
    *d = 0;
    if (!jn__defined(v) || jn__is_func(v) || !jn__is_number(v->j))
        return qerr("argument %zu must be a number, not %s", i + 1, jn__type_name(v));
    *d = json_object_get_double(v->j);
    return NULL;
}

swf_error_t *jn__want_integer(const call_t *c, size_t i, double *d)
{
    swf_error_t *err = jn__want_number(c, i, d);
    if (!err && *d != floor(*d))
        err = qerr("argument %zu must be an integer, not %g", i + 1, *d);
    return err;
}

swf_error_t *jn__number_val(double d, val_t *out)
{
    json_object *j;
    swf_error_t *err = jn__number_new(d, &j);
    if (!err)
        *out = jn__val_take(j);
    return err;
}

/* The items of argument i, which must all be numbers (an array of numbers or
 * one number). */
static swf_error_t *want_numbers(const call_t *c, size_t i, items_t *it)
{
    const val_t *v = jn__arg(c, i);
    *it = (items_t){0};
    if (jn__is_func(v))
        return qerr("argument %zu must be an array of numbers", i + 1);
    *it = jn__items_of(v);
    for (size_t k = 0; k < it->n; k++) {
        if (!jn__is_number(jn__item_at(it, k)))
            return qerr("argument %zu must be an array of numbers, but item %zu is %s", i + 1, k,
                        swf_json_type_name(jn__item_at(it, k)));
    }
    return jn__charge(c->ctx, it->n);
}

/* The generator $random, $uuid and $shuffle draw from: the decision's
 * (env.h), so that a replay draws the same, or a fixed seed. */
static swf_asl_rng_t *ctx_rng(ctx_t *ctx)
{
    return ctx->env != NULL && ctx->env->rng != NULL ? ctx->env->rng : &ctx->fallback;
}

/* $random([seed]) (Step Functions): a number from 0 up to 1 drawn from the
 * decision's generator; with an integer seed, a pure function of it. */
static swf_error_t *fn_random(call_t *c, val_t *out)
{
    swf_asl_rng_t seeded, *rng = ctx_rng(c->ctx);
    if (jn__has_arg(c, 0)) {
        double seed;
        swf_error_t *err = jn__want_number(c, 0, &seed);
        if (err)
            return err;
        if (seed != floor(seed) || fabs(seed) > 9007199254740992.0)
            return qerr("argument 1 (seed) must be an integer");
        seeded.state = (uint64_t)(int64_t)seed;
        rng = &seeded;
    }
    return jn__number_val(swf_asl_rng_unit(rng), out);
}

/* $uuid() (Step Functions): a version 4 UUID from the decision's generator,
 * as States.UUID gives. */
static swf_error_t *fn_uuid(call_t *c, val_t *out)
{
    char text[37];
    swf_asl_rng_uuid(ctx_rng(c->ctx), text);
    *out = jn__string_val(text, 36);
    return NULL;
}

static swf_error_t *fn_string(call_t *c, val_t *out)
{
    const val_t *v = jn__arg(c, 0);
    if (!jn__defined(v))
        return NULL;
    int indent = 0;
    if (c->argc > 1 && jn__defined(jn__arg(c, 1))) {
        if (!json_object_is_type(jn__arg(c, 1)->j, json_type_boolean))
            return qerr("argument 2 (prettify) must be a boolean");
        indent = json_object_get_boolean(jn__arg(c, 1)->j) ? 2 : 0;
    }
    if (!jn__is_func(v) && jn__is_string(v->j)) {
        *out = jn__val_copy(v);
        return NULL;
    }
    buf_t b = {0};
    swf_error_t *err = jn__to_string(v, indent, &b);
    if (!err)
        *out = jn__string_val(buf_cstr(&b), b.n);
    free(b.s);
    return err;
}

/* JSON number syntax, as $number accepts it, plus 0x, 0o and 0b integers. */
static bool parse_number_text(const char *s, double *out)
{
    const char *p = s;
    if ((s[0] == '0') &&
        (s[1] == 'x' || s[1] == 'X' || s[1] == 'o' || s[1] == 'O' || s[1] == 'b' || s[1] == 'B') &&
        s[2]) {
        int base = (s[1] | 0x20) == 'x' ? 16 : (s[1] | 0x20) == 'o' ? 8 : 2;
        char *end;
        unsigned long long v = strtoull(s + 2, &end, base);
        if (*end != '\0' || !isalnum((unsigned char)s[2]))
            return false;
        *out = (double)v;
        return true;
    }
    if (*p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return false;
    if (*p == '0' && isdigit((unsigned char)p[1]))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p != '\0')
        return false;
    *out = strtod(s, NULL);
    return isfinite(*out);
}

static swf_error_t *fn_number(call_t *c, val_t *out)
{
    const val_t *v = jn__arg(c, 0);
    if (!jn__defined(v))
        return NULL;
    if (!jn__is_func(v) && jn__is_number(v->j)) {
        *out = jn__val_copy(v);
        return NULL;
    }
    if (!jn__is_func(v) && json_object_is_type(v->j, json_type_boolean))
        return jn__number_val(json_object_get_boolean(v->j) ? 1 : 0, out);
    double d;
    if (!jn__is_func(v) && jn__is_string(v->j) &&
        parse_number_text(json_object_get_string(v->j), &d))
        return jn__number_val(d, out);
    if (!jn__is_func(v) && jn__is_string(v->j))
        return qerr("cannot convert the string \"%.60s\" to a number",
                    json_object_get_string(v->j));
    return qerr("cannot convert %s to a number", jn__type_name(v));
}

/* $boolean and $not take any function as false, unlike conditions. */
static int boolean_arg(const call_t *c)
{
    return jn__is_func(jn__arg(c, 0)) ? 0 : jn__boolean_of(jn__arg(c, 0));
}

static swf_error_t *fn_boolean(call_t *c, val_t *out)
{
    int b = boolean_arg(c);
    if (b >= 0)
        *out = jn__bool_val(b);
    return NULL;
}

static swf_error_t *fn_not(call_t *c, val_t *out)
{
    int b = boolean_arg(c);
    if (b >= 0)
        *out = jn__bool_val(!b);
    return NULL;
}

static swf_error_t *fn_exists(call_t *c, val_t *out)
{
    *out = jn__bool_val(jn__has_arg(c, 0));
    return NULL;
}

static swf_error_t *fn_count(call_t *c, val_t *out)
{
    items_t it = jn__items_of(jn__arg(c, 0));
    return jn__number_val((double)it.n, out);
}

static swf_error_t *fn_sum(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_numbers(c, 0, &it);
    if (err || !jn__has_arg(c, 0))
        return err;
    double s = 0;
    for (size_t k = 0; k < it.n; k++)
        s += json_object_get_double(jn__item_at(&it, k));
    return jn__number_val(s, out);
}

static swf_error_t *minmax(call_t *c, val_t *out, bool max)
{
    items_t it;
    swf_error_t *err = want_numbers(c, 0, &it);
    if (err || it.n == 0)
        return err;
    double m = json_object_get_double(jn__item_at(&it, 0));
    for (size_t k = 1; k < it.n; k++) {
        double d = json_object_get_double(jn__item_at(&it, k));
        if (max ? d > m : d < m)
            m = d;
    }
    return jn__number_val(m, out);
}

static swf_error_t *fn_max(call_t *c, val_t *out)
{
    return minmax(c, out, true);
}

static swf_error_t *fn_min(call_t *c, val_t *out)
{
    return minmax(c, out, false);
}

static swf_error_t *fn_average(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_numbers(c, 0, &it);
    if (err || it.n == 0)
        return err;
    double s = 0;
    for (size_t k = 0; k < it.n; k++)
        s += json_object_get_double(jn__item_at(&it, k));
    return jn__number_val(s / (double)it.n, out);
}

/* $error([message]): fails the evaluation with the message. */
static swf_error_t *fn_error(call_t *c, val_t *out)
{
    const char *msg = "$error() function evaluated";
    size_t n;
    (void)out;
    swf_error_t *err = jn__has_arg(c, 0) ? jn__want_string(c, 0, &msg, &n) : NULL;
    return err ? err : qerr("%s", msg);
}

/* $assert(condition[, message]): fails the evaluation unless true. */
static swf_error_t *fn_assert(call_t *c, val_t *out)
{
    const char *msg = "$assert() statement failed";
    size_t n;
    (void)out;
    const val_t *v = jn__arg(c, 0);
    if (!jn__defined(v) || jn__is_func(v) || !json_object_is_type(v->j, json_type_boolean))
        return qerr("$assert: argument 1 must be a boolean, not %s", jn__type_name(v));
    if (json_object_get_boolean(v->j))
        return NULL;
    swf_error_t *err = jn__has_arg(c, 1) ? jn__want_string(c, 1, &msg, &n) : NULL;
    return err ? err : qerr("%s", msg);
}

/* $zip(a, b, ...): [[a0, b0, ...], [a1, b1, ...], ...], as long as the
 * shortest. */
static swf_error_t *fn_zip(call_t *c, val_t *out)
{
    size_t len = SIZE_MAX;
    items_t it[8];
    for (size_t i = 0; i < c->argc && i < 8; i++) {
        if (jn__is_func(jn__arg(c, i)))
            return qerr("argument %zu must be an array, not %s", i + 1,
                        jn__func_what(jn__arg(c, i)));
        it[i] = jn__items_of(jn__arg(c, i));
        len = it[i].n < len ? it[i].n : len;
    }
    if (c->argc == 0)
        len = 0;
    swf_error_t *err = jn__charge(c->ctx, len * c->argc);
    if (err)
        return err;
    json_object *arr = json_object_new_array_ext((int)len);
    for (size_t k = 0; k < len; k++) {
        json_object *tuple = json_object_new_array_ext((int)c->argc);
        for (size_t i = 0; i < c->argc; i++)
            json_object_array_add(tuple, swf_json_ref(jn__item_at(&it[i], k)));
        json_object_array_add(arr, tuple);
    }
    *out = jn__val_take(arr);
    return NULL;
}

static void spread_into(json_object *seq, json_object *j, int depth)
{
    if (jn__is_array(j) && depth < SWF_LIMIT_JSON_DEPTH) {
        for (size_t i = 0; i < json_object_array_length(j); i++)
            spread_into(seq, json_object_array_get_idx(j, i), depth + 1);
    } else if (jn__is_object(j)) {
        json_object_object_foreach(j, key, v)
        {
            json_object *one = json_object_new_object();
            json_object_object_add(one, key, swf_json_ref(v));
            json_object_array_add(seq, one);
        }
    } else {
        json_object_array_add(seq, swf_json_ref(j));
    }
}

/* $spread(object): an array of one object per field (of each object of an
 * array); any other value is itself. */
static swf_error_t *fn_spread(call_t *c, val_t *out)
{
    const val_t *v = jn__arg(c, 0);
    if (!jn__defined(v))
        return NULL;
    if (jn__is_func(v))
        return qerr("argument 1 must be an object, not %s", jn__func_what(v));
    if (!jn__is_array(v->j) && !jn__is_object(v->j)) {
        *out = jn__val_copy(v);
        return NULL;
    }
    json_object *seq = json_object_new_array();
    spread_into(seq, v->j, 0);
    size_t n = json_object_array_length(seq);
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    jn__collapse(out); /* may free seq */
    return jn__charge(c->ctx, n);
}

static swf_error_t *fn_keys(call_t *c, val_t *out)
{
    const val_t *v = jn__arg(c, 0);
    if (!jn__defined(v) || jn__is_func(v))
        return NULL;
    items_t it = jn__items_of(v);
    json_object *seen = json_object_new_object(), *seq = json_object_new_array();
    for (size_t k = 0; k < it.n; k++) {
        json_object *o = jn__item_at(&it, k);
        if (!jn__is_object(o))
            continue;
        json_object_object_foreach(o, key, val)
        {
            (void)val;
            if (!json_object_object_get_ex(seen, key, NULL)) {
                json_object_object_add(seen, key, NULL);
                json_object_array_add(seq, json_object_new_string(key));
            }
        }
    }
    json_object_put(seen);
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    jn__collapse(out);
    return jn__charge(c->ctx, it.n);
}

static swf_error_t *fn_lookup(call_t *c, val_t *out)
{
    const char *key;
    size_t kn;
    swf_error_t *err = jn__want_string(c, 1, &key, &kn);
    if (err || !jn__has_arg(c, 0) || jn__is_func(jn__arg(c, 0)))
        return err;
    if ((err = jn__lookup(c->ctx, jn__arg(c, 0)->j, key, out, 0)))
        return err;
    jn__collapse(out);
    return NULL;
}

static swf_error_t *fn_append(call_t *c, val_t *out)
{
    const val_t *a = jn__arg(c, 0), *b = jn__arg(c, 1);
    if (jn__is_func(a) || jn__is_func(b))
        return qerr("cannot append %s", jn__func_what(jn__is_func(a) ? a : b));
    if (!jn__defined(b)) {
        *out = jn__val_copy(a);
        return NULL;
    }
    if (!jn__defined(a)) {
        *out = jn__val_copy(b);
        return NULL;
    }
    json_object *arr = json_object_new_array();
    jn__seq_add_flat(arr, a->j);
    jn__seq_add_flat(arr, b->j);
    *out = jn__val_take(arr);
    return jn__charge(c->ctx, json_object_array_length(arr));
}

swf_error_t *jn__want_array(const call_t *c, size_t i, items_t *it)
{
    const val_t *v = jn__arg(c, i);
    *it = (items_t){0};
    if (jn__is_func(v))
        return qerr("argument %zu must be an array", i + 1);
    *it = jn__items_of(v);
    return jn__charge(c->ctx, it->n);
}

static swf_error_t *fn_reverse(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = jn__want_array(c, 0, &it);
    if (err || !jn__has_arg(c, 0))
        return err;
    json_object *arr = json_object_new_array_ext((int)it.n);
    for (size_t k = it.n; k-- > 0;)
        json_object_array_add(arr, swf_json_ref(jn__item_at(&it, k)));
    *out = jn__val_take(arr);
    return NULL;
}

/* $shuffle(array): its items in an order drawn from the decision's
 * generator (Fisher-Yates). */
static swf_error_t *fn_shuffle(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = jn__want_array(c, 0, &it);
    if (err || !jn__has_arg(c, 0))
        return err;
    json_object **v = malloc((it.n ? it.n : 1) * sizeof(*v));
    if (v == NULL)
        abort();
    for (size_t k = 0; k < it.n; k++)
        v[k] = jn__item_at(&it, k);
    swf_asl_rng_t *rng = ctx_rng(c->ctx);
    for (size_t k = it.n; k > 1; k--) {
        size_t j = (size_t)(swf_asl_rng_unit(rng) * (double)k);
        json_object *t = v[k - 1];
        v[k - 1] = v[j < k ? j : k - 1];
        v[j < k ? j : k - 1] = t;
    }
    json_object *arr = json_object_new_array_ext((int)it.n);
    for (size_t k = 0; k < it.n; k++)
        json_object_array_add(arr, swf_json_ref(v[k]));
    free(v);
    *out = jn__val_take(arr);
    return NULL;
}

static swf_error_t *fn_distinct(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = jn__want_array(c, 0, &it);
    if (err || !jn__has_arg(c, 0))
        return err;
    if (it.arr == NULL) {
        *out = jn__val_copy(jn__arg(c, 0));
        return NULL;
    }
    json_object *arr = json_object_new_array();
    for (size_t k = 0; k < it.n; k++) {
        json_object *j = jn__item_at(&it, k);
        size_t m = json_object_array_length(arr), i;
        if ((err = jn__charge(c->ctx, m + 1))) {
            json_object_put(arr);
            return err;
        }
        for (i = 0; i < m && !swf_json_equal(json_object_array_get_idx(arr, i), j); i++)
            ;
        if (i == m)
            json_object_array_add(arr, swf_json_ref(j));
    }
    *out = (val_t){arr, V_DEF | (jn__arg(c, 0)->flags & V_SEQ), NULL, NULL, NULL};
    return NULL;
}

static swf_error_t *fn_merge(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = jn__want_array(c, 0, &it);
    if (err || !jn__has_arg(c, 0))
        return err;
    json_object *obj = json_object_new_object();
    for (size_t k = 0; k < it.n; k++) {
        json_object *o = jn__item_at(&it, k);
        if (!jn__is_object(o)) {
            json_object_put(obj);
            return qerr("argument 1 must be an array of objects, but item %zu is %s", k,
                        swf_json_type_name(o));
        }
        json_object_object_foreach(o, key, v)
        {
            json_object_object_add(obj, key, swf_json_ref(v));
        }
    }
    *out = jn__val_take(obj);
    return NULL;
}

static swf_error_t *fn_round(call_t *c, val_t *out)
{
    double d, p = 0;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_number(c, 0, &d);
    if (!err && jn__has_arg(c, 1))
        err = jn__want_integer(c, 1, &p);
    if (!err && fabs(p) > 300)
        err = qerr("argument 2 (precision) is out of range");
    return err ? err : jn__number_val(swf_asl_number_round(d, (int)p), out);
}

static swf_error_t *math1(call_t *c, val_t *out, double (*f)(double))
{
    double d;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_number(c, 0, &d);
    return err ? err : jn__number_val(f(d), out);
}

static swf_error_t *fn_floor(call_t *c, val_t *out)
{
    return math1(c, out, floor);
}

static swf_error_t *fn_ceil(call_t *c, val_t *out)
{
    return math1(c, out, ceil);
}

static swf_error_t *fn_abs(call_t *c, val_t *out)
{
    return math1(c, out, fabs);
}

static swf_error_t *fn_sqrt(call_t *c, val_t *out)
{
    double d;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_number(c, 0, &d);
    if (!err && d < 0)
        err = qerr("cannot take the square root of a negative number");
    return err ? err : jn__number_val(sqrt(d), out);
}

static swf_error_t *fn_power(call_t *c, val_t *out)
{
    double b, e;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_number(c, 0, &b);
    if (!err)
        err = jn__want_number(c, 1, &e);
    if (err)
        return err;
    double r = pow(b, e);
    if (!isfinite(r))
        return qerr("the result of %g to the power %g is out of range", b, e);
    return jn__number_val(r, out);
}

static swf_error_t *fn_partition(call_t *c, val_t *out)
{
    items_t it;
    double size;
    swf_error_t *err = jn__want_array(c, 0, &it);
    if (!err)
        err = jn__want_integer(c, 1, &size);
    if (!err && size < 1)
        err = qerr("argument 2 (chunk size) must be a positive integer");
    if (err || !jn__has_arg(c, 0))
        return err;
    json_object *arr = json_object_new_array(), *chunk = NULL;
    for (size_t k = 0; k < it.n; k++) {
        if (chunk == NULL)
            chunk = json_object_new_array();
        json_object_array_add(chunk, swf_json_ref(jn__item_at(&it, k)));
        if ((double)json_object_array_length(chunk) >= size) {
            json_object_array_add(arr, chunk);
            chunk = NULL;
        }
    }
    if (chunk)
        json_object_array_add(arr, chunk);
    *out = jn__val_take(arr);
    return NULL;
}

static swf_error_t *fn_range(call_t *c, val_t *out)
{
    double a, b, step = 1;
    swf_error_t *err = jn__want_number(c, 0, &a);
    if (!err)
        err = jn__want_number(c, 1, &b);
    if (!err && jn__has_arg(c, 2))
        err = jn__want_number(c, 2, &step);
    if (!err && (step == 0 || !isfinite(step)))
        err = qerr("argument 3 (step) must not be zero");
    if (err)
        return err;
    double count = floor((b - a) / step) + 1;
    if (count < 0)
        count = 0;
    if (count > SWF_LIMIT_JSONATA_RANGE_ITEMS)
        return qerr("the range has %.0f items, the limit is %d", count,
                    SWF_LIMIT_JSONATA_RANGE_ITEMS);
    if ((err = jn__charge(c->ctx, (size_t)count)))
        return err;
    json_object *arr = json_object_new_array();
    for (size_t k = 0; k < (size_t)count; k++) {
        json_object *j;
        if ((err = jn__number_new(a + (double)k * step, &j))) {
            json_object_put(arr);
            return err;
        }
        json_object_array_add(arr, j);
    }
    *out = jn__val_take(arr);
    /* AWS returns the range as a sequence: one item is that item (recorded:
     * $range(1, 9, 9) is 1); an empty range stays []. */
    if (count == 1)
        out->flags |= V_SEQ;
    return NULL;
}

static swf_error_t *fn_hash(call_t *c, val_t *out)
{
    const char *s, *alg_name = "SHA-256";
    size_t n, an;
    swf_hash_alg_t alg;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err && jn__has_arg(c, 1))
        err = jn__want_string(c, 1, &alg_name, &an);
    if (err)
        return err;
    if (!swf_hash_alg_from_name(alg_name, &alg))
        return qerr("unknown algorithm \"%.40s\" (MD5, SHA-1, SHA-256, SHA-384 or SHA-512)",
                    alg_name);
    uint8_t digest[SWF_HASH_MAX_BYTES];
    char hex[2 * SWF_HASH_MAX_BYTES + 1];
    swf_hash_digest(alg, s, n, digest);
    swf_hash_hex_encode(digest, swf_hash_size(alg), hex);
    *out = jn__val_take(json_object_new_string(hex));
    return NULL;
}

static swf_error_t *fn_parse(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    swf_error_t *err;
    if (!jn__string_arg(c, 0, &s, &n, &err))
        return err;
    json_object *j = NULL;
    swf_error_t *perr_ = swf_json_parse(s, n, SWF_LIMIT_PAYLOAD_BYTES, &j);
    if (perr_) {
        err = qerr("the string is not JSON: %s", swf_error_message(perr_));
        swf_error_free(perr_);
        return err;
    }
    *out = jn__val_take(j);
    return NULL;
}

static swf_error_t *fn_type(call_t *c, val_t *out)
{
    const val_t *v = jn__arg(c, 0);
    if (jn__defined(v))
        *out = jn__val_take(json_object_new_string(jn__type_name(v)));
    return NULL;
}

static const builtin_t builtins[] = {
    {"string", fn_string, 1, 2, true},
    {"number", fn_number, 1, 1, true},
    {"boolean", fn_boolean, 1, 1, true},
    {"not", fn_not, 1, 1, true},
    {"exists", fn_exists, 1, 1, false},
    {"count", fn_count, 1, 1, false},
    {"sum", fn_sum, 1, 1, false},
    {"max", fn_max, 1, 1, false},
    {"min", fn_min, 1, 1, false},
    {"average", fn_average, 1, 1, false},
    {"length", jn__fn_length, 1, 1, true},
    {"substring", jn__fn_substring, 2, 3, true},
    {"substringBefore", jn__fn_substring_before, 2, 2, true},
    {"substringAfter", jn__fn_substring_after, 2, 2, true},
    {"uppercase", jn__fn_uppercase, 1, 1, true},
    {"lowercase", jn__fn_lowercase, 1, 1, true},
    {"trim", jn__fn_trim, 1, 1, true},
    {"contains", jn__fn_contains, 2, 2, true},
    {"split", jn__fn_split, 2, 3, true},
    {"join", jn__fn_join, 1, 2, false},
    {"replace", jn__fn_replace, 3, 4, true},
    {"match", jn__fn_match, 2, 3, true},
    {"pad", jn__fn_pad, 2, 3, true},
    {"error", fn_error, 0, 1, false},
    {"assert", fn_assert, 1, 2, false},
    {"zip", fn_zip, 1, 8, false},
    {"spread", fn_spread, 1, 1, false},
    {"encodeUrlComponent", jn__fn_encode_url_component, 1, 1, true},
    {"encodeUrl", jn__fn_encode_url, 1, 1, true},
    {"decodeUrlComponent", jn__fn_decode_url_component, 1, 1, true},
    {"decodeUrl", jn__fn_decode_url, 1, 1, true},
    {"keys", fn_keys, 1, 1, false},
    {"lookup", fn_lookup, 2, 2, false},
    {"append", fn_append, 2, 2, false},
    {"reverse", fn_reverse, 1, 1, false},
    {"sort", jn__fn_sort, 1, 2, false},
    {"map", jn__fn_map, 2, 2, false},
    {"filter", jn__fn_filter, 2, 2, false},
    {"single", jn__fn_single, 1, 2, false},
    {"reduce", jn__fn_reduce, 2, 3, false},
    {"sift", jn__fn_sift, 2, 2, true},
    {"each", jn__fn_each, 2, 2, true},
    {"toMillis", jn__fn_to_millis, 1, 2, true},
    {"fromMillis", jn__fn_from_millis, 1, 3, true},
    {"distinct", fn_distinct, 1, 1, false},
    {"merge", fn_merge, 1, 1, false},
    {"round", fn_round, 1, 2, true},
    {"floor", fn_floor, 1, 1, true},
    {"ceil", fn_ceil, 1, 1, true},
    {"abs", fn_abs, 1, 1, true},
    {"power", fn_power, 2, 2, true},
    {"formatBase", jn__fn_format_base, 1, 2, true},
    {"formatNumber", jn__fn_format_number, 2, 3, true},
    {"formatInteger", jn__fn_format_integer, 2, 2, true},
    {"parseInteger", jn__fn_parse_integer, 2, 2, true},
    {"sqrt", fn_sqrt, 1, 1, true},
    {"type", fn_type, 1, 1, false},
    {"base64encode", jn__fn_base64encode, 1, 1, true},
    {"base64decode", jn__fn_base64decode, 1, 1, true},
    /* Step Functions' additions */
    {"partition", fn_partition, 2, 2, false},
    {"range", fn_range, 2, 3, false},
    {"hash", fn_hash, 1, 2, false},
    {"parse", fn_parse, 1, 1, false},
    /* not deterministic: refused (see the top of the file) */
    {"now", jn__fn_now, 0, 2, false},
    {"millis", jn__fn_millis, 0, 0, false},
    {"random", fn_random, 0, 1, false},
    {"uuid", fn_uuid, 0, 0, false},
    {"shuffle", fn_shuffle, 1, 1, false},
};

const builtin_t *jn__builtin_find(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        if (strcmp(builtins[i].name, name) == 0)
            return &builtins[i];
    }
    return NULL;
}
