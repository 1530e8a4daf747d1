/*
 * test_credentials.c - api/credentials.c: the credentials file of swf-api.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/credentials.h"

static swf_api_credentials_t *parse(const char *text)
{
    swf_api_credentials_t *c = NULL;
    swf_error_t *err = swf_api_credentials_parse("keys", text, strlen(text), &c);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    return c;
}

Test(credentials, looks_keys_up_and_scopes_them_to_their_resources)
{
    swf_api_credentials_t *c =
        parse("# who may call\n"
              "\n"
              "AKIDORDERS  s3cret-orders  stateMachine:orders activity:ship\n"
              "AKIDADMIN\ts3cret-admin\t*\r\n"
              "AKIDNONE s3cret-none\n");
    cr_assert_str_eq(swf_api_credentials_secret(c, "AKIDORDERS"), "s3cret-orders");
    cr_assert_str_eq(swf_api_credentials_secret(c, "AKIDADMIN"), "s3cret-admin");
    cr_assert_null(swf_api_credentials_secret(c, "AKIDOTHER"));
    cr_assert(swf_api_credentials_allows(c, "AKIDORDERS", "stateMachine", "orders"));
    cr_assert(swf_api_credentials_allows(c, "AKIDORDERS", "activity", "ship"));
    cr_assert_not(swf_api_credentials_allows(c, "AKIDORDERS", "activity", "orders"));
    cr_assert_not(swf_api_credentials_allows(c, "AKIDORDERS", "stateMachine", "payments"));
    cr_assert_not(swf_api_credentials_allows(c, "AKIDORDERS", "stateMachine", NULL));
    cr_assert(swf_api_credentials_allows(c, "AKIDADMIN", "stateMachine", "anything"));
    cr_assert(swf_api_credentials_allows(c, "AKIDADMIN", "activity", NULL));
    cr_assert_not(swf_api_credentials_allows(c, "AKIDNONE", "stateMachine", "orders"));
    cr_assert_not(swf_api_credentials_allows(c, "AKIDOTHER", "stateMachine", "orders"));
    swf_api_credentials_free(c);
}

static void refused(const char *text, const char *says)
{
    swf_api_credentials_t *c = NULL;
    swf_error_t *err = swf_api_credentials_parse("keys", text, strlen(text), &c);
    cr_assert_not_null(err, "accepted: %s", text);
    cr_assert_null(c);
    cr_assert(strstr(swf_error_message(err), says) != NULL, "%s", swf_error_message(err));
    cr_assert_null(strstr(swf_error_message(err), "s3cret"), "a message quotes a secret: %s",
                   swf_error_message(err));
    swf_error_free(err);
}

Test(credentials, refuses_a_malformed_file_naming_the_line_never_the_secret)
{
    refused("AKID s3cret *\nAKIDLONE\n", "keys:2:");
    refused("AKID s3cret *\nAKID s3cret2 *\n", "listed twice");
    refused("AKID s3cret machine:orders\n", "keys:1: resource machine:orders");
    refused("AKID s3cret stateMachine:\n", "keys:1:");
    refused("# nothing\n", "no keys");
}

Test(credentials, refuses_a_nul_byte)
{
    static const char text[] = "AKID s3cret\0 *\n";
    swf_api_credentials_t *c = NULL;
    swf_error_t *err = swf_api_credentials_parse("keys", text, sizeof(text) - 1, &c);
    cr_assert_not_null(err);
    cr_assert(strstr(swf_error_message(err), "NUL") != NULL);
    swf_error_free(err);
}

Test(credentials, bounds_what_it_reads)
{
    char big[SWF_API_CREDENTIALS_BYTES + 2];
    memset(big, '#', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    refused(big, "larger than");
    char longid[300];
    memset(longid, 'K', 200);
    strcpy(longid + 200, " s3cret *\n");
    refused(longid, "over 128 bytes");
}

Test(credentials, loads_a_file_and_says_which_is_missing)
{
    swf_api_credentials_t *c = NULL;
    swf_error_t *err = swf_api_credentials_load("/nonexistent/keys", &c);
    cr_assert_not_null(err);
    cr_assert(strstr(swf_error_message(err), "/nonexistent/keys") != NULL);
    swf_error_free(err);
}
