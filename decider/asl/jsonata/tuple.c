/*
 * tuple.c - tuple streams and group-by. From its first step@$v, step#$i or
 * %-labelled step on, a path's items travel as tuples with the variables
 * bound so far, so that later steps, filters, order-by keys and a group-by's
 * pairs see them; a step's #$i numbers the stream where it was written.
 * Group-by (a{key: value}) groups the path's items or tuples by key and
 * evaluates each value over its group, in jsonata-js's key order
 * (JavaScript's: array indexes first) and with its quirks, which the
 * folder's README lists.
 */
#include "decider/asl/jsonata/internal.h"
#include "protocol/alloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void jn__tuples_add(tuples_t *ts, tuple_t t)
{
    SWF_ARRAY_RESERVE(ts->v, ts->n, ts->cap, 8);
    ts->v[ts->n++] = t;
}

void jn__tuples_free(tuples_t *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        jn__val_free(&ts->v[i].item);
        if (ts->v[i].vars != NULL) /* NULL: moved to another stream */
            jn__frame_free(ts->v[i].vars);
    }
    free(ts->v);
    *ts = (tuples_t){0};
}

/* Binds the variables of `vars` (distinct names) in f, which has none yet:
 * one pass, where frame_set would search f for each. */
static void frame_set_all(frame_t *f, const frame_t *vars)
{
    if (vars->n == 0)
        return;
    f->b = malloc(vars->n * sizeof *f->b);
    if (f->b == NULL)
        abort();
    for (size_t i = 0; i < vars->n; i++)
        f->b[i] = (binding_t){vars->b[i].name, jn__val_copy(&vars->b[i].v)};
    f->n = f->cap = vars->n;
}

/* A copy of t; its variables are counted as work by the callers (a tuple
 * carries one per @, # and % step so far). */
static tuple_t tuple_copy(const tuple_t *t)
{
    tuple_t c = {jn__val_copy(&t->item), jn__frame_new(NULL)};
    frame_set_all(c.vars, t->vars);
    return c;
}

/* Moves tuple i of ts (left empty, freed with ts) to the end of `to`. */
void jn__tuple_move(tuples_t *to, tuples_t *ts, size_t i)
{
    jn__tuples_add(to, ts->v[i]);
    ts->v[i] = (tuple_t){UNDEF, NULL};
}

/* A frame over env with the tuple's variables; frame_release it after. */
frame_t *jn__tuple_env(frame_t *env, const tuple_t *t)
{
    frame_t *f = jn__frame_new(env);
    frame_set_all(f, t->vars);
    return f;
}

/* The work of copying a tuple or making its frame. */
swf_error_t *jn__tuple_charge(ctx_t *ctx, const tuple_t *t)
{
    return jn__charge(ctx, 1 + t->vars->n);
}

/* Binds each tuple's position in the stream to `name`. */
static void tuples_number(tuples_t *ts, const char *name)
{
    for (size_t i = 0; i < ts->n; i++) {
        val_t pos = jn__index_val(i);
        jn__frame_set(ts->v[i].vars, name, &pos);
        jn__val_free(&pos);
    }
}

swf_error_t *jn__tuples_filter(ctx_t *ctx, const node_t *pred, frame_t *env, tuples_t *ts)
{
    tuples_t kept = {0};
    swf_error_t *err = NULL;
    for (size_t i = 0; i < ts->n && !err; i++) {
        if ((err = jn__tuple_charge(ctx, &ts->v[i])))
            break;
        frame_t *f = jn__tuple_env(env, &ts->v[i]);
        val_t r = UNDEF;
        err = jn__eval(ctx, pred, &ts->v[i].item, f, &r);
        jn__frame_release(f);
        if (!err && jn__filter_keeps(&r, i, ts->n))
            jn__tuple_move(&kept, ts, i);
        jn__val_free(&r);
    }
    jn__tuples_free(ts);
    *ts = kept;
    if (err)
        jn__tuples_free(ts);
    return err;
}

