/*
 * eval.c - the evaluator's core: the context of one evaluation (ctx_t: its
 * work and memory budgets, the arena of closures and of the frames they
 * capture), scopes (frame_t), and jn__eval, the dispatch every node goes
 * through, which counts the work and the depth so that no expression can
 * hang the decider or overflow its stack. The nodes that need no file of
 * their own are here: operators, array and object constructors, ranges,
 * blocks, bindings and variables. Paths (path.c, tuple.c), sorting (sort.c)
 * and calls (function.c) are elsewhere.
 */
#include "decider/asl/jsonata/internal.h"
#include "protocol/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void jn__frame_free(frame_t *f)
{
    for (size_t i = 0; i < f->n; i++)
        jn__val_free(&f->b[i].v);
    free(f->b);
    free(f);
}

frame_t *jn__frame_new(frame_t *up)
{
    frame_t *f = calloc(1, sizeof *f);
    if (f == NULL)
        abort();
    f->up = up;
    return f;
}

/* Ends a block's or a call's use of f: freed unless a closure keeps it. */
void jn__frame_release(frame_t *f)
{
    if (!f->captured)
        jn__frame_free(f);
}

/* Frees the arena: what closures kept, and the closures. */
void jn__ctx_free(ctx_t *ctx)
{
    while (ctx->captured) {
        frame_t *f = ctx->captured;
        ctx->captured = f->next_captured;
        jn__frame_free(f);
    }
    while (ctx->closures) {
        closure_t *c = ctx->closures;
        ctx->closures = c->next;
        jn__val_free(&c->input);
        jn__val_free(&c->first);
        jn__val_free(&c->then);
        for (size_t i = 0; i < c->nargs; i++)
            jn__val_free(&c->args[i]);
        free(c->args);
        free(c);
    }
}

void jn__frame_set(frame_t *f, const char *name, const val_t *v)
{
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(f->b[i].name, name) == 0) {
            jn__val_free(&f->b[i].v);
            f->b[i].v = jn__val_copy(v);
            return;
        }
    }
    SWF_ARRAY_RESERVE(f->b, f->n, f->cap, 4);
    f->b[f->n].name = name;
    f->b[f->n].v = jn__val_copy(v);
    f->n++;
}

