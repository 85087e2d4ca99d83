/*
 * draw.c - durations drawn from a distribution (see draw.h).
 *
 * The lognormal draw, the tables' hot loop, is GSL's own algorithm written
 * out (gsl_ran_lognormal: the polar method's first coordinate, then exp), so
 * that the constants of a table are computed once and the generator is
 * called without a detour. It must give the very doubles GSL gives: a
 * library built with other floating-point contraction would not, so the
 * first use compares it with gsl_ran_lognormal on a few hundred draws and
 * keeps GSL's function if a single bit differs. With sigma = 0 the value
 * is exp(zeta) whatever the normal draw (0 * a finite number + zeta is
 * zeta); the generator still advances exactly as GSL's rejection loop
 * would. The seconds become ns as stall_s_to_ns_bounded rounds them
 * (llround), without the library call. tests/test_draw.c holds every kind
 * equal to GSL's draws, value for value and generator state after.
 */
#include "draw.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "stall/limits.h"

/* One uniform in [0, 1), as gsl_rng_uniform. */
static inline double draw_uniform(const gsl_rng *r)
{
    return r->type->get_double(r->state);
}

/* The polar method's point: u of the first pair inside the unit circle
 * and its squared radius. */
static inline double draw_polar(const gsl_rng *r, double *r2)
{
    double u, v, q;
    do {
        u = -1 + 2 * draw_uniform(r);
        v = -1 + 2 * draw_uniform(r);
        q = u * u + v * v;
    } while (q > 1.0 || q == 0);
    *r2 = q;
    return u;
}

static double draw_lognormal(const gsl_rng *r, double zeta, double sigma)
{
    double r2, u = draw_polar(r, &r2);
    double normal = u * sqrt(-2.0 * log(r2) / r2);
    return exp(sigma * normal + zeta);
}

/* ---- the draw in two steps (wi_draw_raw, wi_draw_cook) ----
 *
 * GSL's mt19937 gives a uniform as its 32-bit output / 2^32 (mt.c,
 * mt_get_double), so the polar method's accepted pair is two 32-bit
 * outputs: the serial step keeps them, and the rest (log, sqrt, exp, the
 * rounding to ns), which is most of the cost, is a pure function of them
 * that any thread may compute later. GSL has no bulk or parallel draw;
 * draw_check holds the two steps bit for bit against gsl_ran_lognormal. */

static inline double draw_u32(uint32_t x)
{
    return -1 + 2 * ((double)x / 4294967296.0);
}

/* The accepted pair of a polar draw from 32-bit outputs next() gives. */
#define DRAW_RAW_PAIR(next)                                                                        \
    for (;;) {                                                                                     \
        uint32_t a_ = (next), b_ = (next);                                                         \
        double u_ = draw_u32(a_), v_ = draw_u32(b_);                                               \
        double q_ = u_ * u_ + v_ * v_;                                                             \
        if (!(q_ > 1.0 || q_ == 0))                                                                \
            return (uint64_t)a_ << 32 | b_;                                                        \
    }

static inline uint64_t draw_raw_pair(gsl_rng *r)
{
    const gsl_rng_type *t = r->type;
    DRAW_RAW_PAIR((uint32_t)t->get(r->state))
}

/* ---- GSL's mt19937, inlined ----
 *
 * The serial step is the generator: GSL's mt19937 (mt.c: the state is 624
 * words and an index; a block of 624 is regenerated when the index runs
 * out, each output tempered) called through its function pointer costs
 * about as much again as the generator itself. draw_mt is the same
 * algorithm on a copy of GSL's state (gsl_rng_state, gsl_rng_size), copied
 * back after, so that the stream and the state after are GSL's. The layout
 * of that state is GSL's private matter: draw_check compares outputs and
 * the state after with gsl_rng_get, and draw_mt is used only when both
 * agree. */
#define DRAW_MT_N 624
#define DRAW_MT_M 397

typedef struct draw_mt {
    unsigned long mt[DRAW_MT_N];
    int mti;
} draw_mt;

static void draw_mt_block(draw_mt *s)
{
    unsigned long *mt = s->mt;
    const unsigned long up = 0x80000000UL, lo = 0x7fffffffUL, magic = 0x9908b0dfUL;
    int kk;
    for (kk = 0; kk < DRAW_MT_N - DRAW_MT_M; kk++) {
        unsigned long y = (mt[kk] & up) | (mt[kk + 1] & lo);
        mt[kk] = mt[kk + DRAW_MT_M] ^ (y >> 1) ^ (-(y & 1UL) & magic);
    }
    for (; kk < DRAW_MT_N - 1; kk++) {
        unsigned long y = (mt[kk] & up) | (mt[kk + 1] & lo);
        mt[kk] = mt[kk + (DRAW_MT_M - DRAW_MT_N)] ^ (y >> 1) ^ (-(y & 1UL) & magic);
    }
    unsigned long y = (mt[DRAW_MT_N - 1] & up) | (mt[0] & lo);
    mt[DRAW_MT_N - 1] = mt[DRAW_MT_M - 1] ^ (y >> 1) ^ (-(y & 1UL) & magic);
    s->mti = 0;
}

