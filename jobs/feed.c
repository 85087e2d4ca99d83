/*
 * feed.c - duration tables, model parameters and CPU contention for the
 * closed-loop model (see feed.h).
 */
#include "feed.h"

#include "ckpt_job.h"
#include "draw.h"

#include "stall/limits.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- duration tables ---- */

void wi_tables_free(wi_tables *w)
{
    wi_tables_abandon(w);
    free(w->fetch);
    free(w->compute);
    free(w->tail);
    free(w->gap);
    free(w->late);
    wi_lazy_free(w->lazy);
}

stall_time wi_tables_fetch(const wi_tables *w, int e, int r, int64_t k)
{
    if (w->lazy)
        return wi_lazy_fetch(w->lazy, e, r, k);
    return w->fetch[((size_t)e * w->g + r) * (size_t)w->n + (size_t)k];
}

stall_time wi_tables_compute(const wi_tables *w, int e, int r, int64_t k)
{
    if (w->lazy)
        return wi_lazy_compute(w->lazy, e, r, k);
    return w->compute ? w->compute[((size_t)e * w->g + r) * (size_t)w->n + (size_t)k]
                      : w->compute_ns;
}

static stall_time wi_cb_fetch(void *ctx, int e, int r, int64_t k)
{
    return wi_tables_fetch(ctx, e, r, k);
}

static stall_time wi_cb_compute(void *ctx, int e, int r, int64_t k)
{
    return wi_tables_compute(ctx, e, r, k);
}

static stall_time wi_cb_tail(void *ctx, int e, int64_t k)
{
    const wi_tables *w = ctx;
    return w->tail[(size_t)e * w->n + (size_t)k];
}

static stall_time wi_cb_gap(void *ctx, int e)
{
    const wi_tables *w = ctx;
    return w->gap[e];
}

static stall_time wi_cb_late(void *ctx, int e, int r)
{
    const wi_tables *w = ctx;
    return w->late[(size_t)e * w->g + r];
}

static void wi_cb_ready(void *ctx, int e, int64_t k)
{
    wi_tables_ready(ctx, e, k);
}

/* Fits the resample distribution to a pool of measured durations. */
static stall_dist wi_fit_pool(int resample, const stall_time *pool, size_t n)
{
    stall_dist d = {.kind = STALL_DIST_CONSTANT, .scale = 1};
    double *v = stall_xmalloc((n + 1) * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (pool[i] > 0)
            v[m++] = stall_ns_to_s(pool[i]);
    if (m == 0) {
        free(v);
        return d;
    }
    double mean = gsl_stats_mean(v, 1, m), sd = m > 1 ? gsl_stats_sd_m(v, 1, m, mean) : 0;
    d.mean_s = mean;
    if (resample == STALL_RESAMPLE_LOGNORMAL) {
        for (size_t i = 0; i < m; i++)
            v[i] = log(v[i]);
        d.kind = STALL_DIST_LOGNORMAL;
        double lm = gsl_stats_mean(v, 1, m);
        d.sigma = m > 1 ? gsl_stats_sd_m(v, 1, m, lm) : 0;
        d.mean_s = exp(lm + 0.5 * d.sigma * d.sigma);
    } else if (resample == STALL_RESAMPLE_GAMMA) {
        d.kind = STALL_DIST_GAMMA;
        d.sd_s = sd;
    }
    free(v);
    return d;
}

/* One value for a cell outside the measured grid. */
static stall_time wi_resample(gsl_rng *rng, int resample, const stall_time *pool, size_t npool,
                              const wi_draw *fit)
{
    if (resample == STALL_RESAMPLE_BOOTSTRAP)
        return pool[gsl_rng_uniform_int(rng, npool)];
    return wi_draw_ns(rng, fit);
}

static stall_time wi_scaled(stall_time v, double scale)
{
    return scale == 1.0 ? v : (stall_time)llround((double)v * scale);
}

/* Exposed all-reduce from [ddp] when given explicitly (a what-if); -1 when
 * the measured tail should be replayed, -2 past the limit. */
static stall_time wi_ddp_tail(const wi_whatif *what, int g)
{
    if (what->allreduce_given)
        return stall_s_to_ns(what->allreduce_s);
    /* The ring model: on with a bucket (and its bandwidth, config/check.c)
     * or a latency alone, whose ring never reads the bandwidth. */
    if (what->bucket_mb > 0 || what->latency_us > 0) {
        double steps = 2.0 * (g - 1);
        double s = steps * what->latency_us * 1e-6 +
                   (g > 1 && what->bucket_mb > 0
                        ? steps / g * what->bucket_mb * 1e6 / (what->bandwidth_gb_s * 1e9)
                        : 0);
        stall_time ns;
        return stall_s_to_ns_bounded(s, STALL_LIMIT_DURATION_S, &ns) == 0 ? ns : -2;
    }
    return -1;
}

wi_xform wi_xform_make(const wi_whatif *what, int g, bool whatif)
{
    if (!whatif)
        return WI_XFORM_NONE;
    return (wi_xform){.fscale = what->fetch_dist.scale,
                      .cscale = what->compute_dist.scale,
                      .ddp = wi_ddp_tail(what, g),
                      .no_late = what->late_none};
}

int wi_xform_check(const wi_whatif *what, const wi_xform *x, int g, stall_err *err)
{
    if (x->ddp != -2)
        return 0;
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: [ddp] the ring all-reduce for %d ranks takes longer than the "
                         "limit of %g s per iteration",
                         wi_where(what->ini), g, STALL_LIMIT_DURATION_S);
}

