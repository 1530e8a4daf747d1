/*
 * hof.c - the higher-order built-ins: $map, $filter, $single, $reduce, $sift
 * and $each. Each calls its function argument through jn__apply with as many
 * of (value, index, array) as the function takes, as jsonata-js does, so
 * that $map(a, $string) and $map(a, function($v, $i) {...}) both work.
 * $sort, which also takes a function, is sort.c's.
 */
#include "decider/asl/jsonata/internal.h"

#include <stdlib.h>
#include <string.h>

swf_error_t *jn__want_function(const call_t *c, size_t i)
{
    const val_t *v = jn__arg(c, i);
    if (!jn__is_callable(v))
        return qerr("argument %zu must be a function, not %s", i + 1, jn__type_name(v));
    return NULL;
}

/* The array a higher-order function walks: argument 0, a value alone being
 * an array of one (its items are it). NULL for a function. */
static swf_error_t *want_walk(const call_t *c, items_t *it, val_t *whole)
{
    const val_t *v = jn__arg(c, 0);
    *whole = UNDEF;
    *it = (items_t){0};
    if (jn__is_func(v))
        return qerr("argument 1 must be an array, not %s", jn__func_what(v));
    *it = jn__items_of(v);
    if (!jn__defined(v))
        return NULL;
    if (jn__is_array(v->j)) {
        *whole = jn__val_copy(v);
    } else {
        json_object *arr = json_object_new_array();
        json_object_array_add(arr, swf_json_ref(v->j));
        *whole = jn__val_take(arr);
    }
    return jn__charge(c->ctx, it->n);
}

/* Calls f with the first of a, b, d that it takes (at least a): what a
 * higher-order function passes (value, index, array). */
static swf_error_t *hof_apply(call_t *c, const val_t *f, const val_t *a, const val_t *b,
                              const val_t *d, val_t *out)
{
    val_t argv[3] = {*a, *b, *d};
    size_t n = jn__func_arity(f);
    return jn__apply(c->ctx, f, argv, n < 1 ? 1 : n > 3 ? 3 : n, &UNDEF, out);
}

/* Adds r to the sequence seq: a function is not JSON and cannot be kept. */
static swf_error_t *seq_push(json_object *seq, const val_t *r)
{
    if (jn__is_func(r))
        return qerr("%s cannot be an item of the result", jn__func_what(r));
    if (jn__defined(r))
        json_object_array_add(seq, swf_json_ref(r->j));
    return NULL;
}

/* $map(array, f) and $filter(array, f): f(value, index, array) for each
 * item; the results (map), or the items for which f is true (filter). */
static swf_error_t *map_or_filter(call_t *c, val_t *out, bool map)
{
    items_t it;
    val_t whole;
    swf_error_t *err = jn__want_function(c, 1);
    if (!err)
        err = want_walk(c, &it, &whole);
    if (err || !jn__has_arg(c, 0))
        return err;
    json_object *seq = json_object_new_array();
    for (size_t k = 0; k < it.n && !err; k++) {
        val_t item = jn__val_ref(jn__item_at(&it, k)), index = jn__index_val(k), r;
        if (!(err = hof_apply(c, jn__arg(c, 1), &item, &index, &whole, &r))) {
            if (map)
                err = seq_push(seq, &r);
            else if (jn__boolean_of(&r) == 1)
                json_object_array_add(seq, swf_json_ref(item.j));
        }
        jn__val_free(&r);
        jn__val_free(&index);
        jn__val_free(&item);
    }
    jn__val_free(&whole);
    return jn__seq_result(seq, err, out);
}

swf_error_t *jn__fn_map(call_t *c, val_t *out)
{
    return map_or_filter(c, out, true);
}

swf_error_t *jn__fn_filter(call_t *c, val_t *out)
{
    return map_or_filter(c, out, false);
}

/* $single(array[, f]): the one item for which f is true (or the one item);
 * none or more than one is an error. */
