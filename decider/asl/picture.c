/*
 * picture.c - XPath picture strings for JSONata's $formatInteger,
 * $parseInteger, $formatNumber, $fromMillis and $toMillis.
 *
 * A picture is analysed into a small description (int_pic_t for an integer
 * picture such as "#,##0" or "w;o", marker_t for one [component] of a date
 * picture), and that one description both writes and reads values, so that
 * a picture parses exactly what it formats. The integer descriptions are
 * what the date components use too: [D1o], [YI] and [Dw] are an integer
 * picture applied to a date field. A decimal-format picture ("#,##0.00",
 * "0.0e0", "#%") is analysed into a sub_picture_t per sign and written
 * only: XPath has no parse-number.
 *
 * The rules are those of XPath and XQuery Functions and Operators 3.1
 * (4.6.1 format-integer, 4.7 format-number, 9.8 format-dateTime) as
 * JSONata 2.0.6 applies
 * them, since that is what Step Functions runs. Where jsonata-js departs
 * from the specification in a way a workflow can rely on, this file
 * follows jsonata-js and says so (JSONATA:); where jsonata-js is plainly
 * broken (output no reading of either could want), it follows the
 * specification and says so (SPEC:). The differences were checked on a
 * few hundred pictures against jsonata-js 2.0.6 (25 Nov 2026).
 *
 * Deliberately not done, as in jsonata-js: numbering sequences other than
 * decimal digits, letters, roman numerals and English words (an error, not
 * the specification's fallback to "1"), words in other languages, and
 * reading ISO week dates ([X]-[W]-[F]) with $toMillis (formatting them
 * works).
 *
 * Limits: a picture, and a timestamp read with one, are at most
 * SWF_LIMIT_PICTURE_BYTES long; a result at most SWF_LIMIT_PAYLOAD_BYTES;
 * matching a timestamp backtracks (as the regular expression of jsonata-js
 * does) at most MATCH_STEPS_MAX units of work.
 */
#include "decider/asl/picture.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/buf.h"
#include "decider/asl/number.h"
#include "protocol/limits.h"

/* Units of work (characters looked at) one $toMillis match may take. */
#define MATCH_STEPS_MAX 1000000

/* Grouping separators of one decimal digit pattern: "#,###,###" has two. */
#define GROUPS_MAX 64

/* Hands the buffer (buf.h's) over as *out, or frees it if it outgrew the limit. */
static swf_error_t *buf_finish(buf_t *b, char **out, size_t *out_len)
{
    if (b->over) {
        free(b->s);
        *out = NULL;
        return qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    }
    if (b->s == NULL)
        buf_add(b, "", 0);
    *out = b->s;
    *out_len = b->n;
    return NULL;
}

/* The code point at s[*i] (of n bytes), advancing *i. A byte that starts no
 * valid sequence reads as U+FFFD, so that nothing loops. */
static uint32_t u8_next(const char *s, size_t n, size_t *i)
{
    const unsigned char *p = (const unsigned char *)s + *i;
    size_t left = n - *i, len;
    uint32_t cp;
    if (p[0] < 0x80) {
        cp = p[0];
        len = 1;
    } else if ((p[0] & 0xe0) == 0xc0) {
        cp = p[0] & 0x1f;
        len = 2;
    } else if ((p[0] & 0xf0) == 0xe0) {
        cp = p[0] & 0x0f;
        len = 3;
    } else if ((p[0] & 0xf8) == 0xf0) {
        cp = p[0] & 0x07;
        len = 4;
    } else {
        (*i)++;
        return 0xfffd;
    }
    if (len > left) {
        (*i)++;
        return 0xfffd;
    }
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xc0) != 0x80) {
            (*i)++;
            return 0xfffd;
        }
        cp = (cp << 6) | (p[k] & 0x3f);
    }
    *i += len;
    return cp;
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

static char upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* ASCII case-insensitive comparison of n bytes. */
static bool same_ci(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (lower(a[i]) != lower(b[i]))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Integer pictures                                                         */
/* ------------------------------------------------------------------------ */

/* The zero of each decimal digit family of Unicode's basic plane (Nd): a
 * digit pattern may use any one of them ("٠٠" writes Arabic-Indic digits).
 * JSONATA: the same families as jsonata-js; those beyond U+FFFF are not
 * digits there either, so a picture of them is an unsupported sequence. */
static const uint32_t digit_zeros[] = {
    0x30,   0x660,  0x6f0,  0x7c0,  0x966,  0x9e6,  0xa66,  0xae6,  0xb66,  0xbe6,
    0xc66,  0xce6,  0xd66,  0xde6,  0xe50,  0xed0,  0xf20,  0x1040, 0x1090, 0x17e0,
    0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620,
    0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10};

/* The zero of cp's digit family, or 0 when cp is no decimal digit. */
static uint32_t digit_zero(uint32_t cp)
{
    for (size_t i = 0; i < sizeof digit_zeros / sizeof digit_zeros[0]; i++) {
        if (cp >= digit_zeros[i] && cp <= digit_zeros[i] + 9)
            return digit_zeros[i];
    }
    return 0;
}

enum { K_DECIMAL, K_LETTERS, K_ROMAN, K_WORDS };
enum { C_LOWER, C_UPPER, C_TITLE };

typedef struct int_pic {
    int kind, letter_case;
    bool ordinal;
    uint32_t zero;     /* decimal: the digit family */
    int mandatory;     /* decimal: digits always written (zero-padded) */
    int optional;      /* decimal: # signs */
    int every;         /* regular grouping: a separator every `every` digits */
    uint32_t every_ch; /* and its character */
    int ngroups;       /* irregular grouping: separators at fixed places */
    struct {
        int pos; /* digits to the separator's right */
        uint32_t ch;
    } group[GROUPS_MAX];
} int_pic_t;

static int gcd(int a, int b)
{
    return b == 0 ? a : gcd(b, a % b);
}

/* The modifier after the last ';' of a picture: F&O's [co](\(...\))?[at]?
 * (c cardinal, o ordinal; the parenthesised variant and a/t are accepted
 * and mean nothing in English). */
static swf_error_t *modifier_analyse(const char *m, size_t n, int_pic_t *p)
{
    size_t i = 0;
    if (i < n && (m[i] == 'c' || m[i] == 'o'))
        p->ordinal = m[i++] == 'o';
    if (i < n && m[i] == '(') {
        const char *close = memchr(m + i, ')', n - i);
        if (close == NULL)
            return qerr("the modifier \"%.*s\" has no closing )", (int)n, m);
        i = (size_t)(close - m) + 1;
    }
    if (i < n && (m[i] == 'a' || m[i] == 't'))
        i++;
    if (i != n)
        return qerr("the modifier \"%.*s\" is not c, o, a or t", (int)n, m);
    return NULL;
}

/* A decimal digit pattern ("#,##0", "0001", "٠٠"): # signs, then digits of
 * one family, with grouping separators (any other character that is not an
 * ASCII letter) between them. */
static swf_error_t *decimal_analyse(const char *s, size_t n, int_pic_t *p)
{
    int digits = 0; /* digit signs (# and digits) seen */
    int seps[GROUPS_MAX];
    uint32_t sep_ch[GROUPS_MAX];
    int nsep = 0;
    bool prev_sep = false;
    p->kind = K_DECIMAL;
    for (size_t i = 0; i < n;) {
        uint32_t cp = u8_next(s, n, &i), zero = digit_zero(cp);
        if (zero != 0) {
            if (p->zero != 0 && zero != p->zero)
                return qerr("the digits of the picture \"%.*s\" are not all of one family "
                            "(0-9, ٠-٩, ...)",
                            (int)n, s);
            p->zero = zero;
            p->mandatory++;
            digits++;
            prev_sep = false;
        } else if (cp == '#') {
            /* SPEC: a # after a mandatory digit is refused (jsonata-js
             * ignores it) */
            if (p->mandatory > 0)
                return qerr("in the picture \"%.*s\", an optional digit # follows a mandatory "
                            "digit",
                            (int)n, s);
            p->optional++;
            digits++;
            prev_sep = false;
        } else if (cp < 0x80 && is_alpha((char)cp)) {
            return qerr("the picture \"%.*s\" mixes letters and digits", (int)n, s);
        } else {
            /* SPEC: separators only between digits (jsonata-js writes one
             * at the start or end, and several together, as given) */
            if (digits == 0 || prev_sep)
                return qerr("in the picture \"%.*s\", a grouping separator is not between two "
                            "digits",
                            (int)n, s);
            if (nsep == GROUPS_MAX)
                return qerr("the picture \"%.*s\" has more than %d grouping separators", (int)n, s,
                            GROUPS_MAX);
            seps[nsep] = digits; /* digits on its left, for now */
            sep_ch[nsep++] = cp;
            prev_sep = true;
        }
    }
    if (p->mandatory == 0)
        return qerr("the picture \"%.*s\" has no digit (write 0 for one mandatory digit)", (int)n,
                    s);
    if (prev_sep)
        return qerr("in the picture \"%.*s\", a grouping separator is not between two digits",
                    (int)n, s);
    /* Regular (F&O: the same character at positions P, 2P, 3P... from the
     * right, no other): it repeats over the whole number. Otherwise the
     * separators stay where they are. */
    int g = 0, maxpos = 0;
    bool same = true;
    for (int k = 0; k < nsep; k++) {
        seps[k] = digits - seps[k];
        g = gcd(g, seps[k]);
        maxpos = seps[k] > maxpos ? seps[k] : maxpos;
        same = same && sep_ch[k] == sep_ch[0];
    }
    if (nsep > 0 && same && maxpos == nsep * g) {
        p->every = g;
        p->every_ch = sep_ch[0];
    } else {
        for (int k = 0; k < nsep; k++) {
            p->group[k].pos = seps[k];
            p->group[k].ch = sep_ch[k];
        }
        p->ngroups = nsep;
    }
    return NULL;
}

/* An integer picture: primary token, then optionally ;modifier. */
static swf_error_t *int_pic_analyse(const char *pic, size_t n, int_pic_t *p)
{
    memset(p, 0, sizeof *p);
    size_t primary = n;
    for (size_t i = n; i > 0; i--) {
        if (pic[i - 1] == ';') {
            primary = i - 1;
            break;
        }
    }
    if (primary < n) {
        swf_error_t *err = modifier_analyse(pic + primary + 1, n - primary - 1, p);
        if (err)
            return err;
    }
    static const struct {
        const char *token;
        int kind, letter_case;
    } named[] = {{"a", K_LETTERS, C_LOWER}, {"A", K_LETTERS, C_UPPER}, {"i", K_ROMAN, C_LOWER},
                 {"I", K_ROMAN, C_UPPER},   {"w", K_WORDS, C_LOWER},   {"W", K_WORDS, C_UPPER},
                 {"Ww", K_WORDS, C_TITLE}};
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
        if (strlen(named[k].token) == primary && memcmp(named[k].token, pic, primary) == 0) {
            p->kind = named[k].kind;
            p->letter_case = named[k].letter_case;
            return NULL;
        }
    }
    bool has_digit = false;
    for (size_t i = 0; i < primary && !has_digit;)
        has_digit = digit_zero(u8_next(pic, primary, &i)) != 0;
    if (!has_digit) /* JSONATA: an error, where F&O falls back to "1" */
        return qerr("the format \"%.*s\" is not supported: use decimal digits (0, 001, #,##0), "
                    "a, A, i, I, w, W or Ww",
                    (int)primary, pic);
    return decimal_analyse(pic, primary, p);
}

