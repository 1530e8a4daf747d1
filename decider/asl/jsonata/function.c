/*
 * function.c - function values and calling them. A lambda evaluates to a
 * closure that keeps the frames it was made in (moved to the evaluation's
 * arena, since closures and frames form cycles); ~> of two functions
 * composes them, and $f(?, 1) makes a partial application. jn__apply is the
 * one place a function value is called, whatever it is (a built-in, a
 * closure, a regular expression, which gives its first match, or a
 * transform, which changes a copy of its argument) and by whom (a call node,
 * ~>, or a higher-order built-in), so that the call-depth limit and the
 * errors are the same everywhere.
 */
#include "decider/asl/jsonata/internal.h"

#include <stdlib.h>
#include <string.h>

/* Marks the frames of env as kept by a closure: they move to the arena. */
static swf_error_t *capture(ctx_t *ctx, frame_t *env)
{
    swf_error_t *err = NULL;
    for (frame_t *f = env; f && !f->captured; f = f->up) {
        f->captured = true;
        f->next_captured = ctx->captured;
        ctx->captured = f;
        if (!err)
            err = jn__charge_bytes(ctx, VALUE_BYTES + (VALUE_BYTES + SLOT_BYTES) * f->n);
    }
    return err;
}

static closure_t *closure_new(ctx_t *ctx)
{
    closure_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        abort();
    c->next = ctx->closures;
    ctx->closures = c;
    return c;
}

swf_error_t *jn__eval_lambda(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                             val_t *out)
{
    closure_t *c = closure_new(ctx);
    if (n->kind == N_LAMBDA)
        c->lambda = n;
    else
        c->transform = n;
    c->env = env;
    c->input = jn__val_copy(input);
    *out = (val_t){NULL, V_DEF | V_FUNC, NULL, NULL, c};
    swf_error_t *err = capture(ctx, env);
    return err ? err : jn__charge_bytes(ctx, VALUE_BYTES);
}

/* The number of arguments a higher-order function passes to f: as many as
 * f declares, as jsonata-js does (a lambda's parameters; a built-in's, of
 * which $string declares one). */
size_t jn__func_arity(const val_t *f)
{
    if (f->bi != NULL)
        return strcmp(f->bi->name, "string") == 0 ? 1 : f->bi->max;
    if (f->cl != NULL && f->cl->lambda != NULL)
        return f->cl->lambda->items.n;
    if (f->cl != NULL && f->cl->args != NULL)
        return f->cl->holes;
    return 1; /* a regular expression, a transform, a composition */
}

/* The match f of a regular expression in s as JSONata shows it: {match,
 * <where>: its position in UTF-16 code units (JavaScript's match.index),
 * groups: the captures, null for a group that took no part}. */
json_object *jn__match_object(const char *s, const found_t *f, bool start_end)
{
    json_object *m = json_object_new_object(), *groups = json_object_new_array();
    size_t a = f->start, b = f->end, at = jn__utf16_length(s, a);
    json_object_object_add(m, "match", json_object_new_string_len(s + a, (int)(b - a)));
    if (start_end) {
        json_object_object_add(m, "start", json_object_new_int64((int64_t)at));
        json_object_object_add(
            m, "end", json_object_new_int64((int64_t)(at + jn__utf16_length(s + a, b - a))));
    } else {
        json_object_object_add(m, "index", json_object_new_int64((int64_t)at));
    }
    for (size_t k = 1; k <= f->groups; k++) {
        size_t ga = f->caps[2 * k], gb = f->caps[2 * k + 1];
        json_object_array_add(groups, ga == SWF_ASL_REGEX_UNSET || gb == SWF_ASL_REGEX_UNSET
                                          ? NULL
                                          : json_object_new_string_len(s + ga, (int)(gb - ga)));
    }
    json_object_object_add(m, "groups", groups);
    return m;
}