/* The step's filters, with #$i numbering the stream where it was written
 * among them (before the first: numbered by the step itself). */
swf_error_t *jn__tuples_stages(ctx_t *ctx, const node_t *step, frame_t *env, tuples_t *ts)
{
    swf_error_t *err = NULL;
    for (size_t i = 0; i <= step->stages.n && !err; i++) {
        if (step->index != NULL && step->index_at == i && (i > 0 || step->kind == N_SORT))
            tuples_number(ts, step->index);
        if (i < step->stages.n)
            err = jn__tuples_filter(ctx, step->stages.v[i], env, ts);
    }
    return err;
}

/* Whether a path step makes the path a tuple stream from it on: it binds a
 * variable (@, #, or its input item for a later %), or a % reaches into it. */
bool jn__tuple_step(const node_t *step)
{
    return step->focus != NULL || step->index != NULL || step->ancestor != NULL ||
           (step->kind == N_BLOCK && step->tuple);
}

/* One step over a tuple stream: each result item makes a tuple (the item
 * becomes the context, or with @$v is bound to $v and the context stays;
 * #$i binds its position, and a step a later % refers to binds its input
 * item to the %'s label). A block a % reaches into gives tuples itself: they
 * join the tuple they came from. */
static swf_error_t *tuples_step(ctx_t *ctx, const node_t *step, frame_t *env, tuples_t *ts)
{
    tuples_t next = {0};
    bool into = step->kind == N_BLOCK && step->tuple;
    swf_error_t *err = NULL;
    for (size_t i = 0; i < ts->n && !err; i++) {
        if ((err = jn__tuple_charge(ctx, &ts->v[i])))
            break;
        frame_t *f = jn__tuple_env(env, &ts->v[i]);
        val_t r = UNDEF;
        tuples_t inner = {0};
        bool streamed = false;
        if (into)
            err = jn__eval_into_tuples(ctx, step, &ts->v[i].item, f, &r, &inner, &streamed);
        else
            err = jn__eval(ctx, step, &ts->v[i].item, f, &r);
        jn__frame_release(f);
        if (!err && jn__is_func(&r))
            err = qerr("%s cannot be a path step", jn__func_what(&r));
        items_t it = jn__items_of(&r);
        size_t n = streamed ? inner.n : it.n;
        if (!err)
            err = jn__charge(ctx, n * (1 + ts->v[i].vars->n));
        if (!err)
            err = jn__charge_bytes(ctx, (VALUE_BYTES + SLOT_BYTES * (1 + ts->v[i].vars->n)) * n);
        for (size_t k = 0; k < n && !err; k++) {
            tuple_t t = tuple_copy(&ts->v[i]);
            if (streamed) {
                const tuple_t *u = &inner.v[k];
                if ((err = jn__charge(ctx, u->vars->n * (1 + t.vars->n)))) {
                    jn__val_free(&t.item);
                    jn__frame_free(t.vars);
                    break;
                }
                for (size_t b = 0; b < u->vars->n; b++)
                    jn__frame_set(t.vars, u->vars->b[b].name, &u->vars->b[b].v);
                jn__val_free(&t.item);
                t.item = jn__val_copy(&u->item);
                jn__tuples_add(&next, t);
                continue;
            }
            val_t x = jn__val_ref(jn__item_at(&it, k));
            if (step->focus != NULL) {
                jn__frame_set(t.vars, step->focus, &x);
            } else {
                jn__val_free(&t.item);
                t.item = jn__val_copy(&x);
            }
            if (step->index != NULL && step->index_at == 0) {
                val_t pos = jn__index_val(k);
                jn__frame_set(t.vars, step->index, &pos);
                jn__val_free(&pos);
            }
            if (step->ancestor != NULL)
                jn__frame_set(t.vars, step->ancestor, &ts->v[i].item);
            jn__val_free(&x);
            jn__tuples_add(&next, t);
        }
        jn__tuples_free(&inner);
        jn__val_free(&r);
    }
    jn__tuples_free(ts);
    *ts = next;
    if (!err)
        err = jn__tuples_stages(ctx, step, env, ts);
    return err;
}