bool wi_inline_from_workers(const wi_whatif *what, const stall_measured *m, bool whatif)
{
    return whatif && m && what->workers_given && what->workers == 0 && m->workers > 0;
}

void wi_xform_inline(wi_xform *x, const wi_whatif *what, const stall_measured *m, bool whatif)
{
    x->unturn = wi_inline_from_workers(what, m, whatif) ? m->turnaround : 0;
}

stall_time wi_xform_fetch(const wi_xform *x, stall_time v)
{
    if (v >= 0 && x->unturn > 0)
        v = v > x->unturn ? v - x->unturn : 0;
    return v < 0 ? v : wi_scaled(v, x->fscale);
}

stall_time wi_xform_compute(const wi_xform *x, stall_time v)
{
    return v < 0 ? v : wi_scaled(v, x->cscale);
}

stall_time wi_xform_tail(const wi_xform *x, stall_time v)
{
    return v < 0 || x->ddp < 0 ? v : x->ddp;
}

int wi_horizon_check(const wi_whatif *what, double span, stall_err *err)
{
    if (!(span > (double)STALL_LIMIT_HORIZON_NS))
        return 0;
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: the run computes for %.3g s of simulated time, more than the "
                         "limit of %.0f s; make the run shorter",
                         wi_where(what->ini), span / 1e9, STALL_LIMIT_HORIZON_S);
}

/* Samples in the trace's own last batch of an epoch (b when it does not say). */
static int64_t wi_trace_last(const wi_whatif *what, const stall_measured *m)
{
    int64_t b = wi_batch_samples(what, m);
    return m->samples > 0 && m->samples_last > 0 && m->samples_last <= b ? m->samples_last : b;
}

static __int128 wi_dataset_l(const wi_whatif *what, const stall_measured *m)
{
    return (__int128)m->ranks *
           ((__int128)(m->batches - 1) * wi_batch_samples(what, m) + wi_trace_last(what, m));
}

int64_t wi_dataset_samples(const wi_whatif *what, const stall_measured *m)
{
    __int128 l = wi_dataset_l(what, m);
    return l > INT64_MAX ? INT64_MAX : (int64_t)l;
}

int64_t wi_last_samples(const wi_whatif *what, const stall_measured *m, int g, int64_t n,
                        bool whatif)
{
    int64_t b = wi_batch_samples(what, m);
    if (!m)
        return b;
    if (whatif && what->batches <= 0 && what->scaling == STALL_SCALING_STRONG) {
        if (what->drop_last || b <= 1 || n < 1)
            return b;
        __int128 per = (wi_dataset_l(what, m) + g - 1) / g, rem = per - (__int128)(n - 1) * b;
        return rem > 0 && rem < b ? (int64_t)rem : b;
    }
    return n == m->batches ? wi_trace_last(what, m) : b;
}

stall_time wi_part(stall_time v, int64_t num, int64_t den)
{
    return num == den || v < 0 || den < 1 ? v : (stall_time)(((__int128)v * num + den / 2) / den);
}

