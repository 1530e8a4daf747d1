/*
 * test_regex.c - the JavaScript regular expression matcher: ECMAScript's
 * backtracking order (first alternative, greedy and lazy), captures and
 * their reset in loops, lookahead and lookbehind (run backwards, so their
 * captures are JavaScript's), \b, back references, the i and m flags,
 * Annex B's patterns, the syntax errors, and the limits that keep a pattern
 * from hanging a decider. Expected values were checked with Node.js 20.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/regex.h"
#include "tests/fuzz.h"

/* The match of pattern/flags in text from byte `from`, written as
 * "start-end" and then each group's "start-end" or "-" when unset,
 * separated by spaces; "none" when nothing matches, "steps" or "deep" when
 * a limit ended the search. */
static char *search_from(const char *pattern, const char *flags, const char *text, size_t from,
                         size_t budget)
{
    char err[160];
    swf_asl_regex_t *re = swf_asl_regex_new(pattern, strlen(pattern), flags, err, sizeof err);
    cr_assert_not_null(re, "/%s/%s: %s", pattern, flags, err);
    size_t groups = swf_asl_regex_groups(re), caps[2 * 64];
    cr_assert_lt(groups, 64);
    int r = swf_asl_regex_search(re, text, strlen(text), from, caps, &budget);
    swf_asl_regex_free(re);
    char *out = calloc(1, 64 * 24);
    if (r == SWF_ASL_REGEX_NO_MATCH)
        strcpy(out, "none");
    else if (r == SWF_ASL_REGEX_TOO_LONG)
        strcpy(out, "steps");
    else if (r == SWF_ASL_REGEX_TOO_DEEP)
        strcpy(out, "deep");
    for (size_t k = 0; r == SWF_ASL_REGEX_MATCH && k <= groups; k++) {
        size_t n = strlen(out);
        if (caps[2 * k] == SWF_ASL_REGEX_UNSET)
            snprintf(out + n, 24, "%s-", k ? " " : "");
        else
            snprintf(out + n, 24, "%s%zu-%zu", k ? " " : "", caps[2 * k], caps[2 * k + 1]);
    }
    return out;
}

static void expect_match(const char *pattern, const char *flags, const char *text, const char *want)
{
    char *got = search_from(pattern, flags, text, 0, 10000000);
    cr_expect_str_eq(got, want, "/%s/%s on \"%s\"", pattern, flags, text);
    free(got);
}

static void expect_syntax_error(const char *pattern, const char *flags, const char *message)
{
    char err[160] = "";
    swf_asl_regex_t *re = swf_asl_regex_new(pattern, strlen(pattern), flags, err, sizeof err);
    cr_expect_null(re, "/%s/%s compiled", pattern, flags);
    swf_asl_regex_free(re);
    cr_expect(strstr(err, message) != NULL, "/%s/: message \"%s\" lacks \"%s\"", pattern, err,
              message);
}

Test(regex, the_first_alternative_that_matches_wins)
{
    expect_match("a|ab", "", "ab", "0-1");
    expect_match("ab|a", "", "ab", "0-2");
    expect_match("(a|ab)(c|bcd)", "", "abcd", "0-4 0-1 1-4");
    expect_match("x|", "", "y", "0-0");
}

Test(regex, greedy_and_lazy_quantifiers)
{
    expect_match("<.*>", "", "<a><b>", "0-6");
    expect_match("<.*?>", "", "<a><b>", "0-3");
    expect_match("a{2,}?", "", "aaaa", "0-2");
    expect_match("a{2,3}", "", "aaaa", "0-3");
    expect_match("a??b", "", "ab", "0-2");
    expect_match("(?:ab)+?c", "", "ababc", "0-5");
    expect_match("(ab){2}", "", "abababab", "0-4 2-4");
    expect_match("a{0}b", "", "ab", "1-2");
    expect_match("a*", "", "bbb", "0-0");
}