/* The items of the sequence `in` as tuples without variables. */
tuples_t jn__tuples_of(json_object *in)
{
    tuples_t ts = {0};
    for (size_t i = 0; i < json_object_array_length(in); i++)
        jn__tuples_add(
            &ts, (tuple_t){jn__val_ref(json_object_array_get_idx(in, i)), jn__frame_new(NULL)});
    return ts;
}

/* The sequence of the tuples' items. */
val_t jn__tuples_items(const tuples_t *ts)
{
    json_object *seq = json_object_new_array_ext((int)ts->n);
    for (size_t i = 0; i < ts->n; i++) {
        if (jn__defined(&ts->v[i].item))
            json_object_array_add(seq, swf_json_ref(ts->v[i].item.j));
    }
    return (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
}

/* Steps first.. of path n over the tuple stream *ts, in place. */
swf_error_t *jn__tuples_run(ctx_t *ctx, const node_t *n, size_t first, tuples_t *ts, frame_t *env)
{
    swf_error_t *err = NULL;
    for (size_t s = first; s < n->items.n && !err && ts->n > 0; s++) {
        const node_t *step = n->items.v[s];
        if (step->kind == N_SORT) {
            err = jn__tuples_sort(ctx, step, env, ts);
            if (!err)
                err = jn__tuples_stages(ctx, step, env, ts);
        } else {
            err = tuples_step(ctx, step, env, ts);
        }
    }
    return err;
}

/* Whether `s` is a JavaScript array index ("0", "17": canonical digits below
 * 2^32 - 1). Such keys come first in an object, ascending, then the others
 * in the order made: jsonata-js builds the grouped object, and evaluates its
 * values, in that order. */
static bool js_array_index(const char *s, uint32_t *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v >= 4294967295u)
        return false;
    *out = (uint32_t)v;
    return true;
}

static int group_js_order(const void *pa, const void *pb)
{
    const group_t *a = pa, *b = pb;
    if (a->is_index != b->is_index)
        return a->is_index ? -1 : 1;
    if (a->is_index && a->array_index != b->array_index)
        return a->array_index < b->array_index ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* The values of one variable (or the items) of a group's members as JSONata
 * appends them: one defined value is itself; more make an array of them,
 * arrays flattened (as $append). The array is a sequence (V_SEQ) when
 * `seq`. */
static val_t group_reduce(const val_t *const *vals, size_t n, bool seq)
{
    size_t count = 0, last = 0;
    for (size_t i = 0; i < n; i++) {
        if (jn__defined(vals[i])) {
            count++;
            last = i;
        }
    }
    if (count == 0)
        return UNDEF;
    if (count == 1)
        return jn__val_copy(vals[last]);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        if (jn__defined(vals[i]))
            jn__seq_add_flat(arr, vals[i]->j);
    }
    return (val_t){arr, V_DEF | (seq ? V_SEQ : 0), NULL, NULL, NULL};
}

/* The context and variables of a group of tuples: each variable's values
 * across the members reduced (group_reduce) into a frame over env. A member
 * alone gives its item away: jsonata-js deletes it from the tuple, so a later
 * group holding that tuple no longer sees it (`gone`). */
