/*
 * parser.c - the expression tree (node_t, internal.h) and the Pratt parser
 * that builds it with jsonata-js's binding powers: nud reads a token that
 * starts an expression, led one that continues it (path steps and filters,
 * order-by, group-by, @$focus and #$index bindings, calls and partial
 * application, ~> chains, conditions, bindings). Lambdas, transforms and
 * regular expressions (compiled here, once, by regex.c) are nodes like any
 * other. jn__parse is the whole front end: this parser, then resolve.c's two
 * passes, so that swf_asl_jsonata_check is exactly what every evaluation
 * parses first.
 */
#include "decider/asl/jsonata/internal.h"
#include "protocol/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void list_free(node_list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        jn__node_free(l->v[i]);
    free(l->v);
}

void jn__node_free(node_t *n)
{
    if (n == NULL)
        return;
    free(n->name);
    json_object_put(n->value);
    swf_asl_regex_free(n->re);
    jn__node_free(n->a);
    jn__node_free(n->b);
    jn__node_free(n->c);
    list_free(&n->items);
    list_free(&n->stages);
    list_free(&n->preds);
    jn__node_free(n->group);
    free(n->focus);
    free(n->index);
    free(n->ancestor);
    free(n);
}

static node_t *node_new(node_kind_t kind)
{
    node_t *n = calloc(1, sizeof *n);
    if (n == NULL)
        abort();
    n->kind = kind;
    return n;
}

static void list_add(node_list_t *l, node_t *n)
{
    SWF_ARRAY_RESERVE(l->v, l->n, l->cap, 4);
    l->v[l->n++] = n;
}

static bool regex_compile(parser_t *p, node_t *n, const char *src, const char *flags, size_t at)
{
    char err[160];
    n->re = swf_asl_regex_new(src, strlen(src), flags, err, sizeof err);
    if (n->re == NULL) {
        jn__perr(p, at, "regular expression /%s/: %s", src, err);
        return false;
    }
    return true;
}

/* Left binding powers, from jsonata-js. */
static int lbp(const token_t *t)
{
    if (t->kind != TK_OP)
        return 0;
    switch (t->op) {
    case OP_LBRACK:
    case OP_LPAREN:
    case OP_AT:
    case OP_HASH:
        return 80;
    case OP_DOT:
        return 75;
    case OP_LBRACE:
        return 70;
    case OP_STAR:
    case OP_SLASH:
    case OP_PERCENT:
        return 60;
    case OP_PLUS:
    case OP_MINUS:
    case OP_AMP:
        return 50;
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE:
    case OP_IN:
    case OP_CHAIN:
    case OP_CARET:
        return 40;
    case OP_AND:
        return 30;
    case OP_OR:
        return 25;
    case OP_QUESTION:
        return 20;
    case OP_BIND:
        return 10;
    default:
        return 0;
    }
}

static node_t *parse_expr(parser_t *p, int rbp);

static node_t *path_of(node_t *step)
{
    node_t *path = node_new(N_PATH);
    list_add(&path->items, step);
    return path;
}

/* The pairs of an object constructor or a group-by, after the '{'. */
static node_t *parse_pairs(parser_t *p)
{
    node_t *n = node_new(N_OBJECT);
    if (!jn__tok_is(p, OP_RBRACE)) {
        for (;;) {
            node_t *k = parse_expr(p, 0);
            if (k == NULL)
                goto fail;
            list_add(&n->items, k);
            if (!jn__expect(p, OP_COLON))
                goto fail;
            node_t *v = parse_expr(p, 0);
            if (v == NULL)
                goto fail;
            list_add(&n->items, v);
            if (!jn__tok_is(p, OP_COMMA))
                break;
            jn__advance(p);
        }
    }
    if (!jn__expect(p, OP_RBRACE))
        goto fail;
    return n;
fail:
    jn__node_free(n);
    return NULL;
}

/* Skips a function signature (<n-n:n>), the current token being its '<'.
 * Signatures are accepted and not checked: a function's arguments are
 * checked where they are used. */
static void skip_signature(parser_t *p)
{
    size_t at = p->tok.at, i = p->pos;
    int depth = 1;
    for (; i < p->len && depth > 0; i++) {
        if (p->src[i] == '<')
            depth++;
        else if (p->src[i] == '>')
            depth--;
    }
    if (depth > 0) {
        jn__perr(p, at, "unterminated function signature");
        return;
    }
    p->pos = i;
    p->prev_operand = true;
    jn__advance(p);
}

