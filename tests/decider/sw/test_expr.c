/*
 * test_expr.c - decider/sw/expr.c: event-expressions (SPEC 9.1).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "decider/sw/sw_internal.h"

/* Operands are true when their name is in the space-separated ctx list. */
static bool in_list(const char *name, size_t len, void *ctx)
{
    const char *s = ctx;
    while (*s) {
        const char *e = strchr(s, ' ');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == len && strncmp(s, name, len) == 0)
            return true;
        s += l + (e != NULL);
    }
    return false;
}

static int eval(const char *expr, const char *truths)
{
    return swf_sw_expr_eval(expr, in_list, (void *)truths, NULL);
}

Test(sw_expr, and_binds_tighter_than_or)
{
    cr_assert_eq(eval("A or B and C", "A"), 1);
    cr_assert_eq(eval("A or B and C", "B"), 0);
    cr_assert_eq(eval("(A or B) and C", "A"), 0);
    cr_assert_eq(eval("(A or B) and C", "B C"), 1);
}

Test(sw_expr, operators_are_words_in_any_letter_case)
{
    cr_assert_eq(eval("A AND B", "A B"), 1);
    cr_assert_eq(eval("A Or B", "B"), 1);
    cr_assert_eq(eval("(A)and(B)", "A B"), 1);
}

Test(sw_expr, malformed_expressions_say_why)
{
    const char *why = NULL;
    cr_assert_eq(swf_sw_expr_eval("A or (B", in_list, "", &why), -1);
    cr_assert_not_null(strstr(why, "closing parenthesis"), "%s", why);
    cr_assert_eq(swf_sw_expr_eval("A B", in_list, "", &why), -1);
    cr_assert_eq(swf_sw_expr_eval("A or", in_list, "", &why), -1);
    cr_assert_eq(swf_sw_expr_eval("", in_list, "", &why), -1);
}
