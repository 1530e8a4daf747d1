/*
 * time.h - RFC 3339 timestamps.
 *
 * Event times are milliseconds since the Unix epoch (UTC). ASL timestamps
 * (Wait's Timestamp, the Choice Timestamp* operators) are RFC 3339 with an
 * uppercase 'T' separator and a zone ('Z' or +hh:mm / -hh:mm) required, and
 * any number of fractional second digits; they parse to seconds plus
 * nanoseconds so that comparisons keep full precision.
 */
#ifndef SWF_PROTOCOL_TIME_H
#define SWF_PROTOCOL_TIME_H

#include <stdbool.h>
#include <stdint.h>

#define SWF_TIME_BUF 32

typedef struct swf_time {
    int64_t sec;  /* seconds since the epoch, UTC */
    int32_t nsec; /* 0..999,999,999 */
} swf_time_t;

/* Parses an ASL timestamp strictly (see above). Returns false when s is not
 * one; *out is untouched then. */
bool swf_time_parse(const char *s, swf_time_t *out);

/* -1, 0 or 1. */
int swf_time_cmp(swf_time_t a, swf_time_t b);

/* Milliseconds since the epoch (rounded towards minus infinity). */
int64_t swf_time_to_ms(swf_time_t t);

/* Writes "YYYY-MM-DDTHH:MM:SS.mmmZ" into buf (at least SWF_TIME_BUF bytes). */
void swf_time_format_ms(int64_t ms, char *buf);

/* The wall clock, in milliseconds. Only drivers call this: the interpreter
 * takes "now" from the events it replays. */
int64_t swf_time_now_ms(void);

#endif
