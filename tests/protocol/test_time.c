/*
 * test_time.c - proves protocol/time.c: strict RFC 3339 as ASL uses it.
 *
 * The parser decides which strings the Choice Timestamp operators and
 * IsTimestamp accept, so its refusals matter as much as its results: a date
 * alone, a missing zone, a lowercase separator and impossible dates are all
 * "not a timestamp".
 */
#include <criterion/criterion.h>
#include <string.h>

#include "protocol/time.h"

static swf_time_t parse_ok(const char *s)
{
    swf_time_t t = {0, 0};
    cr_assert(swf_time_parse(s, &t), "%s should parse", s);
    return t;
}

static bool parses(const char *s)
{
    swf_time_t t = {42, 42};
    bool ok = swf_time_parse(s, &t);
    if (!ok)
        cr_expect(t.sec == 42 && t.nsec == 42, "%s: a refused string must leave *out alone", s);
    return ok;
}

Test(time_parse, utc_with_z)
{
    swf_time_t t = parse_ok("1970-01-01T00:00:00Z");
    cr_expect_eq(t.sec, 0);
    cr_expect_eq(t.nsec, 0);
    t = parse_ok("2016-03-14T01:59:00Z");
    cr_expect_eq(t.sec, 1457920740);
    t = parse_ok("2000-02-29T12:00:00Z");
    cr_expect_eq(t.sec, 951825600);
    t = parse_ok("1969-12-31T23:59:59Z");
    cr_expect_eq(t.sec, -1);
}

Test(time_parse, offsets_move_the_instant)
{
    swf_time_t z = parse_ok("2016-03-14T01:59:00Z");
    swf_time_t plus = parse_ok("2016-03-14T02:59:00+01:00");
    swf_time_t minus = parse_ok("2016-03-13T20:29:00-05:30");
    swf_time_t zero = parse_ok("2016-03-14T01:59:00+00:00");
    cr_expect_eq(plus.sec, z.sec);
    cr_expect_eq(minus.sec, z.sec);
    cr_expect_eq(zero.sec, z.sec);
    /* Across a day boundary. */
    cr_expect_eq(parse_ok("2016-03-15T00:00:00+23:59").sec, parse_ok("2016-03-14T00:01:00Z").sec);
}

Test(time_parse, fractions_of_any_length)
{
    cr_expect_eq(parse_ok("2016-03-14T01:59:00.5Z").nsec, 500000000);
    cr_expect_eq(parse_ok("2016-03-14T01:59:00.123Z").nsec, 123000000);
    cr_expect_eq(parse_ok("2016-03-14T01:59:00.000000001Z").nsec, 1);
    cr_expect_eq(parse_ok("2016-03-14T01:59:00.123456789Z").nsec, 123456789);
    /* Digits beyond nanoseconds are accepted and dropped. */
    cr_expect_eq(parse_ok("2016-03-14T01:59:00.1234567891234Z").nsec, 123456789);
    cr_expect_eq(parse_ok("2016-03-14T01:59:00.250+02:00").nsec, 250000000);
    cr_expect_not(parses("2016-03-14T01:59:00.Z"));
    cr_expect_not(parses("2016-03-14T01:59:00,5Z"));
}

Test(time_parse, date_only_is_refused)
{
    cr_expect_not(parses("2016-03-14"));
    cr_expect_not(parses("2016-03-14Z"));
    cr_expect_not(parses("2016-03-14T"));
}

Test(time_parse, missing_zone_is_refused)
{
    cr_expect_not(parses("2016-03-14T01:59:00"));
    cr_expect_not(parses("2016-03-14T01:59:00.123"));
    cr_expect_not(parses("2016-03-14T01:59:00+01"));
    cr_expect_not(parses("2016-03-14T01:59:00+0100"));
}

Test(time_parse, lowercase_separators_are_refused)
{
    cr_expect_not(parses("2016-03-14t01:59:00Z"));
    cr_expect_not(parses("2016-03-14T01:59:00z"));
    cr_expect_not(parses("2016-03-14 01:59:00Z"));
}

Test(time_parse, impossible_dates_and_times_are_refused)
{
    cr_expect_not(parses("2016-02-30T00:00:00Z"));
    cr_expect_not(parses("2015-02-29T00:00:00Z"));
    cr_expect_not(parses("1900-02-29T00:00:00Z"));
    cr_expect(parses("2000-02-29T00:00:00Z"));
    cr_expect(parses("2016-02-29T00:00:00Z"));
    cr_expect_not(parses("2016-04-31T00:00:00Z"));
    cr_expect(parses("2016-12-31T23:59:59Z"));
    cr_expect_not(parses("2016-13-01T00:00:00Z"));
    cr_expect_not(parses("2016-00-01T00:00:00Z"));
    cr_expect_not(parses("2016-01-00T00:00:00Z"));
    cr_expect_not(parses("2016-01-01T24:00:00Z"));
    cr_expect_not(parses("2016-01-01T00:60:00Z"));
    cr_expect_not(parses("2016-01-01T00:00:61Z"));
    cr_expect_not(parses("2016-01-01T00:00:00+24:00"));
    cr_expect_not(parses("2016-01-01T00:00:00+01:60"));
}

