/*
 * expr.c - event-expressions (SPEC 9.1): `A and (B or C)`.
 *
 * One recursive-descent evaluator serves both the validator (which asks,
 * through the callback, whether each operand is a defined trigger) and the
 * interpreter (which asks whether an event of the trigger was recorded).
 * It never short-circuits, so the validator sees every operand. Tokens are
 * separated by white space, "(" and ")" are tokens of their own, and `and`
 * and `or` are operators in any letter case; `and` binds tighter.
 */
#include "decider/sw/sw_internal.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

typedef struct lexer {
    const char *s;
    const char *tok;
    size_t len;
    swf_sw_operand_fn fn;
    void *ctx;
    const char *error;
    int depth;
} lexer_t;

static void next(lexer_t *lx)
{
    while (*lx->s && isspace((unsigned char)*lx->s))
        lx->s++;
    lx->tok = lx->s;
    if (*lx->s == '(' || *lx->s == ')') {
        lx->s++;
    } else {
        while (*lx->s && !isspace((unsigned char)*lx->s) && *lx->s != '(' && *lx->s != ')')
            lx->s++;
    }
    lx->len = (size_t)(lx->s - lx->tok);
}

static bool is_word(const lexer_t *lx, const char *w)
{
    return lx->len == strlen(w) && strncasecmp(lx->tok, w, lx->len) == 0;
}

static bool is_operand(const lexer_t *lx)
{
    return lx->len > 0 && *lx->tok != '(' && *lx->tok != ')' && !is_word(lx, "and") &&
           !is_word(lx, "or");
}

static bool parse_or(lexer_t *lx);

static bool parse_factor(lexer_t *lx)
{
    if (lx->error != NULL)
        return false;
    if (lx->len == 1 && *lx->tok == '(') {
        if (++lx->depth > 64) {
            lx->error = "nests parentheses deeper than 64";
            return false;
        }
        next(lx);
        bool v = parse_or(lx);
        if (lx->error == NULL && !(lx->len == 1 && *lx->tok == ')'))
            lx->error = "misses a closing parenthesis";
        lx->depth--;
        next(lx);
        return v;
    }
    if (!is_operand(lx)) {
        lx->error = lx->len == 0
                        ? "ends where a trigger name is expected"
                        : "has an operator or parenthesis where a trigger name is expected";
        return false;
    }
    bool v = lx->fn(lx->tok, lx->len, lx->ctx);
    next(lx);
    return v;
}

static bool parse_and(lexer_t *lx)
{
    bool v = parse_factor(lx);
    while (lx->error == NULL && is_word(lx, "and")) {
        next(lx);
        bool w = parse_factor(lx);
        v = v && w;
    }
    return v;
}

static bool parse_or(lexer_t *lx)
{
    bool v = parse_and(lx);
    while (lx->error == NULL && is_word(lx, "or")) {
        next(lx);
        bool w = parse_and(lx);
        v = v || w;
    }
    return v;
}

int swf_sw_expr_eval(const char *expr, swf_sw_operand_fn fn, void *ctx, const char **error)
{
    lexer_t lx = {.s = expr, .fn = fn, .ctx = ctx};
    next(&lx);
    bool v = parse_or(&lx);
    if (lx.error == NULL && lx.len > 0)
        lx.error = "has a token after a complete expression (operators are `and` and `or`)";
    if (error != NULL)
        *error = lx.error;
    return lx.error != NULL ? -1 : v ? 1 : 0;
}