int wi_tables_build(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                    bool whatif, wi_tables *w, stall_err *err)
{
    return wi_tables_build_j(what, m, g, ne, n, whatif, 1, w, err);
}

/* The error for a cell drawn past the duration limit. */
static int wi_drew_too_long(const wi_whatif *what, bool fetch, int e, int r, int64_t k,
                            stall_err *err)
{
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: [%s] drew a duration longer than the limit of %g s "
                         "(epoch %d, rank %d, batch %lld); lower its sigma or sd_s",
                         wi_where(what->ini), fetch ? "fetch" : "compute", STALL_LIMIT_DURATION_S,
                         e, r, (long long)k);
}

int wi_tables_build_j(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                      bool whatif, int threads, wi_tables *w, stall_err *err)
{
    return wi_tables_build_x(what, m, g, ne, n, whatif, threads, -1, w, err);
}

/* The overlap's least table: below it the run is short anyway. */
#define WI_OVL_CELLS ((size_t)1 << 18)

int wi_tables_build_x(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                      bool whatif, int threads, int ovl, wi_tables *w, stall_err *err)
{
    return wi_tables_build_l(what, m, g, ne, n, whatif, threads, ovl, -1, w, err);
}

/* The rows from which the cells beyond a trace are drawn as asked (lazy.c):
 * its two generator states and window (some 18 KB) against 16 B per cell
 * of the whole tables. */
#define WI_LAZY_BATCHES ((int64_t)4096)

/* Whether no duration in v[0..n) is negative (none can then fail). */
static bool wi_all_nonneg(const stall_time *v, size_t n)
{
    stall_time lo = 0;
    for (size_t i = 0; i < n; i++)
        lo = v[i] < lo ? v[i] : lo;
    return lo >= 0;
}

/* Whether wi_tables_build_l draws the cells beyond trace m as the run asks
 * for them (lazy as there): where no cell can fail (bootstrap from
 * durations none of which is negative); the run's memory then no longer
 * grows with its ranks x batches. */
static bool wi_lazy_takes(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                          int lazy)
{
    bool beyond = m && (g > m->ranks || ne > m->epochs || n > m->batches);
    size_t mcells = m ? (size_t)m->epochs * m->ranks * (size_t)m->batches : 0;
    return beyond && what->resample == STALL_RESAMPLE_BOOTSTRAP && lazy != 0 &&
           (lazy > 0 || n >= WI_LAZY_BATCHES) && mcells > 0 && wi_all_nonneg(m->fetch, mcells) &&
           wi_all_nonneg(m->compute, mcells);
}

/* The memory check of wi_tables_build_l's tables, drawn as asked where
 * *lazy_on. */
static int wi_tables_mem(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                         int lazy, bool *lazy_on, stall_err *err)
{
    *lazy_on = wi_lazy_takes(what, m, g, ne, n, lazy);
    if (!*lazy_on)
        return wi_mem_check_as(what, g, ne, n, WI_STORE_WHOLE, 0, err);
    /* the pools of full batches where the trace's last batch is partial:
     * built for the draw and copied by it */
    size_t mcells = (size_t)m->epochs * m->ranks * (size_t)m->batches;
    bool own = wi_batch_samples(what, m) != wi_trace_last(what, m);
    size_t lz = wi_lazy_bytes(g, ne, mcells, mcells, own),
           full = own ? 2 * mcells * sizeof(stall_time) : 0;
    if (lz == SIZE_MAX || __builtin_add_overflow(lz, full, &lz))
        lz = SIZE_MAX;
    return wi_mem_check_as(what, g, ne, n, WI_STORE_LAZY, lz, err);
}

int wi_tables_mem_check(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                        int lazy, stall_err *err)
{
    bool on;
    return wi_tables_mem(what, m, g, ne, n, lazy, &on, err);
}

