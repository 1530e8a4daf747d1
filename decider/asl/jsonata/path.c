/*
 * path.c - paths (a.b[0].c, a.*, a.**): a step maps over its input sequence
 * and flattens what it finds, filters keep items by position or by
 * condition, and the result is a sequence, one item being that item and none
 * undefined, as in jsonata-js. An array built by a constructor is kept whole
 * by a later step; a JSON array met in the last step is returned as is. From
 * the first step that binds a variable (@$focus, #$index, or a label a %
 * reads) a path is a stream of tuples instead (tuple.c); jn__eval_path hands
 * over to it there.
 */
#include "decider/asl/jsonata/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Field `name` of j; over an array, of each element, flattened. */
swf_error_t *jn__lookup(ctx_t *ctx, json_object *j, const char *name, val_t *out, int depth)
{
    *out = UNDEF;
    if (jn__is_object(j)) {
        json_object *v;
        if (json_object_object_get_ex(j, name, &v))
            *out = jn__val_ref(v);
        return NULL;
    }
    if (!jn__is_array(j))
        return NULL;
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return qerr("the value is nested too deep");
    size_t n = json_object_array_length(j);
    swf_error_t *err = jn__charge(ctx, n);
    if (err)
        return err;
    json_object *seq = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        val_t r;
        if ((err = jn__lookup(ctx, json_object_array_get_idx(j, i), name, &r, depth + 1))) {
            json_object_put(seq);
            return err;
        }
        if (!jn__defined(&r))
            continue;
        if (jn__is_array(r.j)) {
            for (size_t k = 0; k < json_object_array_length(r.j); k++)
                json_object_array_add(seq, swf_json_ref(json_object_array_get_idx(r.j, k)));
        } else {
            json_object_array_add(seq, swf_json_ref(r.j));
        }
        jn__val_free(&r);
    }
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    return NULL;
}

void jn__seq_add_flat(json_object *seq, json_object *j)
{
    if (jn__is_array(j)) {
        for (size_t k = 0; k < json_object_array_length(j); k++)
            json_object_array_add(seq, swf_json_ref(json_object_array_get_idx(j, k)));
    } else {
        json_object_array_add(seq, swf_json_ref(j));
    }
}

/* Adds j to seq, the items of arrays at any depth in its place. */
void jn__seq_add_deep(json_object *seq, json_object *j, int depth)
{
    if (!jn__is_array(j) || depth > SWF_LIMIT_JSON_DEPTH) {
        json_object_array_add(seq, swf_json_ref(j));
        return;
    }
    for (size_t k = 0; k < json_object_array_length(j); k++)
        jn__seq_add_deep(seq, json_object_array_get_idx(j, k), depth + 1);
}

swf_error_t *jn__descendants(ctx_t *ctx, json_object *j, json_object *seq, int depth)
{
    swf_error_t *err = jn__charge(ctx, 1);
    if (err)
        return err;
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return qerr("the value is nested too deep");
    if (!jn__is_array(j))
        json_object_array_add(seq, swf_json_ref(j));
    if (jn__is_array(j)) {
        for (size_t i = 0; i < json_object_array_length(j) && !err; i++)
            err = jn__descendants(ctx, json_object_array_get_idx(j, i), seq, depth + 1);
    } else if (jn__is_object(j)) {
        json_object_object_foreach(j, key, v)
        {
            (void)key;
            if ((err = jn__descendants(ctx, v, seq, depth + 1)))
                break;
        }
    }
    return err;
}

static bool number_index(json_object *j, size_t i, size_t n)
{
    double d = floor(json_object_get_double(j));
    if (d < 0)
        d += (double)n;
    return d == (double)i;
}

/* Whether a filter whose value for item i of n is r keeps the item: r is
 * an index (or indexes), or else a condition. */
bool jn__filter_keeps(const val_t *r, size_t i, size_t n)
{
    if (jn__defined(r) && jn__is_number(r->j))
        return number_index(r->j, i, n);
    if (jn__defined(r) && jn__is_array(r->j) && json_object_array_length(r->j) > 0) {
        size_t m = json_object_array_length(r->j), k;
        bool keep = false;
        for (k = 0; k < m && jn__is_number(json_object_array_get_idx(r->j, k)); k++)
            ;
        if (k < m)
            return jn__boolean_of(r) == 1;
        for (k = 0; k < m && !keep; k++)
            keep = number_index(json_object_array_get_idx(r->j, k), i, n);
        return keep;
    }
    return jn__boolean_of(r) == 1;
}

/* Applies the filter pred to v (in place): an index, or a condition on each
 * item. */