/* English words. */
static const char *const small_words[] = {
    "Zero",     "One",     "Two",     "Three",     "Four",     "Five",    "Six",
    "Seven",    "Eight",   "Nine",    "Ten",       "Eleven",   "Twelve",  "Thirteen",
    "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen"};
static const char *const small_ordinals[] = {
    "Zeroth",     "First",     "Second",    "Third",       "Fourth",     "Fifth",     "Sixth",
    "Seventh",    "Eighth",    "Ninth",     "Tenth",       "Eleventh",   "Twelfth",   "Thirteenth",
    "Fourteenth", "Fifteenth", "Sixteenth", "Seventeenth", "Eighteenth", "Nineteenth"};
static const char *const tens_words[] = {"Twenty", "Thirty",  "Forty",  "Fifty",
                                         "Sixty",  "Seventy", "Eighty", "Ninety"};
static const char *const tens_ordinals[] = {"Twentieth", "Thirtieth",  "Fortieth",  "Fiftieth",
                                            "Sixtieth",  "Seventieth", "Eightieth", "Ninetieth"};
static const char *const scale_words[] = {"Thousand", "Million", "Billion", "Trillion"};

/* v in English, British style as jsonata-js writes it: "One Hundred and
 * One", "One Thousand, Two Hundred", "Twenty-First". `after` says that
 * bigger parts precede (which brings "and" or ", "). Scales stop at
 * trillions: 10^15 is "One Thousand Trillion". */
static void words_put(buf_t *b, uint64_t v, bool after, bool ordinal)
{
    if (v < 20) {
        if (after)
            buf_str(b, " and ");
        buf_str(b, ordinal ? small_ordinals[v] : small_words[v]);
    } else if (v < 100) {
        if (after)
            buf_str(b, " and ");
        if (v % 10 == 0) {
            buf_str(b, ordinal ? tens_ordinals[v / 10 - 2] : tens_words[v / 10 - 2]);
        } else {
            buf_str(b, tens_words[v / 10 - 2]);
            buf_str(b, "-");
            words_put(b, v % 10, false, ordinal);
        }
    } else {
        /* hundreds, or the largest scale v reaches (at most trillions) */
        uint64_t unit = 100;
        const char *name = "Hundred";
        if (v >= 1000) {
            unit = 1000;
            name = scale_words[0];
            for (int k = 1; k < 4 && v / unit >= 1000; k++) {
                unit *= 1000;
                name = scale_words[k];
            }
        }
        if (after)
            buf_str(b, ", ");
        words_put(b, v / unit, false, false);
        buf_str(b, " ");
        buf_str(b, name);
        if (v % unit)
            words_put(b, v % unit, true, ordinal);
        else if (ordinal)
            buf_str(b, "th");
    }
}

static const char *ordinal_suffix(uint64_t v)
{
    if (v % 100 >= 11 && v % 100 <= 13)
        return "th";
    return v % 10 == 1 ? "st" : v % 10 == 2 ? "nd" : v % 10 == 3 ? "rd" : "th";
}

/* The largest value written in letters, roman numerals or words: the
 * integers a double holds exactly. */
#define EXACT_MAX 9007199254740992.0

/* Writes v (an integer) as p says. */
static swf_error_t *int_pic_format(const int_pic_t *p, double v, buf_t *b)
{
    if (!(fabs(v) < 1e21))
        return qerr("%g is too large to write as an integer (at most 1e21)", v);
    if (v < 0)
        buf_str(b, "-");
    double a = fabs(v);
    if (p->kind != K_DECIMAL && a > EXACT_MAX)
        return qerr("%.17g is too large to write in letters, roman numerals or words (at most "
                    "2^53)",
                    v);
    uint64_t u = p->kind != K_DECIMAL ? (uint64_t)a : 0; /* exact here */
    if ((p->kind == K_LETTERS || p->kind == K_ROMAN) && a == 0) {
        /* SPEC: 0 has no letter or roman numeral and is written as "0";
         * jsonata-js writes nothing */
        buf_str(b, "0");
        return NULL;
    }
    switch (p->kind) {
    case K_LETTERS: {
        char text[16];
        size_t k = sizeof text;
        for (; u > 0; u = (u - 1) / 26)
            text[--k] = (char)((p->letter_case == C_UPPER ? 'A' : 'a') + (u - 1) % 26);
        buf_add(b, text + k, sizeof text - k);
        return NULL;
    }
    case K_ROMAN: {
        static const struct {
            unsigned value;
            const char *numeral;
        } roman[] = {{1000, "m"}, {900, "cm"}, {500, "d"}, {400, "cd"}, {100, "c"},
                     {90, "xc"},  {50, "l"},   {40, "xl"}, {10, "x"},   {9, "ix"},
                     {5, "v"},    {4, "iv"},   {1, "i"}};
        if (u / 1000 > SWF_LIMIT_PAYLOAD_BYTES)
            return qerr("%.17g in roman numerals is longer than %u bytes", v,
                        SWF_LIMIT_PAYLOAD_BYTES);
        for (size_t k = 0; k < sizeof roman / sizeof roman[0] && !b->over; k++) {
            for (; u >= roman[k].value && !b->over; u -= roman[k].value) {
                for (const char *c = roman[k].numeral; *c; c++) {
                    char ch = p->letter_case == C_UPPER ? upper(*c) : *c;
                    buf_add(b, &ch, 1);
                }
            }
        }
        return NULL;
    }
    case K_WORDS: {
        buf_t w = {0};
        words_put(&w, u, false, p->ordinal);
        for (size_t k = 0; k < w.n; k++) {
            if (p->letter_case == C_UPPER)
                w.s[k] = upper(w.s[k]);
            else if (p->letter_case == C_LOWER)
                w.s[k] = lower(w.s[k]);
        }
        buf_add(b, w.s, w.n);
        free(w.s);
        return NULL;
    }
    default:
        break;
    }
    /* decimal: the digits, zero-padded to the mandatory ones, grouped from
     * the right where a separator has digits on both sides (SPEC: jsonata-js
     * writes an irregular separator even where the number is too short to
     * reach it, as in ",,12") */
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%.0f", a);
    int width = len > p->mandatory ? len : p->mandatory;
    for (int j = 0; j < width; j++) {
        int right = width - j; /* digits from this one to the end */
        if (j > 0 && p->every > 0 && right % p->every == 0)
            buf_cp(b, p->every_ch);
        for (int k = 0; j > 0 && k < p->ngroups; k++) {
            if (p->group[k].pos == right)
                buf_cp(b, p->group[k].ch);
        }
        int d = j < width - len ? 0 : digits[j - (width - len)] - '0';
        buf_cp(b, p->zero + (uint32_t)d);
    }
    if (p->ordinal) /* by the last two digits: a may be past any integer type */
        buf_str(b, ordinal_suffix((uint64_t)(digits[len - 1] - '0') +
                                  (len > 1 ? 10 * (uint64_t)(digits[len - 2] - '0') : 0)));
    return NULL;
}