static swf_error_t *eval_binary(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                                val_t *out)
{
    val_t l = UNDEF, r = UNDEF;
    swf_error_t *err = NULL;
    const char *op = jn__op_text[n->op];

    if (n->op == OP_AND || n->op == OP_OR) {
        if ((err = jn__eval(ctx, n->a, input, env, &l)))
            goto done;
        bool lb = jn__boolean_of(&l) == 1;
        if ((n->op == OP_AND && !lb) || (n->op == OP_OR && lb)) {
            *out = jn__val_take(json_object_new_boolean(lb));
            goto done;
        }
        if ((err = jn__eval(ctx, n->b, input, env, &r)))
            goto done;
        *out = jn__val_take(json_object_new_boolean(jn__boolean_of(&r) == 1));
        goto done;
    }
    if ((err = jn__eval(ctx, n->a, input, env, &l)) || (err = jn__eval(ctx, n->b, input, env, &r)))
        goto done;
    if (jn__is_func(&l) || jn__is_func(&r)) {
        err = qerr("%s cannot be an operand of '%s'", jn__func_what(jn__is_func(&l) ? &l : &r), op);
        goto done;
    }
    switch (n->op) {
    case OP_PLUS:
    case OP_MINUS:
    case OP_STAR:
    case OP_SLASH:
    case OP_PERCENT: {
        if (jn__defined(&l) && !jn__is_number(l.j)) {
            err = qerr("the left side of '%s' must be a number, not %s", op, jn__type_name(&l));
            goto done;
        }
        if (jn__defined(&r) && !jn__is_number(r.j)) {
            err = qerr("the right side of '%s' must be a number, not %s", op, jn__type_name(&r));
            goto done;
        }
        if (!jn__defined(&l) || !jn__defined(&r))
            goto done; /* undefined */
        double a = json_object_get_double(l.j), b = json_object_get_double(r.j), v;
        switch (n->op) {
        case OP_PLUS:
            v = a + b;
            break;
        case OP_MINUS:
            v = a - b;
            break;
        case OP_STAR:
            v = a * b;
            break;
        case OP_SLASH:
            v = a / b;
            break;
        default:
            v = fmod(a, b);
            break;
        }
        json_object *j;
        if ((err = jn__number_new(v, &j)))
            goto done;
        *out = jn__val_take(j);
        goto done;
    }
    case OP_AMP: {
        buf_t b = {0};
        if ((jn__defined(&l) && (err = jn__to_string(&l, 0, &b))) ||
            (jn__defined(&r) && (err = jn__to_string(&r, 0, &b)))) {
            free(b.s);
            goto done;
        }
        *out = jn__string_val(buf_cstr(&b), b.n);
        free(b.s);
        goto done;
    }
    case OP_EQ:
    case OP_NE: {
        bool eq = jn__defined(&l) && jn__defined(&r) && swf_json_equal(l.j, r.j);
        if (!jn__defined(&l) || !jn__defined(&r))
            *out = jn__val_take(json_object_new_boolean(false));
        else
            *out = jn__val_take(json_object_new_boolean(n->op == OP_EQ ? eq : !eq));
        goto done;
    }
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: {
        bool lok = !jn__defined(&l) || jn__is_number(l.j) || jn__is_string(l.j);
        bool rok = !jn__defined(&r) || jn__is_number(r.j) || jn__is_string(r.j);
        if (!lok || !rok) {
            err =
                qerr("'%s' compares numbers or strings, not %s", op, jn__type_name(lok ? &r : &l));
            goto done;
        }
        if (!jn__defined(&l) || !jn__defined(&r))
            goto done; /* undefined, as in jsonata-js 2 (= and != give false) */
        int c;
        if (jn__is_number(l.j) && jn__is_number(r.j)) {
            double a = json_object_get_double(l.j), b = json_object_get_double(r.j);
            c = a < b ? -1 : a > b ? 1 : 0;
        } else if (jn__is_string(l.j) && jn__is_string(r.j)) {
            size_t la = (size_t)json_object_get_string_len(l.j);
            size_t lb2 = (size_t)json_object_get_string_len(r.j);
            c = memcmp(json_object_get_string(l.j), json_object_get_string(r.j),
                       la < lb2 ? la : lb2);
            if (c == 0)
                c = la < lb2 ? -1 : la > lb2 ? 1 : 0;
        } else {
            err = qerr("'%s' cannot compare %s with %s", op, jn__type_name(&l), jn__type_name(&r));
            goto done;
        }
        bool res = n->op == OP_LT   ? c < 0
                   : n->op == OP_LE ? c <= 0
                   : n->op == OP_GT ? c > 0
                                    : c >= 0;
        *out = jn__val_take(json_object_new_boolean(res));
        goto done;
    }
    case OP_IN: {
        bool found = false;
        if (jn__defined(&l) && jn__defined(&r)) {
            items_t it = jn__items_of(&r);
            if ((err = jn__charge(ctx, it.n)))
                goto done;
            for (size_t i = 0; i < it.n && !found; i++)
                found = swf_json_equal(l.j, jn__item_at(&it, i));
        }
        *out = jn__val_take(json_object_new_boolean(found));
        goto done;
    }
    default:
        err = qerr("the operator '%s' is not supported here", op);
        goto done;
    }
done:
    if (!err && jn__defined(out) &&
        (n->op == OP_AMP || !json_object_is_type(out->j, json_type_boolean)))
        err = jn__charge_bytes(ctx, jn__built_size(out->j));
    if (err)
        jn__val_free(out);
    jn__val_free(&l);
    jn__val_free(&r);
    return err;
}

static swf_error_t *range_bound(const val_t *v, const char *which, double *out)
{
    if (!jn__is_number(v->j) || jn__is_func(v))
        return qerr("the %s of a range must be an integer, not %s", which, jn__type_name(v));
    *out = json_object_get_double(v->j);
    if (*out != floor(*out))
        return qerr("the %s of a range must be an integer, not %g", which, *out);
    return NULL;
}