static inline uint32_t draw_mt_get(draw_mt *s)
{
    if (s->mti >= DRAW_MT_N)
        draw_mt_block(s);
    unsigned long k = s->mt[s->mti++];
    k ^= (k >> 11);
    k ^= (k << 7) & 0x9d2c5680UL;
    k ^= (k << 15) & 0xefc60000UL;
    k ^= (k >> 18);
    return (uint32_t)k;
}

static inline uint64_t draw_mt_pair(draw_mt *s)
{
    DRAW_RAW_PAIR(draw_mt_get(s))
}

static bool draw_mt_ok; /* draw_mt is GSL's mt19937 here */

/* Whether rng's state can be run as a draw_mt. */
static bool draw_mt_on(const gsl_rng *rng)
{
    return draw_mt_ok && rng->type == gsl_rng_mt19937 && gsl_rng_size(rng) == sizeof(draw_mt);
}

/* Compares draw_mt with GSL's, from a few seeds, across several blocks. */
static bool draw_mt_check(void)
{
    gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937);
    bool same = gsl_rng_size(a) == sizeof(draw_mt);
    unsigned long seeds[] = {0, 1, 4357, 123456789};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0] && same; i++) {
        gsl_rng_set(a, seeds[i]);
        draw_mt s;
        memcpy(&s, gsl_rng_state(a), sizeof s);
        for (int j = 0; j < 3 * DRAW_MT_N + 17 && same; j++)
            same = draw_mt_get(&s) == (uint32_t)gsl_rng_get(a);
        same = same && memcmp(&s, gsl_rng_state(a), sizeof s) == 0;
    }
    gsl_rng_free(a);
    return same;
}

static double draw_lognormal_raw(uint64_t raw, double zeta, double sigma)
{
    double u = draw_u32((uint32_t)(raw >> 32)), v = draw_u32((uint32_t)raw);
    double r2 = u * u + v * v;
    double normal = u * sqrt(-2.0 * log(r2) / r2);
    return exp(sigma * normal + zeta);
}

static bool draw_same;  /* draw_lognormal gives GSL's doubles here */
static bool draw_split; /* ... and so do the two steps */
static pthread_once_t draw_once = PTHREAD_ONCE_INIT;

static void draw_check(void)
{
    gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(a, 12345);
    gsl_rng_set(b, 12345);
    bool same = true;
    for (int i = 0; i < 512 && same; i++) {
        double zeta = -4.0 + 0.01 * i, sigma = 0.05 + 0.002 * i;
        double x = gsl_ran_lognormal(a, zeta, sigma), y = draw_lognormal(b, zeta, sigma);
        same = memcmp(&x, &y, sizeof x) == 0;
    }
    same = same && gsl_rng_get(a) == gsl_rng_get(b);
    bool split = true;
    for (int i = 0; i < 512 && split; i++) {
        double zeta = -4.0 + 0.01 * i, sigma = 0.05 + 0.002 * i;
        double x = gsl_ran_lognormal(a, zeta, sigma);
        double y = draw_lognormal_raw(draw_raw_pair(b), zeta, sigma);
        split = memcmp(&x, &y, sizeof x) == 0;
    }
    split = split && gsl_rng_get(a) == gsl_rng_get(b);
    gsl_rng_free(a);
    gsl_rng_free(b);
    draw_same = same;
    draw_split = same && split;
    draw_mt_ok = draw_mt_check();
}

void wi_draw_init(wi_draw *w, const stall_dist *d)
{
    *w = (wi_draw){.kind = d->kind, .ns = 0};
    switch (d->kind) {
    case STALL_DIST_LOGNORMAL: {
        double s = d->sigma;
        w->a = log(d->mean_s) - 0.5 * s * s;
        w->b = s;
        pthread_once(&draw_once, draw_check);
        break;
    }
    case STALL_DIST_GAMMA:
        if (d->sd_s <= 0) {
            w->kind = STALL_DIST_CONSTANT;
        } else {
            w->a = (d->mean_s / d->sd_s) * (d->mean_s / d->sd_s);
            w->b = d->sd_s * d->sd_s / d->mean_s;
        }
        break;
    case STALL_DIST_NORMAL:
        w->a = d->mean_s;
        w->b = d->sd_s;
        break;
    default:
        w->kind = STALL_DIST_CONSTANT;
        break;
    }
    if (w->kind == STALL_DIST_CONSTANT || (w->kind == STALL_DIST_LOGNORMAL && w->b == 0)) {
        /* A constant, or the one value of a lognormal of sigma 0. */
        double v = w->kind == STALL_DIST_CONSTANT ? d->mean_s : exp(w->a);
        stall_time ns;
        w->ns = !(v > 0) ? 0 : stall_s_to_ns_bounded(v, STALL_LIMIT_DURATION_S, &ns) == 0 ? ns : -1;
    }
}

