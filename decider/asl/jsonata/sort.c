/*
 * sort.c - sorting. Everything JSONata sorts goes through one merge sort,
 * jsonata-js's: stable, and asking its comparisons in jsonata-js's order, so
 * that a comparator function sees the same pairs and an error from a key or
 * a comparator stops it there. Order-by (a^(<x, >y)) over plain sequences
 * and over tuple streams, and $sort with or without a comparator (numbers or
 * strings only without one), are its users.
 */
#include "decider/asl/jsonata/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Whether item a goes after item b; false keeps their order. */
typedef swf_error_t *(*after_t)(void *data, size_t a, size_t b, bool *after);

/* Sorts the indexes v[0..n) (tmp has room for n) with JSONata's merge sort:
 * stable, and calling `after` in the order jsonata-js does, so that a
 * comparator function sees the same pairs. */
static swf_error_t *merge_sort(size_t *v, size_t *tmp, size_t n, after_t after, void *data)
{
    if (n <= 1)
        return NULL;
    size_t mid = n / 2, i = 0, j = mid, k = 0;
    swf_error_t *err = merge_sort(v, tmp, mid, after, data);
    if (!err)
        err = merge_sort(v + mid, tmp, n - mid, after, data);
    while (!err && i < mid && j < n) {
        bool swap;
        if ((err = after(data, v[i], v[j], &swap)))
            break;
        tmp[k++] = swap ? v[j++] : v[i++];
    }
    if (err)
        return err;
    while (i < mid)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
    return NULL;
}

typedef struct order_by {
    ctx_t *ctx;
    const node_t *step; /* N_SORT */
    val_t *keys;        /* item i's term t at [i * terms + t] */
} order_by_t;

/* The comparison of an order-by: term by term, an undefined key last (in
 * either direction), numbers with numbers and strings with strings. */
static swf_error_t *order_by_after(void *data, size_t a, size_t b, bool *after)
{
    order_by_t *o = data;
    size_t terms = o->step->items.n;
    int comp = 0;
    swf_error_t *err = jn__charge(o->ctx, 1);
    for (size_t t = 0; !err && comp == 0 && t < terms; t++) {
        const val_t *x = &o->keys[a * terms + t], *y = &o->keys[b * terms + t];
        if (!jn__defined(x) || !jn__defined(y)) {
            comp = jn__defined(x) == jn__defined(y) ? 0 : jn__defined(x) ? -1 : 1;
            continue;
        }
        if (jn__is_number(x->j) != jn__is_number(y->j))
            return qerr("an order-by compares %s with %s: the keys of a term must all be "
                        "numbers or all strings",
                        jn__type_name(x), jn__type_name(y));
        if (jn__is_number(x->j)) {
            double p = json_object_get_double(x->j), q = json_object_get_double(y->j);
            comp = p < q ? -1 : p > q ? 1 : 0;
        } else {
            comp = strcmp(json_object_get_string(x->j), json_object_get_string(y->j));
            comp = comp < 0 ? -1 : comp > 0 ? 1 : 0;
        }
        if (o->step->items.v[t]->descending)
            comp = -comp;
    }
    *after = comp == 1;
    return err;
}

/* An order-by over a tuple stream (keys see the tuples' variables). */
swf_error_t *jn__tuples_sort(ctx_t *ctx, const node_t *step, frame_t *env, tuples_t *ts)
{
    size_t n = ts->n, terms = step->items.n;
    if (n <= 1)
        return NULL; /* as jsonata-js: one item is sorted, its keys unseen */
    order_by_t o = {ctx, step, calloc(n * terms + 1, sizeof(val_t))};
    size_t *idx = calloc(2 * n + 1, sizeof *idx);
    if (o.keys == NULL || idx == NULL)
        abort();
    swf_error_t *err = jn__charge(ctx, n * terms);
    for (size_t i = 0; i < n && !err; i++) {
        idx[i] = i;
        if ((err = jn__tuple_charge(ctx, &ts->v[i])))
            break;
        frame_t *f = jn__tuple_env(env, &ts->v[i]);
        for (size_t t = 0; t < terms && !err; t++) {
            val_t *k = &o.keys[i * terms + t];
            err = jn__eval(ctx, step->items.v[t], &ts->v[i].item, f, k);
            if (!err && jn__defined(k) &&
                (jn__is_func(k) || !(jn__is_number(k->j) || jn__is_string(k->j))))
                err =
                    qerr("an order-by term must be a number or a string, not %s", jn__type_name(k));
        }
        jn__frame_release(f);
    }
    if (!err)
        err = merge_sort(idx, idx + n, n, order_by_after, &o);
    if (!err) {
        tuples_t sorted = {0};
        for (size_t i = 0; i < n; i++)
            jn__tuple_move(&sorted, ts, idx[i]);
        jn__tuples_free(ts);
        *ts = sorted;
    }
    for (size_t i = 0; i < n * terms; i++)
        jn__val_free(&o.keys[i]);
    free(o.keys);
    free(idx);
    return err;
}

