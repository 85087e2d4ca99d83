/*
 * infer.c - fetch durations inferred from a censored trace (infer.h;
 * docs/model.md, section 8.2).
 */
#include "infer.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "stall/dftracer.h"
#include "stall/io.h"
#include "stall/kineto.h"

/* The fixed seeds of the common random numbers and of the bootstrap: the
 * fit is a pure function of the trace. */
#define WI_INFER_SEED 18u
#define WI_INFER_BOOT_SEED 1818u
#define WI_INFER_ITERS 400
#define WI_INFER_BOOT_ITERS 120 /* a bootstrap refit starts at the estimate */
#define WI_INFER_WAITED_S 1e-3  /* a wait that counts as one */
#define WI_NP 3                 /* mu, log sigma, start-up */
#define WI_EPOCH_W 10.0         /* weight of the epoch-time term */

/* ---- the objective ---- */

typedef struct wi_inf {
    const stall_measured *m;
    stall_model_params p;
    size_t cells;      /* the trace's waits: epochs x ranks x batches */
    int64_t pre;       /* warm window: batches simulated before each epoch's first (0: cold) */
    int64_t nb;        /* batches simulated per epoch: pre + the trace's */
    size_t all;        /* epochs x ranks x nb */
    stall_time *pre_c; /* [e * ranks + r] compute of the warm-up batches: the window's mean */
    stall_time *pre_a; /* [e] their tail: the window's mean */
    stall_time *win0;  /* [e] the simulated window's start: T of the last warm-up batch */
    double *z;         /* [all] standard normals, fixed */
    stall_time *fetch; /* [all] the draws of the current parameters */
    const double *obs; /* [cells] observed waits, sorted (s) */
    double *sim_e;     /* [epochs] simulated epoch times (s) */
    double *sim_st;    /* [epochs] simulated stalls summed over the epoch's batches (s) */
    double *sim;       /* [cells] simulated waits (s) */
    int evals;
    int fail; /* a model run failed (cannot happen with valid inputs) */
} wi_inf;

/* Cell (e, r, k) of the simulated run, k counting the warm-up batches. */
static size_t wi_inf_at(const wi_inf *f, int e, int r, int64_t k)
{
    return ((size_t)e * (size_t)f->m->ranks + (size_t)r) * (size_t)f->nb + (size_t)k;
}

static stall_time wi_inf_fetch(void *ctx, int e, int r, int64_t k)
{
    const wi_inf *f = ctx;
    return f->fetch[wi_inf_at(f, e, r, k)];
}

static stall_time wi_inf_compute(void *ctx, int e, int r, int64_t k)
{
    const wi_inf *f = ctx;
    if (k < f->pre)
        return f->pre_c[(size_t)e * (size_t)f->m->ranks + (size_t)r];
    return f->m->compute[((size_t)e * (size_t)f->m->ranks + (size_t)r) * (size_t)f->m->batches +
                         (size_t)(k - f->pre)];
}

static stall_time wi_inf_tail(void *ctx, int e, int64_t k)
{
    const wi_inf *f = ctx;
    if (k < f->pre)
        return f->pre_a[e];
    return f->m->tail[(size_t)e * (size_t)f->m->batches + (size_t)(k - f->pre)];
}

static stall_time wi_inf_gap(void *ctx, int e)
{
    const wi_inf *f = ctx;
    return f->m->gap[e];
}

static void wi_inf_iter(void *ctx, const stall_iter_record *rec)
{
    wi_inf *f = ctx;
    if (rec->batch < f->pre) {
        if (rec->batch == f->pre - 1)
            f->win0[rec->epoch] = rec->iter_end;
        return;
    }
    int64_t k = rec->batch - f->pre;
    f->sim_st[rec->epoch] += stall_ns_to_s(rec->stall_train);
    if (k == f->m->batches - 1)
        f->sim_e[rec->epoch] =
            stall_ns_to_s(rec->iter_end - (f->pre > 0 ? f->win0[rec->epoch] : rec->epoch_start));
    for (int r = 0; r < f->m->ranks; r++)
        f->sim[((size_t)rec->epoch * (size_t)f->m->ranks + (size_t)r) * (size_t)f->m->batches +
               (size_t)k] = stall_ns_to_s(rec->stall[r]);
}

/* Fills f->fetch from (mu, sigma), runs the model with start-up su and
 * hand-over ho (s), leaves the simulated waits sorted in f->sim. */