Test(regex, captures_follow_javascript)
{
    expect_match("a(b)?c", "", "ac", "0-2 -");
    /* a group inside a loop is reset at each iteration (RepeatMatcher) */
    expect_match("(?:(a)|b)+", "", "ab", "0-2 -");
    expect_match("(z)((a+)?(b+)?(c))*", "", "zaacbbbcac", "0-10 0-1 8-10 8-9 - 9-10");
    /* an iteration past the minimum that matches nothing fails */
    expect_match("(a*)*b", "", "b", "0-1 -");
    expect_match("(a*)+b", "", "b", "0-1 0-0");
    expect_match("(?:a|)+", "", "aaa", "0-3");
}

Test(regex, back_references_and_named_groups)
{
    expect_match("(abc)\\1", "", "abcabc", "0-6 0-3");
    expect_match("^(a+)\\1$", "", "aaaa", "0-4 0-2");
    expect_match("^(a+)\\1$", "", "aaaaa", "none");
    expect_match("(?<x>ab)\\k<x>", "", "abab", "0-4 0-2");
    expect_match("\\k<x>(?<x>a)", "", "a", "0-1 0-1"); /* forward: matches nothing */
    expect_match("(a)\\1", "i", "aA", "0-2 0-1");
    expect_match("(b)?\\1a", "", "a", "0-1 -"); /* unset: matches nothing */
}

Test(regex, lookahead_and_lookbehind)
{
    expect_match("foo(?=baz)", "", "foobar foobaz", "7-10");
    expect_match("foo(?!bar)", "", "foobar foobaz", "7-10");
    expect_match("(?<=\\$)\\d+", "", "cost 42, $7", "10-11");
    expect_match("(?<!\\$)\\b\\d+", "", "$7 or 42", "6-8");
    expect_match("(?=(\\w+))", "", "abc", "0-0 0-3"); /* positive ones keep captures */
    expect_match("(?!(a))b", "", "b", "0-1 -");
    /* a lookbehind runs backwards, greedy from its right end */
    expect_match("(?<=(\\d+)(\\d+))$", "", "1053", "4-4 0-1 1-4");
    expect_match("(?<=(\\d)(\\d))$", "", "1053", "4-4 2-3 3-4");
    expect_match("(?<=\\1(a))b", "", "aab", "2-3 1-2");
    expect_match("(?<=^|,)x", "", "a,x", "2-3");
}

Test(regex, assertions_and_flags)
{
    expect_match("\\bcat\\b", "", "scat cat", "5-8");
    expect_match("\\Bcat", "", "cat scat", "5-8");
    expect_match("^b", "", "a\nb", "none");
    expect_match("^b", "m", "a\nb", "2-3");
    expect_match("a$", "m", "a\r\nb", "0-1");
    expect_match("a.b", "", "a\nb", "none");
    expect_match("[^]", "", "\n", "0-1");
    expect_match("[]", "", "a", "none");
    expect_match("B", "i", "abc", "1-2");
    expect_match("\xc3\xa9", "i", "\xc3\x89", "0-2");   /* é and É */
    expect_match("[a-z]", "i", "\xe2\x84\xaa", "none"); /* the Kelvin sign is no k */
    expect_match("s", "i", "\xc5\xbf", "none");         /* nor long s an s */
    expect_match("[\\w-]+", "", "x-y z", "0-3");
    expect_match("\\s", "",
                 "a\xc2\xa0"
                 "b",
                 "1-3"); /* no-break space */
    expect_match("\\d+", "",
                 "ab\xd9\xa3"
                 "12",
                 "4-6"); /* ASCII digits only */
}

Test(regex, annex_b_patterns_without_the_u_flag)
{
    expect_match("a{", "", "a{", "0-2");
    expect_match("a{,2}", "", "a{,2}", "0-5");
    expect_match("]}", "", "]}", "0-2");
    expect_match("\\8", "", "8", "0-1");
    expect_match("\\2(a)", "",
                 "\x02"
                 "a",
                 "0-2 1-2"); /* \2 is no group: octal */
    expect_match("\\c", "", "\\c", "0-2");
    expect_match("\\cJ", "", "\n", "0-1");
    expect_match("\\x41\\u0042", "", "AB", "0-2");
    expect_match("\\ud83d\\ude00", "", "\xf0\x9f\x98\x80", "0-4");
    expect_match("\\k", "", "k", "0-1");
    expect_match("[\\d-z]+", "", "a-z", "1-3");
    expect_match("(?=a)*b", "", "b", "0-1");
}