/* v seconds in ns as stall_s_to_ns_bounded gives them (llround(v * 1e9)),
 * for v > 0: 0 when not > 0, -1 past the duration limit. Below 2^52 the
 * fraction x - trunc(x) is exact, so rounding half away from zero by hand
 * is llround's result without the call. */
static inline stall_time draw_finish(double v)
{
    if (!(v > 0))
        return 0;
    if (!(v <= STALL_LIMIT_DURATION_S))
        return -1;
    double x = v * 1e9;
    if (x < 0x1p52) {
        stall_time t = (stall_time)x;
        return x - (double)t >= 0.5 ? t + 1 : t;
    }
    stall_time ns;
    return stall_s_to_ns_bounded(v, STALL_LIMIT_DURATION_S, &ns) == 0 ? ns : -1;
}

bool wi_draw_splits(const gsl_rng *rng, const wi_draw *w)
{
    if (w->kind == STALL_DIST_CONSTANT)
        return true;
    return w->kind == STALL_DIST_LOGNORMAL && rng->type == gsl_rng_mt19937 && draw_split;
}

uint64_t wi_draw_raw(gsl_rng *rng, const wi_draw *w)
{
    return w->kind == STALL_DIST_LOGNORMAL ? draw_raw_pair(rng) : 0;
}

/* One cell's raw draws: fetch's, then compute's, as the serial loop. */
#define DRAW_CELLS(pair)                                                                           \
    for (size_t i = 0; i < n; i++) {                                                               \
        f[i] = flog ? (int64_t)(pair) : 0;                                                         \
        uint64_t x_ = clog ? (pair) : 0;                                                           \
        if (c)                                                                                     \
            c[i] = (int64_t)x_;                                                                    \
    }

void wi_draw_raw_cells(gsl_rng *rng, const wi_draw *fd, const wi_draw *cd, int64_t *f, int64_t *c,
                       size_t n)
{
    bool flog = fd->kind == STALL_DIST_LOGNORMAL, clog = cd->kind == STALL_DIST_LOGNORMAL;
    if (!draw_mt_on(rng)) {
        DRAW_CELLS(draw_raw_pair(rng))
        return;
    }
    draw_mt s;
    memcpy(&s, gsl_rng_state(rng), sizeof s);
    DRAW_CELLS(draw_mt_pair(&s))
    memcpy(gsl_rng_state(rng), &s, sizeof s);
}

void wi_draw_uniform_ints(gsl_rng *rng, unsigned long range, int64_t *out, size_t n)
{
    pthread_once(&draw_once, draw_check);
    /* gsl_rng_uniform_int: an output past the largest multiple of range
     * below the generator's span is drawn again */
    if (!draw_mt_on(rng) || range == 0 || range > 0xffffffffUL) {
        for (size_t i = 0; i < n; i++) {
            unsigned long k = gsl_rng_uniform_int(rng, range);
            if (out)
                out[i] = (int64_t)k;
        }
        return;
    }
    unsigned long scale = 0xffffffffUL / range;
    draw_mt s;
    memcpy(&s, gsl_rng_state(rng), sizeof s);
    for (size_t i = 0; i < n; i++) {
        unsigned long k;
        do
            k = draw_mt_get(&s) / scale;
        while (k >= range);
        if (out)
            out[i] = (int64_t)k;
    }
    memcpy(gsl_rng_state(rng), &s, sizeof s);
}

stall_time wi_draw_max(const wi_draw *w)
{
    if (w->kind != STALL_DIST_LOGNORMAL || w->b == 0)
        return w->ns;
    double v = exp(9.5 * fabs(w->b) + w->a) * (1 + 1e-9);
    if (!(v <= STALL_LIMIT_DURATION_S))
        return -1;
    stall_time t = draw_finish(v);
    return t < 0 ? -1 : t + 1;
}

stall_time wi_draw_cook(uint64_t raw, const wi_draw *w)
{
    if (w->kind != STALL_DIST_LOGNORMAL || w->b == 0)
        return w->ns;
    return draw_finish(draw_lognormal_raw(raw, w->a, w->b));
}

stall_time wi_draw_ns(gsl_rng *rng, const wi_draw *w)
{
    double v;
    switch (w->kind) {
    case STALL_DIST_LOGNORMAL:
        if (!draw_same) {
            v = gsl_ran_lognormal(rng, w->a, w->b);
        } else if (w->b == 0) {
            double r2;
            (void)draw_polar(rng, &r2);
            return w->ns;
        } else {
            v = draw_lognormal(rng, w->a, w->b);
        }
        break;
    case STALL_DIST_GAMMA:
        v = gsl_ran_gamma(rng, w->a, w->b);
        break;
    case STALL_DIST_NORMAL:
        v = w->a + gsl_ran_gaussian(rng, w->b);
        break;
    default:
        return w->ns;
    }
    return draw_finish(v);
}
