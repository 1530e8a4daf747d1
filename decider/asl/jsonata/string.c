/*
 * string.c - the string built-ins. Positions and lengths are JavaScript's,
 * in UTF-16 code units; case mapping is JavaScript's too (each code point's
 * simple mapping, plus its special cases). The pattern built-ins ($contains,
 * $split, $replace, $match) take a string or a regular expression and step
 * from match to match as jsonata-js's next() does, the regular expression's
 * work charged to the evaluation's budget. URL and base64 encoding and
 * decoding close the file.
 */
#include "decider/asl/jsonata/internal.h"

#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "protocol/hash.h"

swf_error_t *jn__fn_length(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    return err ? err : jn__number_val((double)jn__utf8_length(s, n), out);
}

swf_error_t *jn__fn_substring(call_t *c, val_t *out)
{
    const char *s;
    size_t n, count;
    double start, length = 0;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err)
        err = jn__want_number(c, 1, &start);
    if (!err && jn__has_arg(c, 2))
        err = jn__want_number(c, 2, &length);
    if (err)
        return err;
    size_t *starts = jn__utf8_starts(s, n, &count);
    double len = (double)count;
    start = trunc(start);
    if (len + start < 0)
        start = 0;
    double end = len;
    if (jn__has_arg(c, 2)) {
        length = trunc(length);
        end = length <= 0 ? (start >= 0 ? start : len + start)
                          : (start >= 0 ? start + length : len + start + length);
    }
    double from = start < 0 ? len + start : start;
    if (from > len)
        from = len;
    if (end > len)
        end = len;
    if (end < from)
        end = from;
    *out = jn__string_val(s + starts[(size_t)from], starts[(size_t)end] - starts[(size_t)from]);
    free(starts);
    return NULL;
}

static const char *find_bytes(const char *h, size_t hn, const char *needle, size_t nn)
{
    if (nn == 0)
        return h;
    if (nn > hn)
        return NULL;
    for (size_t i = 0; i + nn <= hn; i++) {
        if (h[i] == needle[0] && memcmp(h + i, needle, nn) == 0)
            return h + i;
    }
    return NULL;
}

static swf_error_t *substring_around(call_t *c, val_t *out, bool before)
{
    const char *s, *sep;
    size_t n, sn;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err)
        err = jn__want_string(c, 1, &sep, &sn);
    if (err)
        return err;
    const char *at = find_bytes(s, n, sep, sn);
    if (at == NULL)
        *out = jn__val_copy(jn__arg(c, 0));
    else if (before)
        *out = jn__string_val(s, (size_t)(at - s));
    else
        *out = jn__string_val(at + sn, n - (size_t)(at - s) - sn);
    return NULL;
}

swf_error_t *jn__fn_substring_before(call_t *c, val_t *out)
{
    return substring_around(c, out, true);
}

swf_error_t *jn__fn_substring_after(call_t *c, val_t *out)
{
    return substring_around(c, out, false);
}

/* Decodes the UTF-8 code point at s[*i] (n bytes in all) and moves *i past
 * it; a byte that starts no valid sequence is returned as it is. */
unsigned long jn__utf8_next(const char *s, size_t n, size_t *i)
{
    unsigned char b = (unsigned char)s[*i];
    size_t len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    if (len == 1 || *i + len > n) {
        (*i)++;
        return b;
    }
    unsigned long cp = b & (0x7F >> len);
    for (size_t k = 1; k < len; k++) {
        unsigned char cb = (unsigned char)s[*i + k];
        if ((cb & 0xC0) != 0x80) {
            (*i)++;
            return b;
        }
        cp = (cp << 6) | (cb & 0x3F);
    }
    *i += len;
    return cp;
}

/* The end of a built-in that builds a string in `b`: unless `err` (which
 * it returns), *out is the string, or the result's limit is exceeded. The
 * buffer's bytes are freed either way. */
