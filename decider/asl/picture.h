/*
 * picture.h - XPath picture strings (F&O 3.1, 4.6.1 format-integer, 4.7
 * format-number and 9.8 format-dateTime) as JSONata 2.0.6 applies them in
 * $formatInteger, $parseInteger, $formatNumber, $fromMillis and $toMillis.
 * Internal to decider/asl: only the JSONata evaluator (decider/asl/jsonata/)
 * calls it.
 *
 * Every function returns NULL on success or a States.QueryEvaluationError
 * whose message is one sentence without the function's name (the caller
 * prefixes it). Strings are UTF-8 with their length (they may hold NUL
 * bytes, which no picture accepts). *out strings are new heap strings the
 * caller frees; on failure *out is NULL.
 *
 * Thread-safety: reentrant (no state, no locale, no clock: the time a
 * partial timestamp is completed from is an argument).
 */
#ifndef SWF_ASL_PICTURE_H
#define SWF_ASL_PICTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/error.h"

/* Bytes of one picture string, and of a timestamp $toMillis reads with a
 * picture (the backtracking match of the two is bounded by both). The
 * longest useful pictures are a few dozen bytes. Results are bounded by
 * SWF_LIMIT_PAYLOAD_BYTES (protocol/limits.h). */
#define SWF_LIMIT_PICTURE_BYTES 1024

/* $formatInteger(value, picture): value rounded down, then written as the
 * picture says ("#,##0", "0001", "a", "I", "w;o", ...). |value| must be
 * below 1e21 (where JavaScript stops writing integers with digits), and
 * below 2^53 for letters, roman numerals and words. */
swf_error_t *swf_asl_picture_integer_format(double value, const char *pic, size_t pic_len,
                                            char **out, size_t *out_len);

/* $parseInteger(text, picture): the integer text spells in the picture's
 * form. The whole text must match it. */
swf_error_t *swf_asl_picture_integer_parse(const char *text, size_t text_len, const char *pic,
                                           size_t pic_len, double *value);

/* $fromMillis(ms, picture, timezone): ms (milliseconds since the epoch,
 * whole, years 0 to 9999 once shifted) shown zone_minutes east of UTC as
 * the picture says ("[D1o] [MNn] [Y]", "[FNn,*-3] [W]", ...). */
swf_error_t *swf_asl_picture_date_format(int64_t ms, int zone_minutes, const char *pic,
                                         size_t pic_len, char **out, size_t *out_len);

/* $toMillis(text, picture): the time text shows, read with the picture.
 * Components the text does not give are taken from now_ms, the time of the
 * decision, for those before the first given one ("[H]:[m]" is today), and
 * are the lowest value for those after it ("[Y]-[M]" is the month's first
 * midnight). now_ms is 0 where there is no decision; a text that would need
 * it is then an error. *matched is false (and no error) when the text does
 * not match the picture, as JSONata gives undefined then. */
swf_error_t *swf_asl_picture_date_parse(const char *text, size_t text_len, const char *pic,
                                        size_t pic_len, int64_t now_ms, double *ms, bool *matched);

/* The symbols of a decimal format (F&O 3.1, 4.7.1), as $formatNumber's
 * options set them: one code point each, and the two strings (borrowed)
 * written for an infinite and a NaN value. The digits are zero to zero + 9. */
typedef struct swf_asl_picture_decimal {
    uint32_t decimal, grouping, exponent, percent, permille, zero, digit, pattern, minus;
    const char *infinity, *nan;
} swf_asl_picture_decimal_t;

/* $formatNumber(value, picture, options): value as XPath's format-number
 * writes it ("#,##0.00", "0.0e0", "#%;(#%)") in the decimal format
 * `format`, rounded half to even as $round rounds (number.h). The picture
 * comes as pic_len code points: the caller decodes it as it decodes the
 * option characters, so that both read a string alike. A result longer
 * than SWF_LIMIT_PAYLOAD_BYTES is cut there (only options' infinity or NaN
 * strings can make one), not refused, as JSONata's $formatNumber has always
 * done here. */
swf_error_t *swf_asl_picture_number_format(double value, const uint32_t *pic, size_t pic_len,
                                           const swf_asl_picture_decimal_t *format, char **out,
                                           size_t *out_len);

#endif