/* a^(<x, >y) outside a tuple stream: the sequence `in` sorted by its
 * terms, each evaluated with an item as the context, then the filters. */
swf_error_t *jn__eval_sort(ctx_t *ctx, const node_t *step, json_object *in, frame_t *env,
                           val_t *out)
{
    tuples_t ts = jn__tuples_of(in);
    swf_error_t *err = jn__tuples_sort(ctx, step, env, &ts);
    if (!err)
        err = jn__tuples_stages(ctx, step, env, &ts);
    if (!err) {
        *out = jn__tuples_items(&ts);
        err = jn__charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * ts.n);
    }
    jn__tuples_free(&ts);
    if (err)
        jn__val_free(out);
    return err;
}

typedef struct sort_item {
    json_object *j;
    size_t index;
} sort_item_t;

static int sort_cmp(const void *pa, const void *pb)
{
    const sort_item_t *a = pa, *b = pb;
    int c;
    if (jn__is_number(a->j)) {
        double x = json_object_get_double(a->j), y = json_object_get_double(b->j);
        c = x < y ? -1 : x > y ? 1 : 0;
    } else {
        c = strcmp(json_object_get_string(a->j), json_object_get_string(b->j));
    }
    if (c == 0) /* stable, as JSONata's merge sort is */
        c = a->index < b->index ? -1 : a->index > b->index ? 1 : 0;
    return c;
}

typedef struct sort_by_function {
    call_t *c;
    const items_t *it;
} sort_by_function_t;

static swf_error_t *function_after(void *data, size_t a, size_t b, bool *after)
{
    sort_by_function_t *s = data;
    val_t argv[2] = {jn__val_ref(jn__item_at(s->it, a)), jn__val_ref(jn__item_at(s->it, b))}, r;
    swf_error_t *err = jn__apply(s->c->ctx, jn__arg(s->c, 1), argv, 2, &UNDEF, &r);
    *after = !err && jn__boolean_of(&r) == 1;
    jn__val_free(&r);
    jn__val_free(&argv[0]);
    jn__val_free(&argv[1]);
    return err;
}

/* $sort(array, f): f($a, $b) true when $a goes after $b. */
static swf_error_t *sort_with(call_t *c, items_t it, val_t *out)
{
    swf_error_t *err = jn__has_arg(c, 1) ? jn__want_function(c, 1) : NULL;
    if (err)
        return err;
    if (it.n <= 1) { /* as an array, unsorted (the function is not called) */
        json_object *arr = json_object_new_array();
        if (it.n == 1)
            json_object_array_add(arr, swf_json_ref(jn__item_at(&it, 0)));
        *out = jn__val_take(arr);
        return NULL;
    }
    size_t *idx = malloc(2 * it.n * sizeof *idx);
    if (idx == NULL)
        abort();
    for (size_t k = 0; k < it.n; k++)
        idx[k] = k;
    sort_by_function_t s = {c, &it};
    if (!(err = merge_sort(idx, idx + it.n, it.n, function_after, &s))) {
        json_object *arr = json_object_new_array_ext((int)it.n);
        for (size_t k = 0; k < it.n; k++)
            json_object_array_add(arr, swf_json_ref(jn__item_at(&it, idx[k])));
        *out = jn__val_take(arr);
    }
    free(idx);
    return err;
}

swf_error_t *jn__fn_sort(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = jn__want_array(c, 0, &it);
    if (err || !jn__has_arg(c, 0))
        return err;
    if (jn__has_arg(c, 1) || it.n <= 1)
        return sort_with(c, it, out);
    bool nums = it.n > 0 && jn__is_number(jn__item_at(&it, 0));
    for (size_t k = 0; k < it.n; k++) {
        json_object *j = jn__item_at(&it, k);
        if (nums ? !jn__is_number(j) : !jn__is_string(j))
            return qerr("sorts an array of numbers or of strings; item %zu is %s", k,
                        swf_json_type_name(j));
    }
    if ((err = jn__charge(c->ctx, it.n * (size_t)(1 + log2((double)it.n + 1)))))
        return err;
    sort_item_t *v = malloc((it.n ? it.n : 1) * sizeof *v);
    if (v == NULL)
        abort();
    for (size_t k = 0; k < it.n; k++)
        v[k] = (sort_item_t){jn__item_at(&it, k), k};
    qsort(v, it.n, sizeof *v, sort_cmp);
    json_object *arr = json_object_new_array_ext((int)it.n);
    for (size_t k = 0; k < it.n; k++)
        json_object_array_add(arr, swf_json_ref(v[k].j));
    free(v);
    *out = jn__val_take(arr);
    return NULL;
}