static swf_error_t *buf_result(buf_t *b, swf_error_t *err, val_t *out)
{
    if (!err && b->over)
        err = qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    if (!err)
        *out = jn__string_val(buf_cstr(b), b->n);
    free(b->s);
    return err;
}

/* Case mapping as JavaScript's toUpperCase and toLowerCase do it: each code
 * point's simple mapping (the C library's, in C.UTF-8), plus the special
 * cases users meet (ß is SS, İ is i with a dot above, Σ ending a word is
 * ς). Without C.UTF-8,
 * ASCII only. */
static swf_error_t *change_case(call_t *c, val_t *out, bool upper)
{
    const char *s;
    size_t n;
    swf_error_t *err;
    if (!jn__string_arg(c, 0, &s, &n, &err))
        return err;
    locale_t l = swf_asl_utf8_locale();
    buf_t b = {0};
    unsigned long cp = 0, prev;
    for (size_t i = 0; i < n;) {
        size_t at = i;
        prev = cp;
        cp = jn__utf8_next(s, n, &i);
        if (cp >= 0x80 && i == at + 1) { /* not UTF-8: kept */
            buf_ch(&b, s[at]);
        } else if (cp < 0x80) {
            buf_ch(&b, (char)(upper ? toupper((int)cp) : tolower((int)cp)));
        } else if (upper && cp == 0xDF) {
            buf_str(&b, "SS");
        } else if (!upper && cp == 0x130) {
            buf_str(&b, "i\xCC\x87");
        } else if (!upper && cp == 0x3A3 && l != (locale_t)0 && at > 0 &&
                   iswalpha_l((wint_t)prev, l) &&
                   (i >= n || !iswalpha_l((wint_t)jn__utf8_next(s, n, &(size_t){i}), l))) {
            buf_str(&b, "\xCF\x82"); /* a word's last sigma is final */
        } else if (l != (locale_t)0) {
            buf_cp(&b,
                   (unsigned long)(upper ? towupper_l((wint_t)cp, l) : towlower_l((wint_t)cp, l)));
        } else {
            buf_cp(&b, cp);
        }
    }
    return buf_result(&b, err, out);
}

swf_error_t *jn__fn_uppercase(call_t *c, val_t *out)
{
    return change_case(c, out, true);
}

swf_error_t *jn__fn_lowercase(call_t *c, val_t *out)
{
    return change_case(c, out, false);
}

swf_error_t *jn__fn_trim(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    swf_error_t *err;
    if (!jn__string_arg(c, 0, &s, &n, &err))
        return err;
    buf_t b = {0};
    bool space = false;
    for (size_t i = 0; i < n; i++) {
        if (strchr(" \t\n\r", s[i]) && s[i]) {
            space = true;
            continue;
        }
        if (space && b.n)
            buf_ch(&b, ' ');
        space = false;
        buf_ch(&b, s[i]);
    }
    *out = jn__string_val(buf_cstr(&b), b.n);
    free(b.s);
    return NULL;
}

/* Finds the first match of a pattern (string or regex) in s[off..n):
 * *hit, and the match in *f (whose caps it allocates; the caller frees
 * them). A regular expression's work counts against the evaluation's
 * steps. */