int wi_tables_build_l(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                      bool whatif, int threads, int ovl, int lazy, wi_tables *w, stall_err *err)
{
    memset(w, 0, sizeof *w);
    w->g = g;
    w->ne = ne;
    w->n = n;
    if (g < 1 || g > STALL_LIMIT_RANKS || ne < 1 || ne > STALL_LIMIT_EPOCHS || n < 1 ||
        n > STALL_LIMIT_BATCHES)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: the run has %d ranks x %d epochs x %lld batches, outside the "
                             "limits (1..%d ranks, 1..%d epochs, 1..%lld batches)",
                             wi_where(what->ini), g, ne, (long long)n, STALL_LIMIT_RANKS,
                             STALL_LIMIT_EPOCHS, (long long)STALL_LIMIT_BATCHES);
    bool lazy_on;
    int mrc = wi_tables_mem(what, m, g, ne, n, lazy, &lazy_on, err);
    if (mrc)
        return mrc;
    size_t cells = (size_t)ne * g * (size_t)n;
    bool beyond = m && (g > m->ranks || ne > m->epochs || n > m->batches);
    if (beyond && what->resample == STALL_RESAMPLE_NONE)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [fetch] resample: the what-if needs %d ranks x %d epochs x %lld "
                             "batches but the trace has %d x %d x %lld; set resample = bootstrap, "
                             "lognormal or gamma",
                             what->ini, g, ne, (long long)n, m->ranks, m->epochs,
                             (long long)m->batches);
    w->tail = stall_xmalloc((size_t)ne * (size_t)n * sizeof *w->tail);
    w->gap = stall_xcalloc((size_t)ne, sizeof *w->gap);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)what->seed);
    size_t mcells = m ? (size_t)m->epochs * m->ranks * (size_t)m->batches : 0;
    int64_t lb = m ? wi_batch_samples(what, m) : 1, mlast = m ? wi_trace_last(what, m) : 1;
    /* The pools the cells beyond the trace are drawn from, bootstrap or
     * fitted: the measured durations, each for a full batch of lb samples,
     * so that a draw is charged by the samples its own batch holds (below)
     * and the trace's partial last batch is never taken for a full one. */
    const stall_time *pf = m ? m->fetch : NULL, *pc = m ? m->compute : NULL;
    stall_time *full = NULL;
    if (beyond && mlast != lb) {
        full = stall_xmalloc_big(2 * mcells * sizeof *full);
        for (size_t i = 0; i < mcells; i++) {
            bool last = i % (size_t)m->batches == (size_t)m->batches - 1;
            full[i] = last ? wi_part(m->fetch[i], lb, mlast) : m->fetch[i];
            full[mcells + i] = last ? wi_part(m->compute[i], lb, mlast) : m->compute[i];
        }
        pf = full;
        pc = full + mcells;
    }
    stall_dist ffit = what->fetch_dist, cfit = what->compute_dist;
    /* (A bootstrap draw takes no fit, nor does a run within the trace.) */
    if (m && beyond && what->resample != STALL_RESAMPLE_BOOTSTRAP) {
        ffit = wi_fit_pool(what->resample, pf, mcells);
        cfit = wi_fit_pool(what->resample, pc, mcells);
    }
    wi_draw fdraw, cdraw;
    wi_draw_init(&fdraw, &ffit);
    wi_draw_init(&cdraw, &cfit);
    wi_xform x = wi_xform_make(what, g, whatif);
    wi_xform_inline(&x, what, m, whatif);
    /* A partial last batch is charged by its samples: lnum of the batch
     * its duration came from (the trace's last batch: its own samples). */
    int64_t lnum = m ? wi_last_samples(what, m, g, n, whatif) : 1;
    bool fill = !m && wi_tables_fill_on(rng, &fdraw, &cdraw);
    /* Drawn as asked where no cell can fail (wi_lazy_takes). */
    if (lazy_on) {
        wi_lazy_src s = {.m = m,
                         .pf = pf,
                         .pc = pc,
                         .npool = mcells,
                         .x = x,
                         .g = g,
                         .ne = ne,
                         .n = n,
                         .lb = lb,
                         .mlast = mlast,
                         .lnum = lnum};
        w->lazy = wi_lazy_new(&s, rng);
    } else {
        w->fetch = stall_xmalloc_big(cells * sizeof *w->fetch);
    }
    if (!w->lazy && (!fill || cdraw.kind != STALL_DIST_CONSTANT))
        w->compute = stall_xmalloc_big(cells * sizeof *w->compute);
    else if (!w->lazy)
        w->compute_ns = wi_xform_compute(&x, cdraw.ns);
    /* The overlap (fill.c) where it gives what the serial fill gives:
     * where no cell can fail, nor a check below that reads them (the
     * horizon's, bounded instead: compute no longer than cdraw's bound). */
    bool over = fill && threads > 1 && ovl != 0 && (ovl > 0 || cells >= WI_OVL_CELLS) &&
                x.ddp != -2 && wi_tables_ovl_on(&fdraw, &cdraw);
    if (over && w->compute) {
        double most =
            (double)wi_xform_compute(&x, wi_draw_max(&cdraw)) + (double)(x.ddp > 0 ? x.ddp : 0);
        over = !((double)ne * (double)n * most * (1 + 1e-6) > (double)STALL_LIMIT_HORIZON_NS);
    }
    if (over) {
        wi_tables_ovl_start(w, rng, &fdraw, &cdraw, &x, threads);
        rng = NULL; /* the fill's now; the tails below draw none without m */
    }
    size_t bad = fill && !over ? wi_tables_fill(w, rng, &fdraw, &cdraw, &x, threads) : SIZE_MAX;
    if (bad != SIZE_MAX) {
        bool f = w->fetch[bad] < 0;
        int64_t k = (int64_t)(bad % (size_t)n);
        int r = (int)(bad / (size_t)n % (size_t)g), e = (int)(bad / (size_t)n / (size_t)g);
        if (rng)
            gsl_rng_free(rng);
        free(full);
        wi_tables_free(w);
        memset(w, 0, sizeof *w);
        return wi_drew_too_long(what, f, e, r, k, err);
    }
    for (int e = 0; e < ne && !fill && !w->lazy; e++)
        for (int r = 0; r < g; r++)
            for (int64_t k = 0; k < n; k++) {
                size_t o = ((size_t)e * g + r) * (size_t)n + (size_t)k;
                stall_time f, c;
                if (!m) {
                    f = wi_draw_ns(rng, &fdraw);
                    c = wi_draw_ns(rng, &cdraw);
                } else if (e < m->epochs && r < m->ranks && k < m->batches) {
                    size_t i = ((size_t)e * m->ranks + r) * (size_t)m->batches + (size_t)k;
                    f = m->fetch[i];
                    c = m->compute[i];
                } else {
                    f = wi_resample(rng, what->resample, pf, mcells, &fdraw);
                    c = wi_resample(rng, what->resample, pc, mcells, &cdraw);
                }
                if (f < 0 || c < 0) {
                    gsl_rng_free(rng);
                    free(full);
                    wi_tables_free(w);
                    memset(w, 0, sizeof *w);
                    return wi_drew_too_long(what, f < 0, e, r, k, err);
                }
                /* Drawn cells are scaled too: a what-if's speed factor
                 * applies to every duration. */
                w->fetch[o] = wi_xform_fetch(&x, f);
                w->compute[o] = wi_xform_compute(&x, c);
                if (m) {
                    /* The samples this batch holds over those of the batch
                     * its duration came from: the trace's own partial last
                     * batch taken for a full one (more batches per rank
                     * than the trace's) is charged as full; a drawn one
                     * came from the pools of full batches. */
                    bool own = e < m->epochs && r < m->ranks && k == m->batches - 1;
                    int64_t num = k == n - 1 ? lnum : lb, den = own ? mlast : lb;
                    w->fetch[o] = wi_part(w->fetch[o], num, den);
                    w->compute[o] = wi_part(w->compute[o], num, den);
                }
            }
    free(full);
    stall_time ddp = x.ddp;
    int xrc = wi_xform_check(what, &x, g, err);
    if (xrc) {
        if (rng)
            gsl_rng_free(rng);
        wi_tables_free(w);
        memset(w, 0, sizeof *w);
        return xrc;
    }
    for (int e = 0; e < ne; e++) {
        for (int64_t k = 0; k < n; k++) {
            stall_time a = 0;
            if (ddp >= 0)
                a = ddp;
            else if (m && e < m->epochs && k < m->batches)
                a = m->tail[(size_t)e * m->batches + (size_t)k];
            else if (m)
                a = m->tail[gsl_rng_uniform_int(rng, (unsigned long)m->epochs *
                                                         (unsigned long)m->batches)];
            w->tail[(size_t)e * n + (size_t)k] = a;
        }
        w->gap[e] =
            m && e < m->epochs ? m->gap[e] : (m && m->epochs > 1 ? m->gap[m->epochs - 1] : 0);
    }
    /* Ranks that began an epoch late begin it late (docs/model.md 2.4), at
     * the trace's own rank count: another count has no per-rank start to
     * take (the epochs beyond the trace begin together). */
    if (m && m->late && g == m->ranks && !(whatif && what->late_none)) {
        w->late = stall_xcalloc((size_t)ne * (size_t)g, sizeof *w->late);
        int me = ne < m->epochs ? ne : m->epochs;
        memcpy(w->late, m->late, (size_t)me * (size_t)g * sizeof *w->late);
    }
    if (rng)
        gsl_rng_free(rng);
    /* Rank 0 computes its batches one after the other: the sum of its
     * compute and tail times is a lower bound of the simulated time, so a
     * run past the horizon is refused here, before any output. */
    double span = 0;
    /* (Not while an overlapped fill is under way with a compute table:
     * its bound passed the check above, so the sum cannot fail it.) */
    for (int e = 0; e < ne && !(w->ovl && w->compute); e++)
        for (int64_t k = 0; k < n; k++)
            span += (double)wi_cb_compute(w, e, 0, k) + (double)w->tail[(size_t)e * n + (size_t)k];
    int hrc = wi_horizon_check(what, span, err);
    if (hrc) {
        wi_tables_free(w);
        memset(w, 0, sizeof *w);
        return hrc;
    }
    return 0;
}

