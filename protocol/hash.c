/*
 * hash.c - MD5, SHA-1, SHA-2, HMAC-SHA256, base64 and hex, from their
 * specifications.
 *
 * The project depends on json-c and libc only, so the digests States.Hash
 * offers and the HMAC that signs task tokens are written here rather than
 * taken from OpenSSL. All five digests are Merkle-Damgard constructions that
 * differ only in block size, word size, byte order and the compression
 * function, so one context type buffers input into blocks and pads the last
 * one for all of them; each algorithm contributes only its compression
 * function and initial state. Nothing here is meant to resist timing attacks
 * beyond what the algorithms give by construction: the inputs are workflow
 * data and the HMAC key is compared elsewhere.
 *
 * Speed is not a goal (States.Hash input is at most 10,000 bytes); clarity
 * and the published test vectors are.
 */
#include "protocol/hash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct hash_ctx {
    swf_hash_alg_t alg;
    uint32_t h32[8]; /* MD5, SHA-1, SHA-256 state */
    uint64_t h64[8]; /* SHA-384, SHA-512 state */
    uint8_t block[128];
    size_t fill;    /* bytes buffered in block */
    uint64_t total; /* bytes hashed so far */
} hash_ctx_t;

static inline uint32_t rotl32(uint32_t x, unsigned n)
{
    return (x << n) | (x >> (32 - n));
}
static inline uint32_t rotr32(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}
static inline uint64_t rotr64(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

static uint32_t load32_be(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t load32_le(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t load64_be(const uint8_t *p)
{
    return (uint64_t)load32_be(p) << 32 | load32_be(p + 4);
}

static void store32_be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void store32_le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void store64_be(uint8_t *p, uint64_t v)
{
    store32_be(p, (uint32_t)(v >> 32));
    store32_be(p + 4, (uint32_t)v);
}

/* ---- MD5 (RFC 1321) ---- */

static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

static const uint8_t md5_shift[64] = {
    7,  12, 17, 22, 7,  12, 17, 22, 7,  12, 17, 22, 7,  12, 17, 22, 5,  9,  14, 20, 5,  9,
    14, 20, 5,  9,  14, 20, 5,  9,  14, 20, 4,  11, 16, 23, 4,  11, 16, 23, 4,  11, 16, 23,
    4,  11, 16, 23, 6,  10, 15, 21, 6,  10, 15, 21, 6,  10, 15, 21, 6,  10, 15, 21,
};

static void md5_compress(uint32_t h[4], const uint8_t *block)
{
    uint32_t m[16];
    for (int i = 0; i < 16; i++)
        m[i] = load32_le(block + 4 * i);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (unsigned i = 0; i < 64; i++) {
        uint32_t f;
        unsigned g;
        if (i < 16) {
            f = (b & c) | (~b & d);
            g = i;
        } else if (i < 32) {
            f = (d & b) | (~d & c);
            g = (5 * i + 1) % 16;
        } else if (i < 48) {
            f = b ^ c ^ d;
            g = (3 * i + 5) % 16;
        } else {
            f = c ^ (b | ~d);
            g = (7 * i) % 16;
        }
        uint32_t t = d;
        d = c;
        c = b;
        b = b + rotl32(a + f + md5_k[i] + m[g], md5_shift[i]);
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
}

/* ---- SHA-1 (FIPS 180-4, 6.1) ---- */

static void sha1_compress(uint32_t h[5], const uint8_t *block)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = load32_be(block + 4 * i);
    for (int i = 16; i < 80; i++)
        w[i] = rotl32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdc;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6;
        }
        uint32_t t = rotl32(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rotl32(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

/* ---- SHA-256 (FIPS 180-4, 6.2) ---- */

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static void sha256_compress(uint32_t h[8], const uint8_t *block)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = load32_be(block + 4 * i);
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr32(w[i - 15], 7) ^ rotr32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr32(w[i - 2], 17) ^ rotr32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = hh + S1 + ch + sha256_k[i] + w[i];
        uint32_t S0 = rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

/* ---- SHA-512 and SHA-384 (FIPS 180-4, 6.4 and 6.5) ---- */

static const uint64_t sha512_k[80] = {
    0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL, 0xe9b5dba58189dbbcULL,
    0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL, 0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL,
    0xd807aa98a3030242ULL, 0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
    0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL, 0xc19bf174cf692694ULL,
    0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL, 0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL,
    0x2de92c6f592b0275ULL, 0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
    0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL, 0xbf597fc7beef0ee4ULL,
    0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL, 0x06ca6351e003826fULL, 0x142929670a0e6e70ULL,
    0x27b70a8546d22ffcULL, 0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
    0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL, 0x92722c851482353bULL,
    0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL, 0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL,
    0xd192e819d6ef5218ULL, 0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
    0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL, 0x34b0bcb5e19b48a8ULL,
    0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL, 0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL,
    0x748f82ee5defb2fcULL, 0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
    0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL, 0xc67178f2e372532bULL,
    0xca273eceea26619cULL, 0xd186b8c721c0c207ULL, 0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL,
    0x06f067aa72176fbaULL, 0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
    0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL, 0x431d67c49c100d4cULL,
    0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL, 0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};

static void sha512_compress(uint64_t h[8], const uint8_t *block)
{
    uint64_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = load64_be(block + 8 * i);
    for (int i = 16; i < 80; i++) {
        uint64_t s0 = rotr64(w[i - 15], 1) ^ rotr64(w[i - 15], 8) ^ (w[i - 15] >> 7);
        uint64_t s1 = rotr64(w[i - 2], 19) ^ rotr64(w[i - 2], 61) ^ (w[i - 2] >> 6);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint64_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 80; i++) {
        uint64_t S1 = rotr64(e, 14) ^ rotr64(e, 18) ^ rotr64(e, 41);
        uint64_t ch = (e & f) ^ (~e & g);
        uint64_t t1 = hh + S1 + ch + sha512_k[i] + w[i];
        uint64_t S0 = rotr64(a, 28) ^ rotr64(a, 34) ^ rotr64(a, 39);
        uint64_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint64_t t2 = S0 + maj;
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

/* ---- the shared Merkle-Damgard frame ---- */

static size_t block_bytes(swf_hash_alg_t alg)
{
    return alg == SWF_HASH_SHA384 || alg == SWF_HASH_SHA512 ? 128 : 64;
}

static void ctx_init(hash_ctx_t *ctx, swf_hash_alg_t alg)
{
    static const uint32_t md5_iv[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    static const uint32_t sha1_iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    static const uint32_t sha256_iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    static const uint64_t sha384_iv[8] = {
        0xcbbb9d5dc1059ed8ULL, 0x629a292a367cd507ULL, 0x9159015a3070dd17ULL, 0x152fecd8f70e5939ULL,
        0x67332667ffc00b31ULL, 0x8eb44a8768581511ULL, 0xdb0c2e0d64f98fa7ULL, 0x47b5481dbefa4fa4ULL};
    static const uint64_t sha512_iv[8] = {
        0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
        0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};

    memset(ctx, 0, sizeof(*ctx));
    ctx->alg = alg;
    switch (alg) {
    case SWF_HASH_MD5:
        memcpy(ctx->h32, md5_iv, sizeof(md5_iv));
        break;
    case SWF_HASH_SHA1:
        memcpy(ctx->h32, sha1_iv, sizeof(sha1_iv));
        break;
    case SWF_HASH_SHA256:
        memcpy(ctx->h32, sha256_iv, sizeof(sha256_iv));
        break;
    case SWF_HASH_SHA384:
        memcpy(ctx->h64, sha384_iv, sizeof(sha384_iv));
        break;
    case SWF_HASH_SHA512:
        memcpy(ctx->h64, sha512_iv, sizeof(sha512_iv));
        break;
    }
}

static void ctx_compress(hash_ctx_t *ctx, const uint8_t *block)
{
    switch (ctx->alg) {
    case SWF_HASH_MD5:
        md5_compress(ctx->h32, block);
        break;
    case SWF_HASH_SHA1:
        sha1_compress(ctx->h32, block);
        break;
    case SWF_HASH_SHA256:
        sha256_compress(ctx->h32, block);
        break;
    case SWF_HASH_SHA384:
    case SWF_HASH_SHA512:
        sha512_compress(ctx->h64, block);
        break;
    }
}

static void ctx_update(hash_ctx_t *ctx, const void *data, size_t len)
{
    const uint8_t *p = data;
    size_t bs = block_bytes(ctx->alg);
    ctx->total += len;
    while (len > 0) {
        size_t take = bs - ctx->fill;
        if (take > len)
            take = len;
        memcpy(ctx->block + ctx->fill, p, take);
        ctx->fill += take;
        p += take;
        len -= take;
        if (ctx->fill == bs) {
            ctx_compress(ctx, ctx->block);
            ctx->fill = 0;
        }
    }
}

/* Pads with 0x80, zeros and the message length in bits (little-endian for
 * MD5, big-endian otherwise; 128 bits wide for the 128-byte-block digests),
 * then writes the state out in the algorithm's byte order. */
static void ctx_final(hash_ctx_t *ctx, uint8_t *out)
{
    size_t bs = block_bytes(ctx->alg);
    size_t len_bytes = bs == 128 ? 16 : 8;
    uint64_t bits = ctx->total << 3;
    uint64_t bits_high = ctx->total >> 61;

    ctx->block[ctx->fill++] = 0x80;
    if (ctx->fill > bs - len_bytes) {
        memset(ctx->block + ctx->fill, 0, bs - ctx->fill);
        ctx_compress(ctx, ctx->block);
        ctx->fill = 0;
    }
    memset(ctx->block + ctx->fill, 0, bs - ctx->fill);
    if (ctx->alg == SWF_HASH_MD5) {
        store32_le(ctx->block + bs - 8, (uint32_t)bits);
        store32_le(ctx->block + bs - 4, (uint32_t)(bits >> 32));
    } else {
        store64_be(ctx->block + bs - 8, bits);
        if (len_bytes == 16)
            store64_be(ctx->block + bs - 16, bits_high);
    }
    ctx_compress(ctx, ctx->block);

    switch (ctx->alg) {
    case SWF_HASH_MD5:
        for (int i = 0; i < 4; i++)
            store32_le(out + 4 * i, ctx->h32[i]);
        break;
    case SWF_HASH_SHA1:
    case SWF_HASH_SHA256:
        for (size_t i = 0; i < swf_hash_size(ctx->alg) / 4; i++)
            store32_be(out + 4 * i, ctx->h32[i]);
        break;
    case SWF_HASH_SHA384:
    case SWF_HASH_SHA512:
        for (size_t i = 0; i < swf_hash_size(ctx->alg) / 8; i++)
            store64_be(out + 8 * i, ctx->h64[i]);
        break;
    }
}

/* ---- public digests ---- */

size_t swf_hash_size(swf_hash_alg_t alg)
{
    switch (alg) {
    case SWF_HASH_MD5:
        return 16;
    case SWF_HASH_SHA1:
        return 20;
    case SWF_HASH_SHA256:
        return 32;
    case SWF_HASH_SHA384:
        return 48;
    case SWF_HASH_SHA512:
        return 64;
    }
    assert(!"unknown hash algorithm");
    return 0;
}

bool swf_hash_alg_from_name(const char *name, swf_hash_alg_t *out)
{
    static const struct {
        const char *name;
        swf_hash_alg_t alg;
    } names[] = {
        {"MD5", SWF_HASH_MD5},        {"SHA-1", SWF_HASH_SHA1},     {"SHA-256", SWF_HASH_SHA256},
        {"SHA-384", SWF_HASH_SHA384}, {"SHA-512", SWF_HASH_SHA512},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(name, names[i].name) == 0) {
            *out = names[i].alg;
            return true;
        }
    }
    return false;
}

void swf_hash_digest(swf_hash_alg_t alg, const void *data, size_t len, uint8_t *out)
{
    hash_ctx_t ctx;
    ctx_init(&ctx, alg);
    ctx_update(&ctx, data, len);
    ctx_final(&ctx, out);
}

void swf_hash_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                          uint8_t out[SWF_HASH_SHA256_BYTES])
{
    uint8_t k[64] = {0};
    uint8_t pad[64];
    uint8_t inner[SWF_HASH_SHA256_BYTES];
    hash_ctx_t ctx;

    /* A key longer than a block is replaced by its digest (RFC 2104, 2). */
    if (key_len > sizeof(k))
        swf_hash_digest(SWF_HASH_SHA256, key, key_len, k);
    else if (key_len > 0)
        memcpy(k, key, key_len);

    for (size_t i = 0; i < sizeof(k); i++)
        pad[i] = k[i] ^ 0x36;
    ctx_init(&ctx, SWF_HASH_SHA256);
    ctx_update(&ctx, pad, sizeof(pad));
    ctx_update(&ctx, data, len);
    ctx_final(&ctx, inner);

    for (size_t i = 0; i < sizeof(k); i++)
        pad[i] = k[i] ^ 0x5c;
    ctx_init(&ctx, SWF_HASH_SHA256);
    ctx_update(&ctx, pad, sizeof(pad));
    ctx_update(&ctx, inner, sizeof(inner));
    ctx_final(&ctx, out);
}

void swf_hash_hex_encode(const uint8_t *bytes, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    out[2 * len] = '\0';
}

/* ---- base64 (RFC 4648, section 4) ---- */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

swf_error_t *swf_base64_encode(const void *data, size_t len, char **out)
{
    const uint8_t *p = data;
    *out = NULL;
    if (len / 3 >= (SIZE_MAX - 1) / 4 - 1)
        return swf_error_new(SWF_E_LIMIT, NULL, "base64 input of %zu bytes is too large", len);
    char *s = malloc((len + 2) / 3 * 4 + 1);
    if (s == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");

    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        s[o++] = b64_alphabet[v >> 18];
        s[o++] = b64_alphabet[(v >> 12) & 63];
        s[o++] = b64_alphabet[(v >> 6) & 63];
        s[o++] = b64_alphabet[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        s[o++] = b64_alphabet[v >> 18];
        s[o++] = b64_alphabet[(v >> 12) & 63];
        s[o++] = '=';
        s[o++] = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        s[o++] = b64_alphabet[v >> 18];
        s[o++] = b64_alphabet[(v >> 12) & 63];
        s[o++] = b64_alphabet[(v >> 6) & 63];
        s[o++] = '=';
    }
    s[o] = '\0';
    *out = s;
    return NULL;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Strict: the length is a multiple of four, '=' appears only as the last one
 * or two characters, and the bits the padding discards are zero, so every
 * byte string has exactly one accepted encoding. */
swf_error_t *swf_base64_decode(const char *text, size_t len, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (len % 4 != 0)
        return swf_error_new(SWF_E_INPUT, NULL,
                             "invalid base64: the length %zu is not a multiple of 4", len);
    size_t pad = 0;
    if (len >= 1 && text[len - 1] == '=')
        pad++;
    if (len >= 2 && text[len - 2] == '=')
        pad++;

    uint8_t *buf = malloc(len / 4 * 3 + 1);
    if (buf == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");

    swf_error_t *err = NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        bool last = i + 4 == len;
        size_t n = last ? 4 - pad : 4; /* significant characters in this quantum */
        uint32_t v = 0;
        for (size_t j = 0; j < 4; j++) {
            int d = 0;
            if (j < n) {
                d = b64_value(text[i + j]);
                if (d < 0) {
                    err =
                        swf_error_new(SWF_E_INPUT, NULL,
                                      "invalid base64: unexpected character at offset %zu", i + j);
                    goto done;
                }
            }
            v = v << 6 | (uint32_t)d;
        }
        buf[o++] = (uint8_t)(v >> 16);
        if (n >= 3)
            buf[o++] = (uint8_t)(v >> 8);
        if (n == 4)
            buf[o++] = (uint8_t)v;
        if ((n == 2 && (v & 0xffff) != 0) || (n == 3 && (v & 0xff) != 0)) {
            err = swf_error_new(SWF_E_INPUT, NULL, "invalid base64: non-zero padding bits");
            goto done;
        }
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    buf = NULL;
done:
    free(buf);
    return err;
}
