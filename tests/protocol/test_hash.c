/*
 * test_hash.c - the digests, HMAC and base64 against their published test
 * vectors (FIPS 180-4 examples, RFC 1321, RFC 4231, RFC 4648). The digests
 * and the HMAC are libcrypto's; these known answers are what they were when
 * hash.c had its own, and what States.Hash in recorded histories gave.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/hash.h"

static const char *two_block_448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char *two_block_896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                                   "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

static void expect_digest(swf_hash_alg_t alg, const void *data, size_t len, const char *hex)
{
    uint8_t d[SWF_HASH_MAX_BYTES];
    char got[2 * SWF_HASH_MAX_BYTES + 1];
    swf_hash_digest(alg, data, len, d);
    swf_hash_hex_encode(d, swf_hash_size(alg), got);
    cr_expect_str_eq(got, hex, "alg %d, %zu bytes", (int)alg, len);
}

static void expect_str_digest(swf_hash_alg_t alg, const char *s, const char *hex)
{
    expect_digest(alg, s, strlen(s), hex);
}

Test(hash_digest, md5_matches_rfc1321_vectors)
{
    expect_str_digest(SWF_HASH_MD5, "", "d41d8cd98f00b204e9800998ecf8427e");
    expect_str_digest(SWF_HASH_MD5, "abc", "900150983cd24fb0d6963f7d28e17f72");
    expect_str_digest(SWF_HASH_MD5, "message digest", "f96b697d7cb7938d525a2f31aaf161d0");
    expect_str_digest(SWF_HASH_MD5,
                      "1234567890123456789012345678901234567890"
                      "1234567890123456789012345678901234567890",
                      "57edf4a22be3c955ac49da2e2107b67a");
}

Test(hash_digest, sha1_matches_fips_vectors)
{
    expect_str_digest(SWF_HASH_SHA1, "", "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    expect_str_digest(SWF_HASH_SHA1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d");
    expect_str_digest(SWF_HASH_SHA1, two_block_448, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

Test(hash_digest, sha256_matches_fips_vectors)
{
    expect_str_digest(SWF_HASH_SHA256, "",
                      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_str_digest(SWF_HASH_SHA256, "abc",
                      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect_str_digest(SWF_HASH_SHA256, two_block_448,
                      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(hash_digest, sha384_matches_fips_vectors)
{
    expect_str_digest(SWF_HASH_SHA384, "",
                      "38b060a751ac96384cd9327eb1b1e36a21fdb71114be0743"
                      "4c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b");
    expect_str_digest(SWF_HASH_SHA384, "abc",
                      "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded163"
                      "1a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7");
    expect_str_digest(SWF_HASH_SHA384, two_block_896,
                      "09330c33f71147e83d192fc782cd1b4753111b173b3b05d2"
                      "2fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039");
}

Test(hash_digest, sha512_matches_fips_vectors)
{
    expect_str_digest(SWF_HASH_SHA512, "",
                      "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
                      "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e");
    expect_str_digest(SWF_HASH_SHA512, "abc",
                      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                      "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
    expect_str_digest(SWF_HASH_SHA512, two_block_896,
                      "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
                      "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909");
}

/* One million 'a' is the long-message vector of FIPS 180-4; it crosses many
 * blocks and makes the length field use more than one byte. */
