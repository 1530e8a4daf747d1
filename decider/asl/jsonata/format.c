/*
 * format.c - TODO.
 */
#include "decider/asl/jsonata/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/picture.h"

/* $formatBase(number[, radix]): the integer (rounded) in base 2 to 36. */
swf_error_t *jn__fn_format_base(call_t *c, val_t *out)
{
    double d, radix = 10;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_number(c, 0, &d);
    if (!err && jn__has_arg(c, 1))
        err = jn__want_integer(c, 1, &radix);
    if (!err && (radix < 2 || radix > 36))
        err = qerr("argument 2 (radix) must be between 2 and 36, not %g", radix);
    if (!err && fabs(d) >= 9007199254740992.0)
        err = qerr("argument 1 is too large to format exactly");
    if (err)
        return err;
    double r = jn__round_half_even(d, 0);
    bool neg = r < 0;
    uint64_t v = (uint64_t)fabs(r);
    char digits[80], *p = digits + sizeof digits - 1;
    *p = '\0';
    do {
        *--p = "0123456789abcdefghijklmnopqrstuvwxyz"[v % (uint64_t)radix];
        v /= (uint64_t)radix;
    } while (v > 0);
    if (neg)
        *--p = '-';
    *out = jn__val_take(json_object_new_string(p));
    return NULL;
}

/* Rounds half to even at `precision` decimal places, shifting the decimal
 * point in the text as JSONata does so that 2.675 rounds to 2.68. */
double jn__round_half_even(double d, int precision)
{
    char t[96];
    jn__js_number_format(d, t);
    char *e = strchr(t, 'e');
    int exp10 = precision;
    if (e) {
        exp10 += atoi(e + 1);
        *e = '\0';
    }
    char shifted[128];
    snprintf(shifted, sizeof shifted, "%se%d", t, exp10);
    double v = strtod(shifted, NULL);
    double r = round(v);
    if (fabs(r - v) == 0.5 && fmod(fabs(r), 2) == 1)
        r -= (r > v) ? 1 : -1;
    if (r == 0)
        r = 0; /* no -0 */
    jn__js_number_format(r, t);
    e = strchr(t, 'e');
    exp10 = -precision;
    if (e) {
        exp10 += atoi(e + 1);
        *e = '\0';
    }
    snprintf(shifted, sizeof shifted, "%se%d", t, exp10);
    return strtod(shifted, NULL);
}

/* $formatNumber (XPath and XQuery Functions and Operators 3.1, 4.7)        */
/* ------------------------------------------------------------------------ */

/* The symbols of a decimal format (F&O 4.7.1): one character each, but the
 * two strings; the digits are zero to zero + 9. */
typedef struct decimal_format {
    unsigned long decimal, grouping, exponent, percent, permille, zero, digit, pattern, minus;
    const char *infinity, *nan;
} decimal_format_t;

/* Grouping separators a part may hold; more is an error. */
#define FORMAT_GROUPS_MAX 32

/* One sub-picture, analysed (F&O 4.7.4). Grouping positions count digits:
 * from the decimal separator leftwards in the integer part, rightwards in
 * the fraction. */
typedef struct sub_picture {
    const unsigned long *prefix, *suffix;
    size_t nprefix, nsuffix;
    int min_int, min_frac, max_frac, min_exp;
    bool has_exp;
    int int_groups[FORMAT_GROUPS_MAX], nint_groups, frac_groups[FORMAT_GROUPS_MAX], nfrac_groups;
    int every;    /* regular integer grouping: a separator every `every` digits; 0: as listed */
    double scale; /* 100 with a percent sign, 1000 with a per-mille sign, else 1 */
} sub_picture_t;

static bool fmt_is_digit(const decimal_format_t *f, unsigned long ch)
{
    return ch >= f->zero && ch <= f->zero + 9;
}

static bool fmt_is_mantissa(const decimal_format_t *f, unsigned long ch)
{
    return fmt_is_digit(f, ch) || ch == f->digit || ch == f->decimal || ch == f->grouping;
}

static swf_error_t *sub_picture_parse(const decimal_format_t *f, const unsigned long *cp, size_t n,
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
     * them) and where the separators stand. */
    int seen = 0;
    bool hash_seen = false;
    for (size_t i = point; i-- > first;) {
        unsigned long ch = cp[i];
        if (ch == f->grouping) {
            if (p->nint_groups == FORMAT_GROUPS_MAX)
                return qerr("the picture has too many grouping separators");
            p->int_groups[p->nint_groups++] = seen;
            continue;
        }
        if (fmt_is_digit(f, ch)) {
            if (hash_seen)
                return qerr("in the integer part, a digit sign (#) must not follow a digit");
            p->min_int++;
        } else {
            hash_seen = true;
        }
        seen++;
    }
    /* The fraction, left to right: mandatory digits (#s only after them). */
    hash_seen = false;
    seen = 0;
    for (size_t i = point + 1; point < end && i < end; i++) {
        unsigned long ch = cp[i];
        if (ch == f->grouping) {
            if (p->nfrac_groups == FORMAT_GROUPS_MAX)
                return qerr("the picture has too many grouping separators");
            p->frac_groups[p->nfrac_groups++] = seen;
            continue;
        }
        if (fmt_is_digit(f, ch)) {
            if (hash_seen)
                return qerr("in the fraction, a digit must not follow a digit sign (#)");
            p->min_frac++;
        } else {
            hash_seen = true;
        }
        p->max_frac++;
        seen++;
    }
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

