/*
 * draw.h - one duration drawn from a configured distribution ([fetch] and
 * [compute] dist, or a fit to a trace's pool), for the duration tables of
 * feed.c. Private to jobs/.
 *
 * wi_draw_init does once per table what does not change from draw to draw
 * (the lognormal's log-mean, the gamma's shape and scale, a constant's
 * nanoseconds); wi_draw_ns then gives, for the same generator state, the
 * same nanoseconds as drawing with GSL's gsl_ran_* directly.
 */
#ifndef STALL_JOBS_DRAW_H
#define STALL_JOBS_DRAW_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#include "stall/config.h"

typedef struct wi_draw {
    int kind;      /* STALL_DIST_*; constant when no draw is needed */
    double a, b;   /* lognormal: zeta, sigma; gamma: shape, scale; normal: mean, sd */
    stall_time ns; /* constant: the value */
} wi_draw;

void wi_draw_init(wi_draw *w, const stall_dist *d);
/* One duration in ns: 0 when the draw is not > 0, -1 past the duration
 * limit. */
stall_time wi_draw_ns(gsl_rng *rng, const wi_draw *w);

/* The same draw in two steps, so that the costly part can run on other
 * threads: wi_draw_raw advances rng exactly as wi_draw_ns would and returns
 * what the draw needs of it (the polar method's accepted pair of 32-bit
 * outputs; 0 for a constant), wi_draw_cook turns that into wi_draw_ns's
 * value, a pure function. Only where wi_draw_splits says so: a constant, or
 * a lognormal from GSL's mt19937 once the two steps were found bit for bit
 * equal to gsl_ran_lognormal (draw.c checks on first use). */
bool wi_draw_splits(const gsl_rng *rng, const wi_draw *w);
uint64_t wi_draw_raw(gsl_rng *rng, const wi_draw *w);
stall_time wi_draw_cook(uint64_t raw, const wi_draw *w);
/* An upper bound of wi_draw_cook's value over every raw input of a draw
 * that splits, or -1 when some input gives -1 (past the duration limit):
 * the polar method's |normal| is at most sqrt(-2 ln r2) with r2 >= 2^-62
 * (a nonzero coordinate is a multiple of 2^-31), under 9.28; 9.5 bounds it
 * with room for rounding. */
stall_time wi_draw_max(const wi_draw *w);
/* n draws of gsl_rng_uniform_int(rng, range) into out (NULL: the stream
 * only advanced), as n calls would, faster where rng is GSL's mt19937 (run
 * inline as wi_draw_raw_cells runs it). */
void wi_draw_uniform_ints(gsl_rng *rng, unsigned long range, int64_t *out, size_t n);
/* n cells' wi_draw_raw of fd then cd each, into f[i] and c[i] (c may be
 * NULL: compute's are not kept), as n pairs of calls would, faster: GSL's
 * mt19937 run inline on a copy of rng's state (draw.c checks it against
 * gsl_rng_get on first use, else it calls rng). Both draws must split. */
void wi_draw_raw_cells(gsl_rng *rng, const wi_draw *fd, const wi_draw *cd, int64_t *f, int64_t *c,
                       size_t n);

#endif