swf_error_t *jn__filter(ctx_t *ctx, const node_t *pred, frame_t *env, val_t *v)
{
    if (!jn__defined(v))
        return NULL;
    if (jn__is_func(v))
        return qerr("%s cannot be filtered", jn__func_what(v));
    items_t it = jn__items_of(v);
    json_object *seq = json_object_new_array();
    swf_error_t *err = jn__charge(ctx, it.n);
    if (err)
        goto done;
    if (pred->kind == N_VALUE && jn__is_number(pred->value) && pred->preds.n == 0) {
        for (size_t i = 0; i < it.n; i++) {
            if (!number_index(pred->value, i, it.n))
                continue;
            if (jn__is_array(jn__item_at(&it, i))) {
                /* as jsonata-js: an array item is the result itself, a JSON
                 * array rather than a sequence */
                json_object *item = swf_json_ref(jn__item_at(&it, i));
                json_object_put(seq);
                jn__val_free(v);
                *v = jn__val_take(item);
                return NULL;
            }
            json_object_array_add(seq, swf_json_ref(jn__item_at(&it, i)));
            break;
        }
        goto done;
    }
    for (size_t i = 0; i < it.n; i++) {
        val_t item = jn__val_ref(jn__item_at(&it, i)), r = UNDEF;
        err = jn__eval(ctx, pred, &item, env, &r);
        jn__val_free(&item);
        if (err)
            goto done;
        bool keep = jn__filter_keeps(&r, i, it.n);
        jn__val_free(&r);
        if (keep)
            json_object_array_add(seq, swf_json_ref(jn__item_at(&it, i)));
    }
done:
    if (err) {
        json_object_put(seq);
        return err;
    }
    jn__val_free(v);
    *v = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    return jn__charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * json_object_array_length(seq));
}

/* One step of a path on one input item: the step, then its filters. */
static swf_error_t *eval_step(ctx_t *ctx, const node_t *step, const val_t *item, frame_t *env,
                              val_t *out)
{
    swf_error_t *err = jn__eval(ctx, step, item, env, out);
    for (size_t i = 0; !err && i < step->stages.n; i++)
        err = jn__filter(ctx, step->stages.v[i], env, out);
    if (!err && jn__is_func(out))
        err = qerr("%s cannot be a path step", jn__func_what(out));
    if (err)
        jn__val_free(out);
    return err;
}

/* Path n on input. Its group-by, if any, groups the result (the tuples of
 * a tuple stream). When tout is not NULL and the path becomes a tuple stream,
 * the tuples are the result instead (*tout, *streamed set; no group-by): a
 * % outside reaches into this path. */