/* Word values for reading: the cardinals and ordinals of words_put. */
static bool word_value(const char *w, size_t n, uint64_t *v)
{
    for (uint64_t k = 0; k < 20; k++) {
        if ((strlen(small_words[k]) == n && same_ci(w, small_words[k], n)) ||
            (strlen(small_ordinals[k]) == n && same_ci(w, small_ordinals[k], n))) {
            *v = k;
            return true;
        }
    }
    for (uint64_t k = 0; k < 8; k++) {
        if ((strlen(tens_words[k]) == n && same_ci(w, tens_words[k], n)) ||
            (strlen(tens_ordinals[k]) == n && same_ci(w, tens_ordinals[k], n))) {
            *v = (k + 2) * 10;
            return true;
        }
    }
    uint64_t scale = 100;
    for (int k = -1; k < 4; k++) {
        const char *name = k < 0 ? "Hundred" : scale_words[k];
        size_t len = strlen(name);
        if (k >= 0)
            scale = k == 0 ? 1000 : scale * 1000;
        if ((n == len || (n == len + 2 && same_ci(w + len, "th", 2))) && same_ci(w, name, len)) {
            *v = scale;
            return true;
        }
    }
    return false;
}

/* The value of English words ("one thousand, two hundred and thirty-four",
 * any case): below 100 a word adds to the current group, Hundred multiplies
 * it, and a scale word closes it, so a group after Thousand starts afresh. */
static bool words_read(const char *s, size_t n, double *value)
{
    double groups[8] = {0};
    int top = 0, words = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == ' ' || s[i] == '-' || s[i] == ',') {
            i++;
            continue;
        }
        size_t start = i;
        while (i < n && is_alpha(s[i]))
            i++;
        if (i == start)
            return false;
        uint64_t v;
        if (i - start == 3 && same_ci(s + start, "and", 3))
            continue;
        if (!word_value(s + start, i - start, &v))
            return false;
        words++;
        if (v < 100) {
            if (groups[top] >= 1000) {
                if (top + 1 == (int)(sizeof groups / sizeof groups[0]))
                    return false;
                groups[++top] = 0;
            }
            groups[top] += (double)v;
        } else {
            groups[top] *= (double)v;
        }
    }
    double sum = 0;
    for (int k = 0; k <= top; k++)
        sum += groups[k];
    *value = sum;
    return words > 0;
}

/* The value of s (n bytes, all of it) in p's form, unsigned. False when s
 * does not have that form. */
static bool int_pic_read(const int_pic_t *p, const char *s, size_t n, double *value)
{
    if (n == 0)
        return false;
    if (p->kind == K_LETTERS) {
        double v = 0;
        for (size_t i = 0; i < n; i++) {
            if (!is_alpha(s[i]))
                return false;
            v = v * 26 + (lower(s[i]) - 'a' + 1);
        }
        *value = v;
        return v <= EXACT_MAX;
    }
    if (p->kind == K_ROMAN) {
        /* from the right: a numeral smaller than one after it subtracts */
        double v = 0;
        int biggest = 0;
        for (size_t i = n; i > 0; i--) {
            const char *at = strchr("ivxlcdm", lower(s[i - 1]));
            static const int values[] = {1, 5, 10, 50, 100, 500, 1000};
            if (s[i - 1] == '\0' || at == NULL)
                return false;
            int d = values[at - "ivxlcdm"];
            if (d < biggest) {
                v -= d;
            } else {
                biggest = d;
                v += d;
            }
        }
        *value = v;
        return true;
    }
    if (p->kind == K_WORDS)
        return words_read(s, n, value);
    /* decimal: digits of the family and the picture's separators (where
     * they are is not checked, as in jsonata-js), then the ordinal suffix.
     * SPEC: jsonata-js removes only commas, whatever the separator is. */
    if (p->ordinal && n > 2 && is_alpha(s[n - 1]) && is_alpha(s[n - 2])) {
        static const char *const suffixes[] = {"st", "nd", "rd", "th"};
        bool known = false;
        for (size_t k = 0; k < 4; k++)
            known = known || same_ci(s + n - 2, suffixes[k], 2);
        if (!known)
            return false;
        n -= 2;
    }
    char *ascii = malloc(n + 1);
    if (ascii == NULL)
        abort();
    size_t k = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok;) {
        uint32_t cp = u8_next(s, n, &i);
        if (cp >= p->zero && cp <= p->zero + 9) {
            ascii[k++] = (char)('0' + (cp - p->zero));
            continue;
        }
        bool sep = p->every > 0 && cp == p->every_ch;
        for (int g = 0; g < p->ngroups; g++)
            sep = sep || cp == p->group[g].ch;
        ok = sep && k > 0;
    }
    ascii[k] = '\0';
    ok = ok && k > 0;
    if (ok)
        *value = strtod(ascii, NULL);
    free(ascii);
    return ok;
}

swf_error_t *swf_asl_picture_integer_format(double value, const char *pic, size_t pic_len,
                                            char **out, size_t *out_len)
{
    *out = NULL;
    if (pic_len > SWF_LIMIT_PICTURE_BYTES)
        return qerr("the picture is longer than %d bytes", SWF_LIMIT_PICTURE_BYTES);
    int_pic_t p;
    swf_error_t *err = int_pic_analyse(pic, pic_len, &p);
    if (err)
        return err;
    if (!isfinite(value))
        return qerr("cannot write %g as an integer", value);
    /* JSONATA: rounded down (-2.5 is -3); F&O takes only integers */
    buf_t b = {0};
    err = int_pic_format(&p, floor(value), &b);
    if (err) {
        free(b.s);
        return err;
    }
    return buf_finish(&b, out, out_len);
}

swf_error_t *swf_asl_picture_integer_parse(const char *text, size_t text_len, const char *pic,
                                           size_t pic_len, double *value)
{
    if (pic_len > SWF_LIMIT_PICTURE_BYTES)
        return qerr("the picture is longer than %d bytes", SWF_LIMIT_PICTURE_BYTES);
    int_pic_t p;
    swf_error_t *err = int_pic_analyse(pic, pic_len, &p);
    if (err)
        return err;
    bool negative = text_len > 0 && text[0] == '-';
    /* SPEC: the whole text must have the picture's form (jsonata-js reads
     * a leading number and ignores the rest, "12abc" is 12, and gives null
     * for a text that does not start with one) */
    if (!int_pic_read(&p, text + negative, text_len - negative, value))
        return qerr("\"%.60s\" is not an integer written as \"%.*s\"", text, (int)pic_len, pic);
    if (negative)
        *value = -*value;
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Dates                                                                    */
/* ------------------------------------------------------------------------ */

#define DAY_MS 86400000LL

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. The
 * month may be outside 1 to 12 and the day outside the month (month 13 is
 * the next January, day 0 the last of the month before), as JavaScript's
 * Date.UTC reads them. The era arithmetic is H. Hinnant's. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y += floor_div(m - 1, 12);
    m -= floor_div(m - 1, 12) * 12;
    y -= m <= 2;
    int64_t era = floor_div(y, 400), yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468 + (d - 1);
}