/* A regular expression called on a string: its first match, or undefined. */
static swf_error_t *regex_apply(ctx_t *ctx, const val_t *re, const val_t *arg, val_t *out)
{
    if (!jn__defined(arg))
        return NULL;
    if (jn__is_func(arg) || !jn__is_string(arg->j))
        return qerr("a regular expression is called on a string, not %s", jn__type_name(arg));
    const char *s = json_object_get_string(arg->j);
    size_t n = (size_t)json_object_get_string_len(arg->j);
    found_t f = {0};
    bool hit;
    swf_error_t *err = jn__pattern_find(ctx, re, s, n, 0, &f, &hit);
    if (!err && hit) {
        *out = jn__val_take(jn__match_object(s, &f, true));
        err = jn__charge_bytes(ctx, jn__built_size(out->j));
    }
    free(f.caps);
    return err;
}

/* The number of values in j, to count what copying it builds. */
static size_t json_nodes(json_object *j, int depth)
{
    size_t n = 1;
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return n;
    if (jn__is_array(j)) {
        for (size_t i = 0; i < json_object_array_length(j); i++)
            n += json_nodes(json_object_array_get_idx(j, i), depth + 1);
    } else if (jn__is_object(j)) {
        json_object_object_foreach(j, key, v)
        {
            (void)key;
            n += json_nodes(v, depth + 1);
        }
    }
    return n;
}

/* A copy of j that shares nothing with it (NULL is JSON null). */
static swf_error_t *json_copy(ctx_t *ctx, json_object *j, json_object **out)
{
    *out = NULL;
    swf_error_t *err = jn__charge_bytes(ctx, (VALUE_BYTES + SLOT_BYTES) * json_nodes(j, 0));
    if (!err && j != NULL && json_object_deep_copy(j, out, NULL) != 0)
        err = qerr("the value cannot be copied");
    return err;
}

/* | location | update [, deletions] | applied to arg: a copy of arg in
 * which each object the location finds gets the update's fields, and loses
 * the fields the deletions name. The copy is the evaluator's own, so it can
 * change in place; the update's values are copied in, so that no value
 * contains itself. */
static swf_error_t *transform_apply(ctx_t *ctx, const closure_t *cl, const val_t *arg, val_t *out)
{
    const node_t *t = cl->transform;
    if (!jn__defined(arg))
        return NULL;
    if (jn__is_func(arg) || !(jn__is_object(arg->j) || jn__is_array(arg->j)))
        return qerr("a transform applies to an object or an array, not %s", jn__type_name(arg));
    json_object *copy;
    swf_error_t *err = json_copy(ctx, arg->j, &copy);
    if (err)
        return err;
    val_t root = jn__val_take(copy), found = UNDEF;
    if (!(err = jn__eval(ctx, t->a, &root, cl->env, &found)) && jn__is_func(&found))
        err = qerr("the location of a transform is %s", jn__func_what(&found));
    items_t it = jn__items_of(&found);
    for (size_t i = 0; i < it.n && !err; i++) {
        json_object *match = jn__item_at(&it, i);
        val_t m = jn__val_ref(match), update = UNDEF, del = UNDEF;
        err = jn__eval(ctx, t->b, &m, cl->env, &update);
        if (!err && jn__defined(&update) && (jn__is_func(&update) || !jn__is_object(update.j)))
            err =
                qerr("the update of a transform must be an object, not %s", jn__type_name(&update));
        /* jsonata-js fails setting a field of a string, number, boolean or
         * null (an array takes it unseen) */
        if (!err && jn__defined(&update) && json_object_object_length(update.j) > 0 &&
            !jn__is_object(match) && !jn__is_array(match))
            err = qerr("a transform cannot set fields of a %s", swf_json_type_name(match));
        if (!err && jn__defined(&update) && jn__is_object(match)) {
            json_object_object_foreach(update.j, key, v)
            {
                json_object *c;
                if ((err = json_copy(ctx, v, &c)))
                    break;
                json_object_object_add(match, key, c);
            }
        }
        if (!err && t->c != NULL && !(err = jn__eval(ctx, t->c, &m, cl->env, &del)) &&
            jn__defined(&del)) {
            items_t names = jn__is_func(&del) ? (items_t){NULL, NULL, 0} : jn__items_of(&del);
            for (size_t k = 0; k < names.n && !err; k++) {
                if (!jn__is_string(jn__item_at(&names, k)))
                    err = qerr("the deletions of a transform must be strings, not %s",
                               swf_json_type_name(jn__item_at(&names, k)));
            }
            if (jn__is_func(&del))
                err = qerr("the deletions of a transform must be strings, not %s",
                           jn__func_what(&del));
            for (size_t k = 0; k < names.n && !err && jn__is_object(match); k++)
                json_object_object_del(match, json_object_get_string(jn__item_at(&names, k)));
        }
        jn__val_free(&del);
        jn__val_free(&update);
        jn__val_free(&m);
    }
    jn__val_free(&found);
    if (err) {
        jn__val_free(&root);
        return err;
    }
    *out = root;
    return NULL;
}

