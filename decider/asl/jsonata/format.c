/*
 * format.c - the number-formatting built-ins as JSONata sees them:
 * $formatBase (any radix from 2 to 36), and the argument and option reading
 * of $formatNumber, $formatInteger and $parseInteger. The pictures
 * themselves (XPath's format-number and format-integer) are picture.c's,
 * with the date pictures; this file only turns a call into a call of
 * picture.h.
 */
#include "decider/asl/jsonata/internal.h"

#include <math.h>
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
    double r = swf_asl_number_round(d, 0);
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

/* One option of $formatNumber's third argument: a one-character string. */
static swf_error_t *fmt_option_char(json_object *opts, const char *key, uint32_t *ch)
{
    json_object *v;
    if (opts == NULL || !swf_json_get(opts, key, &v))
        return NULL;
    const char *s = jn__is_string(v) ? json_object_get_string(v) : NULL;
    size_t n = s ? (size_t)json_object_get_string_len(v) : 0, i = 0;
    uint32_t cp = n > 0 ? (uint32_t)jn__utf8_next(s, n, &i) : 0;
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
    /* XPath's default decimal format, which the options change. */
    swf_asl_picture_decimal_t f = {.decimal = '.',
                                   .grouping = ',',
                                   .exponent = 'e',
                                   .percent = '%',
                                   .permille = 0x2030,
                                   .zero = '0',
                                   .digit = '#',
                                   .pattern = ';',
                                   .minus = '-',
                                   .infinity = "Infinity",
                                   .nan = "NaN"};
    static const char *const chars[] = {"decimal-separator",
                                        "grouping-separator",
                                        "exponent-separator",
                                        "percent",
                                        "per-mille",
                                        "zero-digit",
                                        "digit",
                                        "pattern-separator",
                                        "minus-sign"};
    uint32_t *fields[] = {&f.decimal, &f.grouping, &f.exponent, &f.percent, &f.permille,
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
    uint32_t *cp = malloc((npic ? npic : 1) * sizeof(*cp));
    if (cp == NULL)
        abort();
    size_t n = 0;
    for (size_t i = 0; i < npic;)
        cp[n++] = jn__utf8_next(pic, npic, &i);
    char *text;
    size_t len;
    err = swf_asl_picture_number_format(d, cp, n, &f, &text, &len);
    free(cp);
    if (err)
        return err;
    *out = jn__string_val(text, len);
    free(text);
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