static int wi_inf_sim(wi_inf *f, double mu, double sigma, double su, double ho)
{
    for (size_t i = 0; i < f->all; i++) {
        double v = exp(mu + sigma * f->z[i]);
        f->fetch[i] = stall_s_to_ns(v < 1e6 ? v : 1e6);
    }
    stall_model_params p = f->p;
    p.batches = f->nb;
    p.handover_epoch = NULL; /* ho, not the decomposition's per-epoch 0s */
    p.handover_epochs = 0;
    p.startup = stall_s_to_ns(su > 0 ? su : 0);
    p.handover = stall_s_to_ns(ho > 0 ? ho : 0);
    stall_durations d = {.fetch = wi_inf_fetch,
                         .compute = wi_inf_compute,
                         .tail = wi_inf_tail,
                         .epoch_gap = wi_inf_gap,
                         .ctx = f};
    stall_err e = {0};
    f->evals++;
    memset(f->sim_st, 0, (size_t)f->m->epochs * sizeof *f->sim_st);
    if (stall_model_run(&p, &d, wi_inf_iter, f, NULL, &e) != 0)
        return -1;
    gsl_sort(f->sim, 1, f->cells);
    return 0;
}

/* x = (mu, log sigma, start-up s) of a cold window, (mu, log sigma,
 * hand-over s) of a warm one (its start-up happened before it): the mean
 * squared difference of the sorted waits (the squared 2-Wasserstein
 * distance), plus a penalty that keeps the start-up and hand-over >= 0 and
 * sigma in a sane range. */
static double wi_inf_obj(const gsl_vector *x, void *ctx)
{
    wi_inf *f = ctx;
    double mu = gsl_vector_get(x, 0), ls = gsl_vector_get(x, 1), su = gsl_vector_get(x, 2), ho = 0;
    if (f->pre > 0) {
        ho = su;
        su = 0;
    }
    if (!isfinite(mu) || !isfinite(ls) || !isfinite(su) || !isfinite(ho) || mu > 10 || mu < -25 ||
        ls > 1.5 || ls < -9)
        return 1e30;
    if (wi_inf_sim(f, mu, exp(ls), su, ho) != 0) {
        f->fail = 1;
        return 1e30;
    }
    double s = 0;
    for (size_t i = 0; i < f->cells; i++) {
        double d = f->sim[i] - f->obs[i];
        s += d * d;
    }
    s /= (double)f->cells;
    /* The measured epoch times, per batch: what the waits add up to with
     * the compute and the barrier. */
    double de = 0;
    for (int e = 0; e < f->m->epochs; e++)
        de += f->sim_e[e] - f->m->epoch_s[e];
    de /= (double)f->m->epochs * (double)f->m->batches;
    s += WI_EPOCH_W * de * de;
    if (su < 0)
        s += su * su * 10;
    if (ho < 0)
        s += ho * ho * 10;
    /* A loader-bound window's waits do not depend on the hand-over (it
     * delays the take and the next request alike): the smallest one that
     * fits is taken. */
    if (f->pre > 0)
        s += 0.01 * ho * ho;
    return s;
}

/* Nelder-Mead from x0 with steps dx; the minimum into x0. */
static double wi_inf_min(wi_inf *f, double x0[WI_NP], const double dx[WI_NP], int iters)
{
    gsl_multimin_function fn = {.n = WI_NP, .f = wi_inf_obj, .params = f};
    gsl_vector *x = gsl_vector_alloc(WI_NP), *ss = gsl_vector_alloc(WI_NP);
    for (int i = 0; i < WI_NP; i++) {
        gsl_vector_set(x, (size_t)i, x0[i]);
        gsl_vector_set(ss, (size_t)i, dx[i]);
    }
    gsl_multimin_fminimizer *s =
        gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, WI_NP);
    gsl_multimin_fminimizer_set(s, &fn, x, ss);
    for (int it = 0; it < iters; it++) {
        if (gsl_multimin_fminimizer_iterate(s) != GSL_SUCCESS)
            break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(s), 1e-4) == GSL_SUCCESS)
            break;
    }
    for (int i = 0; i < WI_NP; i++)
        x0[i] = gsl_vector_get(s->x, (size_t)i);
    double v = s->fval;
    gsl_multimin_fminimizer_free(s);
    gsl_vector_free(x);
    gsl_vector_free(ss);
    return v;
}

/* Fits from a starting point, restarting once from the minimum (Nelder-Mead
 * can stall on a collapsed simplex). */
static void wi_inf_fit(wi_inf *f, double x[WI_NP], double scale)
{
    double dx[WI_NP] = {0.7, 0.5, scale};
    wi_inf_min(f, x, dx, WI_INFER_ITERS);
    double dx2[WI_NP] = {0.2, 0.2, scale * 0.3};
    wi_inf_min(f, x, dx2, WI_INFER_ITERS);
}