static void civil_from_days(int64_t z, int *y, int *m, int *d)
{
    z += 719468;
    int64_t era = floor_div(z, 146097), doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

/* Monday 1 to Sunday 7 (1970-01-01 was a Thursday). */
static int weekday(int64_t days)
{
    return (int)((days % 7 + 7 + 3) % 7) + 1;
}

/* The Monday that starts week 1 of month m of year y: ISO 8601's first
 * week is the one holding the first Thursday, and F&O extends that to
 * months ([w]). */
static int64_t first_week(int y, int m)
{
    int64_t first = days_from_civil(y, m, 1);
    int wd = weekday(first);
    return wd > 4 ? first + (8 - wd) : first - (wd - 1);
}

/* The fields of a time, in the time zone it is shown in. */
typedef struct date_fields {
    int year, month, day, yday, wday; /* wday: Monday 1 to Sunday 7 */
    int hour, min, sec, ms;
    int week, month_week;      /* [W] ISO week of the year, [w] week of the month */
    int week_year, week_month; /* [X] and [x]: the year and month those weeks are of */
} date_fields_t;

static void date_fields(int64_t t, date_fields_t *f)
{
    int64_t days = floor_div(t, DAY_MS), in_day = t - days * DAY_MS;
    civil_from_days(days, &f->year, &f->month, &f->day);
    f->yday = (int)(days - days_from_civil(f->year, 1, 1)) + 1;
    f->wday = weekday(days);
    f->hour = (int)(in_day / 3600000);
    f->min = (int)(in_day / 60000 % 60);
    f->sec = (int)(in_day / 1000 % 60);
    f->ms = (int)(in_day % 1000);
    /* a day before this year's week 1 is in last year's last week; one on
     * or after next year's week 1 is in its first */
    int64_t start = first_week(f->year, 1);
    f->week_year = f->year;
    if (days < start) {
        f->week_year--;
        start = first_week(f->year - 1, 1);
    } else if (days >= first_week(f->year + 1, 1)) {
        f->week_year++;
        start = first_week(f->year + 1, 1);
    }
    f->week = (int)((days - start) / 7) + 1;
    /* the same for the weeks of a month (month 0 is last December) */
    start = first_week(f->year, f->month);
    f->week_month = f->month;
    if (days < start) {
        f->week_month--;
        start = first_week(f->year, f->month - 1);
    } else if (days >= first_week(f->year, f->month + 1)) {
        f->week_month++;
        start = first_week(f->year, f->month + 1);
    }
    f->week_month = (f->week_month + 11) % 12 + 1;
    f->month_week = (int)((days - start) / 7) + 1;
}

static const char *const month_names[] = {"January",   "February", "March",    "April",
                                          "May",       "June",     "July",     "August",
                                          "September", "October",  "November", "December"};
static const char *const day_names[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                        "Friday", "Saturday", "Sunday"};

/* One [component presentation, width] of a date picture. */
typedef struct marker {
    char comp;
    bool is_int; /* written with ip, an integer picture */
    int_pic_t ip;
    int names;        /* written as a name: 1 + C_LOWER, C_UPPER or C_TITLE; else 0 */
    int min_w, max_w; /* the width modifier; -1 where absent or * */
    int digits;       /* Y, M, D: digits kept of the year, and read; else -1 */
    bool zulu;        /* Z, z: UTC is written Z (the t modifier) */
} marker_t;

/* "min" or "min-max" of a width modifier, each digits or *. */
static swf_error_t *width_analyse(const char *w, size_t n, marker_t *m)
{
    int *field = &m->min_w;
    size_t i = 0;
    for (int part = 0; part < 2; part++) {
        if (i < n && w[i] == '*') {
            i++;
        } else {
            size_t start = i;
            long v = 0;
            for (; i < n && w[i] >= '0' && w[i] <= '9'; i++) {
                v = v * 10 + (w[i] - '0');
                if (v > SWF_LIMIT_PICTURE_BYTES)
                    return qerr("the width in [%c...,%.*s] is over %d", m->comp, (int)n, w,
                                SWF_LIMIT_PICTURE_BYTES);
            }
            if (i == start)
                break;
            *field = (int)v;
        }
        if (part == 0 && i < n && w[i] == '-') {
            i++;
            field = &m->max_w;
            continue;
        }
        break;
    }
    if (i != n || (field == &m->max_w && w[n - 1] == '-'))
        return qerr("the width \"%.*s\" is not min or min-max (digits or *)", (int)n, w);
    return NULL;
}

/* A marker's text, whitespace removed: the component letter, presentation
 * modifiers, and after the last comma a width. The defaults and the width
 * rules are jsonata-js's (JSONATA: [M,1-2] writes January as 01, as the
 * width's maximum becomes the minimum for the year, month and day; F&O
 * leaves this unclear). */
static swf_error_t *marker_analyse(const char *t, size_t n, marker_t *m)
{
    memset(m, 0, sizeof *m);
    m->min_w = m->max_w = m->digits = -1;
    if (n == 0)
        return qerr("the picture has an empty component []");
    m->comp = t[0];
    static const char comps[] = "YMDdFWwXxHhPmsfZzCE";
    static const char *const defaults[] = {"1", "1",     "1",     "1", "n", "1",  "1",
                                           "1", "1",     "1",     "1", "n", "01", "01",
                                           "1", "01:01", "01:01", "n", "n"};
    const char *known = strchr(comps, m->comp);
    if (m->comp == '\0' || known == NULL)
        return qerr("the picture component [%.*s] is unknown (components are Y M D d F W w X "
                    "x H h P m s f Z z C E)",
                    (int)n, t);
    const char *comma = NULL;
    for (size_t i = n; i > 1; i--) {
        if (t[i - 1] == ',') {
            comma = t + i - 1;
            break;
        }
    }
    if (comma) {
        swf_error_t *err = width_analyse(comma + 1, (size_t)(t + n - comma - 1), m);
        if (err)
            return err;
    }
    const char *p1 = t + 1;
    size_t n1 = comma ? (size_t)(comma - p1) : n - 1;
    char p2 = '\0';
    if (n1 == 0) {
        p1 = defaults[known - comps];
        n1 = strlen(p1);
    } else if (n1 > 1 && strchr("atco", p1[n1 - 1])) {
        p2 = p1[--n1];
    }
    if (p1[0] == 'n' || p1[0] == 'N') {
        m->names = 1 + (p1[0] == 'n' ? C_LOWER : n1 > 1 && p1[1] == 'n' ? C_TITLE : C_UPPER);
        if (!strchr("MxFPCE", m->comp))
            return qerr("the component [%.*s] has no names (months, days and am/pm have)", (int)n,
                        t);
        return NULL;
    }
    if (strchr("PCE", m->comp)) /* JSONATA: am/pm (or ISO) whatever the picture */
        return NULL;
    char ip[SWF_LIMIT_PICTURE_BYTES + 2];
    memcpy(ip, p1, n1);
    size_t nip = n1;
    if (p2 != '\0' && m->comp != 'Z' && m->comp != 'z') {
        ip[nip++] = ';';
        ip[nip++] = p2;
    }
    m->zulu = p2 == 't';
    swf_error_t *err = int_pic_analyse(ip, nip, &m->ip);
    if (err) {
        swf_error_prefix(err, "in [%.*s]", (int)n, t);
        return err;
    }
    m->is_int = true;
    if (m->comp == 'Z' || m->comp == 'z') {
        if (m->ip.kind != K_DECIMAL || (m->ip.every == 0 && m->ip.mandatory > 4))
            return qerr("the time zone [%.*s] is written with at most four digits (01:01, "
                        "0101, 01, 0)",
                        (int)n, t);
        return NULL;
    }
    if (m->ip.kind == K_DECIMAL && m->min_w > m->ip.mandatory)
        m->ip.mandatory = m->min_w;
    if (strchr("YMD", m->comp)) {
        if (m->max_w >= 0) {
            m->digits = m->max_w;
            m->ip.mandatory = m->max_w;
        } else if (m->ip.kind == K_DECIMAL && m->ip.mandatory + m->ip.optional >= 2) {
            m->digits = m->ip.mandatory + m->ip.optional;
        }
    }
    return NULL;
}

/* A part of a date picture: literal text or a marker. */
typedef struct part {
    bool literal;
    size_t start, len; /* the literal's bytes in text */
    marker_t m;
} part_t;

typedef struct picture {
    part_t *parts;
    size_t n;
    char *text; /* the literals, brackets undoubled */
} picture_t;

static void picture_free(picture_t *p)
{
    free(p->parts);
    free(p->text);
}

/* Splits a picture into literals and [markers] ([[ and ]] are brackets). */
static swf_error_t *picture_analyse(const char *pic, size_t n, picture_t *p)
{
    memset(p, 0, sizeof *p);
    if (n > SWF_LIMIT_PICTURE_BYTES)
        return qerr("the picture is longer than %d bytes", SWF_LIMIT_PICTURE_BYTES);
    if (memchr(pic, '\0', n))
        return qerr("the picture holds a NUL character");
    size_t markers = 0;
    for (size_t i = 0; i < n; i++)
        markers += pic[i] == '[';
    p->parts = calloc(2 * markers + 1, sizeof *p->parts);
    p->text = malloc(n + 1);
    if (p->parts == NULL || p->text == NULL)
        abort();
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        bool doubled = i + 1 < n && pic[i + 1] == pic[i];
        if (pic[i] != '[' || doubled) {
            part_t *lit = p->n > 0 && p->parts[p->n - 1].literal ? &p->parts[p->n - 1] : NULL;
            if (lit == NULL) {
                lit = &p->parts[p->n++];
                lit->literal = true;
                lit->start = k;
            }
            p->text[k++] = pic[i];
            lit->len++;
            i += (pic[i] == '[' || pic[i] == ']') && doubled ? 2 : 1;
            continue;
        }
        const char *end = memchr(pic + i, ']', n - i);
        if (end == NULL)
            return qerr("a component of the picture has no closing ]");
        char marker[SWF_LIMIT_PICTURE_BYTES];
        size_t len = 0;
        for (const char *c = pic + i + 1; c < end; c++) {
            if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r')
                marker[len++] = *c;
        }
        swf_error_t *err = marker_analyse(marker, len, &p->parts[p->n++].m);
        if (err)
            return err;
        i = (size_t)(end - pic) + 1;
    }
    return NULL;
}

