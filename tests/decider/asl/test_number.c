/*
 * test_number.c - proves decider/asl/number.c: numbers written as
 * JavaScript's Number.prototype.toString writes them, and rounded half to
 * even on their decimal text as JSONata's $round does. Both are also
 * proved through JSONata ($string, $round, $formatNumber) in
 * test_jsonata.c and test_picture.c; these pin the two functions alone.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "decider/asl/number.h"

static void expect_text(double d, const char *text)
{
    char out[48];
    swf_asl_number_format(d, out);
    cr_assert_str_eq(out, text, "%.17g", d);
}

Test(number_format, writes_the_shortest_digits_that_read_back)
{
    expect_text(0.1, "0.1");
    expect_text(0.1 + 0.2, "0.30000000000000004");
    expect_text(1.0 / 3, "0.3333333333333333");
    expect_text(-2.5, "-2.5");
    expect_text(0, "0");
    expect_text(-0.0, "0");
}

Test(number_format, is_positional_from_1e_minus_7_to_1e21_and_exponential_beyond)
{
    expect_text(123456789012345680000.0, "123456789012345680000");
    expect_text(1e21, "1e+21");
    expect_text(0.000001, "0.000001");
    expect_text(0.0000001, "1e-7");
    expect_text(1.5e-10, "1.5e-10");
    expect_text(-1.7976931348623157e308, "-1.7976931348623157e+308");
}

Test(number_round, rounds_half_to_even_on_the_decimal_text)
{
    cr_assert_eq(swf_asl_number_round(2.675, 2), 2.68); /* the double is below 2.675 */
    cr_assert_eq(swf_asl_number_round(0.5, 0), 0);
    cr_assert_eq(swf_asl_number_round(1.5, 0), 2);
    cr_assert_eq(swf_asl_number_round(2.5, 0), 2);
    cr_assert_eq(swf_asl_number_round(-3.5, 0), -4);
    cr_assert_eq(swf_asl_number_round(1250, -2), 1200);
    cr_assert_eq(swf_asl_number_round(1350, -2), 1400);
    cr_assert_eq(swf_asl_number_round(1.23456, 3), 1.235);
}

Test(number_round, never_gives_negative_zero)
{
    double r = swf_asl_number_round(-0.4, 0);
    cr_assert_eq(r, 0);
    cr_assert_not(signbit(r));
}