/* ---- running the model and collecting rows ---- */

static void wi_on_iter(void *ctx, const stall_iter_record *rec)
{
    wi_collect *c = ctx;
    double csum = 0;
    for (int r = 0; r < c->ranks; r++)
        csum += stall_ns_to_s(rec->compute[r]);
    stall_iter_row row = {.epoch = rec->epoch,
                          .batch = rec->batch,
                          .iter_end = rec->iter_end,
                          .iter_time = rec->iter_time,
                          .stall_max = rec->stall_train,
                          .stall_min = rec->stall_train - rec->delay, /* delay kept */
                          .wait_max = rec->wait_max,
                          .wait_mean_s = rec->wait_mean_s,
                          .compute_mean_s = csum / c->ranks,
                          .fetch_spread = rec->fetch_spread,
                          .start_spread = rec->start_spread,
                          .stall = rec->stall};
    if (c->rep)
        stall_report_add(c->rep, &row);
    if (c->hook && rec->batch == 0 && c->d && c->d->late_start) {
        /* each rank's own start, for the observer (a simulated trace's
         * epoch_start per rank, docs/model.md 8) */
        stall_iter_record r0 = *rec;
        if (!c->rank_start)
            c->rank_start = stall_xmalloc((size_t)c->ranks * sizeof *c->rank_start);
        for (int r = 0; r < c->ranks; r++)
            c->rank_start[r] = rec->epoch_start + c->d->late_start(c->d->ctx, rec->epoch, r);
        r0.rank_start = c->rank_start;
        c->hook(c->hook_ctx, &r0);
    } else if (c->hook) {
        c->hook(c->hook_ctx, rec);
    }
    if (c->ck)
        wi_ck_add(c->ck, rec, rec->batch == c->batches - 1);
    c->epoch_stall_sum += stall_ns_to_s(rec->stall_train);
    for (int r = 0; r < c->ranks; r++)
        c->fetch_sum += stall_ns_to_s(rec->fetch_end[r] - rec->fetch_start[r]);
    c->fetch_n += c->ranks;
    if (rec->batch == c->batches - 1) {
        if (c->rep)
            stall_report_epoch(c->rep, rec->epoch, rec->epoch_start, rec->iter_end);
        if (c->epoch_s) {
            c->epoch_s[rec->epoch] = stall_ns_to_s(rec->iter_end - rec->epoch_start);
            c->stall_s[rec->epoch] = c->epoch_stall_sum / (double)c->batches;
        }
        c->epoch_stall_sum = 0;
    }
}