static int wi_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- the censored trace decomposed ---- */

stall_tidy_trace *wi_infer_hide(const stall_tidy_trace *t)
{
    size_t cells = (size_t)t->epochs * (size_t)t->ranks * (size_t)t->batches;
    size_t ner = (size_t)t->epochs * (size_t)t->ranks;
    stall_tidy_trace *h = stall_xcalloc(1, sizeof *h);
    *h = *t;
#define WI_DUP(field, count)                                                                       \
    do {                                                                                           \
        h->field = NULL;                                                                           \
        if (t->field) {                                                                            \
            h->field = stall_xmalloc((count) * sizeof *h->field);                                  \
            memcpy(h->field, t->field, (count) * sizeof *h->field);                                \
        }                                                                                          \
    } while (0)
    WI_DUP(fetch_start, cells);
    WI_DUP(fetch_end, cells);
    WI_DUP(request, cells);
    WI_DUP(ready, cells);
    WI_DUP(iter_end, cells);
    WI_DUP(compute_end, cells);
    WI_DUP(worker, cells);
    WI_DUP(samples, cells);
    WI_DUP(bytes, cells);
    WI_DUP(epoch_start, ner);
    WI_DUP(checkpoint_s, ner);
#undef WI_DUP
    h->summary = NULL;
    h->path = stall_xstrdup(t->path ? t->path : "");
    for (size_t i = 0; i < cells; i++) {
        h->fetch_start[i] = h->fetch_end[i] = h->ready[i];
        h->worker[i] = -1;
    }
    h->fetch_unknown = true;
    return h;
}