/* Calls the function f with argv[0..argc) (borrowed). `input` is the
 * context value, which a built-in takes for a missing first argument. */
swf_error_t *jn__apply(ctx_t *ctx, const val_t *f, const val_t *argv, size_t argc,
                       const val_t *input, val_t *out)
{
    *out = UNDEF;
    if (!jn__is_callable(f))
        return qerr("%s is not a function", jn__type_name(f));
    if (ctx->calls >= SWF_LIMIT_JSONATA_CALL_DEPTH)
        return qerr("function calls are nested more than %d deep (a recursion that does not "
                    "end?)",
                    SWF_LIMIT_JSONATA_CALL_DEPTH);
    swf_error_t *err = NULL;
    ctx->calls++;
    if (jn__is_regex(f)) {
        err = regex_apply(ctx, f, argc > 0 ? &argv[0] : &UNDEF, out);
    } else if (f->bi != NULL) {
        const builtin_t *bi = f->bi;
        val_t av[8];
        size_t ac = 0;
        if (bi->context_arg && argc < bi->min)
            av[ac++] = *input;
        for (size_t i = 0; i < argc && ac < 8; i++)
            av[ac++] = argv[i];
        if (argc > bi->max)
            err = qerr("takes at most %d argument%s, not %zu", bi->max, bi->max == 1 ? "" : "s",
                       argc);
        else if (ac < bi->min)
            err = qerr("takes at least %d argument%s, not %zu", bi->min, bi->min == 1 ? "" : "s",
                       argc);
        if (!err) {
            ctx->error_in_lambda = false;
            call_t call = {ctx, bi, av, ac};
            err = bi->impl(&call, out);
            if (!err && jn__defined(out))
                err = jn__charge_bytes(ctx, jn__built_size(out->j));
        }
        /* $error and $assert say the user's message as it is */
        if (err && !ctx->error_in_lambda && strcmp(bi->name, "error") != 0 &&
            strcmp(bi->name, "assert") != 0)
            swf_error_prefix(err, "$%s", bi->name);
    } else if (f->cl->lambda != NULL) {
        const node_t *lambda = f->cl->lambda;
        frame_t *frame = jn__frame_new(f->cl->env);
        for (size_t i = 0; i < lambda->items.n; i++)
            jn__frame_set(frame, lambda->items.v[i]->name, i < argc ? &argv[i] : &UNDEF);
        /* not counted as built: freed on return unless a closure keeps it,
         * and capture() counts it then */
        err = jn__eval(ctx, lambda->a, &f->cl->input, frame, out);
        jn__frame_release(frame);
        if (err)
            ctx->error_in_lambda = true;
    } else if (f->cl->transform != NULL) {
        err = transform_apply(ctx, f->cl, argc > 0 ? &argv[0] : &UNDEF, out);
    } else if (f->cl->args != NULL) {
        /* a partial application: the arguments fill its holes in order */
        const closure_t *cl = f->cl;
        val_t *full = calloc(cl->nargs, sizeof *full);
        if (full == NULL)
            abort();
        for (size_t i = 0, k = 0; i < cl->nargs; i++)
            full[i] = !(cl->args[i].flags & V_HOLE) ? cl->args[i] : k < argc ? argv[k++] : UNDEF;
        err = jn__apply(ctx, &cl->first, full, cl->nargs, input, out);
        free(full);
    } else {
        val_t mid;
        err = jn__apply(ctx, &f->cl->first, argv, argc, input, &mid);
        if (!err)
            err = jn__apply(ctx, &f->cl->then, &mid, 1, input, out);
        jn__val_free(&mid);
    }
    ctx->calls--;
    if (err)
        jn__val_free(out);
    return err;
}