swf_error_t *jn__pattern_find(ctx_t *ctx, const val_t *pat, const char *s, size_t n, size_t off,
                              found_t *f, bool *hit)
{
    *hit = false;
    if (off > n)
        return NULL;
    if (jn__is_regex(pat)) {
        const swf_asl_regex_t *re = pat->re->re;
        if (f->caps == NULL) {
            f->groups = swf_asl_regex_groups(re);
            f->caps = malloc(2 * (f->groups + 1) * sizeof *f->caps);
            if (f->caps == NULL)
                abort();
        }
        size_t budget =
            ctx->steps < SWF_LIMIT_JSONATA_STEPS ? SWF_LIMIT_JSONATA_STEPS - ctx->steps : 0;
        size_t before = budget;
        int r = swf_asl_regex_search(re, s, n, off, f->caps, &budget);
        ctx->steps += before - budget;
        if (r == SWF_ASL_REGEX_TOO_LONG)
            return qerr("the expression does too much work (more than %d steps): the regular "
                        "expression backtracks too much",
                        SWF_LIMIT_JSONATA_STEPS);
        if (r == SWF_ASL_REGEX_TOO_DEEP)
            return qerr("the regular expression backtracks too deeply (more than %u choices held)",
                        SWF_LIMIT_REGEX_BACKTRACK);
        if (r == SWF_ASL_REGEX_MATCH) {
            f->start = f->caps[0];
            f->end = f->caps[1];
            *hit = true;
        }
        return NULL;
    }
    const char *p = json_object_get_string(pat->j);
    size_t pn = (size_t)json_object_get_string_len(pat->j);
    const char *at = find_bytes(s + off, n - off, p, pn);
    if (at != NULL) {
        f->start = (size_t)(at - s);
        f->end = f->start + pn;
        *hit = true;
    }
    return NULL;
}

/* The match after the one that ended at off (first: the first match), as
 * jsonata-js's match.next() gives it: for a regular expression, none once a
 * match reached the end of the string, and an error for a later match of
 * nothing, which would never advance. */
static swf_error_t *pattern_next(ctx_t *ctx, const val_t *pat, const char *s, size_t n, size_t off,
                                 bool first, found_t *f, bool *hit)
{
    *hit = false;
    if (!first && jn__is_regex(pat) && off >= n)
        return NULL;
    swf_error_t *err = jn__pattern_find(ctx, pat, s, n, off, f, hit);
    if (!err && *hit && !first && f->end == f->start)
        err = qerr("the regular expression matches an empty string");
    return err;
}

static swf_error_t *want_pattern(const call_t *c, size_t i)
{
    const val_t *v = jn__arg(c, i);
    if (jn__is_regex(v))
        return NULL;
    if (!jn__defined(v) || !jn__is_string(v->j))
        return qerr("argument %zu must be a string or a regular expression, not %s", i + 1,
                    jn__type_name(v));
    return NULL;
}

swf_error_t *jn__fn_contains(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    found_t f = {0};
    bool hit;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err)
        err = want_pattern(c, 1);
    if (!err)
        err = jn__pattern_find(c->ctx, jn__arg(c, 1), s, n, 0, &f, &hit);
    if (!err)
        *out = jn__bool_val(hit);
    free(f.caps);
    return err;
}

static swf_error_t *want_limit(const call_t *c, size_t i, double *limit)
{
    *limit = INFINITY;
    if (!jn__has_arg(c, i))
        return NULL;
    swf_error_t *err = jn__want_number(c, i, limit);
    if (!err && *limit < 0)
        err = qerr("argument %zu (limit) must not be negative", i + 1);
    return err;
}

swf_error_t *jn__fn_split(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    double limit;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err)
        err = want_pattern(c, 1);
    if (!err)
        err = want_limit(c, 2, &limit);
    if (err)
        return err;
    limit = floor(limit); /* as JavaScript's String.split reads it */
    json_object *arr = json_object_new_array();
    const val_t *pat = jn__arg(c, 1);
    if (!jn__is_regex(pat) && json_object_get_string_len(pat->j) == 0) {
        size_t count, *starts = jn__utf8_starts(s, n, &count);
        for (size_t i = 0; i < count && (double)i < limit; i++)
            json_object_array_add(
                arr, json_object_new_string_len(s + starts[i], (int)(starts[i + 1] - starts[i])));
        free(starts);
    } else {
        size_t off = 0;
        found_t f = {0};
        bool hit, first = true;
        while ((double)json_object_array_length(arr) < limit) {
            err = pattern_next(c->ctx, pat, s, n, off, first, &f, &hit);
            if (err || !hit) {
                if (!err)
                    json_object_array_add(arr, json_object_new_string_len(s + off, (int)(n - off)));
                break;
            }
            json_object_array_add(arr, json_object_new_string_len(s + off, (int)(f.start - off)));
            off = f.end;
            first = false;
        }
        free(f.caps);
        if (err) {
            json_object_put(arr);
            return err;
        }
    }
    *out = jn__val_take(arr);
    return jn__charge(c->ctx, json_object_array_length(arr));
}