/* A time zone as [Z] writes it: the offset as a number (+0530, -0630 for
 * -0530 given as jsonata-js reads it) in the marker's integer picture, or,
 * for one or two digits, the hours alone with :mm where there are minutes
 * (SPEC: jsonata-js writes -6:-30 there). */
static swf_error_t *zone_format(const marker_t *m, int zone, buf_t *b)
{
    int sign = zone < 0 ? -1 : 1, h = abs(zone) / 60, mins = abs(zone) % 60;
    if (m->zulu && zone == 0) { /* JSONATA: [zt] writes Z too, not GMTZ */
        buf_str(b, "Z");
        return NULL;
    }
    if (m->comp == 'z')
        buf_str(b, "GMT");
    if (zone >= 0)
        buf_str(b, "+");
    if (m->ip.every == 0 && m->ip.mandatory <= 2) {
        if (zone < 0)
            buf_str(b, "-");
        swf_error_t *err = int_pic_format(&m->ip, h, b);
        if (!err && mins != 0) {
            char mm[8];
            snprintf(mm, sizeof mm, ":%02d", mins);
            buf_str(b, mm);
        }
        return err;
    }
    return int_pic_format(&m->ip, sign * (h * 100 + mins), b);
}

static swf_error_t *marker_format(const marker_t *m, const date_fields_t *f, int zone, buf_t *b)
{
    switch (m->comp) {
    case 'C':
    case 'E':
        buf_str(b, "ISO"); /* the calendar and the era: ISO, as jsonata-js writes them */
        return NULL;
    case 'P':
        buf_str(b, m->names == 1 + C_UPPER ? (f->hour < 12 ? "AM" : "PM")
                                           : (f->hour < 12 ? "am" : "pm"));
        return NULL;
    case 'Z':
    case 'z':
        return zone_format(m, zone, b);
    default:
        break;
    }
    if (m->names) {
        const char *name = m->comp == 'M'   ? month_names[f->month - 1]
                           : m->comp == 'x' ? month_names[f->week_month - 1]
                                            : day_names[f->wday - 1];
        size_t len = strlen(name);
        if (m->max_w >= 0 && (size_t)m->max_w < len)
            len = (size_t)m->max_w; /* JSONATA: names are cut, never padded */
        for (size_t i = 0; i < len; i++) {
            char c = m->names == 1 + C_UPPER            ? upper(name[i])
                     : m->names == 1 + C_LOWER || i > 0 ? lower(name[i])
                                                        : name[i];
            buf_add(b, &c, 1);
        }
        return NULL;
    }
    int v = 0;
    switch (m->comp) {
    case 'Y':
        v = f->year;
        if (m->digits >= 0 && m->digits < 9) {
            int mod = 1;
            for (int k = 0; k < m->digits; k++)
                mod *= 10;
            v %= mod;
        }
        break;
    case 'M':
        v = f->month;
        break;
    case 'D':
        v = f->day;
        break;
    case 'd':
        v = f->yday;
        break;
    case 'F':
        v = f->wday;
        break;
    case 'W':
        v = f->week;
        break;
    case 'w':
        v = f->month_week;
        break;
    case 'X':
        v = f->week_year;
        break;
    case 'x':
        v = f->week_month;
        break;
    case 'H':
        v = f->hour;
        break;
    case 'h':
        v = f->hour % 12 == 0 ? 12 : f->hour % 12;
        break;
    case 'm':
        v = f->min;
        break;
    case 's':
        v = f->sec;
        break;
    case 'f':
        /* JSONATA: the milliseconds as an integer, so [f001] is 045 and
         * [f1] is 45 (F&O reads the picture as a fraction: 0) */
        v = f->ms;
        break;
    }
    return int_pic_format(&m->ip, v, b);
}

swf_error_t *swf_asl_picture_date_format(int64_t ms, int zone_minutes, const char *pic,
                                         size_t pic_len, char **out, size_t *out_len)
{
    *out = NULL;
    picture_t p;
    swf_error_t *err = picture_analyse(pic, pic_len, &p);
    date_fields_t f;
    date_fields(ms + (int64_t)zone_minutes * 60000, &f);
    buf_t b = {0};
    for (size_t i = 0; !err && i < p.n; i++) {
        if (p.parts[i].literal)
            buf_add(&b, p.text + p.parts[i].start, p.parts[i].len);
        else
            err = marker_format(&p.parts[i].m, &f, zone_minutes, &b);
    }
    picture_free(&p);
    if (err) {
        free(b.s);
        return err;
    }
    return buf_finish(&b, out, out_len);
}

/* ---- reading a timestamp with a picture ---- */

/* The match of a timestamp against a picture's parts, backtracking as the
 * regular expression jsonata-js builds from the picture does: each marker
 * takes the longest text it can that lets the rest match ("[H01][m01]"
 * reads "1230" as 123 hours and 0 minutes, as there). Literals match
 * without regard to ASCII case, as there. */
typedef struct matcher {
    const picture_t *p;
    const char *s;
    size_t n;
    size_t *ends; /* where each part's match ends */
    long steps;
} matcher_t;

/* Bytes of s[at..] that are digits of the family zero, counted in digits;
 * *width is the bytes of one. */
static size_t digit_run(const char *s, size_t n, size_t at, uint32_t zero, size_t *width)
{
    size_t count = 0, i = at;
    *width = zero < 0x80 ? 1 : zero < 0x800 ? 2 : 3;
    while (i < n) {
        size_t j = i;
        uint32_t cp = u8_next(s, n, &j);
        if (cp < zero || cp > zero + 9)
            break;
        count++;
        i = j;
    }
    return count;
}

static size_t run_of(const char *s, size_t n, size_t at, const char *set)
{
    size_t i = at;
    while (i < n && s[i] != '\0' && (strchr(set, s[i]) || (set[0] == '\0' && is_alpha(s[i]))))
        i++;
    return i - at;
}

static const char *const word_tokens[] = {"and", " ", ",", "-"};
#define WORD_MAX 12 /* letters of the longest word ("Seventeenth", "Thousandth") */

/* The lengths of s[at..at+run] that are English words (with and, spaces,
 * commas and hyphens), longest first below `below`. */