swf_error_t *jn__fn_single(call_t *c, val_t *out)
{
    items_t it;
    val_t whole;
    swf_error_t *err = jn__has_arg(c, 1) ? jn__want_function(c, 1) : NULL;
    if (!err)
        err = want_walk(c, &it, &whole);
    if (err || !jn__has_arg(c, 0))
        return err;
    val_t found = UNDEF;
    for (size_t k = 0; k < it.n && !err; k++) {
        val_t item = jn__val_ref(jn__item_at(&it, k)), index = jn__index_val(k), r = UNDEF;
        bool match = true;
        if (jn__has_arg(c, 1) && !(err = hof_apply(c, jn__arg(c, 1), &item, &index, &whole, &r)))
            match = jn__boolean_of(&r) == 1;
        if (!err && match && jn__defined(&found))
            err = qerr("more than one item matches (item %zu is the second)", k);
        else if (!err && match)
            found = jn__val_copy(&item);
        jn__val_free(&r);
        jn__val_free(&index);
        jn__val_free(&item);
    }
    jn__val_free(&whole);
    if (!err && !jn__defined(&found))
        err = qerr("no item matches: exactly one must");
    if (err) {
        jn__val_free(&found);
        return err;
    }
    *out = found;
    return NULL;
}

/* $reduce(array, f[, init]): f(accumulator, value, index, array) from the
 * left, starting from init, or from the first item without one. */
swf_error_t *jn__fn_reduce(call_t *c, val_t *out)
{
    items_t it;
    val_t whole;
    swf_error_t *err = jn__want_function(c, 1);
    if (err || !jn__has_arg(c, 0))
        return err;
    if (jn__func_arity(jn__arg(c, 1)) < 2)
        return qerr("argument 2 must be a function of at least two arguments");
    if ((err = want_walk(c, &it, &whole)))
        return err;
    size_t k = 0, n = jn__func_arity(jn__arg(c, 1));
    val_t acc;
    if (!jn__has_arg(c, 2) && it.n > 0)
        acc = jn__val_ref(jn__item_at(&it, k++));
    else
        acc = jn__val_copy(jn__arg(c, 2));
    for (; k < it.n && !err; k++) {
        val_t argv[4] = {acc, jn__val_ref(jn__item_at(&it, k)), jn__index_val(k), whole}, r;
        err = jn__apply(c->ctx, jn__arg(c, 1), argv, n > 4 ? 4 : n, &UNDEF, &r);
        jn__val_free(&argv[1]);
        jn__val_free(&argv[2]);
        if (!err) {
            jn__val_free(&acc);
            acc = r;
        }
    }
    jn__val_free(&whole);
    if (err) {
        jn__val_free(&acc);
        return err;
    }
    *out = acc;
    return NULL;
}

/* $sift(object, f) and $each(object, f): f(value, key, object) for each
 * field; the fields for which f is true (sift), or the results (each). */
static swf_error_t *sift_or_each(call_t *c, val_t *out, bool sift)
{
    const val_t *o = jn__arg(c, 0);
    swf_error_t *err = jn__want_function(c, 1);
    if (err || !jn__defined(o))
        return err;
    if (jn__is_func(o) || !jn__is_object(o->j))
        return qerr("argument 1 must be an object, not %s", jn__type_name(o));
    if ((err = jn__charge(c->ctx, (size_t)json_object_object_length(o->j))))
        return err;
    json_object *res = sift ? json_object_new_object() : json_object_new_array();
    json_object_object_foreach(o->j, key, v)
    {
        val_t value = jn__val_ref(v), k = jn__val_take(json_object_new_string(key)), r = UNDEF;
        if (!(err = hof_apply(c, jn__arg(c, 1), &value, &k, o, &r))) {
            if (!sift)
                err = seq_push(res, &r);
            else if (jn__boolean_of(&r) == 1)
                json_object_object_add(res, key, swf_json_ref(v));
        }
        jn__val_free(&r);
        jn__val_free(&k);
        jn__val_free(&value);
        if (err)
            break;
    }
    if (err) {
        json_object_put(res);
        return err;
    }
    if (sift && json_object_object_length(res) == 0) {
        json_object_put(res);
        return NULL;
    }
    *out = sift ? jn__val_take(res) : (val_t){res, V_DEF | V_SEQ, NULL, NULL, NULL};
    jn__collapse(out);
    return NULL;
}

swf_error_t *jn__fn_sift(call_t *c, val_t *out)
{
    return sift_or_each(c, out, true);
}

swf_error_t *jn__fn_each(call_t *c, val_t *out)
{
    return sift_or_each(c, out, false);
}