int wi_run_with(const stall_model_params *p, const stall_durations *d, wi_collect *c,
                stall_model_stats *st, stall_err *err)
{
    c->ranks = p->ranks;
    c->batches = p->batches;
    c->d = d;
    int rc = stall_model_run(p, d, wi_on_iter, c, st, err);
    free(c->rank_start);
    c->rank_start = NULL;
    c->d = NULL;
    return rc;
}

int wi_run(const stall_model_params *p, wi_tables *w, wi_collect *c, stall_model_stats *st,
           stall_err *err)
{
    stall_durations d = {.fetch = wi_cb_fetch,
                         .compute = wi_cb_compute,
                         .tail = wi_cb_tail,
                         .epoch_gap = wi_cb_gap,
                         .late_start = w->late ? wi_cb_late : NULL,
                         .ready = w->ovl ? wi_cb_ready : NULL,
                         .ctx = w};
    int rc = wi_run_with(p, &d, c, st, err);
    wi_tables_finish(w); /* for the tables' later readers */
    return rc;
}

/* Loads and decomposes the trace; the rows are freed once decomposed. */
/* What a tidy trace's fetch starts show of its workers (wi_trace_workers's
 * last resort). */
static int wi_infer_tidy_workers(void *t)
{
    return stall_measured_infer_workers(t, NULL);
}