static swf_error_t *eval_array(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                               val_t *out)
{
    json_object *arr = json_object_new_array();
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n->items.n && !err; i++) {
        const node_t *item = n->items.v[i];
        val_t v = UNDEF;
        if (item->kind == N_RANGE) {
            val_t lo = UNDEF, hi = UNDEF;
            double a, b;
            if (!(err = jn__eval(ctx, item->a, input, env, &lo)) &&
                !(err = jn__eval(ctx, item->b, input, env, &hi)) && jn__defined(&lo) &&
                jn__defined(&hi) && !(err = range_bound(&lo, "start", &a)) &&
                !(err = range_bound(&hi, "end", &b)) && a <= b) {
                if (b - a + 1 > SWF_LIMIT_JSONATA_RANGE_ITEMS)
                    err = qerr("the range [%.0f..%.0f] has more than %d items", a, b,
                               SWF_LIMIT_JSONATA_RANGE_ITEMS);
                else if (!(err = jn__charge(ctx, (size_t)(b - a + 1))) &&
                         !(err = jn__charge_bytes(ctx, (size_t)(b - a + 1) *
                                                           (VALUE_BYTES + SLOT_BYTES))))
                    for (double k = a; k <= b; k++)
                        json_object_array_add(arr, json_object_new_int64((int64_t)k));
            }
            jn__val_free(&lo);
            jn__val_free(&hi);
            continue;
        }
        if ((err = jn__eval(ctx, item, input, env, &v)))
            break;
        if (jn__is_func(&v))
            err = qerr("%s cannot be an array item", jn__func_what(&v));
        else if (jn__defined(&v) && item->kind != N_ARRAY)
            jn__seq_add_flat(arr, v.j);
        else if (jn__defined(&v))
            json_object_array_add(arr, swf_json_ref(v.j));
        jn__val_free(&v);
    }
    if (err) {
        json_object_put(arr);
        return err;
    }
    *out = (val_t){arr, V_DEF | V_CONS, NULL, NULL, NULL};
    return jn__charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * json_object_array_length(arr));
}

const val_t *jn__frame_lookup(frame_t *env, const char *name)
{
    for (frame_t *f = env; f; f = f->up) {
        for (size_t i = f->n; i-- > 0;) {
            if (strcmp(f->b[i].name, name) == 0)
                return &f->b[i].v;
        }
    }
    return NULL;
}

val_t jn__builtin_val(const builtin_t *bi)
{
    return (val_t){NULL, V_DEF | V_FUNC, NULL, bi, NULL};
}

static swf_error_t *eval_var(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                             val_t *out)
{
    if (n->name[0] == '\0') {
        *out = jn__val_copy(input);
        return NULL;
    }
    if (strcmp(n->name, "$") == 0) {
        *out = UNDEF; /* there is no input document: use $states.input */
        return NULL;
    }
    const val_t *bound = jn__frame_lookup(env, n->name);
    if (bound != NULL) {
        *out = jn__val_copy(bound);
        return NULL;
    }
    json_object *v;
    if (swf_json_get(ctx->bindings, n->name, &v)) {
        *out = jn__val_ref(v);
        return NULL;
    }
    const builtin_t *bi = jn__builtin_find(n->name);
    if (bi != NULL) {
        *out = jn__builtin_val(bi);
        return NULL;
    }
    return qerr("the variable $%s is not defined", n->name);
}