swf_error_t *jn__fn_join(call_t *c, val_t *out)
{
    const char *sep = "";
    size_t sn = 0;
    swf_error_t *err = NULL;
    if (!jn__has_arg(c, 0))
        return NULL;
    if (jn__has_arg(c, 1) && (err = jn__want_string(c, 1, &sep, &sn)))
        return err;
    const val_t *v = jn__arg(c, 0);
    if (jn__is_func(v))
        return qerr("argument 1 must be an array of strings");
    items_t it = jn__items_of(v);
    buf_t b = {0};
    for (size_t k = 0; k < it.n; k++) {
        json_object *j = jn__item_at(&it, k);
        if (!jn__is_string(j)) {
            free(b.s);
            return qerr("argument 1 must be an array of strings, but item %zu is %s", k,
                        swf_json_type_name(j));
        }
        if (k)
            buf_add(&b, sep, sn);
        buf_add(&b, json_object_get_string(j), (size_t)json_object_get_string_len(j));
    }
    err = buf_result(&b, err, out);
    return err ? err : jn__charge(c->ctx, it.n);
}

/* A replacement string's $ references, as jsonata-js reads them: $$ is $,
 * $0 the match, $N group N (as many digits as the number of groups has,
 * one fewer when that names no group; a group that took no part gives
 * nothing), and a $ that starts none of these is itself. */
static void replace_refs(buf_t *b, const char *rep, size_t rn, const char *s, const found_t *f)
{
    size_t digits_max = 1;
    for (size_t g = f->groups; g >= 10; g /= 10)
        digits_max++;
    for (size_t i = 0; i < rn; i++) {
        if (rep[i] != '$' || i + 1 >= rn) {
            buf_ch(b, rep[i]);
            continue;
        }
        char d = rep[i + 1];
        if (d == '$' || d == '0') {
            if (d == '$')
                buf_ch(b, '$');
            else
                buf_add(b, s + f->start, f->end - f->start);
            i++;
            continue;
        }
        /* JavaScript's parseInt of the next digits_max characters, or of
         * one fewer when that is more than the groups */
        size_t avail = rn - (i + 1), k, used;
        for (size_t len = digits_max, pass = 0; pass < 2; pass++, len--) {
            k = 0, used = 0;
            while (used < len && used < avail && isdigit((unsigned char)rep[i + 1 + used]))
                k = k * 10 + (size_t)(rep[i + 1 + used++] - '0');
            if (!(digits_max > 1 && k > f->groups))
                break;
        }
        if (used == 0) {
            buf_ch(b, '$');
            continue;
        }
        if (k >= 1 && k <= f->groups && f->caps[2 * k] != SWF_ASL_REGEX_UNSET &&
            f->caps[2 * k + 1] != SWF_ASL_REGEX_UNSET)
            buf_add(b, s + f->caps[2 * k], f->caps[2 * k + 1] - f->caps[2 * k]);
        char text[24];
        i += (size_t)snprintf(text, sizeof text, "%zu", k); /* parseInt's digits, less zeros */
    }
}