static swf_error_t *group_tuples_env(ctx_t *ctx, const tuples_t *ts, const group_t *g, bool *gone,
                                     frame_t *env, val_t *context, frame_t **f)
{
    *f = jn__frame_new(env);
    const val_t **vals = calloc(g->n, sizeof *vals);
    if (vals == NULL)
        abort();
    for (size_t m = 0; m < g->n; m++)
        vals[m] = gone[g->members[m]] ? &UNDEF : &ts->v[g->members[m]].item;
    *context = group_reduce(vals, g->n, true);
    if (g->n == 1)
        gone[g->members[0]] = true;
    /* the variables' names: the tuples of a stream bind the same, in the
     * same order (names borrowed from the tree: equal pointers), but for a
     * block a % reached into */
    names_t names = {0};
    const frame_t *first = ts->v[g->members[0]].vars;
    bool *aligned = calloc(g->n, sizeof *aligned);
    if (aligned == NULL)
        abort();
    size_t work = g->n;
    names.v = malloc((first->n + 1) * sizeof *names.v);
    if (names.v == NULL)
        abort();
    for (size_t b = 0; b < first->n; b++) /* distinct: a frame binds a name once */
        names.v[names.n++] = first->b[b].name;
    names.cap = first->n + 1;
    for (size_t m = 0; m < g->n; m++) {
        const frame_t *vars = ts->v[g->members[m]].vars;
        aligned[m] = vars->n == first->n;
        for (size_t b = 0; b < vars->n && aligned[m]; b++)
            aligned[m] = vars->b[b].name == first->b[b].name;
        for (size_t b = 0; b < vars->n && !aligned[m]; b++)
            jn__names_add(&names, vars->b[b].name);
        work += aligned[m] ? first->n : vars->n * (names.n + 1);
    }
    swf_error_t *err = jn__charge(ctx, work);
    size_t built = g->n > 1 ? SLOT_BYTES * g->n : 0;
    for (size_t k = 0; k < names.n && !err; k++) {
        for (size_t m = 0; m < g->n; m++) {
            const frame_t *vars = ts->v[g->members[m]].vars;
            const val_t *x = aligned[m] && k < first->n ? &vars->b[k].v
                             : aligned[m]               ? NULL
                                          : jn__frame_lookup((frame_t *)vars, names.v[k]);
            vals[m] = x != NULL ? x : &UNDEF;
        }
        val_t r = group_reduce(vals, g->n, false);
        /* names distinct: no frame_set search */
        SWF_ARRAY_RESERVE((*f)->b, (*f)->n, (*f)->cap, names.n);
        (*f)->b[(*f)->n++] = (binding_t){names.v[k], r};
        built += g->n > 1 ? VALUE_BYTES + SLOT_BYTES * g->n : 0;
    }
    free(aligned);
    free(names.v);
    free(vals);
    return err ? err : jn__charge_bytes(ctx, built);
}

/* v{k: e, ...}: the items of v (or, after @, # or % bindings, the tuples
 * ts with their variables) grouped by the key each k gives them, and each
 * group's value e evaluated with the group's items (one item alone, else the
 * sequence of them) as the context, and for tuples the group's variables
 * (each the values of its members, appended). Two key expressions giving
 * the same key is an error, as in JSONata. The object replaces *v. */