int wi_load_measured(const wi_trace_src *src, stall_measured *m, stall_err *err)
{
    if (src->format == STALL_FORMAT_DSANALYZER) {
        stall_ds_trace *d = NULL;
        int rc = stall_ds_load(src->fetch, src->start, src->perf, src->epoch, &d, err);
        if (rc == 0)
            rc = stall_ds_check_workers(d, (int)src->workers, src->workers_at, err);
        if (rc == 0)
            rc = stall_measured_from_dsanalyzer(d, (int)src->workers, (int)src->prefetch, m, err);
        if (rc == 0)
            m->persistent = src->persistent; /* one epoch: only the model's later ones use it */
        stall_ds_free(d);
        return rc;
    }
    stall_tidy_trace *t = NULL;
    /* Its worker ids against [trace] workers where it has no workers
     * column: refused at the line of the first past it. */
    int rc = stall_tidy_load_workers(src->path, src->workers >= 0 ? (int)src->workers : -1,
                                     src->workers_at, &t, err);
    int from = STALL_WORKERS_TRACE;
    if (rc == 0) {
        int maxid = -1;
        size_t cells = (size_t)t->epochs * (size_t)t->ranks * (size_t)t->batches;
        for (size_t i = 0; t->workers < 0 && i < cells; i++)
            maxid = t->worker[i] > maxid ? t->worker[i] : maxid;
        rc = wi_trace_workers(src, t->workers, maxid, wi_infer_tidy_workers, t, &t->workers, &from,
                              err);
    }
    if (rc == 0)
        rc = wi_trace_prefetch(src, t->prefetch, &t->prefetch, err);
    bool persistent = src->persistent;
    if (rc == 0)
        rc = wi_trace_persistent(src, t->persistent, &persistent, err);
    if (rc == 0)
        rc = stall_measured_from_tidy_p(t, persistent, m, err);
    if (rc == 0)
        m->workers_from = from;
    stall_tidy_free(t);
    return rc;
}

int64_t wi_batch_samples(const wi_whatif *what, const stall_measured *m)
{
    if (m && m->samples > 0)
        return m->samples;
    return what->samples > 0 ? what->samples : 1;
}

int64_t wi_strong_batches(int64_t l, int g, int64_t b, bool drop_last)
{
    /* DistributedSampler gives each of g ranks ceil(L / g) samples (it
     * pads by repeating samples); the DataLoader makes batches of b of
     * them, the last one partial unless drop_last. */
    __int128 per = ((__int128)l + g - 1) / g;
    __int128 nb = drop_last ? per / b : (per + b - 1) / b;
    return nb > INT64_MAX ? INT64_MAX : (int64_t)nb;
}

/* The worker processes a node starts in trace m (*from) and in p (*to),
 * where they differ and m has a start-up to scale. */
static bool wi_startup_nodes(const stall_measured *m, const stall_model_params *p, int *from,
                             int *to)
{
    if (!m || m->workers <= 0 || p->workers <= 0 || m->startup <= 0)
        return false;
    int rpn = m->ranks_per_node > 0 && m->ranks_per_node < m->ranks ? m->ranks_per_node : m->ranks;
    *from = rpn * m->workers;
    *to = p->gpus_per_node * p->workers;
    return *from != *to;
}

bool wi_startup_scaled(const wi_whatif *what, const stall_measured *m, bool whatif,
                       const stall_model_params *p, int *from, int *to)
{
    return whatif && !what->startup_given && wi_startup_nodes(m, p, from, to);
}

/* p's start-up: trace m's x the worker processes per node (docs/model.md
 * 2.4: they start one after another). */
