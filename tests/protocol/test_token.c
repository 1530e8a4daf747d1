/* test_token.c - task tokens verify when issued here and only then. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/token.h"

Test(token, made_token_verifies_and_gives_back_its_ids)
{
    char *t = swf_token_make("s3cret", "exec-1", "42");
    char *e, *a;
    swf_error_t *err = swf_token_verify("s3cret", t, &e, &a);
    cr_assert_null(err, "%s", swf_error_message(err));
    cr_assert_str_eq(e, "exec-1");
    cr_assert_str_eq(a, "42");
    cr_assert_null(strchr(t, '='));
    cr_assert_null(strchr(t, '+'));
    free(e);
    free(a);
    free(t);
}

Test(token, other_secret_is_refused_as_forged)
{
    char *t = swf_token_make("s3cret", "exec-1", "42");
    char *e, *a;
    swf_error_t *err = swf_token_verify("another", t, &e, &a);
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_message(err), "forged or altered task token");
    cr_assert_null(e);
    swf_error_free(err);
    free(t);
}

Test(token, altered_payload_is_refused)
{
    char *t = swf_token_make("s3cret", "exec-1", "42");
    t[3] = t[3] == 'A' ? 'B' : 'A';
    char *e, *a;
    swf_error_t *err = swf_token_verify("s3cret", t, &e, &a);
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_message(err), "forged or altered task token");
    swf_error_free(err);
    free(t);
}

Test(token, garbage_is_malformed_not_a_crash)
{
    const char *bad[] = {"", ".", "abc", "a.b.c", "!!!.???", NULL};
    for (size_t i = 0; bad[i]; i++) {
        char *e, *a;
        swf_error_t *err = swf_token_verify("s", bad[i], &e, &a);
        cr_assert_not_null(err, "%s accepted", bad[i]);
        swf_error_free(err);
    }
    char *huge = malloc(SWF_TOKEN_MAX_BYTES + 10);
    memset(huge, 'a', SWF_TOKEN_MAX_BYTES + 9);
    huge[SWF_TOKEN_MAX_BYTES + 9] = '\0';
    char *e, *a;
    swf_error_t *err = swf_token_verify("s", huge, &e, &a);
    cr_assert_not_null(err);
    swf_error_free(err);
    free(huge);
}

Test(token, same_inputs_make_the_same_token)
{
    char *a = swf_token_make("k", "e", "1"), *b = swf_token_make("k", "e", "1");
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
}
