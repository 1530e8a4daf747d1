/*
 * test_alloc.c - proves protocol/alloc.h: arrays grow by doubling from the
 * first capacity their owner picks and keep what they held, and a size that
 * would overflow aborts instead of wrapping into a short buffer.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "protocol/alloc.h"

Test(alloc_array, doubles_from_the_first_capacity_and_keeps_the_elements)
{
    int *items = NULL;
    size_t count = 0, cap = 0;
    size_t caps[40];
    for (int i = 0; i < 40; i++) {
        SWF_ARRAY_RESERVE(items, count, cap, 4);
        items[count++] = i * 3;
        caps[i] = cap;
    }
    cr_expect_eq(caps[0], 4);
    cr_expect_eq(caps[4], 8);
    cr_expect_eq(caps[8], 16);
    cr_expect_eq(caps[39], 64);
    for (int i = 0; i < 40; i++)
        cr_expect_eq(items[i], i * 3);
    free(items);
}

Test(alloc_array, a_capacity_that_cannot_double_aborts, .signal = SIGABRT)
{
    size_t cap = SIZE_MAX / 2 + 1;
    (void)swf_array_grow(NULL, &cap, 1, 8);
}

Test(alloc_array, a_byte_count_past_size_max_aborts, .signal = SIGABRT)
{
    size_t cap = SIZE_MAX / 16;
    (void)swf_array_grow(NULL, &cap, 16, 8);
}

Test(alloc_strdup, copies_a_string_and_passes_null_through)
{
    const char *s = "text";
    char *copy = swf_strdup(s);
    cr_expect_str_eq(copy, "text");
    cr_expect_neq(copy, s);
    free(copy);
    cr_expect_null(swf_strdup(NULL));
}