int wi_infer_measured(const stall_tidy_trace *t, int workers, int prefetch, bool persistent,
                      stall_measured *m, stall_err *err)
{
    if (workers < 1)
        return stall_err_set(err, STALL_EINVAL, "%s: fetch inference needs workers >= 1",
                             t->path ? t->path : "trace");
    /* Decomposed as a trace of 0 workers (no worker turnaround, start-up or
     * hand-over can be read from waits alone: they are part of the fit),
     * then given its measured loader. */
    stall_tidy_trace tt = *t;
    tt.workers = 0;
    int rc = stall_measured_from_tidy_p(&tt, persistent, m, err);
    if (rc)
        return rc;
    m->workers = workers;
    m->prefetch = prefetch >= 1 ? prefetch : 2;
    m->startup = 0;
    m->handover = 0;
    m->turnaround = 0;
    size_t cells = (size_t)m->epochs * (size_t)m->ranks * (size_t)m->batches;
    wi_inf f = {.m = m, .cells = cells, .nb = m->batches, .all = cells};
    wi_whatif what;
    wi_whatif_defaults(&what);
    wi_params(&what, m, false, &f.p);
    f.sim = stall_xmalloc(cells * sizeof *f.sim);
    f.sim_e = stall_xcalloc((size_t)m->epochs, sizeof *f.sim_e);
    f.sim_st = stall_xcalloc((size_t)m->epochs, sizeof *f.sim_st);
    double *obs = stall_xmalloc(cells * sizeof *obs), *boot = stall_xmalloc(cells * sizeof *boot);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    /* Observed waits, in the measured layout, and the mean iteration. */
    double iter_sum = 0, first_sum = 0;
    size_t waited = 0;
    for (int e = 0; e < m->epochs; e++)
        for (int r = 0; r < m->ranks; r++)
            for (int64_t k = 0; k < m->batches; k++) {
                size_t i = stall_tidy_at(t, e, r, k),
                       o = ((size_t)e * (size_t)m->ranks + (size_t)r) * (size_t)m->batches +
                           (size_t)k;
                obs[o] = stall_ns_to_s(t->ready[i] - t->request[i]);
                obs[o] = obs[o] > 0 ? obs[o] : 0;
                waited += obs[o] > WI_INFER_WAITED_S;
                iter_sum += stall_ns_to_s(t->iter_end[i] - t->request[i]);
                if (k == 0)
                    first_sum += obs[o];
            }
    double obs_mean = gsl_stats_mean(obs, 1, cells);
    gsl_sort(obs, 1, cells);
    f.obs = obs;
    /* Start: the fetch a worker-bound loader would need (W iterations), the
     * first batch's extra wait as the start-up. */
    double it_mean = iter_sum / (double)cells;
    double guess = 0.7 * workers * (it_mean > 1e-6 ? it_mean : 1e-6);
    double first = first_sum / (double)((size_t)m->epochs * (size_t)m->ranks);
    double *firsts = stall_xmalloc((size_t)m->epochs * (size_t)m->ranks * sizeof *firsts);
    for (int e = 0; e < m->epochs; e++)
        for (int r = 0; r < m->ranks; r++) {
            stall_time w0 =
                t->ready[stall_tidy_at(t, e, r, 0)] - t->request[stall_tidy_at(t, e, r, 0)];
            firsts[(size_t)e * (size_t)m->ranks + (size_t)r] = w0 > 0 ? stall_ns_to_s(w0) : 0;
        }
    gsl_sort(firsts, 1, (size_t)m->epochs * (size_t)m->ranks);
    double first_med =
        gsl_stats_median_from_sorted_data(firsts, 1, (size_t)m->epochs * (size_t)m->ranks);
    free(firsts);
    /* An epoch that starts empty waits for a whole fetch (and the start-up)
     * first, W times the steady wait of a loader-bound run or more: a first
     * wait under 1.5 times the median one (+ 1 ms) means the window opened
     * mid-training, its pipeline running (full, or as full as a loader-bound
     * run keeps it).
     * Such a window is simulated after 2 W P batches of warm-up (its
     * pipeline full, as the trace's), and its third parameter is the
     * hand-over, the floor of its waits, instead of the start-up it does
     * not hold (docs/model.md 8.2). */
    bool confounded = m->batches <= workers;
    bool warm =
        !confounded && first_med <= 1.5 * gsl_stats_median_from_sorted_data(obs, 1, cells) + 1e-3;
    if (warm) {
        int64_t depth = 2 * (int64_t)workers * (int64_t)m->prefetch;
        f.pre = depth > 4 ? depth : 4;
        f.nb = m->batches + f.pre;
        f.all = (size_t)m->epochs * (size_t)m->ranks * (size_t)f.nb;
        f.pre_c = stall_xcalloc((size_t)m->epochs * (size_t)m->ranks, sizeof *f.pre_c);
        f.pre_a = stall_xcalloc((size_t)m->epochs, sizeof *f.pre_a);
        f.win0 = stall_xcalloc((size_t)m->epochs, sizeof *f.win0);
        for (int e = 0; e < m->epochs; e++) {
            double asum = 0;
            for (int64_t k = 0; k < m->batches; k++)
                asum += (double)m->tail[(size_t)e * (size_t)m->batches + (size_t)k];
            f.pre_a[e] = (stall_time)llround(asum / (double)m->batches);
            for (int r = 0; r < m->ranks; r++) {
                double csum = 0;
                for (int64_t k = 0; k < m->batches; k++)
                    csum += (double)m->compute[((size_t)e * (size_t)m->ranks + (size_t)r) *
                                                   (size_t)m->batches +
                                               (size_t)k];
                f.pre_c[(size_t)e * (size_t)m->ranks + (size_t)r] =
                    (stall_time)llround(csum / (double)m->batches);
            }
        }
    }
    f.z = stall_xmalloc(f.all * sizeof *f.z);
    f.fetch = stall_xmalloc(f.all * sizeof *f.fetch);
    gsl_rng_set(rng, WI_INFER_SEED);
    for (size_t i = 0; i < f.all; i++)
        f.z[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    double su0 = first > guess ? first - guess : 0;
    if (warm) /* the hand-over's start: the low end of the waits */
        su0 = gsl_stats_quantile_from_sorted_data(obs, 1, cells, 0.1);
    double scale = 0.5 * (su0 > guess ? su0 : guess) + 1e-3;
    double x[WI_NP] = {log(guess), log(0.3), su0};
    /* The objective is flat wherever the loader keeps ahead of the loop
     * (no simulated wait): when the start lies there (its simulated mean
     * wait under a tenth of the observed), Nelder-Mead starts from the best
     * point of a coarse grid of mean fetch (0.5 to 2 W mean iterations) and
     * sigma instead. */
    static const double gm[] = {0.5, 0.8, 1.0, 1.2, 1.5, 2.0}, gsig[] = {0.02, 0.1, 0.3, 0.6};
    double gbest = wi_inf_obj(&(gsl_vector){.size = WI_NP, .stride = 1, .data = x}, &f);
    bool flat = gsl_stats_mean(f.sim, 1, cells) < 0.1 * obs_mean;
    for (size_t a = 0; flat && a < sizeof gm / sizeof gm[0]; a++)
        for (size_t b = 0; b < sizeof gsig / sizeof gsig[0]; b++) {
            double mean = gm[a] * guess / 0.7, sg = gsig[b];
            double xg[WI_NP] = {log(mean) - sg * sg / 2, log(sg), su0};
            double v = wi_inf_obj(&(gsl_vector){.size = WI_NP, .stride = 1, .data = xg}, &f);
            if (v < gbest) {
                gbest = v;
                memcpy(x, xg, sizeof x);
            }
        }
    wi_inf_fit(&f, x, scale);
    int fit_evals = f.evals;
    wi_fit *fit = stall_xcalloc(1, sizeof *fit);
    fit->workers = workers;
    fit->prefetch = m->prefetch;
    fit->mu = x[0];
    fit->sigma = exp(x[1]);
    fit->startup_s = !warm && x[2] > 0 ? x[2] : 0;
    /* A cold window's hand-over cannot be told from its fetches: in them. */
    fit->handover_s = warm && x[2] > 0 ? x[2] : 0;
    fit->mean_s = exp(fit->mu + fit->sigma * fit->sigma / 2);
    fit->p50_s = exp(fit->mu);
    fit->p95_s = exp(fit->mu + fit->sigma * gsl_cdf_ugaussian_Pinv(0.95));
    fit->obs_wait_s = obs_mean;
    fit->obs_p95_s = gsl_stats_quantile_from_sorted_data(obs, 1, cells, 0.95);
    /* The waits determine the fetch only where the loop waited for it: a
     * loader that kept ahead leaves waits of about the hand-over, which any
     * fetch short enough to keep ahead reproduces. So where under 5% of
     * batches waited > 1 ms beyond the hand-over, or the mean wait beyond it
     * is under a tenth of the mean iteration (the torch 2.11 ddp2_w2 window:
     * 1.5 ms of 52 ms, fitted at 74 ms for a fetch of 20 ms and more), the
     * trace bounds the fetch from above only: the bound is the largest mean
     * (the fit's, times 1.1^i) whose simulated mean wait stays within 1 ms
     * of the observed one. */
    waited = 0;
    for (size_t i = 0; i < cells; i++)
        waited += obs[i] > fit->handover_s + WI_INFER_WAITED_S;
    fit->waited = (double)waited / (double)cells;
    fit->bounded_only = fit->waited < 0.05 || obs_mean - fit->handover_s < 0.1 * it_mean;
    fit->upper_s = 0;
    for (int i = 1; fit->bounded_only && i <= 44; i++) {
        double xc[WI_NP] = {x[0] + (double)i * log(1.1), x[1], x[2]};
        wi_inf_obj(&(gsl_vector){.size = WI_NP, .stride = 1, .data = xc}, &f);
        if (gsl_stats_mean(f.sim, 1, cells) > obs_mean + WI_INFER_WAITED_S)
            break;
        fit->upper_s = fit->mean_s * pow(1.1, i);
    }
    if (fit->bounded_only && fit->upper_s < fit->mean_s)
        fit->upper_s = fit->mean_s;
    fit->waits = (long long)cells;
    fit->startup_confounded = confounded;
    fit->first_wait_s = first_med;
    fit->warm_start = warm;
    /* Uncertainty: the fit on bootstrap resamples of the observed waits,
     * each from the estimate. */
    double bm[WI_INFER_BOOT], bp[WI_INFER_BOOT], bs[WI_INFER_BOOT];
    gsl_rng_set(rng, WI_INFER_BOOT_SEED);
    for (int b = 0; b < WI_INFER_BOOT; b++) {
        for (size_t i = 0; i < cells; i++)
            boot[i] = obs[gsl_rng_uniform_int(rng, cells)];
        gsl_sort(boot, 1, cells);
        f.obs = boot;
        double xb[WI_NP] = {x[0], x[1], x[2]};
        double dx[WI_NP] = {0.2, 0.2, scale * 0.3};
        wi_inf_min(&f, xb, dx, WI_INFER_BOOT_ITERS);
        double sb = exp(xb[1]);
        bm[b] = exp(xb[0] + sb * sb / 2);
        bp[b] = exp(xb[0] + sb * gsl_cdf_ugaussian_Pinv(0.95));
        bs[b] = xb[2] > 0 ? xb[2] : 0;
    }
    qsort(bm, WI_INFER_BOOT, sizeof *bm, wi_cmp_double);
    qsort(bp, WI_INFER_BOOT, sizeof *bp, wi_cmp_double);
    qsort(bs, WI_INFER_BOOT, sizeof *bs, wi_cmp_double);
    fit->mean_lo = gsl_stats_quantile_from_sorted_data(bm, 1, WI_INFER_BOOT, 0.05);
    fit->mean_hi = gsl_stats_quantile_from_sorted_data(bm, 1, WI_INFER_BOOT, 0.95);
    fit->p95_lo = gsl_stats_quantile_from_sorted_data(bp, 1, WI_INFER_BOOT, 0.05);
    fit->p95_hi = gsl_stats_quantile_from_sorted_data(bp, 1, WI_INFER_BOOT, 0.95);
    double lo3 = gsl_stats_quantile_from_sorted_data(bs, 1, WI_INFER_BOOT, 0.05),
           hi3 = gsl_stats_quantile_from_sorted_data(bs, 1, WI_INFER_BOOT, 0.95);
    fit->startup_lo = warm ? 0 : lo3;
    fit->startup_hi = warm ? 0 : hi3;
    fit->handover_lo = warm ? lo3 : 0;
    fit->handover_hi = warm ? hi3 : 0;
    /* The estimate's own draws become the trace's fetch durations. */
    f.obs = obs;
    double v = wi_inf_obj(&(gsl_vector){.size = WI_NP, .stride = 1, .data = x}, &f);
    fit->rms_s = sqrt(v > 0 ? v : 0);
    fit->sim_wait_s = gsl_stats_mean(f.sim, 1, cells);
    fit->sim_p95_s = gsl_stats_quantile_from_sorted_data(f.sim, 1, cells, 0.95);
    fit->evals = fit_evals;
    /* A warm fit's windows as it simulated them (validate compares these:
     * the run from an empty start is not the measured window's). */
    if (warm) {
        m->window_s = stall_xmalloc((size_t)m->epochs * sizeof *m->window_s);
        m->window_stall_s = stall_xmalloc((size_t)m->epochs * sizeof *m->window_stall_s);
        for (int e = 0; e < m->epochs; e++) {
            m->window_s[e] = f.sim_e[e];
            m->window_stall_s[e] = f.sim_st[e] / (double)m->batches;
        }
    }
    /* ... and their means, the whole and each epoch's (the trace's own
     * were 0: its fetches were hidden), which the trace's storage
     * ([storage] trace_mb_s, tierfit.c) takes its read out of. */
    double fsum = 0;
    for (int e = 0; e < m->epochs; e++) {
        double esum = 0;
        for (int r = 0; r < m->ranks; r++)
            for (int64_t k = 0; k < m->batches; k++) {
                size_t i =
                    ((size_t)e * (size_t)m->ranks + (size_t)r) * (size_t)m->batches + (size_t)k;
                m->fetch[i] = f.fetch[wi_inf_at(&f, e, r, k + f.pre)];
                esum += stall_ns_to_s(m->fetch[i]);
            }
        fsum += esum;
        if (m->epoch_fetch_s)
            m->epoch_fetch_s[e] = esum / ((double)m->ranks * (double)m->batches);
    }
    m->mean_fetch_s = fsum / (double)cells;
    m->startup = stall_s_to_ns(fit->startup_s);
    m->handover = stall_s_to_ns(fit->handover_s);
    free(m->handover_epoch); /* the decomposition's 0s: the fit's hand-over holds */
    m->handover_epoch = NULL;
    m->fetch_fit = fit;
    if (f.fail)
        rc = stall_err_set(err, STALL_EINVAL, "%s: fetch inference: a model run failed",
                           t->path ? t->path : "trace");
    gsl_rng_free(rng);
    free(f.pre_c);
    free(f.pre_a);
    free(f.win0);
    free(f.z);
    free(f.fetch);
    free(f.sim);
    free(f.sim_e);
    free(f.sim_st);
    free(obs);
    free(boot);
    if (rc)
        stall_measured_free(m);
    return rc;
}

/* ---- Kineto and dftracer traces ---- */

int wi_json_workers(const wi_trace_src *src, const stall_tidy_trace *t, bool need, int *w,
                    stall_err *err)
{
    const char *ini = wi_where(src->ini);
    bool given = src->workers_given && src->workers >= 0;
    char at[STALL_PATH_MAX + 96]; /* "file:line: [trace] workers" */
    snprintf(at, sizeof at, "%s", src->workers_at[0] ? src->workers_at : "[trace] workers");
    if (!src->workers_at[0] && src->ini && src->ini[0])
        snprintf(at, sizeof at, "%s: [trace] workers", src->ini);
    if (!t->fetch_unknown) {
        /* The loader's call is the whole fetch, in the main process. */
        *w = 0;
        if (given && src->workers != 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: %lld, but the trace's DataLoader loads in the main process "
                                 "(0 workers)",
                                 at, (long long)src->workers);
        return 0;
    }
    *w = given ? (int)src->workers : t->workers;
    if (given && *w < 1)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: 0, but %s holds only the loop's waits, not its fetches: its "
                             "DataLoader had workers (give their count, docs/model.md 8.2)",
                             at, src->path);
    /* Given directly (no INI), the only way to give the count is --set:
     * say so, and do not name an INI that is not there ("config: "). */
    if (need && *w < 1 && !(src->ini && src->ini[0]))
        return stall_err_set(
            err, STALL_ECONFIG,
            "%s: the trace holds only the loop's waits and does not record how many "
            "DataLoader workers fed it: set [trace] workers, here --set trace.workers=N (the "
            "loader's num_workers; and --set trace.prefetch_factor=P when not PyTorch's 2), "
            "so that the fetch durations can be inferred (docs/model.md 8.2)",
            src->path);
    if (need && *w < 1)
        return stall_err_set(
            err, STALL_ECONFIG,
            "%s: %s: the trace holds only the loop's waits and does not record how many "
            "DataLoader workers fed it: set [trace] workers (the loader's num_workers; or "
            "--set trace.workers=N) and prefetch_factor when not PyTorch's 2, so that the "
            "fetch durations can be inferred (docs/model.md 8.2)",
            ini, src->path);
    return 0;
}