static bool words_next_len(matcher_t *mt, size_t at, size_t run, size_t below, size_t *len)
{
    bool *ok = calloc(run + 1, sizeof *ok), *word = calloc(run + 1, sizeof *word);
    if (ok == NULL || word == NULL)
        abort();
    const char *s = mt->s + at;
    ok[0] = true;
    for (size_t k = 1; k <= run; k++) {
        /* the last token ends at k and is at most WORD_MAX letters long */
        mt->steps += WORD_MAX;
        for (size_t j = k > WORD_MAX ? k - WORD_MAX : 0; j < k && !word[k]; j++) {
            if (!ok[j])
                continue;
            uint64_t v;
            bool is_word = word_value(s + j, k - j, &v);
            bool other = false;
            for (size_t t = 0; t < 4 && !is_word && !other; t++)
                other = strlen(word_tokens[t]) == k - j && same_ci(s + j, word_tokens[t], k - j);
            if (is_word || other) {
                ok[k] = true;
                word[k] = word[k] || is_word || word[j];
            }
        }
    }
    bool found = false;
    for (size_t k = run < below ? run + 1 : below; k-- > 1 && !found;) {
        if (word[k]) {
            *len = k;
            found = true;
        }
    }
    free(ok);
    free(word);
    return found;
}

/* The longest text below `below` bytes at `at` that part k may take. */
static bool part_next_len(matcher_t *mt, const part_t *part, size_t at, size_t below, size_t *len)
{
    const char *s = mt->s;
    size_t n = mt->n, left = n - at;
    if (part->literal) {
        *len = part->len;
        mt->steps += (long)part->len + 1;
        return part->len < below && part->len <= left &&
               same_ci(s + at, mt->p->text + part->start, part->len);
    }
    const marker_t *m = &part->m;
    mt->steps += (long)left + 1;
    if (m->comp == 'Z' || m->comp == 'z') {
        /* [GMT] then Z (SPEC: with t; jsonata-js reads no Z), or +hh[:]mm */
        size_t i = at;
        if (m->comp == 'z') {
            if (left < 3 || !same_ci(s + at, "GMT", 3))
                return false;
            i += 3;
        }
        if (i < n && s[i] == 'Z' && m->zulu) {
            *len = i + 1 - at;
            return *len < below;
        }
        if (i >= n || (s[i] != '+' && s[i] != '-'))
            return false;
        i++;
        size_t w, run1 = digit_run(s, n, i, '0', &w);
        if (run1 == 0)
            return false;
        if (m->ip.every > 0) {
            if (m->ip.every_ch >= 0x80 || i + run1 >= n || s[i + run1] != (char)m->ip.every_ch)
                return false;
            i += run1 + 1;
            size_t run2 = digit_run(s, n, i, '0', &w);
            for (size_t d = run2; d > 0; d--) {
                if (i + d - at < below) {
                    *len = i + d - at;
                    return true;
                }
            }
            return false;
        }
        for (size_t d = run1; d > 0; d--) {
            if (i + d - at < below) {
                *len = i + d - at;
                return true;
            }
        }
        return false;
    }
    if (m->names || m->comp == 'P') {
        /* the longest name (or its first max_w letters) the text starts with;
         * am or pm whatever [P]'s presentation, as in jsonata-js */
        const char *const *names = m->comp == 'F' ? day_names : month_names;
        size_t count = m->comp == 'F' ? 7 : 12, best = 0;
        static const char *const ampm[] = {"am", "pm"};
        if (m->comp == 'P') {
            names = ampm;
            count = 2;
        }
        for (size_t k = 0; k < count; k++) {
            size_t l = strlen(names[k]);
            if (m->max_w >= 0 && (size_t)m->max_w < l)
                l = (size_t)m->max_w;
            if (l > 0 && l < below && l > best && l <= left && same_ci(s + at, names[k], l))
                best = l;
        }
        *len = best;
        return best > 0;
    }
    if (m->ip.kind == K_LETTERS || m->ip.kind == K_ROMAN) {
        size_t run = run_of(s, n, at, m->ip.kind == K_ROMAN ? "ivxlcdmIVXLCDM" : "");
        *len = run < below ? run : below - 1;
        return *len > 0;
    }
    if (m->ip.kind == K_WORDS) {
        size_t run = run_of(s, n, at, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,-");
        return words_next_len(mt, at, run, below, len);
    }
    /* decimal digits: exactly the year's, month's or day's digits where the
     * picture fixes them ([Y0001], [M01]; fewer by its # signs), else any
     * number; then st, nd, rd or th for an ordinal */
    size_t width, run = digit_run(s, n, at, m->ip.zero, &width);
    size_t lo = 1, hi = run;
    if (m->digits > 0) {
        hi = (size_t)m->digits;
        lo = m->ip.optional < m->digits ? (size_t)(m->digits - m->ip.optional) : 1;
    }
    for (size_t d = hi < run ? hi : run; d >= lo && d > 0; d--) {
        size_t l = d * width;
        if (m->ip.ordinal) {
            static const char *const suffixes[] = {"st", "nd", "rd", "th"};
            bool suffix = false;
            for (size_t k = 0; k < 4 && at + l + 2 <= n; k++)
                suffix = suffix || same_ci(s + at + l, suffixes[k], 2);
            if (!suffix)
                continue;
            l += 2;
        }
        if (l < below) {
            *len = l;
            return true;
        }
    }
    return false;
}

static bool match_from(matcher_t *mt, size_t k, size_t at)
{
    if (k == mt->p->n)
        return at == mt->n;
    size_t below = mt->n - at + 1, len;
    while (mt->steps <= MATCH_STEPS_MAX && part_next_len(mt, &mt->p->parts[k], at, below, &len)) {
        mt->ends[k] = at + len;
        if (match_from(mt, k + 1, at + len))
            return true;
        below = len;
    }
    return false;
}

/* The value a marker's matched text stands for. */
static bool marker_read(const marker_t *m, const char *s, size_t n, double *v)
{
    if (m->comp == 'Z' || m->comp == 'z') {
        size_t i = m->comp == 'z' ? 3 : 0;
        if (s[i] == 'Z') {
            *v = 0;
            return true;
        }
        int sign = s[i++] == '-' ? -1 : 1;
        double h = 0, mins = 0;
        size_t digits = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
            h = h * 10 + (s[i] - '0');
        if (i < n) { /* hh:mm */
            for (i++; i < n; i++)
                mins = mins * 10 + (s[i] - '0');
        } else if (digits > 2) { /* hhmm: the last two digits are minutes */
            mins = fmod(h, 100);
            h = floor(h / 100);
        }
        *v = sign * (h * 60 + mins);
        return true;
    }
    if (m->names || m->comp == 'P') {
        const char *const *names = m->comp == 'F' ? day_names : month_names;
        size_t count = m->comp == 'F' ? 7 : 12;
        if (m->comp == 'P') {
            *v = same_ci(s, "pm", 2);
            return true;
        }
        for (size_t k = 0; k < count; k++) {
            size_t l = strlen(names[k]);
            if (m->max_w >= 0 && (size_t)m->max_w < l)
                l = (size_t)m->max_w;
            if (l == n && same_ci(s, names[k], n)) {
                *v = (double)k + 1;
                return true;
            }
        }
        return false;
    }
    return int_pic_read(&m->ip, s, n, v);
}

/* Whether the components given (a set of letters) are among `allowed`, and
 * some are. */
static bool given_within(const bool *given, const char *all, const char *allowed)
{
    bool any = false;
    for (const char *c = all; *c; c++) {
        if (given[(unsigned char)*c] && strchr(allowed, *c) == NULL)
            return false;
        any = any || given[(unsigned char)*c];
    }
    return any;
}

swf_error_t *swf_asl_picture_date_parse(const char *text, size_t text_len, const char *pic,
                                        size_t pic_len, int64_t now_ms, double *ms, bool *matched)
{
    *matched = false;
    if (text_len > SWF_LIMIT_PICTURE_BYTES)
        return qerr("the timestamp is longer than %d bytes", SWF_LIMIT_PICTURE_BYTES);
    picture_t p;
    swf_error_t *err = picture_analyse(pic, pic_len, &p);
    for (size_t k = 0; !err && k < p.n; k++) {
        const marker_t *m = &p.parts[k].m;
        if (!p.parts[k].literal && (m->comp == 'C' || m->comp == 'E'))
            err = qerr("the component [%c] cannot be read (write the calendar and era as text)",
                       m->comp);
    }
    if (err) {
        picture_free(&p);
        return err;
    }
    size_t *ends = calloc(p.n + 1, sizeof *ends);
    if (ends == NULL)
        abort();
    matcher_t mt = {&p, text, text_len, ends, 0};
    bool ok = match_from(&mt, 0, 0);
    if (!ok && mt.steps > MATCH_STEPS_MAX) {
        err = qerr("the timestamp could not be matched against the picture in %d steps",
                   MATCH_STEPS_MAX);
        goto out;
    }
    /* the components given, by letter (a later one wins, as in jsonata-js) */
    bool given[128] = {false};
    double value[128] = {0};
    size_t at = 0;
    for (size_t k = 0; ok && k < p.n; at = ends[k++]) {
        const marker_t *m = &p.parts[k].m;
        if (p.parts[k].literal)
            continue;
        if (!marker_read(m, text + at, ends[k] - at, &value[(unsigned char)m->comp])) {
            ok = false;
            break;
        }
        if (!(fabs(value[(unsigned char)m->comp]) <= 1e12)) {
            err = qerr("the %c component of \"%.60s\" is out of range", m->comp, text);
            goto out;
        }
        given[(unsigned char)m->comp] = true;
    }
    bool any = false;
    for (size_t c = 0; c < 128; c++)
        any = any || given[c];
    if (!ok || !any) /* no match, or nothing to read: undefined */
        goto out;
    /* Which date (Y M D, or Y d) and time (H m s f, or P h m s f) the text
     * gives; components outside the one chosen are ignored. */
    bool year_day =
        !given_within(given, "YXMxWwdD", "YMD") && given_within(given, "YXMxWwdD", "Yd");
    if (given_within(given, "YXMxWwdD", "Xxw") || given_within(given, "YXMxWwdD", "XW")) {
        err = qerr("ISO week dates ([X] [W] [w] [x]) cannot be read");
        goto out;
    }
    bool half_day =
        !given_within(given, "PHhmsf", "Hmsf") && given_within(given, "PHhmsf", "Phmsf");
    /* Those before the first given are now's (JSONATA: except am/pm,
     * which is am); those after the last given the lowest; a gap between
     * given ones is an error. SPEC: jsonata-js completes a year and day of
     * the year ([Y]-[d]) with the day of the month, so that its time of
     * day is now's, not midnight. */
    const char *order =
        year_day ? (half_day ? "YdPhmsf" : "YdHmsf") : (half_day ? "YMDPhmsf" : "YMDHmsf");
    bool started = false, ended = false;
    date_fields_t now;
    for (const char *c = order; *c; c++) {
        unsigned char ch = (unsigned char)*c;
        if (given[ch]) {
            if (ended) {
                err = qerr("the picture gives the %c component but not those between it and "
                           "the larger ones it gives",
                           *c);
                goto out;
            }
            started = true;
            continue;
        }
        if (started) {
            value[ch] = strchr("MDd", *c) ? 1 : 0;
            ended = true;
            continue;
        }
        if (*c == 'P') {
            value[ch] = 0;
            continue;
        }
        if (now_ms == 0) {
            err = qerr("the timestamp gives no %c component, which would be now's, and this "
                       "evaluation has no time (it is not part of a decision)",
                       *c);
            goto out;
        }
        date_fields(now_ms, &now);
        int fields[128] = {0};
        fields['Y'] = now.year, fields['M'] = now.month, fields['D'] = now.day;
        fields['d'] = now.yday, fields['H'] = now.hour, fields['m'] = now.min;
        fields['h'] = now.hour % 12 == 0 ? 12 : now.hour % 12;
        fields['s'] = now.sec, fields['f'] = now.ms;
        value[ch] = fields[ch];
    }
    /* JavaScript's Date.UTC: years 0 to 99 are 1900 to 1999 (JSONATA), and
     * months and days past their end roll over (JSONATA: 2024-02-30 is
     * March 1st) */
    double y = value['Y'];
    if (y >= 0 && y <= 99)
        y += 1900;
    int64_t days;
    if (year_day) {
        days = days_from_civil((int64_t)y, 1, 1) + (int64_t)value['d'] - 1;
    } else {
        int64_t month = value['M'] > 0 ? (int64_t)value['M'] : 1;
        days = days_from_civil((int64_t)y, month, 1) + (int64_t)value['D'] - 1;
    }
    double hour = value['H'];
    if (half_day)
        hour = (value['h'] == 12 ? 0 : value['h']) + (value['P'] == 1 ? 12 : 0);
    double t = (double)days * DAY_MS + hour * 3600000 + value['m'] * 60000 + value['s'] * 1000 +
               value['f'];
    t -= (given['Z'] ? value['Z'] : value['z']) * 60000;
    if (!(fabs(t) <= 8.64e15)) {
        err = qerr("\"%.60s\" is outside the range of times (100,000,000 days from 1970)", text);
        goto out;
    }
    *ms = t;
    *matched = true;
out:
    free(ends);
    picture_free(&p);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Decimal numbers (F&O 3.1, 4.7 format-number)                             */
/* ------------------------------------------------------------------------ */

/* The symbols of a decimal format (picture.h). */
typedef swf_asl_picture_decimal_t decimal_format_t;

/* Grouping separators a part may hold; more is an error. */
#define FORMAT_GROUPS_MAX 32

/* One sub-picture, analysed (F&O 4.7.4). Grouping positions count digits:
 * from the decimal separator leftwards in the integer part, rightwards in
 * the fraction. */
typedef struct sub_picture {
    const uint32_t *prefix, *suffix;
    size_t nprefix, nsuffix;
    int min_int, min_frac, max_frac, min_exp;
    bool has_exp;
    int int_groups[FORMAT_GROUPS_MAX], nint_groups, frac_groups[FORMAT_GROUPS_MAX], nfrac_groups;
    int every;    /* regular integer grouping: a separator every `every` digits; 0: as listed */
    double scale; /* 100 with a percent sign, 1000 with a per-mille sign, else 1 */
} sub_picture_t;

static bool fmt_is_digit(const decimal_format_t *f, uint32_t ch)
{
    return ch >= f->zero && ch <= f->zero + 9;
}

/* A character of the mantissa: a digit, the digit sign, a separator. */
static bool fmt_is_mantissa(const decimal_format_t *f, uint32_t ch)
{
    return fmt_is_digit(f, ch) || ch == f->digit || ch == f->decimal || ch == f->grouping;
}

/* One part of the mantissa, read outwards from the decimal separator at
 * cp[point] (`count` characters: leftwards for the integer part, rightwards
 * for the fraction): the mandatory digits stand nearest the separator, so a
 * digit past a digit sign (#) is an error (`misplaced`). Records where the
 * grouping separators stand, counted in digits from the separator;
 * *mandatory counts the digits, *places the digits and digit signs. */
static swf_error_t *mantissa_part_parse(const decimal_format_t *f, const uint32_t *cp, size_t point,
                                        size_t count, bool leftwards, const char *misplaced,
                                        int *groups, int *ngroups, int *mandatory, int *places)
{
    bool hash_seen = false;
    for (size_t k = 0; k < count; k++) {
        uint32_t ch = cp[leftwards ? point - 1 - k : point + 1 + k];
        if (ch == f->grouping) {
            if (*ngroups == FORMAT_GROUPS_MAX)
                return qerr("the picture has too many grouping separators");
            groups[(*ngroups)++] = *places;
            continue;
        }
        if (fmt_is_digit(f, ch)) {
            if (hash_seen)
                return qerr("%s", misplaced);
            (*mandatory)++;
        } else {
            hash_seen = true;
        }
        (*places)++;
    }
    return NULL;
}

static swf_error_t *sub_picture_parse(const decimal_format_t *f, const uint32_t *cp, size_t n,
                                      sub_picture_t *p)
{
    memset(p, 0, sizeof(*p));
    size_t first = 0;
    while (first < n && !fmt_is_mantissa(f, cp[first]))
        first++;
    size_t end = first;
    while (end < n && fmt_is_mantissa(f, cp[end]))
        end++;
    size_t suffix = end;
    if (end < n && end > first && cp[end] == f->exponent && end + 1 < n &&
        fmt_is_digit(f, cp[end + 1])) {
        p->has_exp = true;
        for (suffix = end + 1; suffix < n && fmt_is_digit(f, cp[suffix]); suffix++)
            p->min_exp++;
    }
    for (size_t i = suffix; i < n; i++) {
        if (fmt_is_mantissa(f, cp[i]))
            return qerr("the picture has a character that is not a digit or a separator "
                        "between its digits");
    }
    p->prefix = cp;
    p->nprefix = first;
    p->suffix = cp + suffix;
    p->nsuffix = n - suffix;
    int percents = 0, permilles = 0;
    for (size_t i = 0; i < n; i++) {
        if (i >= first && i < suffix)
            continue;
        percents += cp[i] == f->percent;
        permilles += cp[i] == f->permille;
    }
    if (percents + permilles > 1)
        return qerr("the picture has more than one percent or per-mille sign");
    p->scale = percents ? 100 : permilles ? 1000 : 1;
    size_t point = end;
    int digits = 0;
    for (size_t i = first; i < end; i++) {
        if (cp[i] == f->decimal) {
            if (point != end)
                return qerr("the picture has more than one decimal separator");
            point = i;
        }
        digits += fmt_is_digit(f, cp[i]) || cp[i] == f->digit;
    }
    if (digits == 0)
        return qerr("the picture has no digit and no digit sign (#)");
    for (size_t i = first; i < end; i++) {
        if (cp[i] != f->grouping)
            continue;
        bool after_sep = i > first && (cp[i - 1] == f->grouping || cp[i - 1] == f->decimal);
        bool before_sep = i + 1 == end || cp[i + 1] == f->grouping || cp[i + 1] == f->decimal;
        if (after_sep || before_sep)
            return qerr("a grouping separator must not stand next to another separator or end "
                        "a part of the picture");
    }
    /* The integer part, right to left: mandatory digits (#s only before
     * them); the fraction, left to right: mandatory digits (#s only after
     * them). */
    int int_places = 0;
    swf_error_t *err =
        mantissa_part_parse(f, cp, point, point - first, true,
                            "in the integer part, a digit sign (#) must not follow a digit",
                            p->int_groups, &p->nint_groups, &p->min_int, &int_places);
    if (!err)
        err = mantissa_part_parse(f, cp, point, point < end ? end - point - 1 : 0, false,
                                  "in the fraction, a digit must not follow a digit sign (#)",
                                  p->frac_groups, &p->nfrac_groups, &p->min_frac, &p->max_frac);
    if (err)
        return err;
    if (p->min_int == 0 && p->max_frac == 0) {
        if (p->has_exp)
            p->min_frac = p->max_frac = 1;
        else
            p->min_int = 1;
    }
    if (p->min_int == 0 && p->min_frac == 0)
        p->min_frac = 1; /* "#.##" shows 1 as "1.0" and 0 as ".0" */
    /* Regular grouping: separators at G, 2G, 3G... repeat every G digits. */
    if (p->nint_groups > 0) {
        int g = p->int_groups[0];
        for (int k = 1; k < p->nint_groups; k++)
            g = p->int_groups[k] < g ? p->int_groups[k] : g;
        bool regular = g > 0;
        for (int k = 0; regular && k < p->nint_groups; k++) {
            bool found = false;
            for (int m = 0; m < p->nint_groups; m++)
                found = found || p->int_groups[m] == g * (k + 1);
            regular = found;
        }
        p->every = regular ? g : 0;
    }
    return NULL;
}

/* Adds a string of ASCII digits to b in the format's digit family. */
static void fmt_digits(buf_t *b, const decimal_format_t *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_cp(b, f->zero + (uint32_t)(s[i] - '0'));
}

static void fmt_put(buf_t *b, const uint32_t *cp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_cp(b, cp[i]);
}

/* Whether the integer part has a separator `pos` digits from its right. */
static bool fmt_int_group_at(const sub_picture_t *p, int pos)
{
    if (p->every > 0)
        return pos % p->every == 0;
    for (int k = 0; k < p->nint_groups; k++) {
        if (p->int_groups[k] == pos)
            return true;
    }
    return false;
}

/* a / 10^e, multiplied when e < 0 (2.675 * 10 is 26.75, 2.675 / 0.1 is
 * not), as jsonata-js computes a mantissa. */
static double scale10(double a, int e)
{
    return e < 0 ? a * pow(10, -e) : a / pow(10, e);
}

/* Formats |d| (not NaN) with a sub-picture into b. */
static void sub_picture_format(buf_t *b, const decimal_format_t *f, const sub_picture_t *p,
                               double a)
{
    if (isinf(a)) {
        buf_str(b, f->infinity);
        return;
    }
    int e = 0;
    if (p->has_exp && a != 0) {
        e = (int)floor(log10(a)) + 1 - p->min_int;
        double m = scale10(a, e);
        /* log10 may be a hair off near a power of ten. A mantissa that
         * rounding carries (9.9999 with '0.00e0') is written as it comes,
         * "10.00e0": jsonata-js does so, and Step Functions runs it. */
        if (p->min_int > 0 && m < pow(10, p->min_int - 1)) {
            e--;
            m = scale10(a, e);
        } else if (m >= pow(10, p->min_int)) {
            e++;
            m = scale10(a, e);
        }
        a = m;
    }
    double r = swf_asl_number_round(a, p->max_frac);
    char text[400];
    snprintf(text, sizeof(text), "%.*f", p->max_frac, r);
    char *dot = strchr(text, '.');
    size_t nint = dot ? (size_t)(dot - text) : strlen(text);
    const char *frac = dot ? dot + 1 : "";
    size_t nfrac = strlen(frac);
    const char *ip = text;
    while (nint > 0 && *ip == '0') { /* leading zeros go, then min_int comes back */
        ip++;
        nint--;
    }
    while (nfrac > (size_t)p->min_frac && frac[nfrac - 1] == '0')
        nfrac--;
    int pad = p->min_int > (int)nint ? p->min_int - (int)nint : 0;
    if (nint == 0 && pad == 0 && (nfrac == 0 || p->has_exp))
        pad = 1; /* never nothing at all; a mantissa reads 0.1e1, not .1e1 */
    int total = pad + (int)nint;
    for (int k = 0; k < total; k++) {
        int from_right = total - k;
        if (k > 0 && fmt_int_group_at(p, from_right))
            buf_cp(b, f->grouping);
        if (k < pad)
            buf_cp(b, f->zero);
        else
            fmt_digits(b, f, ip + (k - pad), 1);
    }
    if (nfrac > 0) {
        buf_cp(b, f->decimal);
        for (size_t k = 0; k < nfrac; k++) {
            for (int g = 0; k > 0 && g < p->nfrac_groups; g++) {
                if (p->frac_groups[g] == (int)k)
                    buf_cp(b, f->grouping);
            }
            fmt_digits(b, f, frac + k, 1);
        }
    }
    if (p->has_exp) {
        buf_cp(b, f->exponent);
        if (e < 0)
            buf_cp(b, f->minus);
        char exp[16];
        int len = snprintf(exp, sizeof(exp), "%0*d", p->min_exp, e < 0 ? -e : e);
        fmt_digits(b, f, exp, (size_t)len);
    }
}

swf_error_t *swf_asl_picture_number_format(double value, const uint32_t *pic, size_t pic_len,
                                           const swf_asl_picture_decimal_t *format, char **out,
                                           size_t *out_len)
{
    const decimal_format_t *f = format;
    const uint32_t *cp = pic;
    size_t n = pic_len;
    double d = value;
    swf_error_t *err = NULL;
    *out = NULL;
    size_t split = n;
    for (size_t i = 0; i < n; i++) {
        if (cp[i] != f->pattern)
            continue;
        if (split != n)
            err = qerr("the picture has more than two sub-pictures");
        split = i;
    }
    sub_picture_t subs[2];
    size_t nsubs = split == n ? 1 : 2;
    if (!err)
        err = sub_picture_parse(f, cp, split, &subs[0]);
    if (!err && nsubs == 2)
        err = sub_picture_parse(f, cp + split + 1, n - split - 1, &subs[1]);
    if (err)
        return err;
    buf_t b = {0};
    if (isnan(d)) {
        buf_str(&b, f->nan);
    } else {
        const sub_picture_t *p = d < 0 && nsubs == 2 ? &subs[1] : &subs[0];
        if (d < 0 && nsubs == 1)
            buf_cp(&b, f->minus); /* before the prefix: -$1.00 */
        fmt_put(&b, p->prefix, p->nprefix);
        sub_picture_format(&b, f, p, fabs(d) * p->scale);
        fmt_put(&b, p->suffix, p->nsuffix);
    }
    if (b.s == NULL)
        buf_add(&b, "", 0);
    *out = b.s; /* cut at the limit, not refused (see picture.h) */
    *out_len = b.n;
    return NULL;
}