swf_error_t *jn__eval_path(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                           val_t *out, tuples_t *tout, bool *streamed)
{
    swf_error_t *err = NULL;
    bool grouped = false;
    val_t result = UNDEF;
    *out = UNDEF;
    val_t *res = NULL;
    size_t nres = 0;
    /* The input sequence: `input` itself (cur == NULL), or cur's items. */
    json_object *cur = NULL;
    if (jn__defined(input) && jn__is_array(input->j) && n->items.v[0]->kind != N_VAR)
        cur = swf_json_ref(input->j);

    for (size_t s = 0; s < n->items.n; s++) {
        const node_t *step = n->items.v[s];
        bool last = s + 1 == n->items.n;
        jn__val_free(&result);
        if (jn__tuple_step(step)) {
            tuples_t ts = {0};
            if (cur != NULL)
                ts = jn__tuples_of(cur);
            else
                jn__tuples_add(&ts, (tuple_t){jn__val_copy(input), jn__frame_new(NULL)});
            err = jn__tuples_run(ctx, n, s, &ts, env);
            if (!err && tout != NULL) {
                *tout = ts;
                *streamed = true;
                goto done;
            }
            if (!err && n->group != NULL) {
                err = jn__eval_group(ctx, n->group, env, &ts, &result);
                grouped = true;
            } else if (!err) {
                result = jn__tuples_items(&ts);
            }
            jn__tuples_free(&ts);
            if (err)
                goto done;
            break;
        }
        if (step->kind == N_SORT) {
            json_object *in = cur ? swf_json_ref(cur) : json_object_new_array();
            if (cur == NULL && jn__defined(input))
                jn__seq_add_flat(in, input->j);
            err = jn__eval_sort(ctx, step, in, env, &result);
            json_object_put(in);
            if (err)
                goto done;
        } else if (s == 0 && step->kind == N_ARRAY) {
            /* [..].step maps over the constructed array */
            val_t r;
            if ((err = eval_step(ctx, step, input, env, &r)))
                goto done;
            json_object *seq = json_object_new_array();
            if (jn__defined(&r))
                jn__seq_add_flat(seq, r.j);
            jn__val_free(&r);
            result = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
        } else {
            size_t nin = cur ? json_object_array_length(cur) : 1;
            if ((err = jn__charge(ctx, nin)))
                goto done;
            res = calloc(nin ? nin : 1, sizeof *res);
            if (res == NULL)
                abort();
            nres = 0;
            for (size_t i = 0; i < nin; i++) {
                val_t item =
                    cur ? jn__val_ref(json_object_array_get_idx(cur, i)) : jn__val_copy(input);
                val_t r;
                err = eval_step(ctx, step, &item, env, &r);
                jn__val_free(&item);
                if (err)
                    goto done;
                if (jn__defined(&r))
                    res[nres++] = r;
            }
            if (last && nres == 1 && jn__is_array(res[0].j) && !(res[0].flags & V_SEQ)) {
                result = res[0];
                result.flags &= ~(unsigned)V_CONS;
                nres = 0;
            } else {
                json_object *seq = json_object_new_array();
                for (size_t i = 0; i < nres; i++) {
                    /* an array constructor written as the step is one item;
                     * any other array (a variable's, a block's) is flattened */
                    if (jn__is_array(res[i].j) &&
                        !(step->kind == N_ARRAY && (res[i].flags & V_CONS)))
                        jn__seq_add_flat(seq, res[i].j);
                    else
                        json_object_array_add(seq, swf_json_ref(res[i].j));
                }
                result = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
            }
            for (size_t i = 0; i < nres; i++)
                jn__val_free(&res[i]);
            free(res);
            res = NULL;
            nres = 0;
        }
        if (!(result.flags & V_SEQ) || json_object_array_length(result.j) == 0)
            break;
        json_object_put(cur);
        cur = swf_json_ref(result.j);
    }
    if (n->keep_array && jn__defined(&result) && !grouped) {
        if (result.flags & V_SEQ) {
            result.flags |= V_KEEP;
        } else if (!jn__is_array(result.j)) {
            json_object *seq = json_object_new_array();
            json_object_array_add(seq, result.j);
            result = (val_t){seq, V_DEF | V_SEQ | V_KEEP, NULL, NULL, NULL};
        }
    }
    if (n->group != NULL && !grouped && (err = jn__eval_group(ctx, n->group, env, NULL, &result)))
        goto done;
    *out = result;
    result = UNDEF;
done:
    for (size_t i = 0; i < nres; i++)
        jn__val_free(&res[i]);
    free(res);
    json_object_put(cur);
    jn__val_free(&result);
    return err;
}

/* A step a % outside reaches into (a block, the last expression of one, a
 * path in it): its value, or the tuples of the path inside, whose variables
 * (the labels of the steps the % refers to) join the outer stream. */
swf_error_t *jn__eval_into_tuples(ctx_t *ctx, const node_t *n, const val_t *item, frame_t *env,
                                  val_t *out, tuples_t *tout, bool *streamed)
{
    *out = UNDEF;
    *streamed = false;
    bool block = n->kind == N_BLOCK && n->items.n > 0 && n->group == NULL;
    bool path = n->kind == N_PATH && n->group == NULL;
    if (!n->tuple || !(block || path))
        return jn__eval(ctx, n, item, env, out);
    swf_error_t *err = jn__charge(ctx, 1);
    if (err)
        return err;
    if (ctx->depth >= SWF_LIMIT_JSONATA_EVAL_DEPTH)
        return qerr("the evaluation is nested more than %d deep", SWF_LIMIT_JSONATA_EVAL_DEPTH);
    ctx->depth++;
    if (block) {
        frame_t *f = jn__frame_new(env);
        for (size_t i = 0; i + 1 < n->items.n && !err; i++) {
            jn__val_free(out);
            err = jn__eval(ctx, n->items.v[i], item, f, out);
        }
        jn__val_free(out);
        if (!err)
            err =
                jn__eval_into_tuples(ctx, n->items.v[n->items.n - 1], item, f, out, tout, streamed);
        jn__frame_release(f);
    } else {
        err = jn__eval_path(ctx, n, item, env, out, tout, streamed);
    }
    if (!err && (out->flags & V_SEQ)) {
        size_t len = json_object_array_length(out->j);
        if (!(err = jn__charge(ctx, len)))
            err = jn__charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * len);
    }
    /* its filters filter the tuples (a first step's: those of each item) */
    for (size_t i = 0; !err && i < n->preds.n; i++)
        err = *streamed ? jn__tuples_filter(ctx, n->preds.v[i], env, tout)
                        : jn__filter(ctx, n->preds.v[i], env, out);
    ctx->depth--;
    if (err) {
        jn__val_free(out);
        jn__tuples_free(tout);
        *streamed = false;
        return err;
    }
    jn__collapse(out);
    return NULL;
}