int wi_load_json(const wi_trace_src *src, stall_measured *m, stall_err *err)
{
    stall_tidy_trace *t = NULL;
    bool kineto = src->format == STALL_FORMAT_KINETO;
    int rc =
        kineto ? stall_kineto_load(src->path, &t, err) : stall_dftracer_load(src->path, &t, err);
    if (rc)
        return rc;
    int w;
    rc = wi_json_workers(src, t, true, &w, err);
    if (rc == 0 && !t->fetch_unknown) {
        t->workers = 0;
        t->prefetch = -1;
        rc = stall_measured_from_tidy_p(t, src->persistent, m, err);
    } else if (rc == 0) {
        rc = wi_infer_measured(t, w, src->prefetch > 0 ? (int)src->prefetch : 2, src->persistent, m,
                               err);
        if (rc == 0) {
            m->workers_from = src->workers_given ? STALL_WORKERS_GIVEN : STALL_WORKERS_TRACE;
            m->workers_trace =
                src->workers_given && t->workers > 0 && t->workers != w ? t->workers : 0;
        }
    }
    stall_tidy_free(t);
    return rc;
}

/* ---- what is said ---- */

const char *wi_workers_trace_say(const stall_measured *m)
{
    static _Thread_local char buf[192];
    if (m && m->workers_shown > 0) {
        snprintf(buf, sizeof buf,
                 "; the fetch starts show %d, which this count allows: the start-up and "
                 "hand-over are estimated with the count given",
                 m->workers_shown);
        return buf;
    }
    if (!m || m->workers_trace <= 0)
        return "";
    snprintf(buf, sizeof buf, "; the trace reports %d", m->workers_trace);
    return buf;
}

