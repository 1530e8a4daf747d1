/*
 * time.c - times: $now and $millis, which give the time of the decision
 * being made (env.h), never the clock, so that a replay gives the same
 * value, and are refused outside a decision; $toMillis, which reads ISO 8601
 * itself and any other form with a picture; and $fromMillis. The pictures
 * are picture.c's.
 */
#include "decider/asl/jsonata/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/picture.h"
#include "protocol/time.h"

/* The time of the decision being made, or an error where there is none. */
static swf_error_t *decision_now(const call_t *c, int64_t *ms)
{
    *ms = c->ctx->env != NULL ? c->ctx->env->now_ms : 0;
    if (*ms == 0)
        return qerr("has no time here: it gives the time of the decision being made, and this "
                    "evaluation is not part of one");
    return NULL;
}

/* $millis(): the decision's time in milliseconds since the epoch. Within an
 * execution it is the time of the decision that evaluates the expression,
 * recorded in the history, so a replay gives the same value (JSONata: every
 * call within one evaluation gives the same value). */
swf_error_t *jn__fn_millis(call_t *c, val_t *out)
{
    int64_t ms;
    swf_error_t *err = decision_now(c, &ms);
    return err ? err : jn__number_val((double)ms, out);
}

/* $now([picture[, timezone]]): that time as $fromMillis writes it. */
swf_error_t *jn__fn_now(call_t *c, val_t *out)
{
    int64_t ms;
    swf_error_t *err = decision_now(c, &ms);
    if (err)
        return err;
    val_t argv[3] = {UNDEF, UNDEF, UNDEF};
    jn__number_val((double)ms, &argv[0]);
    for (size_t i = 0; i < c->argc && i < 2; i++)
        argv[i + 1] = jn__val_copy(&c->argv[i]);
    call_t sub = {c->ctx, c->fn, argv, c->argc + 1};
    err = jn__fn_from_millis(&sub, out);
    for (size_t i = 0; i < 3; i++)
        jn__val_free(&argv[i]);
    return err;
}

/* Reads n digits at *p. */
static bool digits(const char **p, int n, int *out)
{
    *out = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (!isdigit((unsigned char)**p))
            return false;
        *out = *out * 10 + (**p - '0');
    }
    return true;
}

/* An ISO 8601 time zone at *p: Z, or +HH:MM, +HHMM (or -). Minutes east. */
static bool zone_parse(const char **p, int *minutes)
{
    int h, m;
    if (**p == 'Z') {
        (*p)++;
        *minutes = 0;
        return true;
    }
    if (**p != '+' && **p != '-')
        return false;
    int sign = **p == '-' ? -1 : 1;
    (*p)++;
    if (!digits(p, 2, &h))
        return false;
    if (**p == ':')
        (*p)++;
    if (!digits(p, 2, &m) || h > 23 || m > 59)
        return false;
    *minutes = sign * (h * 60 + m);
    return true;
}

/* The ISO 8601 forms JSONata's $toMillis reads without a picture:
 * YYYY[-MM[-DD]][THH:MM:SS[.fff]][Z|+HH:MM]. A time without a zone is UTC,
 * as it is where Step Functions evaluates it. The fields are read here and
 * checked (days of the month, leap years) by protocol/time.c. */
static bool iso8601_parse(const char *s, double *millis)
{
    int year, month = 1, day = 1, hour = 0, min = 0, sec = 0, ms = 0, zone = 0;
    const char *p = s;
    if (!digits(&p, 4, &year))
        return false;
    if (*p == '-') {
        p++;
        if (!digits(&p, 2, &month))
            return false;
        if (*p == '-') {
            p++;
            if (!digits(&p, 2, &day))
                return false;
        }
    }
    if (*p == 'T') {
        p++;
        if (!digits(&p, 2, &hour) || *p++ != ':' || !digits(&p, 2, &min) || *p++ != ':' ||
            !digits(&p, 2, &sec))
            return false;
        if (*p == '.') {
            p++;
            if (!isdigit((unsigned char)*p))
                return false;
            int i = 0; /* milliseconds: the first three digits, as Date.parse */
            for (; isdigit((unsigned char)*p); i++, p++) {
                if (i < 3)
                    ms = ms * 10 + (*p - '0');
            }
            for (; i < 3; i++)
                ms *= 10;
        }
    }
    if (*p != '\0' && !zone_parse(&p, &zone))
        return false;
    if (*p != '\0')
        return false;
    char canonical[64];
    swf_time_t t;
    snprintf(canonical, sizeof canonical, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month, day,
             hour, min, sec, ms);
    if (!swf_time_parse(canonical, &t))
        return false;
    *millis = (double)(swf_time_to_ms(t) - (int64_t)zone * 60000);
    return true;
}

swf_error_t *jn__fn_to_millis(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    double millis;
    swf_error_t *err;
    if (!jn__string_arg(c, 0, &s, &n, &err))
        return err;
    if (jn__has_arg(c, 1)) {
        /* with a picture (picture.c): what the text lacks is taken from
         * the decision's time, as $now would give it */
        const char *pic;
        size_t npic;
        bool matched;
        int64_t now_ms = c->ctx->env != NULL ? c->ctx->env->now_ms : 0;
        if ((err = jn__want_string(c, 1, &pic, &npic)) ||
            (err = swf_asl_picture_date_parse(s, n, pic, npic, now_ms, &millis, &matched)))
            return err;
        return matched ? jn__number_val(millis, out) : NULL;
    }
    if (strlen(s) != n || !iso8601_parse(s, &millis))
        return qerr("the timestamp \"%.60s\" is not ISO 8601 (YYYY-MM-DDTHH:MM:SS.sssZ)", s);
    return jn__number_val(millis, out);
}

swf_error_t *jn__fn_from_millis(call_t *c, val_t *out)
{
    double millis;
    int zone = 0;
    if (!jn__has_arg(c, 0))
        return NULL;
    swf_error_t *err = jn__want_number(c, 0, &millis);
    const char *pic = NULL;
    size_t n, npic = 0;
    if (!err && jn__has_arg(c, 1))
        err = jn__want_string(c, 1, &pic, &npic);
    if (err)
        return err;
    if (jn__has_arg(c, 2)) {
        const char *tz, *p;
        if ((err = jn__want_string(c, 2, &tz, &n)))
            return err;
        /* [+-]HHMM, read as jsonata-js reads it: the number v = [+-]HHMM
         * is floor(v / 100) hours and v % 100 minutes, so that -0530 is
         * -06:30 (what Step Functions gives) */
        p = tz + (tz[0] == '+' || tz[0] == '-');
        int hhmm;
        if (strlen(tz) != n || !digits(&p, 4, &hhmm) || *p != '\0')
            return qerr("argument 3 (timezone) must be +HHMM or -HHMM, not \"%.20s\"", tz);
        int v = tz[0] == '-' ? -hhmm : hhmm;
        zone = (v >= 0 ? v / 100 : -((-v + 99) / 100)) * 60 + v % 100;
    }
    /* years 0 to 9999, which ISO 8601's four digits can write */
    double shown = trunc(millis) + zone * 60000.0;
    if (!(shown >= -62167219200000.0 && shown < 253402300800000.0))
        return qerr("%.17g milliseconds is outside the years 0 to 9999", millis);
    if (pic == NULL) {
        pic = "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]";
        npic = strlen(pic);
    }
    char *text;
    size_t len;
    err = swf_asl_picture_date_format((int64_t)trunc(millis), zone, pic, npic, &text, &len);
    if (!err)
        *out = jn__string_val(text, len);
    free(text);
    return err;
}