void wi_startup_apply(const stall_measured *m, stall_model_params *p)
{
    int from, to;
    if (wi_startup_nodes(m, p, &from, &to))
        p->startup = llround((double)m->startup * to / from);
}

/* Model parameters: the measured configuration, then the INI's explicit
 * what-if keys on top (when whatif). */
void wi_params(const wi_whatif *what, const stall_measured *m, bool whatif, stall_model_params *p)
{
    stall_model_defaults(p);
    bool have = m != NULL;
#define WI_PICK(given, val, measured, ok)                                                          \
    ((whatif && ((given) || !have || !(ok))) ? (val) : (measured))
    p->ranks =
        (int)(whatif && what->gpus > 0 ? what->gpus
                                       : (have ? m->ranks : (what->gpus > 0 ? what->gpus : 1)));
    /* Ranks per node: as given, else the trace's layout (all its ranks on
     * one node unless it says otherwise), else 8 GPUs per node. */
    int64_t gpn = whatif && what->gpus_per_node > 0 ? what->gpus_per_node
                  : have                            ? m->ranks_per_node
                                                    : 8;
    p->gpus_per_node = (int)(gpn < p->ranks ? gpn : p->ranks);
    p->workers = (int)WI_PICK(what->workers_given, what->workers, m->workers, m->workers >= 0);
    int pf =
        (int)WI_PICK(what->prefetch_given, what->prefetch_factor, m->prefetch, m->prefetch >= 1);
    p->prefetch = pf >= 1 ? pf : 2;
    p->in_order = what->in_order;
    /* The measured run's unless the what-if says otherwise. */
    p->persistent_workers =
        have && !(whatif && what->persistent_given) ? m->persistent : what->persistent_workers;
    p->startup = WI_PICK(what->startup_given, stall_s_to_ns(what->startup_s), m->startup, true);
    /* The node's worker processes start one after another (the trace's
     * start-up per process on its node, 1 to 8 ranks and 1 to 4 workers:
     * docs/model.md 2.4), so a node that starts more takes longer. */
    if (whatif && !what->startup_given)
        wi_startup_apply(m, p);
    p->handover = WI_PICK(what->handover_given, stall_s_to_ns(what->handover_s), m->handover, true);
    /* workers = 0 from a trace taken with workers: no result queue, no
     * unpickling (_SingleProcessDataLoaderIter._next_data fetches, collates
     * and pins inline), so the measured hand-over does not apply. */
    if (wi_inline_from_workers(what, m, whatif) && !what->handover_given)
        p->handover = 0;
    /* Each epoch its own measured hand-over (a cold epoch's is slower: its
     * reads' CPU beside the loop's), except with storage tiers, where what
     * the cache holds in an epoch is the what-if's own, so the run's mean. */
    else if (have && !what->handover_given && m->handover_epoch && !what->tiers) {
        p->handover_epoch = m->handover_epoch;
        p->handover_epochs = m->epochs;
    }
    p->pin = whatif ? stall_s_to_ns(what->pin_memory_s) : 0;
    p->accumulation = whatif ? (int)what->accumulation : 1;
    p->batches = whatif && what->batches > 0 ? what->batches : (have ? m->batches : what->batches);
    if (whatif && have && what->batches <= 0 && what->scaling == STALL_SCALING_STRONG)
        p->batches = wi_strong_batches(wi_dataset_samples(what, m), p->ranks,
                                       wi_batch_samples(what, m), what->drop_last);
    p->epochs = (int)(whatif && what->epochs > 0
                          ? what->epochs
                          : (have ? m->epochs : (what->epochs > 0 ? what->epochs : 1)));
#undef WI_PICK
    if (whatif) {
        p->cores = (int)what->cores;
        p->cpu_share = what->cpu_share;
        p->compute_cpu_share = what->compute_cpu_share;
        p->storage_mb_s = what->bandwidth_mb_s;
        p->batch_mb = what->batch_mb_given || !have ? what->batch_mb : m->batch_mb;
        /* A measured (or drawn) fetch already contains its storage read:
         * only the time lost to sharing the bandwidth is added. */
        p->read_in_fetch = true;
        if (what->tiers)
            wi_tiers(what, m, p);
    }
    wi_params_ckpt(what, m, whatif, p);
    wi_cpu_trace(what, m, whatif, p);
}