void wi_fit_say(const wi_fit *f, bool runs_warm, char *buf, size_t n)
{
    char warm[512] = "", poor[256] = "", bounded[512] = "", fetch[160];
    /* A bounded fit's value is one of many that give the same waits: no
     * range is printed for it (its refits' range is no interval of the
     * fetch, docs/model.md 8.2). */
    if (f->bounded_only)
        snprintf(fetch, sizeof fetch,
                 "mean %.4f s, p95 %.4f s (one fit of many: the waits bound them, below)",
                 f->mean_s, f->p95_s);
    else
        snprintf(fetch, sizeof fetch, "mean %.4f s [%.4f, %.4f], p95 %.4f s [%.4f, %.4f]",
                 f->mean_s, f->mean_lo, f->mean_hi, f->p95_s, f->p95_lo, f->p95_hi);
    if (f->bounded_only)
        snprintf(bounded, sizeof bounded,
                 ". CAUTION: the loop hardly waited for data beyond the hand-over (%.0f%% of its "
                 "batches over 1 ms more), so the trace bounds the fetch times from above only: "
                 "any mean up to about %.4f s gives the same waits, and what-ifs with fewer "
                 "workers or slower fetches are not determined by it",
                 100 * f->waited, f->upper_s);
    if (f->obs_wait_s > 0 && fabs(f->sim_wait_s - f->obs_wait_s) > 0.25 * f->obs_wait_s)
        snprintf(poor, sizeof poor,
                 ". CAUTION: the fit does not reproduce the waits (mean %.5f s simulated, %.5f s "
                 "observed): the lognormal family does not describe this trace's fetches",
                 f->sim_wait_s, f->obs_wait_s);
    if (f->warm_start)
        snprintf(
            warm, sizeof warm,
            ". The first wait of the trace's epochs (median %.5f s) is not that of an empty "
            "start: they are profiling windows opened mid-training, so the fit simulated each "
            "after a warm-up (its pipeline running) and fitted the hand-over, the floor of the "
            "waits, where an epoch's start would hold the start-up%s",
            f->first_wait_s,
            runs_warm ? ""
                      : ". CAUTION: the runs below start every epoch with empty queues and the "
                        "workers' start-up (none fitted), a cold start the trace does not show");
    snprintf(buf, n,
             "fetch durations: INFERRED, not measured (the trace holds only the loop's waits): "
             "lognormal fitted so that %d workers x prefetch %d reproduce the waits: %s, %s %.4f s "
             "[%.4f, %.4f] (bootstrap 5-95%%, %d refits); waits observed/simulated: mean %.5f/%.5f "
             "s, p95 %.5f/%.5f s, RMS of the sorted differences %.5f s; %lld waits; every result "
             "below is built on it%s%s%s%s",
             f->workers, f->prefetch, fetch, f->warm_start ? "hand-over" : "start-up",
             f->warm_start ? f->handover_s : f->startup_s,
             f->warm_start ? f->handover_lo : f->startup_lo,
             f->warm_start ? f->handover_hi : f->startup_hi, WI_INFER_BOOT, f->obs_wait_s,
             f->sim_wait_s, f->obs_p95_s, f->sim_p95_s, f->rms_s, f->waits,
             f->startup_confounded
                 ? ". CAUTION: no epoch has more batches than workers, so every wait is one of "
                   "an epoch's first: the start-up and the fetch cannot be told apart (their sum "
                   "is what the trace determines)"
                 : "",
             warm, poor, bounded);
}