swf_error_t *jn__eval_call(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                           val_t *out)
{
    swf_error_t *err = NULL;
    val_t f = UNDEF;
    if (n->name != NULL) {
        const val_t *bound = jn__frame_lookup(env, n->name);
        json_object *j;
        if (bound != NULL)
            f = jn__val_copy(bound);
        else if (n->fn != NULL)
            f = jn__builtin_val(n->fn);
        else if (swf_json_get(ctx->bindings, n->name, &j))
            f = jn__val_ref(j);
        else
            return qerr("the function $%s is not defined", n->name);
        if (!jn__is_callable(&f))
            err = qerr("$%s is not a function but %s", n->name, jn__type_name(&f));
    } else if (!(err = jn__eval(ctx, n->a, input, env, &f)) && !jn__is_callable(&f)) {
        err = qerr("only functions can be called, not %s", jn__type_name(&f));
    }
    size_t argc = n->items.n;
    val_t *argv = calloc(argc ? argc : 1, sizeof *argv);
    if (argv == NULL)
        abort();
    size_t holes = 0;
    for (size_t i = 0; i < argc && !err; i++) {
        if (n->items.v[i]->kind == N_HOLE) {
            argv[i].flags = V_HOLE;
            holes++;
        } else {
            err = jn__eval(ctx, n->items.v[i], input, env, &argv[i]);
            /* $exists($x) of a variable never assigned is false on AWS
             * (recorded), where reading it anywhere else fails. */
            if (err && f.bi != NULL && strcmp(f.bi->name, "exists") == 0 &&
                n->items.v[i]->kind == N_VAR) {
                swf_error_free(err);
                err = NULL;
                argv[i] = UNDEF;
            }
        }
    }
    if (!err && holes > 0) {
        /* $f(?, x): a function of the holes, keeping f and the arguments */
        closure_t *c = closure_new(ctx);
        c->first = jn__val_copy(&f);
        c->args = argv;
        c->nargs = argc;
        c->holes = holes;
        argv = NULL;
        argc = 0;
        *out = (val_t){NULL, V_DEF | V_FUNC, NULL, NULL, c};
        err = jn__charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * c->nargs);
    } else if (!err) {
        err = jn__apply(ctx, &f, argv, argc, input, out);
    }
    for (size_t i = 0; i < argc; i++)
        jn__val_free(&argv[i]);
    free(argv);
    jn__val_free(&f);
    return err;
}

/* a ~> f: f(a); when a is a function too, the function f(a(x)). */
swf_error_t *jn__eval_chain(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                            val_t *out)
{
    val_t l = UNDEF, r = UNDEF;
    swf_error_t *err = jn__eval(ctx, n->a, input, env, &l);
    if (!err)
        err = jn__eval(ctx, n->b, input, env, &r);
    if (!err && !jn__is_callable(&r))
        err = qerr("the right side of ~> must be a function, not %s", jn__type_name(&r));
    if (!err && jn__is_callable(&l)) {
        closure_t *c = closure_new(ctx);
        c->first = jn__val_copy(&l);
        c->then = jn__val_copy(&r);
        *out = (val_t){NULL, V_DEF | V_FUNC, NULL, NULL, c};
    } else if (!err) {
        err = jn__apply(ctx, &r, &l, 1, input, out);
    }
    jn__val_free(&l);
    jn__val_free(&r);
    return err;
}
