/*
 * resolve.c - the static passes jn__parse runs over a parsed tree before
 * anything is evaluated. The parent operator: which step's input item each %
 * stands for is settled here, as jsonata-js settles it, and that step then
 * binds its item in the tuple stream under a label only a % can name (a %
 * that no step can give is a syntax error). And the calls: every $name(...)
 * must be a built-in with an acceptable number of arguments or a name the
 * expression binds ($v := or a lambda parameter), so that $lenght(x) fails
 * validation, not an execution (workflow variables are JSON, never
 * functions).
 */
#include "decider/asl/jsonata/internal.h"
#include "protocol/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool names_has(const names_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i], name) == 0)
            return true;
    }
    return false;
}

void jn__names_add(names_t *l, const char *name)
{
    if (names_has(l, name))
        return;
    SWF_ARRAY_RESERVE(l->v, l->n, l->cap, 8);
    l->v[l->n++] = name;
}

void jn__names_collect(const node_t *n, names_t *l)
{
    if (n == NULL)
        return;
    if (n->kind == N_BIND)
        jn__names_add(l, n->name);
    for (size_t i = 0; n->kind == N_LAMBDA && i < n->items.n; i++)
        jn__names_add(l, n->items.v[i]->name);
    jn__names_collect(n->a, l);
    jn__names_collect(n->b, l);
    jn__names_collect(n->c, l);
    jn__names_collect(n->group, l);
    for (size_t i = 0; i < n->items.n; i++)
        jn__names_collect(n->items.v[i], l);
    for (size_t i = 0; i < n->stages.n; i++)
        jn__names_collect(n->stages.v[i], l);
    for (size_t i = 0; i < n->preds.n; i++)
        jn__names_collect(n->preds.v[i], l);
}

/* Checks each call of a built-in's name: a number of arguments it takes
 * (counted after ~> has added its left side). */
void jn__calls_check(parser_t *p, const node_t *n, const names_t *bound)
{
    if (n == NULL || p->failed)
        return;
    if (n->kind == N_CALL && n->name != NULL && !names_has(bound, n->name)) {
        /* A name that is no function is not a definition error: AWS fails
         * the state when it runs (States.QueryEvaluationError, recorded). */
        const builtin_t *fn = n->fn;
        if (fn != NULL && n->items.n > fn->max)
            jn__perr(p, n->at, "$%s takes at most %d argument%s, not %zu", fn->name, fn->max,
                     fn->max == 1 ? "" : "s", n->items.n);
        else if (fn != NULL && n->items.n + (fn->context_arg ? 1 : 0) < fn->min)
            jn__perr(p, n->at, "$%s takes at least %d argument%s, not %zu", fn->name, fn->min,
                     fn->min == 1 ? "" : "s", n->items.n);
    }
    jn__calls_check(p, n->a, bound);
    jn__calls_check(p, n->b, bound);
    jn__calls_check(p, n->c, bound);
    jn__calls_check(p, n->group, bound);
    for (size_t i = 0; i < n->items.n; i++)
        jn__calls_check(p, n->items.v[i], bound);
    for (size_t i = 0; i < n->stages.n; i++)
        jn__calls_check(p, n->stages.v[i], bound);
    for (size_t i = 0; i < n->preds.n; i++)
        jn__calls_check(p, n->preds.v[i], bound);
}

/* The parent operator. As in jsonata-js, which step's item a % stands for is
 * settled here, from the tree: a % in a path step (or in the step's filters,
 * order-by terms, constructors, operands, arguments, blocks) is the item
 * the previous step was applied to, %.% the one before, and so on; a step
 * that is a % adds one level, one that is a block or a path inside one is
 * searched from its end. The step found gets a label (char *ancestor, one
 * per step) that it binds, in the path's tuple stream, to its input item
 * for each item it gives; the % reads that variable. What jsonata-js does
 * not pass on, this does not either: a % in a lambda, a transform, a ~>, a
 * group-by's pairs, or in the first step of a path that is not itself a %,
 * is left without a label, and is undefined. A % that would reach above
 * the whole expression, or into a step that is neither a name, *, %, nor a
 * block, is an error (S0217 there). */

static void slots_add(slots_t *l, node_t *n)
{
    SWF_ARRAY_RESERVE(l->v, l->n, l->cap, 4);
    l->v[l->n++] = n;
}

static void slots_move(slots_t *to, slots_t *from)
{
    for (size_t i = 0; i < from->n; i++)
        slots_add(to, from->v[i]);
    free(from->v);
    *from = (slots_t){0};
}

