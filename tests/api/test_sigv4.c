/*
 * test_sigv4.c - api/sigv4.c against AWS's Signature Version 4 test suite
 * (the published vectors: credentials AKIDEXAMPLE, 2015-08-30T12:36:00Z,
 * us-east-1, service "service"), and the server's refusals.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/sigv4.h"

#define SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define DATE "20150830T123600Z"
#define HOST                                                                                       \
    {                                                                                              \
        "Host", "example.amazonaws.com"                                                            \
    }
#define STAMP                                                                                      \
    {                                                                                              \
        "X-Amz-Date", DATE                                                                         \
    }
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* 2015-08-30T12:36:00Z in seconds. */
#define NOW 1440938160

static swf_api_sigv4_auth_t auth_of(const char *signed_headers)
{
    swf_api_sigv4_auth_t a = {.access_key = "AKIDEXAMPLE",
                              .date = "20150830",
                              .region = "us-east-1",
                              .service = "service"};
    strcpy(a.signed_headers, signed_headers);
    return a;
}

static void expect(const char *method, const char *query, const swf_api_header_t *h, size_t n,
                   const char *body, const char *signed_headers, const char *signature)
{
    char sha[65];
    swf_api_sha256_hex(body, strlen(body), sha);
    swf_api_sigv4_request_t r = {method, "/", query, h, n, sha};
    swf_api_sigv4_auth_t a = auth_of(signed_headers);
    char got[65];
    swf_error_t *err = swf_api_sigv4_sign(&r, SECRET, DATE, &a, got);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    cr_assert_str_eq(got, signature);
    /* And the server takes the request signed so. */
    strcpy(a.signature, signature);
    err = swf_api_sigv4_verify(&r, &a, SECRET, NOW);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
}