/* function($a, $b) { body }, after the word function (or λ). */
static node_t *parse_lambda(parser_t *p)
{
    node_t *n = node_new(N_LAMBDA);
    jn__advance(p); /* ( */
    while (!jn__tok_is(p, OP_RPAREN)) {
        if (p->tok.kind != TK_VAR || p->tok.text[0] == '\0' || strcmp(p->tok.text, "$") == 0) {
            char b[64];
            jn__perr(p, p->tok.at, "a function parameter must be a $name, not %s",
                     jn__tok_describe(&p->tok, b));
            goto fail;
        }
        for (size_t i = 0; i < n->items.n; i++) {
            if (strcmp(n->items.v[i]->name, p->tok.text) == 0) {
                jn__perr(p, p->tok.at, "the parameter $%s appears twice", p->tok.text);
                goto fail;
            }
        }
        node_t *v = node_new(N_VAR);
        v->name = p->tok.text;
        p->tok.text = NULL;
        list_add(&n->items, v);
        jn__advance(p);
        if (!jn__tok_is(p, OP_COMMA))
            break;
        jn__advance(p);
    }
    if (!jn__expect(p, OP_RPAREN))
        goto fail;
    if (jn__tok_is(p, OP_LT))
        skip_signature(p);
    if (!jn__expect(p, OP_LBRACE))
        goto fail;
    if ((n->a = parse_expr(p, 0)) == NULL || !jn__expect(p, OP_RBRACE))
        goto fail;
    return n;
fail:
    jn__node_free(n);
    return NULL;
}

static node_t *nud(parser_t *p, token_t *t)
{
    node_t *n = NULL;
    switch (t->kind) {
    case TK_END:
        jn__perr(p, t->at, "unexpected end of the expression");
        return NULL;
    case TK_NUM: {
        n = node_new(N_VALUE);
        swf_error_t *err = jn__number_new(t->num, &n->value);
        if (err) { /* the lexer has already reported it */
            swf_error_free(err);
            jn__perr(p, t->at, "number literal out of range");
            jn__node_free(n);
            return NULL;
        }
        return n;
    }
    case TK_STR:
        n = node_new(N_VALUE);
        n->value = json_object_new_string_len(t->text, (int)t->len);
        return n;
    case TK_TRUE:
    case TK_FALSE:
        n = node_new(N_VALUE);
        n->value = json_object_new_boolean(t->kind == TK_TRUE);
        return n;
    case TK_NULL:
        return node_new(N_VALUE);
    case TK_NAME:
        if ((strcmp(t->text, "function") == 0 || strcmp(t->text, "\u03bb") == 0) &&
            jn__tok_is(p, OP_LPAREN))
            return parse_lambda(p);
        n = node_new(N_NAME);
        n->name = t->text;
        t->text = NULL;
        return path_of(n);
    case TK_VAR:
        n = node_new(N_VAR);
        n->name = t->text;
        t->text = NULL;
        return n;
    case TK_REGEX:
        n = node_new(N_REGEX);
        if (!regex_compile(p, n, t->text, t->flags, t->at)) {
            jn__node_free(n);
            return NULL;
        }
        return n;
    case TK_OP:
        break;
    }
    switch (t->op) {
    case OP_AND:
    case OP_OR:
    case OP_IN:
        n = node_new(N_NAME);
        n->name = strdup(jn__op_text[t->op]);
        return path_of(n);
    case OP_MINUS: {
        node_t *a = parse_expr(p, 70);
        if (a == NULL)
            return NULL;
        if (a->kind == N_VALUE && jn__is_number(a->value) && a->preds.n == 0) {
            double d = -json_object_get_double(a->value);
            json_object_put(a->value);
            swf_error_free(jn__number_new(d, &a->value)); /* d is finite: cannot fail */
            return a;
        }
        n = node_new(N_NEG);
        n->a = a;
        return n;
    }
    case OP_STAR:
        return path_of(node_new(N_WILDCARD));
    case OP_PERCENT: /* the parent of the context item: resolve_parents finds its step */
        n = node_new(N_PARENT);
        n->level = 1;
        n->at = t->at;
        return n;
    case OP_DESCEND:
        return path_of(node_new(N_DESCEND));
    case OP_LPAREN:
        n = node_new(N_BLOCK);
        while (!jn__tok_is(p, OP_RPAREN)) {
            node_t *e = parse_expr(p, 0);
            if (e == NULL)
                goto fail;
            list_add(&n->items, e);
            if (!jn__tok_is(p, OP_SEMI))
                break;
            jn__advance(p);
        }
        if (!jn__expect(p, OP_RPAREN))
            goto fail;
        return n;
    case OP_LBRACK:
        n = node_new(N_ARRAY);
        if (!jn__tok_is(p, OP_RBRACK)) {
            for (;;) {
                node_t *e = parse_expr(p, 0);
                if (e == NULL)
                    goto fail;
                if (jn__tok_is(p, OP_RANGE)) {
                    jn__advance(p);
                    node_t *r = node_new(N_RANGE);
                    r->a = e;
                    r->b = parse_expr(p, 0);
                    e = r;
                    if (r->b == NULL) {
                        jn__node_free(r);
                        goto fail;
                    }
                }
                list_add(&n->items, e);
                if (!jn__tok_is(p, OP_COMMA))
                    break;
                jn__advance(p);
            }
        }
        if (!jn__expect(p, OP_RBRACK))
            goto fail;
        return n;
    case OP_LBRACE:
        return parse_pairs(p);
    case OP_PIPE:
        n = node_new(N_TRANSFORM);
        if ((n->a = parse_expr(p, 0)) == NULL || !jn__expect(p, OP_PIPE) ||
            (n->b = parse_expr(p, 0)) == NULL)
            goto fail;
        if (jn__tok_is(p, OP_COMMA)) {
            jn__advance(p);
            if ((n->c = parse_expr(p, 0)) == NULL)
                goto fail;
        }
        if (!jn__expect(p, OP_PIPE))
            goto fail;
        return n;
    default: {
        char b[64];
        jn__perr(p, t->at, "unexpected %s", jn__tok_describe(t, b));
        return NULL;
    }
    }
fail:
    jn__node_free(n);
    return NULL;
}

