/*
 * test_draw.c - jobs/draw.c: a duration drawn through wi_draw_init and
 * wi_draw_ns is, value for value and generator state for generator state,
 * the one drawn straight with GSL as the duration tables did before
 * (gsl_ran_lognormal with zeta = log(mean) - sigma^2 / 2, gsl_ran_gamma,
 * gsl_ran_gaussian; 0 when not > 0, -1 past the duration limit).
 */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>

#include "jobs/draw.h"
#include "stall/limits.h"

/* The reference: the tables' former draw, written against GSL alone. */
static stall_time tdraw_ref(gsl_rng *rng, const stall_dist *d)
{
    double v;
    switch (d->kind) {
    case STALL_DIST_LOGNORMAL: {
        double s = d->sigma, mu = log(d->mean_s) - 0.5 * s * s;
        v = gsl_ran_lognormal(rng, mu, s);
        break;
    }
    case STALL_DIST_GAMMA:
        if (d->sd_s <= 0) {
            v = d->mean_s;
            break;
        }
        v = gsl_ran_gamma(rng, (d->mean_s / d->sd_s) * (d->mean_s / d->sd_s),
                          d->sd_s * d->sd_s / d->mean_s);
        break;
    case STALL_DIST_NORMAL:
        v = d->mean_s + gsl_ran_gaussian(rng, d->sd_s);
        break;
    default:
        v = d->mean_s;
    }
    if (!(v > 0))
        return 0;
    stall_time ns;
    return stall_s_to_ns_bounded(v, STALL_LIMIT_DURATION_S, &ns) == 0 ? ns : -1;
}

static void tdraw_same(stall_dist d, int n, unsigned long seed)
{
    gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(a, seed);
    gsl_rng_set(b, seed);
    wi_draw w;
    wi_draw_init(&w, &d);
    for (int i = 0; i < n; i++) {
        stall_time x = wi_draw_ns(a, &w), y = tdraw_ref(b, &d);
        cr_assert_eq(x, y, "kind %d mean %g sigma %g sd %g, draw %d: %lld ns, GSL gives %lld",
                     d.kind, d.mean_s, d.sigma, d.sd_s, i, (long long)x, (long long)y);
    }
    cr_assert_eq(gsl_rng_get(a), gsl_rng_get(b), "kind %d sigma %g: the generator moved otherwise",
                 d.kind, d.sigma);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

Test(draw, lognormal_gives_gsls_values)
{
    double sigmas[] = {0.05, 0.3, 0.4, 1.0, 2.5};
    for (size_t i = 0; i < sizeof sigmas / sizeof sigmas[0]; i++)
        tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.03, .sigma = sigmas[i]},
                   20000, 7 + i);
}

Test(draw, lognormal_of_sigma_zero_advances_the_generator_as_gsl)
{
    /* One value, but each draw still runs the polar method's loop. */
    tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.02, .sigma = 0}, 20000, 3);
    tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 1.0, .sigma = 0}, 1000, 4);
}

Test(draw, gamma_normal_and_constant_give_gsls_values)
{
    tdraw_same((stall_dist){.kind = STALL_DIST_GAMMA, .mean_s = 0.05, .sd_s = 0.02}, 20000, 5);
    tdraw_same((stall_dist){.kind = STALL_DIST_GAMMA, .mean_s = 0.05, .sd_s = 0}, 100, 6);
    /* Normal: negative draws give 0. */
    tdraw_same((stall_dist){.kind = STALL_DIST_NORMAL, .mean_s = 0.01, .sd_s = 0.02}, 20000, 8);
    tdraw_same((stall_dist){.kind = STALL_DIST_CONSTANT, .mean_s = 0.25}, 100, 9);
    tdraw_same((stall_dist){.kind = STALL_DIST_CONSTANT, .mean_s = 0}, 100, 9);
}

Test(draw, past_the_limit_is_minus_one_as_before)
{
    tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL,
                            .mean_s = STALL_LIMIT_DURATION_S / 2,
                            .sigma = 1.5},
               5000, 10);
    tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL,
                            .mean_s = 2 * STALL_LIMIT_DURATION_S,
                            .sigma = 0},
               100, 11);
}