/* Goes one step up from `step` for the % `slot`. */
static void seek_parent(parser_t *p, node_t *step, node_t *slot)
{
    if (p->failed)
        return;
    switch (step->kind) {
    case N_NAME:
    case N_WILDCARD:
        if (--slot->level == 0) {
            if (step->ancestor == NULL) {
                char label[32];
                snprintf(label, sizeof label, "%%%u", p->labels++); /* no $name is spelt so */
                step->ancestor = strdup(label);
            }
            free(slot->name);
            slot->name = strdup(step->ancestor);
        }
        break;
    case N_PARENT:
        slot->level++;
        break;
    case N_BLOCK:
        if (step->items.n > 0) {
            step->tuple = true;
            seek_parent(p, step->items.v[step->items.n - 1], slot);
        }
        break;
    case N_PATH: {
        step->tuple = true;
        size_t i = step->items.n;
        do
            seek_parent(p, step->items.v[--i], slot);
        while (slot->level > 0 && i > 0 && !p->failed);
        break;
    }
    default:
        jn__perr(p, slot->at,
                 "the object representing the parent (%%) cannot be derived from this "
                 "expression");
    }
}

/* Walks up the steps of `path` before step `from` for `slot`; a slot not
 * spent when they end is the path's to pass on (`pending`). */
static void seek_back(parser_t *p, node_t *path, size_t from, node_t *slot, slots_t *pending)
{
    size_t i = from;
    while (slot->level > 0 && !p->failed) {
        if (i == 0) {
            slots_add(pending, slot);
            return;
        }
        node_t *step = path->items.v[--i];
        /* as jsonata-js: consecutive @ steps count as their first */
        while (i > 0 && step->focus != NULL && path->items.v[i - 1]->focus != NULL)
            step = path->items.v[--i];
        seek_parent(p, step, slot);
    }
}

/* The filters of `n` (its preds, or as a step its stages): a % in one at
 * level 1 is n's own input; deeper ones go one level less far from n. A
 * filter that is a % alone ([%]) is left alone, as jsonata-js does. */
static void resolve_filters(parser_t *p, node_t *n, node_list_t *filters, slots_t *out)
{
    for (size_t i = 0; i < filters->n && !p->failed; i++) {
        slots_t f = {0};
        jn__resolve_parents(p, filters->v[i], &f, false);
        for (size_t k = 0; k < f.n && !p->failed; k++) {
            if (f.v[k]->level == 1)
                seek_parent(p, n, f.v[k]);
            else
                f.v[k]->level--;
        }
        slots_move(out, &f);
    }
}

static void resolve_path(parser_t *p, node_t *path, slots_t *pending)
{
    for (size_t s = 0; s < path->items.n && !p->failed; s++) {
        node_t *step = path->items.v[s];
        slots_t own = {0};
        jn__resolve_parents(p, step, &own, true);
        resolve_filters(p, step, &step->stages, &own);
        if (s == 0 && step->kind == N_PARENT)
            slots_add(pending, step);
        for (size_t k = 0; s > 0 && k < own.n; k++)
            seek_back(p, path, s, own.v[k], pending);
        free(own.v);
    }
}

/* Resolves the % inside n; those n passes outward (with n itself when it
 * is a % and `self`) are added to `out`. */
void jn__resolve_parents(parser_t *p, node_t *n, slots_t *out, bool self)
{
    if (n == NULL || p->failed)
        return;
    slots_t own = {0}, dropped = {0};
    bool pass = true;
    switch (n->kind) {
    case N_PATH:
        resolve_path(p, n, &own);
        break;
    case N_LAMBDA:
    case N_TRANSFORM:
        pass = false;
        break;
    case N_CALL:
        jn__resolve_parents(p, n->a, &dropped, true); /* the function called */
        pass = !n->chained;
        break;
    case N_BINARY:
        pass = n->op != OP_CHAIN;
        break;
    default:
        break;
    }
    if (n->kind != N_PATH) {
        slots_t *to = pass ? &own : &dropped;
        if (n->kind != N_CALL)
            jn__resolve_parents(p, n->a, to, true);
        jn__resolve_parents(p, n->b, to, true);
        jn__resolve_parents(p, n->c, to, true);
        for (size_t i = 0; i < n->items.n; i++)
            jn__resolve_parents(p, n->items.v[i], to, true);
    }
    jn__resolve_parents(p, n->group, &dropped, true);
    resolve_filters(p, n, &n->preds, &own);
    free(dropped.v);
    slots_move(out, &own);
    if (n->kind == N_PARENT && self)
        slots_add(out, n);
}
