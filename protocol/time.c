/*
 * time.c - strict RFC 3339 parsing and formatting, without the C library's
 * time zone machinery (timegm is not C11, and the process's TZ must never
 * change a result). Days are counted with the civil-from-days algorithm.
 */
#include "protocol/time.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

bool swf_time_parse(const char *s, swf_time_t *out)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, sec;
    if (s == NULL || strlen(s) < 20)
        return false;
    if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
        !digits(s + 8, 2, &d) || s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
        !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 60)
        return false;
    int maxd = mdays[mo - 1] + (mo == 2 && is_leap(y));
    if (d > maxd)
        return false;
    const char *p = s + 19;
    int64_t nsec = 0;
    if (*p == '.') {
        p++;
        int n = 0;
        int64_t scale = 100000000;
        while (*p >= '0' && *p <= '9') {
            nsec += (*p - '0') * scale;
            scale /= 10;
            p++;
            n++;
        }
        if (n == 0)
            return false;
    }
    int offset_s = 0;
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return false;
        offset_s = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return false;
    }
    if (*p != '\0')
        return false;
    if (sec == 60)
        sec = 59; /* a leap second compares as the last second of its minute */
    out->sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset_s;
    out->nsec = (int32_t)nsec;
    return true;
}

int swf_time_cmp(swf_time_t a, swf_time_t b)
{
    if (a.sec != b.sec)
        return a.sec < b.sec ? -1 : 1;
    if (a.nsec != b.nsec)
        return a.nsec < b.nsec ? -1 : 1;
    return 0;
}

int64_t swf_time_to_ms(swf_time_t t)
{
    return t.sec * 1000 + t.nsec / 1000000;
}

void swf_time_format_ms(int64_t ms, char *buf)
{
    int64_t sec = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    int msec = (int)(ms - sec * 1000);
    int64_t days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
    int64_t rem = sec - days * 86400;
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    char tmp[96];
    snprintf(tmp, sizeof(tmp), "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ", (long long)y, m, d,
             (int)(rem / 3600), (int)(rem % 3600 / 60), (int)(rem % 60), msec);
    memcpy(buf, tmp, SWF_TIME_BUF - 1);
    buf[SWF_TIME_BUF - 1] = '\0';
}

int64_t swf_time_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