static int wi_fit_fill(FILE *o, void *ctx, stall_err *err)
{
    (void)err;
    const wi_fit *f = ctx;
    fputs("# fetch durations INFERRED from the loop's waits (docs/model.md 8.2): not measured\n"
          "quantity,value,boot_p05,boot_p95\n",
          o);
    fprintf(o, "workers_assumed,%d,,\nprefetch_assumed,%d,,\n", f->workers, f->prefetch);
    fprintf(o, "lognormal_mu,%.6f,,\nlognormal_sigma,%.6f,,\n", f->mu, f->sigma);
    fprintf(o, "fetch_mean_s,%.6f,%.6f,%.6f\n", f->mean_s, f->mean_lo, f->mean_hi);
    fprintf(o, "fetch_p50_s,%.6f,,\n", f->p50_s);
    fprintf(o, "fetch_p95_s,%.6f,%.6f,%.6f\n", f->p95_s, f->p95_lo, f->p95_hi);
    fprintf(o, "startup_s,%.6f,%.6f,%.6f\n", f->startup_s, f->startup_lo, f->startup_hi);
    fprintf(o, "wait_mean_observed_s,%.6f,,\nwait_mean_simulated_s,%.6f,,\n", f->obs_wait_s,
            f->sim_wait_s);
    fprintf(o, "wait_p95_observed_s,%.6f,,\nwait_p95_simulated_s,%.6f,,\n", f->obs_p95_s,
            f->sim_p95_s);
    fprintf(o, "wait_sorted_rms_s,%.6f,,\n", f->rms_s);
    fprintf(o, "share_of_batches_waited,%.4f,,\n", f->waited);
    fprintf(o, "bounded_only,%d,,\n", f->bounded_only ? 1 : 0);
    if (f->bounded_only)
        fprintf(o, "fetch_mean_upper_s,%.6f,,\n", f->upper_s);
    fprintf(o, "waits,%lld,,\n", f->waits);
    fprintf(o, "startup_confounded,%d,,\n", f->startup_confounded ? 1 : 0);
    fprintf(o, "poor_fit,%d,,\n",
            f->obs_wait_s > 0 && fabs(f->sim_wait_s - f->obs_wait_s) > 0.25 * f->obs_wait_s);
    fprintf(o, "first_wait_median_s,%.6f,,\nwarm_start,%d,,\n", f->first_wait_s,
            f->warm_start ? 1 : 0);
    fprintf(o, "model_runs_of_the_fit,%d,,\n", f->evals);
    fprintf(o, "handover_s,%.6f,%.6f,%.6f\n", f->handover_s, f->handover_lo, f->handover_hi);
    return 0;
}

int wi_fit_write(const char *dir, const wi_fit *f, stall_err *err)
{
    return stall_write_atomic_in(dir, "fetch_fit.csv", wi_fit_fill, (void *)f, err);
}
