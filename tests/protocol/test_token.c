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

/* Tokens made before the HMAC came from libcrypto (by the HMAC of hash.c's
 * own SHA-256) are still the ones made now: tokens in flight and recorded
 * histories stay valid. */
Test(token, tokens_are_the_known_answers)
{
    const struct {
        const char *secret, *execution_id, *activity_id, *token;
    } known[] = {
        {"s3cret", "exec-1", "42",
         "eyJlIjoiZXhlYy0xIiwiYSI6IjQyIn0.puWZ9DMJre1ins52YBjSF6K9pWbmawmD83Zsw2iLlgU"},
        {"", "e", "a", "eyJlIjoiZSIsImEiOiJhIn0.EBKgVpK07YF1YCdY8HaJEZ9b-hf9E3Te-eCAAd_g7nw"},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        char *t = swf_token_make(known[i].secret, known[i].execution_id, known[i].activity_id);
        cr_expect_str_eq(t, known[i].token);
        char *e, *a;
        swf_error_t *err = swf_token_verify(known[i].secret, known[i].token, &e, &a);
        cr_assert_null(err, "%s", swf_error_message(err));
        cr_expect_str_eq(e, known[i].execution_id);
        cr_expect_str_eq(a, known[i].activity_id);
        free(e);
        free(a);
        free(t);
    }
}

/* The comparison runs to the last character: a signature that differs only
 * there is refused, for every other character of the alphabet, including
 * the three that differ only in the two bits base64url's last character
 * leaves unused (they would decode to the same signature). */
Test(token, token_differing_only_in_its_last_byte_is_refused)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *t = swf_token_make("s3cret", "exec-1", "42");
    size_t n = strlen(t);
    for (const char *c = alphabet; *c; c++) {
        if (*c == t[n - 1])
            continue;
        char *bad = strdup(t);
        bad[n - 1] = *c;
        char *e, *a;
        swf_error_t *err = swf_token_verify("s3cret", bad, &e, &a);
        cr_assert_not_null(err, "%s accepted", bad);
        cr_assert_str_eq(swf_error_message(err), "forged or altered task token");
        cr_assert_null(e);
        swf_error_free(err);
        free(bad);
    }
    free(t);
}
