/*
 * number.c - numbers written and rounded as JavaScript and JSONata do,
 * for the JSONata evaluator (decider/asl/jsonata/) and the XPath pictures
 * (picture.c), which must agree digit for digit: $string, $round,
 * $formatBase and $formatNumber all go through these two.
 *
 * Both work on the decimal text rather than on the double, because that
 * is what JavaScript does: the shortest text that reads back as the same
 * double (ECMAScript's Number::toString), and rounding that moves the
 * decimal point in that text, so that 2.675 rounds to 2.68 although the
 * double nearest 2.675 is below it.
 */
#include "decider/asl/number.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JavaScript's Number.prototype.toString: the shortest digits that read back
 * as d, in positional notation from 1e-7 to 1e21 and exponential beyond. */
void swf_asl_number_format(double d, char out[48])
{
    if (d == 0) {
        strcpy(out, "0");
        return;
    }
    char e[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    bool neg = e[0] == '-';
    const char *p = e + neg;
    char digits[24];
    int k = 0;
    for (; *p && *p != 'e'; p++) {
        if (isdigit((unsigned char)*p) && k < 20)
            digits[k++] = *p;
    }
    int n = atoi(p + 1) + 1; /* the decimal point sits after n digits */
    while (k > 1 && digits[k - 1] == '0')
        k--;
    char *o = out;
    if (neg)
        *o++ = '-';
    if (k <= n && n <= 21) {
        memcpy(o, digits, (size_t)k);
        o += k;
        for (int i = k; i < n; i++)
            *o++ = '0';
    } else if (0 < n && n <= 21) {
        memcpy(o, digits, (size_t)n);
        o += n;
        *o++ = '.';
        memcpy(o, digits + n, (size_t)(k - n));
        o += k - n;
    } else if (-6 < n && n <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -n; i++)
            *o++ = '0';
        memcpy(o, digits, (size_t)k);
        o += k;
    } else {
        *o++ = digits[0];
        if (k > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(k - 1));
            o += k - 1;
        }
        o += sprintf(o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
    }
    *o = '\0';
}

/* Rounds half to even at `precision` decimal places, shifting the decimal
 * point in the text as JSONata does so that 2.675 rounds to 2.68. */
double swf_asl_number_round(double d, int precision)
{
    char t[96];
    swf_asl_number_format(d, t);
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
    swf_asl_number_format(r, t);
    e = strchr(t, 'e');
    exp10 = -precision;
    if (e) {
        exp10 += atoi(e + 1);
        *e = '\0';
    }
    snprintf(shifted, sizeof shifted, "%se%d", t, exp10);
    return strtod(shifted, NULL);
}