swf_error_t *jn__eval_group(ctx_t *ctx, const node_t *pairs, frame_t *env, const tuples_t *ts,
                            val_t *v)
{
    if (ts == NULL && jn__is_func(v))
        return qerr("%s cannot be grouped", jn__func_what(v));
    if (ts != NULL && ts->n == 0) /* jsonata-js fails too, reading a tuple that is not there */
        return qerr("a group-by after @, # or %% bindings has no items to group");
    items_t it = ts ? (items_t){NULL, NULL, 0} : jn__items_of(v);
    size_t nitems = ts ? ts->n : it.n ? it.n : 1; /* no items: the keys see one undefined */
    json_object *index = json_object_new_object(), *obj = json_object_new_object();
    group_t *groups = NULL;
    bool *gone = calloc(nitems, sizeof *gone);
    if (gone == NULL)
        abort();
    size_t ngroups = 0, cap = 0;
    swf_error_t *err = jn__charge(ctx, nitems);
    for (size_t i = 0; i < nitems && !err; i++) {
        if (ts && (err = jn__tuple_charge(ctx, &ts->v[i])))
            break;
        val_t item = ts     ? jn__val_copy(&ts->v[i].item)
                     : it.n ? jn__val_ref(jn__item_at(&it, i))
                            : UNDEF;
        frame_t *f = ts ? jn__tuple_env(env, &ts->v[i]) : env;
        for (size_t k = 0; k + 1 < pairs->items.n && !err; k += 2) {
            val_t key = UNDEF;
            if ((err = jn__eval(ctx, pairs->items.v[k], &item, f, &key)))
                break;
            if (jn__defined(&key) && (jn__is_func(&key) || !jn__is_string(key.j))) {
                err = qerr("a group-by key must be a string, not %s", jn__type_name(&key));
            } else if (jn__defined(&key)) {
                const char *name = json_object_get_string(key.j);
                json_object *at;
                group_t *g;
                if (json_object_object_get_ex(index, name, &at)) {
                    g = &groups[json_object_get_int64(at)];
                    if (g->pair != k / 2)
                        err = qerr("the key \"%s\" comes twice, from two key expressions", name);
                } else {
                    SWF_ARRAY_RESERVE(groups, ngroups, cap, 8);
                    g = &groups[ngroups];
                    *g = (group_t){.pair = k / 2, .order = ngroups};
                    json_object_object_add(index, name, json_object_new_int64((int64_t)ngroups));
                    ngroups++;
                }
                if (!err) {
                    SWF_ARRAY_RESERVE(g->members, g->n, g->cap, 4);
                    g->members[g->n++] = i;
                    err = jn__charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES);
                }
            }
            jn__val_free(&key);
        }
        if (ts)
            jn__frame_release(f);
        jn__val_free(&item);
    }
    json_object_object_foreach(index, name, at)
    {
        group_t *g = &groups[json_object_get_int64(at)];
        g->key = name;
        g->is_index = js_array_index(name, &g->array_index);
    }
    if (ngroups > 1)
        qsort(groups, ngroups, sizeof *groups, group_js_order);
    for (size_t gi = 0; gi < ngroups && !err; gi++) {
        group_t *g = &groups[gi];
        val_t context = UNDEF;
        frame_t *f = env;
        if (ts) {
            err = group_tuples_env(ctx, ts, g, gone, env, &context, &f);
        } else {
            const val_t **vals = calloc(g->n, sizeof *vals);
            val_t *items = calloc(g->n, sizeof *items);
            if (vals == NULL || items == NULL)
                abort();
            for (size_t m = 0; m < g->n; m++) {
                items[m] = it.n ? jn__val_ref(jn__item_at(&it, g->members[m])) : UNDEF;
                vals[m] = &items[m];
            }
            context = group_reduce(vals, g->n, true);
            for (size_t m = 0; m < g->n; m++)
                jn__val_free(&items[m]);
            free(items);
            free(vals);
            if (context.flags & V_SEQ)
                err = jn__charge_bytes(ctx, SLOT_BYTES * g->n);
        }
        val_t value = UNDEF;
        if (!err)
            err = jn__eval(ctx, pairs->items.v[2 * g->pair + 1], &context, f, &value);
        if (!err && jn__is_func(&value))
            err = qerr("%s cannot be the value of \"%s\"", jn__func_what(&value), g->key);
        else if (!err && jn__defined(&value))
            json_object_object_add(obj, g->key, swf_json_ref(value.j));
        jn__val_free(&value);
        jn__val_free(&context);
        if (f != env)
            jn__frame_release(f);
    }
    for (size_t i = 0; i < ngroups; i++)
        free(groups[i].members);
    free(groups);
    free(gone);
    json_object_put(index);
    if (err) {
        json_object_put(obj);
        return err;
    }
    jn__val_free(v);
    *v = jn__val_take(obj);
    return jn__charge_bytes(ctx, jn__built_size(obj));
}