Test(regex, search_starts_at_from_but_sees_before_it)
{
    char *got = search_from("\\bb", "", "ab b", 1, 1000);
    cr_expect_str_eq(got, "3-4");
    free(got);
    got = search_from("(?<=a)b", "", "ab", 1, 1000);
    cr_expect_str_eq(got, "1-2");
    free(got);
    got = search_from("^b", "", "ab", 1, 1000);
    cr_expect_str_eq(got, "none");
    free(got);
}

Test(regex, syntax_errors_are_named)
{
    expect_syntax_error("*a", "", "nothing to repeat");
    expect_syntax_error("a**", "", "nothing to repeat");
    expect_syntax_error("^*", "", "nothing to repeat");
    expect_syntax_error("(?<=a)*", "", "nothing to repeat");
    expect_syntax_error("a{2,1}", "", "numbers out of order");
    expect_syntax_error("[z-a]", "", "range out of order");
    expect_syntax_error("(a", "", "unterminated group");
    expect_syntax_error("a)", "", "unmatched ')'");
    expect_syntax_error("[a", "", "unterminated character class");
    expect_syntax_error("(?x)", "", "invalid group");
    expect_syntax_error("a\\", "", "\\ at end of pattern");
    expect_syntax_error("(?<a>x)(?<a>y)", "", "duplicate capture group name");
    expect_syntax_error("(?<a>x)\\k<b>", "", "invalid named capture referenced");
    expect_syntax_error("(?<a>x)\\k", "", "invalid named reference");
    expect_syntax_error("a", "g", "invalid flags");
    expect_syntax_error("a", "ii", "invalid flags");
}

Test(regex, limits_end_a_search_instead_of_hanging_it)
{
    /* catastrophic backtracking runs out of steps */
    char *got = search_from("^(a+)+$", "", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 0, 1000000);
    cr_expect_str_eq(got, "steps");
    free(got);
    /* a loop of many iterations holds a choice each: past the bound it stops */
    size_t n = 3 * SWF_LIMIT_REGEX_BACKTRACK;
    char *text = malloc(n + 1);
    memset(text, 'a', n);
    text[n] = '\0';
    got = search_from("(?:a|b)*$", "", text, 0, 100000000);
    cr_expect_str_eq(got, "deep");
    free(got);
    /* one character repeated holds one entry however long the run */
    got = search_from("a*$", "", text, 0, 100000000);
    char want[64];
    snprintf(want, sizeof want, "0-%zu", n);
    cr_expect_str_eq(got, want);
    free(got);
    free(text);
    /* groups nest at most SWF_LIMIT_REGEX_DEPTH deep */
    char deep[2 * SWF_LIMIT_REGEX_DEPTH + 8];
    size_t k = 0;
    for (int i = 0; i <= SWF_LIMIT_REGEX_DEPTH; i++)
        deep[k++] = '(';
    for (int i = 0; i <= SWF_LIMIT_REGEX_DEPTH; i++)
        deep[k++] = ')';
    deep[k] = '\0';
    expect_syntax_error(deep, "", "nest more than");
}

Test(regex, text_that_is_not_utf8_is_matched_byte_by_byte)
{
    expect_match("a.b", "",
                 "a\xff"
                 "b",
                 "0-3");
    expect_match("[^x]+", "", "\xc3(\xe2", "0-3");
    expect_match(".$", "", "ab\xe2\x82", "3-4");
}

/* ---- mutated patterns (tests/fuzz.h) ---- */

static const char *const SUBJECTS[] = {
    "",
    "abc abcabc ab-c 1053 $42",
    "The Quick brown fox\njumps\r\nover 10 lazy dogs.",
    "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x80\xa8 a\xc2\xa0"
    "b <<x>> (y) [z]",
    "aaaaaaaaaaaaaaaaaaaaaaaaab",
};

