/*
 * json_text.h - JSON written in a test, parsed or the test fails.
 *
 * Most test files carry a copy of this helper; new ones include it
 * instead. Ownership: the caller owns the value returned.
 */
#ifndef SWF_TESTS_JSON_TEXT_H
#define SWF_TESTS_JSON_TEXT_H

#include <criterion/criterion.h>
#include <string.h>

#include "protocol/json.h"

static inline json_object *json_text(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1 << 20, &v);
    cr_assert_null(err, "bad test JSON: %s", swf_error_message(err));
    return v;
}

#endif