swf_error_t *jn__eval(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env, val_t *out)
{
    *out = UNDEF;
    swf_error_t *err = jn__charge(ctx, 1);
    if (err)
        return err;
    if (ctx->depth >= SWF_LIMIT_JSONATA_EVAL_DEPTH)
        return qerr("the evaluation is nested more than %d deep (a recursion that does not "
                    "end?)",
                    SWF_LIMIT_JSONATA_EVAL_DEPTH);
    ctx->depth++;
    switch (n->kind) {
    case N_VALUE:
        *out = jn__val_ref(n->value);
        break;
    case N_REGEX:
        *out = (val_t){NULL, V_DEF | V_REGEX, n, NULL, NULL};
        break;
    case N_NAME:
        if (jn__defined(input) && !jn__is_func(input))
            err = jn__lookup(ctx, input->j, n->name, out, 0);
        break;
    case N_WILDCARD: /* the values of the fields (or items), arrays flattened */
        if (jn__defined(input) && (jn__is_object(input->j) || jn__is_array(input->j))) {
            json_object *seq = json_object_new_array();
            if (jn__is_object(input->j)) {
                json_object_object_foreach(input->j, key, v)
                {
                    (void)key;
                    jn__seq_add_deep(seq, v, 0);
                }
            } else {
                jn__seq_add_deep(seq, input->j, 0);
            }
            *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
        }
        break;
    case N_DESCEND:
        if (jn__defined(input) && !jn__is_func(input)) {
            json_object *seq = json_object_new_array();
            err = jn__descendants(ctx, input->j, seq, 0);
            *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
        }
        break;
    case N_VAR:
        err = eval_var(ctx, n, input, env, out);
        break;
    case N_PATH:
        err = jn__eval_path(ctx, n, input, env, out, NULL, NULL);
        break;
    case N_NEG: {
        val_t a;
        if ((err = jn__eval(ctx, n->a, input, env, &a)))
            break;
        if (jn__defined(&a) && (jn__is_func(&a) || !jn__is_number(a.j))) {
            err = qerr("'-' negates a number, not %s", jn__type_name(&a));
        } else if (jn__defined(&a)) {
            json_object *j;
            if (!(err = jn__number_new(-json_object_get_double(a.j), &j))) {
                *out = jn__val_take(j);
                err = jn__charge_bytes(ctx, VALUE_BYTES);
            }
        }
        jn__val_free(&a);
        break;
    }
    case N_BINARY:
        if (n->op == OP_CHAIN)
            err = jn__eval_chain(ctx, n, input, env, out);
        else
            err = eval_binary(ctx, n, input, env, out);
        break;
    case N_ARRAY:
        err = eval_array(ctx, n, input, env, out);
        break;
    case N_RANGE:
        err = qerr("a range (..) is only allowed inside [ ]");
        break;
    case N_OBJECT: /* as jsonata-js: grouping the items of the context */
        *out = jn__val_copy(input);
        err = jn__eval_group(ctx, n, env, NULL, out);
        break;
    case N_BLOCK: {
        frame_t *f = jn__frame_new(env);
        for (size_t i = 0; i < n->items.n && !err; i++) {
            jn__val_free(out);
            err = jn__eval(ctx, n->items.v[i], input, f, out);
        }
        jn__frame_release(f);
        break;
    }
    case N_BIND:
        if (!(err = jn__eval(ctx, n->a, input, env, out)))
            jn__frame_set(env, n->name, out);
        break;
    case N_COND: {
        val_t c;
        if ((err = jn__eval(ctx, n->a, input, env, &c)))
            break;
        if (jn__boolean_of(&c) == 1)
            err = jn__eval(ctx, n->b, input, env, out);
        else if (n->c)
            err = jn__eval(ctx, n->c, input, env, out);
        jn__val_free(&c);
        break;
    }
    case N_CALL:
        err = jn__eval_call(ctx, n, input, env, out);
        break;
    case N_LAMBDA:
    case N_TRANSFORM:
        err = jn__eval_lambda(ctx, n, input, env, out);
        break;
    case N_SORT:
        err = qerr("an order-by (^) must follow a path step"); /* paths evaluate it */
        break;
    case N_HOLE:
        err = qerr("? is only an argument of a call"); /* calls see it */
        break;
    case N_PARENT: { /* bound by the step it refers to, in the tuple stream */
        const val_t *bound = n->name ? jn__frame_lookup(env, n->name) : NULL;
        if (bound != NULL)
            *out = jn__val_copy(bound);
        break;
    }
    }
    for (size_t i = 0; !err && i < n->preds.n; i++)
        err = jn__filter(ctx, n->preds.v[i], env, out);
    if (!err && n->group != NULL && n->kind != N_PATH) /* a path groups its tuples itself */
        err = jn__eval_group(ctx, n->group, env, NULL, out);
    if (!err && (out->flags & V_SEQ)) {
        /* paths, wildcards and lookups over arrays: one unit per item */
        size_t len = json_object_array_length(out->j);
        if (!(err = jn__charge(ctx, len)))
            err = jn__charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * len);
    }
    ctx->depth--;
    if (err) {
        jn__val_free(out);
        return err;
    }
    jn__collapse(out);
    return NULL;
}
