/*
 * digest.c - SHA-256 (FIPS 180-4), streaming over 64-byte blocks.
 *
 * Written out here because none of the project's libraries (GSL, libcsv,
 * inih) offers a hash, and a file checksum is not worth a crypto dependency.
 * Checked against the FIPS test vectors in tests/test_digest.c. Where the
 * processor has the SHA extensions (x86-64 SHA-NI, asked of cpuid once),
 * blocks go through them: about 5x the portable code's speed, which
 * hashing a trace for effective.ini needs (it was half of validate's CPU
 * time on a 1 M-row trace, issue 21); the same digest either way (the
 * test compares the two on random data).
 */
#include "stall/digest.h"
#include "stall/io.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct sha_ctx {
    uint32_t h[8];
    uint64_t bits;
    unsigned char buf[64];
    size_t used;
} sha_ctx;

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define SHA_ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(sha_ctx *c, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = SHA_ROR(w[i - 15], 7) ^ SHA_ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = SHA_ROR(w[i - 2], 17) ^ SHA_ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5],
             g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (SHA_ROR(e, 6) ^ SHA_ROR(e, 11) ^ SHA_ROR(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha_k[i] + w[i];
        uint32_t t2 =
            (SHA_ROR(a, 2) ^ SHA_ROR(a, 13) ^ SHA_ROR(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = cc;
        cc = b;
        b = a;
        a = t1 + t2;
    }
    c->h[0] += a;
    c->h[1] += b;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
    c->h[5] += f;
    c->h[6] += g;
    c->h[7] += h;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define SHA_HAVE_NI 1

/* Blocks through the SHA extensions: the state in the (ABEF, CDGH) order
 * of sha256rnds2, four rounds per step, the message schedule by
 * sha256msg1/msg2 over the last 16 words. */
__attribute__((target("sha,sse4.1"))) static void sha_blocks_ni(uint32_t h[8],
                                                                const unsigned char *p, size_t n)
{
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i t = _mm_loadu_si128((const __m128i *)&h[0]);
    __m128i s1 = _mm_loadu_si128((const __m128i *)&h[4]);
    t = _mm_shuffle_epi32(t, 0xB1);         /* CDAB */
    s1 = _mm_shuffle_epi32(s1, 0x1B);       /* EFGH */
    __m128i s0 = _mm_alignr_epi8(t, s1, 8); /* ABEF */
    s1 = _mm_blend_epi16(s1, t, 0xF0);      /* CDGH */
    for (; n > 0; n--, p += 64) {
        __m128i abef = s0, cdgh = s1, m[4];
        for (int g = 0; g < 16; g++) {
            __m128i w;
            if (g < 4) {
                w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), mask);
            } else {
                __m128i x = _mm_sha256msg1_epu32(m[(g - 4) & 3], m[(g - 3) & 3]);
                x = _mm_add_epi32(x, _mm_alignr_epi8(m[(g - 1) & 3], m[(g - 2) & 3], 4));
                w = _mm_sha256msg2_epu32(x, m[(g - 1) & 3]);
            }
            m[g & 3] = w;
            __m128i k = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&sha_k[4 * g]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, k);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(k, 0x0E));
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    t = _mm_shuffle_epi32(s0, 0x1B);   /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);  /* DCHG */
    s0 = _mm_blend_epi16(t, s1, 0xF0); /* DCBA */
    s1 = _mm_alignr_epi8(s1, t, 8);    /* HGFE */
    _mm_storeu_si128((__m128i *)&h[0], s0);
    _mm_storeu_si128((__m128i *)&h[4], s1);
}

/* SHA, SSSE3 and SSE4.1 (cpuid leaves 7 and 1). */
static bool sha_ni_present(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19)))
        return false;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    return (b & (1u << 29)) != 0;
}
#endif

/* 0 portable, 1 SHA extensions; -1 not asked yet. Set once (a benign race:
 * every thread finds the same). */
static int sha_use_ni = -1;

int stall__sha256_accel(int force)
{
#ifdef SHA_HAVE_NI
    if (force >= 0)
        sha_use_ni = force && sha_ni_present();
    else if (sha_use_ni < 0)
        sha_use_ni = sha_ni_present();
    return sha_use_ni;
#else
    (void)force;
    return 0;
#endif
}

static void sha_blocks(sha_ctx *c, const unsigned char *p, size_t n)
{
#ifdef SHA_HAVE_NI
    if (sha_use_ni < 0)
        stall__sha256_accel(-1);
    if (sha_use_ni) {
        sha_blocks_ni(c->h, p, n);
        return;
    }
#endif
    for (; n > 0; n--, p += 64)
        sha_block(c, p);
}

static void sha_init(sha_ctx *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->bits = 0;
    c->used = 0;
}

static void sha_update(sha_ctx *c, const unsigned char *p, size_t n)
{
    c->bits += (uint64_t)n * 8;
    while (n > 0) {
        if (c->used == 0 && n >= 64) { /* whole blocks straight from p */
            sha_blocks(c, p, n / 64);
            p += n / 64 * 64;
            n %= 64;
            continue;
        }
        size_t take = 64 - c->used < n ? 64 - c->used : n;
        memcpy(c->buf + c->used, p, take);
        c->used += take;
        p += take;
        n -= take;
        if (c->used == 64) {
            sha_blocks(c, c->buf, 1);
            c->used = 0;
        }
    }
}

static void sha_final(sha_ctx *c, char hex[65])
{
    uint64_t bits = c->bits;
    unsigned char pad = 0x80, zero = 0, len[8];
    sha_update(c, &pad, 1);
    while (c->used != 56)
        sha_update(c, &zero, 1);
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha_update(c, len, 8);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 8 * i, 9, "%08x", c->h[i]);
}

void stall_sha256_hex(const void *data, size_t len, char hex[65])
{
    sha_ctx c;
    sha_init(&c);
    sha_update(&c, data, len);
    sha_final(&c, hex);
}

int stall_sha256_file(const char *path, char hex[65], stall_err *err)
{
    if (stall_input_check(path, err) != 0)
        return STALL_EIO;
    FILE *f = fopen(path, "rb");
    if (!f)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
    sha_ctx c;
    sha_init(&c);
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sha_update(&c, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return stall_err_set(err, STALL_EIO, "%s: read error", path);
    sha_final(&c, hex);
    return 0;
}