static void fmt_digits(buf_t *b, const decimal_format_t *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_cp(b, f->zero + (unsigned long)(s[i] - '0'));
}

static void fmt_put(buf_t *b, const unsigned long *cp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_cp(b, cp[i]);
}

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
    double r = jn__round_half_even(a, p->max_frac);
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

static swf_error_t *fmt_option_char(json_object *opts, const char *key, unsigned long *ch)
{
    json_object *v;
    if (opts == NULL || !swf_json_get(opts, key, &v))
        return NULL;
    const char *s = jn__is_string(v) ? json_object_get_string(v) : NULL;
    size_t n = s ? (size_t)json_object_get_string_len(v) : 0, i = 0;
    unsigned long cp = n > 0 ? jn__utf8_next(s, n, &i) : 0;
    if (s == NULL || n == 0 || i != n)
        return qerr("option %s must be a string of one character", key);
    *ch = cp;
    return NULL;
}

/* $formatNumber(number, picture[, options]): the number as XPath's
 * format-number writes it (F&O 3.1, 4.7), rounded half to even as $round
 * rounds. */
swf_error_t *jn__fn_format_number(call_t *c, val_t *out)
{
    double d;
    const char *pic;
    size_t npic;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_number(c, 0, &d);
    if (!err)
        err = jn__want_string(c, 1, &pic, &npic);
    json_object *opts = NULL;
    if (!err && jn__has_arg(c, 2)) {
        const val_t *o = jn__arg(c, 2);
        if (jn__is_func(o) || !jn__is_object(o->j))
            err = qerr("argument 3 (options) must be an object");
        else
            opts = o->j;
    }
    decimal_format_t f = {'.', ',', 'e', '%', 0x2030, '0', '#', ';', '-', "Infinity", "NaN"};
    static const char *const chars[] = {"decimal-separator",
                                        "grouping-separator",
                                        "exponent-separator",
                                        "percent",
                                        "per-mille",
                                        "zero-digit",
                                        "digit",
                                        "pattern-separator",
                                        "minus-sign"};
    unsigned long *fields[] = {&f.decimal, &f.grouping, &f.exponent, &f.percent, &f.permille,
                               &f.zero,    &f.digit,    &f.pattern,  &f.minus};
    for (size_t i = 0; !err && i < sizeof(chars) / sizeof(chars[0]); i++)
        err = fmt_option_char(opts, chars[i], fields[i]);
    json_object *v;
    if (!err && opts != NULL && swf_json_get(opts, "infinity", &v))
        f.infinity = jn__is_string(v) ? json_object_get_string(v) : NULL;
    if (!err && opts != NULL && swf_json_get(opts, "NaN", &v))
        f.nan = jn__is_string(v) ? json_object_get_string(v) : NULL;
    if (!err && (f.infinity == NULL || f.nan == NULL))
        err = qerr("options infinity and NaN must be strings");
    if (err)
        return err;
    unsigned long *cp = malloc((npic ? npic : 1) * sizeof(*cp));
    if (cp == NULL)
        abort();
    size_t n = 0;
    for (size_t i = 0; i < npic;)
        cp[n++] = jn__utf8_next(pic, npic, &i);
    size_t split = n;
    for (size_t i = 0; i < n; i++) {
        if (cp[i] != f.pattern)
            continue;
        if (split != n)
            err = qerr("the picture has more than two sub-pictures");
        split = i;
    }
    sub_picture_t subs[2];
    size_t nsubs = split == n ? 1 : 2;
    if (!err)
        err = sub_picture_parse(&f, cp, split, &subs[0]);
    if (!err && nsubs == 2)
        err = sub_picture_parse(&f, cp + split + 1, n - split - 1, &subs[1]);
    if (err) {
        free(cp);
        return err;
    }
    buf_t b = {0};
    if (isnan(d)) {
        buf_str(&b, f.nan);
    } else {
        const sub_picture_t *p = d < 0 && nsubs == 2 ? &subs[1] : &subs[0];
        if (d < 0 && nsubs == 1)
            buf_cp(&b, f.minus); /* before the prefix: -$1.00 */
        fmt_put(&b, p->prefix, p->nprefix);
        sub_picture_format(&b, &f, p, fabs(d) * p->scale);
        fmt_put(&b, p->suffix, p->nsuffix);
    }
    free(cp);
    *out = jn__string_val(buf_cstr(&b), b.n);
    free(b.s);
    return NULL;
}

/* $formatInteger(number, picture): XPath's format-integer (picture.c). */
swf_error_t *jn__fn_format_integer(call_t *c, val_t *out)
{
    double d;
    const char *pic;
    size_t n;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_number(c, 0, &d);
    if (!err)
        err = jn__want_string(c, 1, &pic, &n);
    char *text;
    size_t len;
    if (!err && !(err = swf_asl_picture_integer_format(d, pic, n, &text, &len))) {
        *out = jn__string_val(text, len);
        free(text);
    }
    return err;
}

/* $parseInteger(string, picture): the inverse (picture.c). */
swf_error_t *jn__fn_parse_integer(call_t *c, val_t *out)
{
    const char *s, *pic;
    size_t n, npic;
    double d;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err)
        err = jn__want_string(c, 1, &pic, &npic);
    if (!err)
        err = swf_asl_picture_integer_parse(s, n, pic, npic, &d);
    return err ? err : jn__number_val(d, out);
}