static node_t *led(parser_t *p, token_t *t, node_t *left)
{
    node_t *n = NULL, *r = NULL;
    if (left->group != NULL &&
        (t->op == OP_LBRACE ||
         (left->kind != N_PATH && (t->op == OP_LBRACK || t->op == OP_AT || t->op == OP_HASH)))) {
        /* as jsonata-js, a.b{...}[0] filters (or binds) the last step, b */
        jn__perr(p, t->at,
                 "a group-by (a{...}) can be followed by neither a filter, a binding nor "
                 "another group-by");
        goto fail;
    }
    if (left->group != NULL && left->kind != N_PATH && (t->op == OP_DOT || t->op == OP_CARET)) {
        /* $v{...}.b goes on from the grouped object, as ($v{...}).b; a
         * path's group-by (a.b{...}.c) groups the longer path, as in
         * jsonata-js */
        node_t *block = node_new(N_BLOCK);
        list_add(&block->items, left);
        left = block;
    }
    switch (t->op) {
    case OP_DOT: {
        r = parse_expr(p, 75);
        if (r == NULL)
            goto fail;
        if (r->kind == N_VALUE && jn__is_string(r->value) && r->preds.n == 0) {
            /* a."field name" is a name step */
            node_t *name = node_new(N_NAME);
            name->name = strdup(json_object_get_string(r->value));
            jn__node_free(r);
            r = path_of(name);
        } else if (r->kind == N_VALUE) {
            jn__perr(p, t->at, "a literal value cannot be a path step");
            goto fail;
        }
        const node_t *first = left->kind == N_PATH ? left->items.v[0] : left;
        if (first->kind == N_VALUE && !jn__is_string(first->value)) {
            jn__perr(p, t->at, "a literal value cannot be a path step");
            goto fail;
        }
        if (left->kind == N_VALUE && left->preds.n == 0) { /* "field name".b */
            node_t *name = node_new(N_NAME);
            name->name = strdup(json_object_get_string(left->value));
            jn__node_free(left);
            left = path_of(name);
        }
        n = left->kind == N_PATH ? left : path_of(left);
        left = NULL;
        if (r->kind == N_PATH) {
            for (size_t i = 0; i < r->items.n; i++)
                list_add(&n->items, r->items.v[i]);
            r->items.n = 0;
            n->keep_array |= r->keep_array;
            jn__node_free(r);
        } else {
            /* as jsonata-js: a later step's filters filter the step's whole
             * result (the whole stream, once the path is a tuple stream) */
            r->stages = r->preds;
            r->preds = (node_list_t){0};
            list_add(&n->items, r);
        }
        return n;
    }
    case OP_LBRACK:
        if (jn__tok_is(p, OP_RBRACK)) {
            jn__advance(p);
            n = left->kind == N_PATH ? left : path_of(left);
            n->keep_array = true;
            return n;
        }
        r = parse_expr(p, 0);
        if (r == NULL || !jn__expect(p, OP_RBRACK))
            goto fail;
        if (left->kind == N_PATH)
            list_add(&left->items.v[left->items.n - 1]->stages, r);
        else
            list_add(&left->preds, r);
        return left;
    case OP_LPAREN:
        n = node_new(N_CALL);
        n->at = t->at;
        if (left->kind == N_VAR && left->name[0] != '\0' && strcmp(left->name, "$") != 0 &&
            left->preds.n == 0) {
            /* $name(...): a built-in, unless a binding of that name hides it */
            n->name = left->name;
            left->name = NULL;
            jn__node_free(left);
            n->fn = jn__builtin_find(n->name);
        } else {
            n->a = left;
        }
        left = NULL;
        if (!jn__tok_is(p, OP_RPAREN)) {
            for (;;) {
                node_t *a;
                if (jn__tok_is(p, OP_QUESTION)) {
                    jn__advance(p);
                    a = node_new(N_HOLE);
                } else if ((a = parse_expr(p, 0)) == NULL) {
                    goto fail;
                }
                list_add(&n->items, a);
                if (!jn__tok_is(p, OP_COMMA))
                    break;
                jn__advance(p);
            }
        }
        if (!jn__expect(p, OP_RPAREN))
            goto fail;
        return n;
    case OP_QUESTION:
        n = node_new(N_COND);
        n->a = left;
        left = NULL;
        if ((n->b = parse_expr(p, 0)) == NULL)
            goto fail;
        if (jn__tok_is(p, OP_COLON)) {
            jn__advance(p);
            if ((n->c = parse_expr(p, 0)) == NULL)
                goto fail;
        }
        return n;
    case OP_BIND:
        if (left->kind != N_VAR || left->name[0] == '\0' || strcmp(left->name, "$") == 0 ||
            left->preds.n) {
            jn__perr(p, t->at, "the left side of := must be a variable");
            goto fail;
        }
        n = node_new(N_BIND);
        n->name = left->name;
        left->name = NULL;
        jn__node_free(left);
        left = NULL;
        if ((n->a = parse_expr(p, 9)) == NULL)
            goto fail;
        return n;
    case OP_CHAIN:
        r = parse_expr(p, 40);
        if (r == NULL)
            goto fail;
        if (r->kind == N_CALL && r->preds.n == 0 && r->group == NULL) {
            /* a ~> $f(b) is $f(a, b) */
            list_add(&r->items, NULL);
            memmove(r->items.v + 1, r->items.v, (r->items.n - 1) * sizeof *r->items.v);
            r->items.v[0] = left;
            r->chained = true;
            return r;
        }
        /* a ~> f, f a function value: f(a), or a composition when a is one */
        n = node_new(N_BINARY);
        n->op = OP_CHAIN;
        n->a = left;
        n->b = r;
        return n;
    case OP_CARET:
        if (!jn__expect(p, OP_LPAREN))
            goto fail;
        r = node_new(N_SORT);
        for (;;) {
            bool descending = false;
            if (jn__tok_is(p, OP_LT) || jn__tok_is(p, OP_GT)) {
                descending = jn__tok_is(p, OP_GT);
                jn__advance(p);
            }
            node_t *e = parse_expr(p, 0);
            if (e == NULL)
                goto fail;
            e->descending = descending;
            list_add(&r->items, e);
            if (!jn__tok_is(p, OP_COMMA))
                break;
            jn__advance(p);
        }
        if (!jn__expect(p, OP_RPAREN))
            goto fail;
        n = left->kind == N_PATH ? left : path_of(left);
        left = NULL;
        list_add(&n->items, r);
        return n;
    case OP_AT:
    case OP_HASH: {
        if (p->tok.kind != TK_VAR || p->tok.text[0] == '\0' || strcmp(p->tok.text, "$") == 0) {
            char b[64];
            jn__perr(p, p->tok.at, "expected a $name after '%s', found %s", jn__op_text[t->op],
                     jn__tok_describe(&p->tok, b));
            goto fail;
        }
        if (left->kind == N_ARRAY ||
            (left->kind == N_PATH && left->items.n == 1 && left->items.v[0]->kind == N_ARRAY)) {
            /* jsonata-js evaluates a path's leading [...] whole, binding nothing */
            jn__perr(p, t->at,
                     "'%s' after an array constructor that starts a path binds nothing: "
                     "put the array in parentheses",
                     jn__op_text[t->op]);
            goto fail;
        }
        if (left->kind != N_PATH) {
            /* the node becomes a step: its filters become the step's */
            n = path_of(left);
            left->stages = left->preds;
            left->preds = (node_list_t){0};
        } else {
            n = left;
        }
        left = NULL;
        node_t *step = n->items.v[n->items.n - 1];
        if (t->op == OP_AT && (step->stages.n || step->preds.n || step->kind == N_SORT)) {
            jn__perr(p, t->at,
                     "a context binding (@) must come before the step's filters and "
                     "order-by");
            goto fail;
        }
        if ((t->op == OP_AT && step->focus != NULL) || (t->op == OP_HASH && step->index != NULL)) {
            jn__perr(p, t->at, "a step can have one context (@) and one positional (#) binding");
            goto fail;
        }
        if (t->op == OP_AT) {
            step->focus = p->tok.text;
        } else {
            step->index = p->tok.text;
            step->index_at = step->stages.n;
        }
        p->tok.text = NULL;
        jn__advance(p);
        return n;
    }
    case OP_LBRACE:
        if ((r = parse_pairs(p)) == NULL)
            goto fail;
        left->group = r;
        return left;
    default:
        n = node_new(N_BINARY);
        n->op = t->op;
        n->a = left;
        left = NULL;
        if ((n->b = parse_expr(p, lbp(t))) == NULL)
            goto fail;
        return n;
    }
fail:
    jn__node_free(left);
    jn__node_free(n);
    jn__node_free(r);
    return NULL;
}