Test(sigv4, signs_get_vanilla_as_aws)
{
    swf_api_header_t h[] = {HOST, STAMP};
    expect("GET", NULL, h, 2, "", "host;x-amz-date",
           "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

Test(sigv4, signs_post_vanilla_as_aws)
{
    swf_api_header_t h[] = {HOST, STAMP};
    expect("POST", NULL, h, 2, "", "host;x-amz-date",
           "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
}

Test(sigv4, signs_post_vanilla_query_as_aws)
{
    swf_api_header_t h[] = {HOST, STAMP};
    expect("POST", "Param1=value1", h, 2, "", "host;x-amz-date",
           "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11");
}

Test(sigv4, sorts_query_parameters_as_aws)
{
    swf_api_header_t h[] = {HOST, STAMP};
    expect("GET", "Param2=value2&Param1=value1", h, 2, "", "host;x-amz-date",
           "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

Test(sigv4, lowercases_header_names_as_aws)
{
    swf_api_header_t h[] = {HOST, {"MY-HEADER1", "value1"}, STAMP};
    expect("POST", NULL, h, 3, "", "host;my-header1;x-amz-date",
           "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c");
}

Test(sigv4, keeps_header_value_case_as_aws)
{
    swf_api_header_t h[] = {HOST, {"My-Header1", "VALUE1"}, STAMP};
    expect("POST", NULL, h, 3, "", "host;my-header1;x-amz-date",
           "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d");
}

Test(sigv4, joins_repeated_headers_as_aws)
{
    swf_api_header_t h[] = {
        HOST, {"My-Header1", "value2"}, {"My-Header1", "value2"}, {"My-Header1", "value1"}, STAMP};
    expect("GET", NULL, h, 5, "", "host;my-header1;x-amz-date",
           "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea");
}

Test(sigv4, signs_a_body_as_aws)
{
    swf_api_header_t h[] = {{"Content-Type", "application/x-www-form-urlencoded"}, HOST, STAMP};
    expect("POST", NULL, h, 3, "Param1=value1", "content-type;host;x-amz-date",
           "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a");
}

Test(sigv4, builds_the_canonical_request_of_aws)
{
    swf_api_header_t h[] = {HOST, STAMP};
    swf_api_sigv4_request_t r = {"POST", "/", "Param1=value1", h, 2, EMPTY_SHA};
    char *c = NULL;
    cr_assert_null(swf_api_sigv4_canonical(&r, "host;x-amz-date", &c));
    cr_assert_str_eq(c, "POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:" DATE
                        "\n\nhost;x-amz-date\n" EMPTY_SHA);
    free(c);
}

static swf_api_sigv4_request_t vanilla(swf_api_header_t *h)
{
    h[0] = (swf_api_header_t)HOST;
    h[1] = (swf_api_header_t)STAMP;
    return (swf_api_sigv4_request_t){"POST", "/", NULL, h, 2, EMPTY_SHA};
}

static void refused(swf_error_t *err, const char *name)
{
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_name(err), name, "%s: %s", swf_error_name(err),
                     swf_error_message(err));
    cr_assert_null(strstr(swf_error_message(err), SECRET), "a message quotes the secret");
    swf_error_free(err);
}

Test(sigv4, refuses_a_wrong_secret)
{
    swf_api_header_t h[2];
    swf_api_sigv4_request_t r = vanilla(h);
    swf_api_sigv4_auth_t a = auth_of("host;x-amz-date");
    strcpy(a.signature, "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
    refused(swf_api_sigv4_verify(&r, &a, "another secret", NOW), "InvalidSignatureException");
}

Test(sigv4, refuses_an_expired_date)
{
    swf_api_header_t h[2];
    swf_api_sigv4_request_t r = vanilla(h);
    swf_api_sigv4_auth_t a = auth_of("host;x-amz-date");
    strcpy(a.signature, "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
    refused(swf_api_sigv4_verify(&r, &a, SECRET, NOW + SWF_API_SIGV4_SKEW_S + 1),
            "InvalidSignatureException");
    /* Within the skew it verifies. */
    cr_assert_null(swf_api_sigv4_verify(&r, &a, SECRET, NOW + SWF_API_SIGV4_SKEW_S));
}

Test(sigv4, refuses_a_changed_body)
{
    swf_api_header_t h[2];
    swf_api_sigv4_request_t r = vanilla(h);
    char sha[65];
    swf_api_sha256_hex("{}", 2, sha);
    r.payload_sha256_hex = sha;
    swf_api_sigv4_auth_t a = auth_of("host;x-amz-date");
    strcpy(a.signature, "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
    refused(swf_api_sigv4_verify(&r, &a, SECRET, NOW), "InvalidSignatureException");
}

Test(sigv4, refuses_an_unsigned_host)
{
    swf_api_header_t h[2];
    swf_api_sigv4_request_t r = vanilla(h);
    swf_api_sigv4_auth_t a = auth_of("x-amz-date");
    memset(a.signature, 'a', 64);
    refused(swf_api_sigv4_verify(&r, &a, SECRET, NOW), "InvalidSignatureException");
}

Test(sigv4, refuses_a_signed_header_the_request_lacks)
{
    swf_api_header_t h[2];
    swf_api_sigv4_request_t r = vanilla(h);
    swf_api_sigv4_auth_t a = auth_of("host;my-header1;x-amz-date");
    memset(a.signature, 'a', 64);
    refused(swf_api_sigv4_verify(&r, &a, SECRET, NOW), "InvalidSignatureException");
}

Test(sigv4, refuses_a_missing_date)
{
    swf_api_header_t h[1] = {HOST};
    swf_api_sigv4_request_t r = {"POST", "/", NULL, h, 1, EMPTY_SHA};
    swf_api_sigv4_auth_t a = auth_of("host");
    memset(a.signature, 'a', 64);
    refused(swf_api_sigv4_verify(&r, &a, SECRET, NOW), "IncompleteSignatureException");
}

Test(sigv4, parses_the_authorization_header_of_the_sdks)
{
    swf_api_sigv4_auth_t a;
    cr_assert_null(swf_api_sigv4_auth_parse(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/states/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
        "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        &a));
    cr_assert_str_eq(a.access_key, "AKIDEXAMPLE");
    cr_assert_str_eq(a.date, "20150830");
    cr_assert_str_eq(a.region, "us-east-1");
    cr_assert_str_eq(a.service, "states");
    cr_assert_str_eq(a.signed_headers, "content-type;host;x-amz-date;x-amz-target");
}

Test(sigv4, refuses_malformed_authorization_headers_by_name)
{
    static const char *const bad[] = {
        "AWS4-HMAC-SHA1 Credential=a/20150830/r/s/aws4_request, SignedHeaders=host, Signature=x",
        "AWS4-HMAC-SHA256 Credential=AKID/2015/us-east-1/s/aws4_request, SignedHeaders=host, "
        "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s/aws4_request, SignedHeaders=host",
        "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s/aws4_request, SignedHeaders=host, "
        "Signature=zz",
        "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s/other, SignedHeaders=host, "
        "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        "AWS4-HMAC-SHA256 Nonsense",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        swf_api_sigv4_auth_t a;
        refused(swf_api_sigv4_auth_parse(bad[i], &a), "IncompleteSignatureException");
    }
    swf_api_sigv4_auth_t a;
    refused(swf_api_sigv4_auth_parse(NULL, &a), "MissingAuthenticationTokenException");
}