swf_error_t *jn__fn_replace(call_t *c, val_t *out)
{
    const char *s, *rep = NULL;
    size_t n, rn = 0;
    double limit;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err)
        err = want_pattern(c, 1);
    const val_t *pat = jn__arg(c, 1), *replacer = NULL;
    if (!err && jn__is_func(jn__arg(c, 2)) &&
        jn__is_regex(pat)) /* f(match) gives each replacement */
        replacer = jn__arg(c, 2);
    else if (!err)
        err = jn__want_string(c, 2, &rep, &rn);
    if (!err)
        err = want_limit(c, 3, &limit);
    if (err)
        return err;
    if (!jn__is_regex(pat) && json_object_get_string_len(pat->j) == 0)
        return qerr("argument 2 (pattern) must not be an empty string");
    buf_t out_b = {0};
    size_t off = 0, count = 0;
    found_t f = {0};
    bool hit;
    while ((double)count < limit &&
           !(err = pattern_next(c->ctx, pat, s, n, off, count == 0, &f, &hit)) && hit) {
        buf_add(&out_b, s + off, f.start - off);
        if (replacer != NULL) {
            val_t m = jn__val_take(jn__match_object(s, &f, true)), r;
            err = jn__apply(c->ctx, replacer, &m, 1, &UNDEF, &r);
            jn__val_free(&m);
            if (!err) {
                if (!jn__defined(&r) || jn__is_func(&r) || !jn__is_string(r.j))
                    err = qerr("the function given as argument 3 must return a string, not %s",
                               jn__type_name(&r));
                else
                    buf_add(&out_b, json_object_get_string(r.j),
                            (size_t)json_object_get_string_len(r.j));
                jn__val_free(&r);
            }
        } else if (!jn__is_regex(pat)) {
            buf_add(&out_b, rep, rn);
        } else {
            replace_refs(&out_b, rep, rn, s, &f);
        }
        off = f.end;
        count++;
        if (err || (err = jn__charge(c->ctx, 1)))
            break;
    }
    free(f.caps);
    if (!err)
        buf_add(&out_b, s + off, n - off);
    return buf_result(&out_b, err, out);
}

/* $match(str, /re/[, limit]): each match, as {match, index, groups}. */
swf_error_t *jn__fn_match(call_t *c, val_t *out)
{
    const char *s;
    size_t n, off = 0;
    double limit;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err && !jn__is_regex(jn__arg(c, 1)))
        err = qerr("argument 2 must be a regular expression, not %s", jn__type_name(jn__arg(c, 1)));
    if (!err)
        err = want_limit(c, 2, &limit);
    if (err)
        return err;
    json_object *seq = json_object_new_array();
    found_t f = {0};
    bool hit;
    while ((double)json_object_array_length(seq) < limit &&
           !(err = pattern_next(c->ctx, jn__arg(c, 1), s, n, off,
                                json_object_array_length(seq) == 0, &f, &hit)) &&
           hit) {
        json_object_array_add(seq, jn__match_object(s, &f, false));
        off = f.end;
        if ((err = jn__charge(c->ctx, 1)))
            break;
    }
    free(f.caps);
    return jn__seq_result(seq, err, out);
}

/* $pad(str, width[, char]): padded with char (a space) to |width|
 * characters, on the right for a positive width, else on the left. */
swf_error_t *jn__fn_pad(call_t *c, val_t *out)
{
    const char *s, *pad = " ";
    size_t n, pn = 1;
    double width;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err)
        err = jn__want_integer(c, 1, &width);
    if (!err && jn__has_arg(c, 2) && !(err = jn__want_string(c, 2, &pad, &pn)) && pn == 0)
        pad = " ", pn = 1;
    if (err)
        return err;
    double missing = fabs(width) - (double)jn__utf8_length(s, n);
    if (missing > (double)SWF_LIMIT_PAYLOAD_BYTES)
        return qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    buf_t padding = {0}, b = {0};
    size_t count, *starts = jn__utf8_starts(pad, pn, &count);
    if (count == 0) { /* only continuation bytes: not text, nothing to repeat */
        free(starts);
        return qerr("the padding is not UTF-8 text");
    }
    for (size_t k = 0; (double)k < missing; k++) /* the pad repeated, cut to length */
        buf_add(&padding, pad + starts[k % count], starts[k % count + 1] - starts[k % count]);
    free(starts);
    if (width < 0)
        buf_add(&b, buf_cstr(&padding), padding.n);
    buf_add(&b, s, n);
    if (width > 0)
        buf_add(&b, buf_cstr(&padding), padding.n);
    b.over = b.over || padding.over;
    free(padding.s);
    return buf_result(&b, err, out);
}