Test(time_parse, malformed_strings_are_refused)
{
    const char *bad[] = {"",
                         "x",
                         "2016-3-14T01:59:00Z",
                         "16-03-14T01:59:00Z",
                         "2016-03-14T1:59:00Z",
                         "2016/03/14T01:59:00Z",
                         "2016-03-14T01:59Z",
                         "2016-03-14T01:59:00Z ",
                         " 2016-03-14T01:59:00Z",
                         "2016-03-14T01:59:00ZZ",
                         "2016-03-14T01:59:00+01:00x",
                         "2016-03-14T01:59:00+01:0",
                         "+2016-03-14T01:59:00Z",
                         "2016-03-14T01:59:00.12a3Z",
                         "yesterday at noon, in UTC"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_not(parses(bad[i]), "%s", bad[i]);
    swf_time_t t = {42, 42};
    cr_expect_not(swf_time_parse(NULL, &t));
}

Test(time_parse, a_leap_second_is_the_last_second_of_its_minute)
{
    swf_time_t leap = parse_ok("2016-12-31T23:59:60Z");
    swf_time_t last = parse_ok("2016-12-31T23:59:59Z");
    cr_expect_eq(leap.sec, last.sec);
}

Test(time_cmp, orders_by_seconds_then_nanoseconds)
{
    swf_time_t a = parse_ok("2016-03-14T01:59:00Z");
    swf_time_t b = parse_ok("2016-03-14T01:59:00.000000001Z");
    swf_time_t c = parse_ok("2016-03-14T01:59:01Z");
    swf_time_t a2 = parse_ok("2016-03-14T03:59:00+02:00");
    cr_expect_eq(swf_time_cmp(a, b), -1);
    cr_expect_eq(swf_time_cmp(b, a), 1);
    cr_expect_eq(swf_time_cmp(b, c), -1);
    cr_expect_eq(swf_time_cmp(c, a), 1);
    cr_expect_eq(swf_time_cmp(a, a2), 0);
    swf_time_t neg = parse_ok("1969-12-31T23:59:59.5Z");
    swf_time_t epoch = parse_ok("1970-01-01T00:00:00Z");
    cr_expect_eq(swf_time_cmp(neg, epoch), -1);
}

Test(time_to_ms, rounds_towards_minus_infinity)
{
    cr_expect_eq(swf_time_to_ms(parse_ok("2016-03-14T01:59:00.1239Z")), 1457920740123LL);
    cr_expect_eq(swf_time_to_ms(parse_ok("1970-01-01T00:00:00Z")), 0);
    /* 0.5 s before the epoch: sec -1, nsec 500000000. */
    cr_expect_eq(swf_time_to_ms(parse_ok("1969-12-31T23:59:59.5Z")), -500);
    cr_expect_eq(swf_time_to_ms(parse_ok("1969-12-31T23:59:59.9999Z")), -1);
}

Test(time_format, writes_utc_with_milliseconds)
{
    char buf[SWF_TIME_BUF];
    swf_time_format_ms(0, buf);
    cr_expect_str_eq(buf, "1970-01-01T00:00:00.000Z");
    swf_time_format_ms(1457920740123LL, buf);
    cr_expect_str_eq(buf, "2016-03-14T01:59:00.123Z");
    swf_time_format_ms(-1, buf);
    cr_expect_str_eq(buf, "1969-12-31T23:59:59.999Z");
    swf_time_format_ms(951782400000LL, buf);
    cr_expect_str_eq(buf, "2000-02-29T00:00:00.000Z");
    swf_time_format_ms(253402300799999LL, buf);
    cr_expect_str_eq(buf, "9999-12-31T23:59:59.999Z");
}

Test(time_format, round_trips_through_parse)
{
    const int64_t ms[] = {0,
                          1,
                          -1,
                          999,
                          -1000,
                          -86400001,
                          951782400000LL,
                          1457920740123LL,
                          1798000000000LL,
                          -2208988800000LL, /* 1900-01-01 */
                          4102444800000LL,  /* 2100-01-01 */
                          253402300799999LL};
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
        char buf[SWF_TIME_BUF];
        swf_time_format_ms(ms[i], buf);
        swf_time_t t;
        cr_assert(swf_time_parse(buf, &t), "%s does not parse", buf);
        cr_expect_eq(swf_time_to_ms(t), ms[i], "%lld -> %s -> %lld", (long long)ms[i], buf,
                     (long long)swf_time_to_ms(t));
    }
}

Test(time_now, is_after_2020)
{
    cr_expect_gt(swf_time_now_ms(), 1577836800000LL);
}