/* A match's bounds lie within the text, in order, on character starts. */
static void check_caps(const char *pattern, const char *s, size_t from, const size_t *caps,
                       size_t groups)
{
    size_t n = strlen(s);
    cr_assert(caps[0] != SWF_ASL_REGEX_UNSET && caps[0] >= from && caps[0] <= caps[1] &&
                  caps[1] <= n,
              "/%s/ on \"%s\": match %zu-%zu", pattern, s, caps[0], caps[1]);
    for (size_t k = 0; k <= groups; k++) {
        size_t a = caps[2 * k], b = caps[2 * k + 1];
        if (a == SWF_ASL_REGEX_UNSET || b == SWF_ASL_REGEX_UNSET) {
            cr_assert(k > 0 && a == b, "/%s/: group %zu half set", pattern, k);
            continue;
        }
        cr_assert(a <= b && b <= n, "/%s/ on \"%s\": group %zu is %zu-%zu", pattern, s, k, a, b);
        cr_assert(((unsigned char)s[a] & 0xC0) != 0x80 || a == n,
                  "/%s/: group %zu starts inside a character", pattern, k);
    }
}

static fuzz_outcome_t regex_round(const char *pattern, void *arg)
{
    (void)arg;
    char err[160] = "";
    const char *flags[] = {"", "i", "m", "im"};
    swf_asl_regex_t *re =
        swf_asl_regex_new(pattern, strlen(pattern), flags[strlen(pattern) % 4], err, sizeof err);
    if (re == NULL) {
        cr_assert(err[0] != '\0', "/%s/ refused without a message", pattern);
        return FUZZ_REFUSED;
    }
    size_t groups = swf_asl_regex_groups(re);
    size_t *caps = malloc(2 * (groups + 1) * sizeof *caps);
    fuzz_outcome_t o = FUZZ_EMPTY;
    for (size_t i = 0; i < sizeof SUBJECTS / sizeof SUBJECTS[0]; i++) {
        const char *s = SUBJECTS[i];
        for (size_t from = 0; from <= strlen(s); from += 7) {
            while (from > 0 && ((unsigned char)s[from] & 0xC0) == 0x80)
                from--; /* a character's start, as the callers give */
            size_t budget = 20000;
            int r = swf_asl_regex_search(re, s, strlen(s), from, caps, &budget);
            cr_assert(r >= SWF_ASL_REGEX_TOO_DEEP && r <= SWF_ASL_REGEX_MATCH);
            if (r == SWF_ASL_REGEX_MATCH) {
                check_caps(pattern, s, from, caps, groups);
                o = FUZZ_VALUE;
            } else if (r < 0 && o == FUZZ_EMPTY) {
                o = FUZZ_FAILED;
            }
        }
    }
    free(caps);
    swf_asl_regex_free(re);
    return o;
}

/* Each mutated pattern is refused with a message, or searches every text
 * within its budget and gives matches whose bounds make sense. */
Test(regex_fuzz, mutated_patterns_are_refused_or_match_sensibly)
{
    static const char *const seeds[] = {
        "a|ab",
        "<.*?>",
        "(?<=\\$)\\d+(?:\\.\\d+)?",
        "(?<![$\\d.])\\b\\d+\\b",
        "(z)((a+)?(b+)?(c))*",
        "(?<y>\\d{4})-(?<m>\\d{2})-\\k<m>",
        "^(a+)\\1$",
        "[\\w.-]+@[^\\s@]+\\.[a-z]{2,}",
        "(?=(\\w+))\\1",
        "(?<=(\\d+)(\\d+))$",
        "[^]|[]|\\B",
        "\\x41\\u0042\\cJ\\0\\8\\2(a)",
        "a{2,3}?b{,2}c{1",
        "(?:(a)|b|)+?$",
        "(?!x)(?<!y)[\\s\\S]{0,5}",
        "\\ud83d\\ude00|\xc3\xa9+",
        "^(a+)+$",
        "(a|a?)+b",
    };
    fuzz_corpus_t c = {0};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        fuzz_corpus_add(&c, seeds[i]);
    fuzz_tally_t t = fuzz_run(&c, 20000, regex_round, NULL);
    cr_expect(t.outcomes[FUZZ_VALUE] > t.rounds / 10 && t.outcomes[FUZZ_REFUSED] > t.rounds / 100,
              "%ld matched, %ld refused", t.outcomes[FUZZ_VALUE], t.outcomes[FUZZ_REFUSED]);
    fuzz_corpus_free(&c);
}