/* encodeURIComponent (component) or encodeURI: UTF-8 bytes as %XX but for
 * the characters each keeps. */
static swf_error_t *url_encode(call_t *c, val_t *out, bool component)
{
    const char *s;
    size_t n;
    swf_error_t *err;
    if (!jn__string_arg(c, 0, &s, &n, &err))
        return err;
    const char *keep = component ? "-_.!~*'()" : "-_.!~*'();/?:@&=+$,#";
    buf_t b = {0};
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (isalnum(ch) || (ch && strchr(keep, ch))) {
            buf_ch(&b, (char)ch);
        } else {
            char e[4];
            snprintf(e, sizeof e, "%%%02X", ch);
            buf_str(&b, e);
        }
    }
    return buf_result(&b, err, out);
}

static int hex_digit(char c)
{
    return isdigit((unsigned char)c) ? c - '0'
           : (c >= 'a' && c <= 'f')  ? c - 'a' + 10
           : (c >= 'A' && c <= 'F')  ? c - 'A' + 10
                                     : -1;
}

/* decodeURIComponent (component) or decodeURI, which leaves the escapes of
 * the characters encodeURI keeps. A malformed escape is an error. */
static swf_error_t *url_decode(call_t *c, val_t *out, bool component)
{
    const char *s;
    size_t n;
    swf_error_t *err;
    if (!jn__string_arg(c, 0, &s, &n, &err))
        return err;
    buf_t b = {0};
    for (size_t i = 0; i < n && !err; i++) {
        if (s[i] != '%') {
            buf_ch(&b, s[i]);
            continue;
        }
        int hi = i + 2 < n ? hex_digit(s[i + 1]) : -1, lo = hi >= 0 ? hex_digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
            err = qerr("malformed URL escape at character %zu", i);
            break;
        }
        char ch = (char)(hi * 16 + lo);
        if (!component && ch && strchr(";/?:@&=+$,#", ch))
            buf_add(&b, s + i, 3);
        else
            buf_ch(&b, ch);
        i += 2;
    }
    /* the bytes must be UTF-8, as decodeURI requires */
    if (!err && b.n > 0 && swf_json_utf8_invalid_at(b.s, b.n) < b.n)
        err = qerr("the URL escapes are not UTF-8");
    return buf_result(&b, err, out);
}

swf_error_t *jn__fn_encode_url_component(call_t *c, val_t *out)
{
    return url_encode(c, out, true);
}

swf_error_t *jn__fn_encode_url(call_t *c, val_t *out)
{
    return url_encode(c, out, false);
}

swf_error_t *jn__fn_decode_url_component(call_t *c, val_t *out)
{
    return url_decode(c, out, true);
}

swf_error_t *jn__fn_decode_url(call_t *c, val_t *out)
{
    return url_decode(c, out, false);
}

swf_error_t *jn__fn_base64encode(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    char *enc = NULL;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_string(c, 0, &s, &n);
    if (!err)
        err = swf_base64_encode(s, n, &enc);
    if (!err)
        *out = jn__val_take(json_object_new_string(enc));
    free(enc);
    return err;
}

swf_error_t *jn__fn_base64decode(call_t *c, val_t *out)
{
    const char *s;
    size_t n, dn;
    uint8_t *dec = NULL;
    swf_error_t *err;
    if (!jn__string_arg(c, 0, &s, &n, &err))
        return err;
    swf_error_t *derr = swf_base64_decode(s, n, &dec, &dn);
    if (derr) {
        err = qerr("%s", swf_error_message(derr));
        swf_error_free(derr);
        return err;
    }
    /* as JSONata's decodeURIComponent step: the bytes must be UTF-8 text */
    if (swf_json_utf8_invalid_at((const char *)dec, dn) < dn)
        err = qerr("the decoded data is not UTF-8 text");
    else
        *out = jn__string_val((const char *)dec, dn);
    free(dec);
    return err;
}
