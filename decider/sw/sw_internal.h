/*
 * sw_internal.h - what the files of decider/sw/ share, and nothing outside
 * them includes. Ownership as in sw.h.
 */
#ifndef SWF_SW_INTERNAL_H
#define SWF_SW_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "decider/sw/sw.h"

/* Allocation never fails quietly (as protocol/alloc.h): out of memory
 * aborts, there being no way to report it. */
static inline void *swf_sw__alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        abort();
    return p;
}

static inline char *swf_sw__printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *swf_sw__printf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = swf_sw__alloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* True when v is an object with the member `key` (of any value). */
static inline bool swf_sw__has(json_object *v, const char *key)
{
    return json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, key, NULL);
}

/* Asked for each trigger name of an event-expression: its truth. */
typedef bool (*swf_sw_operand_fn)(const char *name, size_t len, void *ctx);

/* Evaluates an event-expression (SPEC 9.1) with fn giving each operand's
 * truth (every operand is asked, there is no short circuit). Returns 1 or
 * 0, or -1 when the expression does not parse; then *error (when error is
 * not NULL) says why in words that follow "the expression". */
int swf_sw_expr_eval(const char *expr, swf_sw_operand_fn fn, void *ctx, const char **error);

/* True for EQ, LT, LTEQ, GT, GTEQ (the operators that compare numbers). */
bool swf_sw_operator_numeric(const char *op);

#endif