Test(hash_digest, long_message_of_a_million_a)
{
    size_t n = 1000000;
    char *buf = malloc(n);
    cr_assert_not_null(buf);
    memset(buf, 'a', n);
    expect_digest(SWF_HASH_SHA1, buf, n, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    expect_digest(SWF_HASH_SHA256, buf, n,
                  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    expect_digest(SWF_HASH_MD5, buf, n, "7707d6ae4e027c70eea2a935c2296f21");
    free(buf);
}

/* Lengths around the padding boundary (55/56/64 bytes for 64-byte blocks,
 * 111/112 for 128-byte blocks) exercise the extra padding block; the
 * expected digests were computed with Python's hashlib. */
Test(hash_digest, padding_boundaries)
{
    char buf[130];
    memset(buf, 'x', sizeof(buf));
    expect_digest(SWF_HASH_SHA256, buf, 55,
                  "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
    expect_digest(SWF_HASH_SHA256, buf, 56,
                  "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
    expect_digest(SWF_HASH_MD5, buf, 56, "668a72d5ba17f08e62dabcafad6db14b");
    expect_digest(SWF_HASH_SHA1, buf, 64, "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163");
    expect_digest(SWF_HASH_SHA384, buf, 111,
                  "dfec6588f894c2b089119e1884a23941e5aa69ed38702839"
                  "cf7352ac6d155d315693bb5d26b7468d8b69ecf4631ef419");
    expect_digest(SWF_HASH_SHA512, buf, 112,
                  "a3722b515ef40c910f2419f6e0da8ca51d410114ce6272faae64045f9e9f630e"
                  "7fa8dd5a3243c9860b899d148c3da4bc0f9e07454542604d030bb55531fe0d5b");
}

static void expect_hmac(const void *key, size_t key_len, const void *data, size_t len,
                        const char *hex)
{
    uint8_t mac[SWF_HASH_SHA256_BYTES];
    char got[2 * SWF_HASH_SHA256_BYTES + 1];
    swf_hash_hmac_sha256(key, key_len, data, len, mac);
    swf_hash_hex_encode(mac, sizeof(mac), got);
    cr_expect_str_eq(got, hex);
}

Test(hash_hmac_sha256, matches_rfc4231_vectors)
{
    uint8_t key[131];
    uint8_t data[50];

    memset(key, 0x0b, 20);
    expect_hmac(key, 20, "Hi There", 8,
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");

    expect_hmac("Jefe", 4, "what do ya want for nothing?", 28,
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

    memset(key, 0xaa, 20);
    memset(data, 0xdd, 50);
    expect_hmac(key, 20, data, 50,
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");

    for (int i = 0; i < 25; i++)
        key[i] = (uint8_t)(i + 1);
    memset(data, 0xcd, 50);
    expect_hmac(key, 25, data, 50,
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");

    memset(key, 0xaa, 131);
    const char *t6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    expect_hmac(key, 131, t6, strlen(t6),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");

    const char *t7 = "This is a test using a larger than block-size key and a larger than "
                     "block-size data. The key needs to be hashed before being used by the "
                     "HMAC algorithm.";
    expect_hmac(key, 131, t7, strlen(t7),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

Test(hash_alg, names_are_exact)
{
    swf_hash_alg_t alg;
    cr_expect(swf_hash_alg_from_name("MD5", &alg) && alg == SWF_HASH_MD5);
    cr_expect(swf_hash_alg_from_name("SHA-1", &alg) && alg == SWF_HASH_SHA1);
    cr_expect(swf_hash_alg_from_name("SHA-256", &alg) && alg == SWF_HASH_SHA256);
    cr_expect(swf_hash_alg_from_name("SHA-384", &alg) && alg == SWF_HASH_SHA384);
    cr_expect(swf_hash_alg_from_name("SHA-512", &alg) && alg == SWF_HASH_SHA512);
    cr_expect_not(swf_hash_alg_from_name("sha-256", &alg));
    cr_expect_not(swf_hash_alg_from_name("SHA256", &alg));
    cr_expect_not(swf_hash_alg_from_name("", &alg));
}

/* RFC 4648, section 10. */
static const char *rfc4648[][2] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

Test(base64, encodes_rfc4648_vectors)
{
    for (size_t i = 0; i < sizeof(rfc4648) / sizeof(rfc4648[0]); i++) {
        char *s = NULL;
        cr_assert_null(swf_base64_encode(rfc4648[i][0], strlen(rfc4648[i][0]), &s));
        cr_expect_str_eq(s, rfc4648[i][1]);
        free(s);
    }
}

Test(base64, decodes_rfc4648_vectors)
{
    for (size_t i = 0; i < sizeof(rfc4648) / sizeof(rfc4648[0]); i++) {
        uint8_t *b = NULL;
        size_t n = 99;
        cr_assert_null(swf_base64_decode(rfc4648[i][1], strlen(rfc4648[i][1]), &b, &n));
        cr_expect_eq(n, strlen(rfc4648[i][0]));
        cr_expect_str_eq((char *)b, rfc4648[i][0]);
        free(b);
    }
}

Test(base64, round_trips_every_byte_value)
{
    uint8_t all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    for (size_t len = 0; len <= sizeof(all); len += 37) {
        char *s = NULL;
        uint8_t *b = NULL;
        size_t n = 0;
        cr_assert_null(swf_base64_encode(all, len, &s));
        cr_assert_null(swf_base64_decode(s, strlen(s), &b, &n));
        cr_expect_eq(n, len);
        cr_expect(memcmp(b, all, len) == 0);
        free(s);
        free(b);
    }
    char *s = NULL;
    cr_assert_null(swf_base64_encode("\xfb\xff", 2, &s));
    cr_expect_str_eq(s, "+/8=");
    free(s);
}

Test(base64, rejects_invalid_text)
{
    const char *bad[] = {
        "Zg",       /* not a multiple of four */
        "Zg=",      /* ditto */
        "Z===",     /* too much padding */
        "Zm9v!mFy", /* not in the alphabet */
        "Zm 9",     /* white space */
        "Zg==Zg==", /* padding in the middle */
        "Zh==",     /* non-zero bits under the padding */
        "Zm9=",     /* ditto */
        "Zm9vYg-_", /* the URL-safe alphabet */
        "=AAA",
        /* What libcrypto's EVP_DecodeBlock accepts and ours must not. */
        " Zm9v",    /* leading white space */
        "Zm9v\n",   /* a trailing newline */
        "Zm9v\r\n", /* ditto */
        "Z=g=",     /* '=' inside a quantum */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint8_t *b = (uint8_t *)"x";
        size_t n = 7;
        swf_error_t *err = swf_base64_decode(bad[i], strlen(bad[i]), &b, &n);
        cr_expect_not_null(err, "accepted %s", bad[i]);
        if (err)
            cr_expect_eq(swf_error_code(err), SWF_E_INPUT);
        cr_expect_null(b);
        swf_error_free(err);
    }
}

Test(hash_hex, is_lowercase)
{
    char out[9];
    swf_hash_hex_encode((const uint8_t *)"\x00\xab\xcd\xff", 4, out);
    cr_expect_str_eq(out, "00abcdff");
}