static node_t *parse_expr(parser_t *p, int rbp)
{
    if (++p->depth > SWF_LIMIT_JSONATA_DEPTH) {
        jn__perr(p, p->tok.at, "the expression is nested more than %d deep",
                 SWF_LIMIT_JSONATA_DEPTH);
        return NULL;
    }
    token_t t = p->tok;
    p->tok.text = NULL; /* t owns it now */
    jn__advance(p);
    node_t *left = nud(p, &t);
    free(t.text);
    while (left != NULL && !p->failed && rbp < lbp(&p->tok)) {
        t = p->tok;
        p->tok.text = NULL;
        jn__advance(p);
        left = led(p, &t, left);
        free(t.text);
    }
    p->depth--;
    if (p->failed) {
        jn__node_free(left);
        return NULL;
    }
    return left;
}

/* Parses a whole expression. NULL with err set on failure. */
node_t *jn__parse(const char *expr, char err[256])
{
    size_t len = strlen(expr);
    if (len > SWF_LIMIT_JSONATA_BYTES) {
        snprintf(err, 256, "the expression is %zu bytes, the limit is %d", len,
                 SWF_LIMIT_JSONATA_BYTES);
        return NULL;
    }
    parser_t p = {.src = expr, .len = len};
    jn__advance(&p);
    node_t *root = NULL;
    if (p.tok.kind == TK_END && !p.failed)
        jn__perr(&p, 0, "the expression is empty");
    else
        root = parse_expr(&p, 0);
    if (root != NULL && p.tok.kind != TK_END) {
        char b[64];
        jn__perr(&p, p.tok.at, "unexpected %s", jn__tok_describe(&p.tok, b));
        jn__node_free(root);
        root = NULL;
    }
    if (root != NULL) {
        slots_t top = {0};
        jn__resolve_parents(&p, root, &top, true);
        if (top.n > 0)
            jn__perr(&p, top.v[0]->at,
                     "the object representing the parent (%%) cannot be derived from this "
                     "expression");
        free(top.v);
        if (p.failed) {
            jn__node_free(root);
            root = NULL;
        }
    }
    if (root != NULL) {
        names_t bound = {0};
        jn__names_collect(root, &bound);
        jn__calls_check(&p, root, &bound);
        free(bound.v);
        if (p.failed) {
            jn__node_free(root);
            root = NULL;
        }
    }
    free(p.tok.text);
    if (root == NULL)
        snprintf(err, 256, "%s", p.err[0] ? p.err : "invalid expression");
    return root;
}
