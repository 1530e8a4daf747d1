/*
 * regex.h - JavaScript regular expressions, for JSONata's /.../ literals.
 *
 * JSONata hands a /pattern/flags literal to JavaScript's RegExp, without
 * the u flag, so Step Functions matches with ECMAScript's rules: the first
 * alternative that matches wins (not the longest), quantifiers are greedy
 * or lazy (*?), and a pattern may hold lookahead, lookbehind, \b, back
 * references (\1, \k<name>) and named groups. This module is that matcher,
 * written for the engine: a backtracking machine with an explicit stack and
 * a budget of steps, so that no pattern can hang a decider or overflow its
 * C stack (a pattern that backtracks catastrophically ends in an error).
 *
 * Text is UTF-8 and is matched by code point; positions are byte offsets.
 * Where JavaScript sees UTF-16 code units, the one difference users can
 * meet is a character outside the Basic Multilingual Plane (an emoji): it
 * is one character here, as with JavaScript's u flag, and two there.
 *
 * Thread-safety: a compiled expression is immutable; searches on it may run
 * in any number of threads at once. Ownership: arguments are borrowed;
 * swf_asl_regex_new returns a handle the caller frees.
 */
#ifndef SWF_ASL_REGEX_H
#define SWF_ASL_REGEX_H

#include <locale.h>
#include <stddef.h>

/* Groups, classes and lookarounds nest at most this deep in a pattern. */
#define SWF_LIMIT_REGEX_DEPTH 100
/* Backtracking entries one search may hold (24 bytes each): past it the
 * search fails with SWF_ASL_REGEX_TOO_DEEP rather than grow further. */
#define SWF_LIMIT_REGEX_BACKTRACK (1u << 20)

/* A capture that did not take part in the match. */
#define SWF_ASL_REGEX_UNSET ((size_t)-1)

enum {
    SWF_ASL_REGEX_MATCH = 1,
    SWF_ASL_REGEX_NO_MATCH = 0,
    SWF_ASL_REGEX_TOO_LONG = -1, /* the step budget ran out */
    SWF_ASL_REGEX_TOO_DEEP = -2, /* SWF_LIMIT_REGEX_BACKTRACK was reached */
};

typedef struct swf_asl_regex swf_asl_regex_t;

/* Compiles the pattern src (len bytes, the text between the slashes) with
 * flags ("i" ignores case, "m" makes ^ and $ match at line ends; others
 * are refused). NULL on a syntax error, with a message in err (err_size
 * bytes) such as "nothing to repeat at offset 0". */
swf_asl_regex_t *swf_asl_regex_new(const char *src, size_t len, const char *flags, char *err,
                                   size_t err_size);

void swf_asl_regex_free(swf_asl_regex_t *re);

/* The number of capturing groups (named ones included). */
size_t swf_asl_regex_groups(const swf_asl_regex_t *re);

/* Searches s[0..n) for the leftmost match starting at byte `from` or
 * later (the text before `from` is still seen by ^, \b and lookbehind), as
 * JavaScript's exec does from lastIndex. On SWF_ASL_REGEX_MATCH, caps
 * (2 * (groups + 1) entries) holds the start and end byte of the match and
 * of each group, SWF_ASL_REGEX_UNSET where a group did not take part.
 * *budget is the number of steps the search may take; it is decreased by
 * what was used. */
int swf_asl_regex_search(const swf_asl_regex_t *re, const char *s, size_t n, size_t from,
                         size_t *caps, size_t *budget);

/* The C.UTF-8 locale (for towupper_l and friends), or (locale_t)0 when the
 * C library has none. Created once; never freed. */
locale_t swf_asl_utf8_locale(void);

#endif
