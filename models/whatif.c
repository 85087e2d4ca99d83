/*
 * whatif.c - the closed-loop model (model.c) driven by a measured tidy trace
 * or by distributions: mode = model, validate and calibrate.
 *
 * Durations are laid out in tables before the run, drawn in a fixed (epoch,
 * rank, batch) order from one GSL generator seeded by [run] seed, so a run is
 * a pure function of its configuration, whatever the thread count. Cells the
 * trace measured are replayed as measured; cells beyond it (more ranks,
 * batches or epochs than measured) are resampled as [fetch] resample says.
 * Memory: O(epochs x ranks x batches) int64 for the tables.
 */
#include "stall/whatif.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stall/io.h"
#include "stall/model.h"
#include "stall/report.h"

/* ---- the measured run ---- */

void stall_measured_free(stall_measured *m)
{
    if (!m)
        return;
    free(m->fetch);
    free(m->compute);
    free(m->tail);
    free(m->gap);
    free(m->epoch_s);
    free(m->stall_s);
    memset(m, 0, sizeof *m);
}

int stall_measured_from_tidy(const stall_tidy_trace *t, stall_measured *m, stall_err *err)
{
    memset(m, 0, sizeof *m);
    int g = t->ranks, ne = t->epochs;
    int64_t n = t->batches;
    size_t cells = (size_t)ne * g * (size_t)n;
    m->ranks = g;
    m->epochs = ne;
    m->batches = n;
    m->workers = t->workers;
    m->prefetch = t->prefetch;
    m->samples = t->samples ? t->samples[0] : 0;
    if (t->workers >= 0) {
        for (size_t i = 0; i < cells; i++)
            if (t->worker[i] >= (t->workers > 0 ? t->workers : 1))
                return stall_err_set(err, STALL_EPARSE,
                                     "%s: worker id %d but the trace says workers = %d", t->path,
                                     t->worker[i], t->workers);
    }
    m->fetch = stall_xmalloc(cells * sizeof *m->fetch);
    m->compute = stall_xmalloc(cells * sizeof *m->compute);
    m->tail = stall_xmalloc((size_t)ne * (size_t)n * sizeof *m->tail);
    m->gap = stall_xcalloc((size_t)ne, sizeof *m->gap);
    m->epoch_s = stall_xcalloc((size_t)ne, sizeof *m->epoch_s);
    m->stall_s = stall_xcalloc((size_t)ne, sizeof *m->stall_s);
    /* Worker turnaround: after collating a batch a worker still has to hand
     * it to the result queue (pickling, the feeder thread) before it starts
     * its next batch. The trace shows it as S(k+W) - E(k) for batches whose
     * successor was already dispatched when k ended (the worker, not the
     * prefetch window, was the limit). Its mean is added to every fetch, so
     * that both the worker's occupancy and the batch's arrival include it. */
    stall_time turn = 0;
    if (t->workers > 0) {
        int w = t->workers, pf = t->prefetch > 0 ? t->prefetch : 2;
        double tsum = 0;
        size_t tn = 0;
        for (int e = 0; e < ne; e++)
            for (int r = 0; r < g; r++)
                for (int64_t k = 0; k + w < n; k++) {
                    size_t i = stall_tidy_at(t, e, r, k), j = stall_tidy_at(t, e, r, k + w);
                    int64_t from = k + w - (int64_t)pf * w; /* the yield that dispatched k+W */
                    stall_time disp = from >= 0 ? t->ready[stall_tidy_at(t, e, r, from)] : 0;
                    if (disp <= t->fetch_end[i] && t->fetch_start[j] >= t->fetch_end[i]) {
                        tsum += (double)(t->fetch_start[j] - t->fetch_end[i]);
                        tn++;
                    }
                }
        turn = tn ? (stall_time)llround(tsum / (double)tn) : 0;
    }
    m->turnaround = turn;
    stall_time *startups = stall_xmalloc(cells * sizeof *startups);
    stall_time *hand = stall_xmalloc(cells * sizeof *hand);
    size_t nstart = 0, nhand = 0;
    double fetch_sum = 0;
    stall_time prev_end = 0;
    for (int e = 0; e < ne; e++) {
        stall_time e0 = t->epoch_start[(size_t)e * g];
        for (int r = 1; r < g; r++)
            if (t->epoch_start[(size_t)e * g + r] < e0)
                e0 = t->epoch_start[(size_t)e * g + r];
        m->gap[e] = e > 0 ? e0 - prev_end : 0;
        if (m->gap[e] < 0)
            m->gap[e] = 0;
        double stall_sum = 0;
        stall_time tk = 0;
        for (int64_t k = 0; k < n; k++) {
            /* T(k): when the slowest rank asks for the next batch (the loop's
             * bookkeeping after the optimizer step is part of the iteration). */
            tk = 0;
            stall_time ymax = 0, cemax = 0, smax = 0;
            for (int r = 0; r < g; r++) {
                size_t i = stall_tidy_at(t, e, r, k);
                stall_time next =
                    k + 1 < n ? t->request[stall_tidy_at(t, e, r, k + 1)] : t->iter_end[i];
                tk = next > tk ? next : tk;
                ymax = t->ready[i] > ymax ? t->ready[i] : ymax;
                stall_time ce = t->compute_end ? t->compute_end[i] : 0;
                cemax = ce > cemax ? ce : cemax;
                stall_time st = t->ready[i] - t->request[i];
                smax = st > smax ? st : smax;
            }
            stall_sum += stall_ns_to_s(smax);
            for (int r = 0; r < g; r++) {
                size_t i = stall_tidy_at(t, e, r, k);
                size_t o = ((size_t)e * g + r) * (size_t)n + (size_t)k;
                m->fetch[o] = t->fetch_end[i] - t->fetch_start[i] + turn;
                fetch_sum += stall_ns_to_s(m->fetch[o]);
                m->compute[o] = t->compute_end ? t->compute_end[i] - t->ready[i] : tk - ymax;
                stall_time fe = t->fetch_end[i] + turn;
                stall_time arrived = fe > t->request[i] ? fe : t->request[i];
                hand[nhand++] = t->ready[i] - arrived > 0 ? t->ready[i] - arrived : 0;
                if (t->workers > 0 && k < t->workers && t->worker[i] >= 0)
                    startups[nstart++] = t->fetch_start[i] - e0 > 0 ? t->fetch_start[i] - e0 : 0;
            }
            stall_time a = t->compute_end ? tk - cemax : 0;
            m->tail[(size_t)e * n + k] = a > 0 ? a : 0;
        }
        prev_end = tk;
        m->epoch_s[e] = stall_ns_to_s(tk - e0);
        m->stall_s[e] = stall_sum / (double)n;
    }
    m->startup = stall_median_time(startups, nstart);
    /* The mean, not the median: per-batch hand-over costs add up over the
     * epoch, and the occasional slow one (a page fault, a descheduled
     * process) is part of the measured time. */
    double hsum = 0;
    for (size_t i = 0; i < nhand; i++)
        hsum += (double)hand[i];
    m->handover = nhand ? (stall_time)llround(hsum / (double)nhand) : 0;
    m->mean_fetch_s = fetch_sum / (double)cells;
    free(startups);
    free(hand);
    return 0;
}

/* Mean of the measured epoch times. */
static double wi_mean_epoch(const stall_measured *m)
{
    double s = 0;
    for (int e = 0; e < m->epochs; e++)
        s += m->epoch_s[e];
    return s / m->epochs;
}

/* ---- duration tables ---- */

typedef struct wi_tables {
    int g, ne;
    int64_t n;
    stall_time *fetch, *compute, *tail, *gap;
} wi_tables;

static void wi_tables_free(wi_tables *w)
{
    free(w->fetch);
    free(w->compute);
    free(w->tail);
    free(w->gap);
}

static stall_time wi_cb_fetch(void *ctx, int e, int r, int64_t k)
{
    const wi_tables *w = ctx;
    return w->fetch[((size_t)e * w->g + r) * (size_t)w->n + (size_t)k];
}

static stall_time wi_cb_compute(void *ctx, int e, int r, int64_t k)
{
    const wi_tables *w = ctx;
    return w->compute[((size_t)e * w->g + r) * (size_t)w->n + (size_t)k];
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

/* A fitted distribution of positive durations (seconds). */
typedef struct wi_fit {
    int kind; /* stall_resample or stall_dist_kind, see wi_draw */
    double a, b;
} wi_fit;

static stall_time wi_draw_dist(gsl_rng *rng, const stall_dist *d)
{
    double v;
    switch (d->kind) {
    case STALL_DIST_LOGNORMAL: {
        double s = d->sigma, mu = log(d->mean_s) - 0.5 * s * s;
        v = gsl_ran_lognormal(rng, mu, s);
        break;
    }
    case STALL_DIST_GAMMA: {
        if (d->sd_s <= 0) {
            v = d->mean_s;
            break;
        }
        double k = (d->mean_s / d->sd_s) * (d->mean_s / d->sd_s),
               theta = d->sd_s * d->sd_s / d->mean_s;
        v = gsl_ran_gamma(rng, k, theta);
        break;
    }
    case STALL_DIST_NORMAL:
        v = d->mean_s + gsl_ran_gaussian(rng, d->sd_s);
        break;
    default:
        v = d->mean_s;
    }
    return v > 0 ? stall_s_to_ns(v) : 0;
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
                              const stall_dist *fit)
{
    if (resample == STALL_RESAMPLE_BOOTSTRAP)
        return pool[gsl_rng_uniform_int(rng, npool)];
    return wi_draw_dist(rng, fit);
}

static stall_time wi_scaled(stall_time v, double scale)
{
    return scale == 1.0 ? v : (stall_time)llround((double)v * scale);
}

/* Exposed all-reduce from [ddp] when given explicitly (a what-if); -1 when
 * the measured tail should be replayed. */
static stall_time wi_ddp_tail(const stall_config *cfg, int g)
{
    if (stall_config_given(cfg, "ddp", "allreduce_s"))
        return stall_s_to_ns(cfg->allreduce_s);
    if (cfg->bandwidth_gb_s > 0) {
        double steps = 2.0 * (g - 1);
        double s = steps * cfg->latency_us * 1e-6 +
                   (g > 1 ? steps / g * cfg->bucket_mb * 1e6 / (cfg->bandwidth_gb_s * 1e9) : 0);
        return stall_s_to_ns(s);
    }
    return -1;
}

static int wi_tables_build(const stall_config *cfg, const stall_measured *m, int g, int ne,
                           int64_t n, bool whatif, wi_tables *w, stall_err *err)
{
    memset(w, 0, sizeof *w);
    w->g = g;
    w->ne = ne;
    w->n = n;
    size_t cells = (size_t)ne * g * (size_t)n;
    bool beyond = m && (g > m->ranks || ne > m->epochs || n > m->batches);
    if (beyond && cfg->resample == STALL_RESAMPLE_NONE)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [fetch] resample: the what-if needs %d ranks x %d epochs x %lld "
                             "batches but the trace has %d x %d x %lld; set resample = bootstrap, "
                             "lognormal or gamma",
                             cfg->ini_path, g, ne, (long long)n, m->ranks, m->epochs,
                             (long long)m->batches);
    w->fetch = stall_xmalloc(cells * sizeof *w->fetch);
    w->compute = stall_xmalloc(cells * sizeof *w->compute);
    w->tail = stall_xmalloc((size_t)ne * (size_t)n * sizeof *w->tail);
    w->gap = stall_xcalloc((size_t)ne, sizeof *w->gap);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)cfg->seed);
    size_t mcells = m ? (size_t)m->epochs * m->ranks * (size_t)m->batches : 0;
    stall_dist ffit = cfg->fetch_dist, cfit = cfg->compute_dist;
    if (m) {
        ffit = wi_fit_pool(cfg->resample, m->fetch, mcells);
        cfit = wi_fit_pool(cfg->resample, m->compute, mcells);
    }
    double fscale = whatif ? cfg->fetch_dist.scale : 1.0,
           cscale = whatif ? cfg->compute_dist.scale : 1.0;
    for (int e = 0; e < ne; e++)
        for (int r = 0; r < g; r++)
            for (int64_t k = 0; k < n; k++) {
                size_t o = ((size_t)e * g + r) * (size_t)n + (size_t)k;
                stall_time f, c;
                if (!m) {
                    f = wi_draw_dist(rng, &cfg->fetch_dist);
                    c = wi_draw_dist(rng, &cfg->compute_dist);
                } else if (e < m->epochs && r < m->ranks && k < m->batches) {
                    size_t i = ((size_t)e * m->ranks + r) * (size_t)m->batches + (size_t)k;
                    f = m->fetch[i];
                    c = m->compute[i];
                } else {
                    f = wi_resample(rng, cfg->resample, m->fetch, mcells, &ffit);
                    c = wi_resample(rng, cfg->resample, m->compute, mcells, &cfit);
                }
                w->fetch[o] = wi_scaled(f, fscale);
                w->compute[o] = wi_scaled(c, cscale);
            }
    stall_time ddp = whatif ? wi_ddp_tail(cfg, g) : -1;
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
    gsl_rng_free(rng);
    return 0;
}

/* ---- running the model and collecting rows ---- */

typedef struct wi_collect {
    double fetch_sum; /* sum of simulated E - S over the batches taken */
    int64_t fetch_n;
    stall_report *rep;
    int ranks;
    double *compute_s; /* scratch */
    double epoch_stall_sum;
    double *epoch_s, *stall_s; /* per epoch, simulated */
    int64_t batches;
} wi_collect;

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
                          .stall_max = rec->stall_max,
                          .stall_min = rec->stall_min,
                          .wait_max = rec->wait_max,
                          .wait_mean_s = rec->wait_mean_s,
                          .compute_mean_s = csum / c->ranks,
                          .fetch_spread = rec->fetch_spread,
                          .start_spread = rec->start_spread,
                          .stall = rec->stall};
    if (c->rep)
        stall_report_add(c->rep, &row);
    c->epoch_stall_sum += stall_ns_to_s(rec->stall_max);
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

static int wi_run(const stall_model_params *p, wi_tables *w, wi_collect *c, stall_model_stats *st,
                  stall_err *err)
{
    stall_durations d = {.fetch = wi_cb_fetch,
                         .compute = wi_cb_compute,
                         .tail = wi_cb_tail,
                         .epoch_gap = wi_cb_gap,
                         .ctx = w};
    c->ranks = p->ranks;
    c->batches = p->batches;
    return stall_model_run(p, &d, wi_on_iter, c, st, err);
}

/* Loads and decomposes cfg's trace; the rows are freed once decomposed. */
static int wi_load_measured(const stall_config *cfg, stall_measured *m, stall_err *err)
{
    stall_tidy_trace *t = NULL;
    int rc = stall_tidy_load(cfg->path, &t, err);
    if (rc == 0)
        rc = stall_measured_from_tidy(t, m, err);
    stall_tidy_free(t);
    return rc;
}

/* Model parameters: the measured configuration, then the INI's explicit
 * what-if keys on top (when whatif). */
static void wi_params(const stall_config *cfg, const stall_measured *m, bool whatif,
                      stall_model_params *p)
{
    stall_model_defaults(p);
    bool have = m != NULL;
#define WI_PICK(sec, key, cfgval, measured, ok)                                                    \
    ((whatif && (stall_config_given(cfg, sec, key) || !have || !(ok))) ? (cfgval) : (measured))
    p->ranks = (int)(whatif && cfg->gpus > 0 ? cfg->gpus
                                             : (have ? m->ranks : (cfg->gpus > 0 ? cfg->gpus : 1)));
    p->gpus_per_node = whatif && cfg->gpus_per_node > 0 ? (int)cfg->gpus_per_node : p->ranks;
    p->workers = (int)WI_PICK("loader", "workers", cfg->workers, m->workers, m->workers >= 0);
    int pf = (int)WI_PICK("loader", "prefetch_factor", cfg->prefetch_factor, m->prefetch,
                          m->prefetch >= 1);
    p->prefetch = pf >= 1 ? pf : 2;
    p->in_order = cfg->in_order;
    p->persistent_workers = cfg->persistent_workers;
    p->startup = WI_PICK("loader", "startup_s", stall_s_to_ns(cfg->startup_s), m->startup, true);
    p->handover =
        WI_PICK("loader", "handover_s", stall_s_to_ns(cfg->handover_s), m->handover, true);
    p->pin = whatif ? stall_s_to_ns(cfg->pin_memory_s) : 0;
    p->batches = whatif && cfg->batches > 0 ? cfg->batches : (have ? m->batches : cfg->batches);
    p->epochs =
        (int)(whatif && cfg->epochs > 0 ? cfg->epochs
                                        : (have ? m->epochs : (cfg->epochs > 0 ? cfg->epochs : 1)));
#undef WI_PICK
    if (whatif) {
        p->cores = (int)cfg->cores;
        p->cpu_share = cfg->cpu_share;
        p->compute_cpu_share = cfg->compute_cpu_share;
        p->storage_mb_s = cfg->bandwidth_mb_s;
        p->batch_mb = cfg->batch_mb;
    }
}

/* ---- CPU contention ---- */

/* How a job uses the host CPU: cores per node, ranks per node, and the
 * fraction of a measured fetch and of a measured compute that is CPU work. */
typedef struct wi_cpu {
    int cores, gpn;
    double fetch_share, compute_share;
} wi_cpu;

/* Runs trace `base` with `workers` under the CPU model *cpu, its CPU parts
 * multiplied by `deflate` (the inverse of the contention they were measured
 * under). Mean epoch and mean simulated fetch time (E - S). */
static int wi_sim(const stall_measured *base, int workers, const wi_cpu *cpu, double deflate,
                  double *epoch_s, double *fetch_s, stall_err *err)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_model_params p;
    wi_params(&cfg, base, false, &p);
    p.workers = workers;
    p.cores = cpu->cores;
    p.cpu_share = cpu->fetch_share;
    p.compute_cpu_share = cpu->compute_share;
    p.cpu_deflate = deflate;
    p.gpus_per_node = cpu->gpn > 0 && cpu->gpn <= p.ranks ? cpu->gpn : p.ranks;
    wi_tables w;
    int rc = wi_tables_build(&cfg, base, p.ranks, p.epochs, p.batches, false, &w, err);
    double *e = stall_xcalloc((size_t)p.epochs, sizeof *e),
           *st = stall_xcalloc((size_t)p.epochs, sizeof *st);
    wi_collect c = {.epoch_s = e, .stall_s = st};
    if (rc == 0) {
        stall_model_stats ms;
        rc = wi_run(&p, &w, &c, &ms, err);
    }
    double sum = 0;
    for (int i = 0; i < p.epochs; i++)
        sum += e[i];
    *epoch_s = sum / p.epochs;
    *fetch_s = c.fetch_n ? c.fetch_sum / (double)c.fetch_n : 0;
    free(e);
    free(st);
    wi_tables_free(&w);
    return rc;
}

/* The contention the trace's CPU work met: the deflate in [1 / most, 1] for
 * which simulating the measured configuration gives the measured mean fetch
 * time back, where `most` is the largest possible slowdown (every fetch and
 * compute of a node on its cores at once). Bisection: the simulated fetch
 * time grows with deflate. */
static int wi_deflate(const stall_measured *base, const wi_cpu *cpu, double *deflate,
                      stall_err *err)
{
    int rpn = cpu->gpn > 0 && cpu->gpn < base->ranks ? cpu->gpn : base->ranks;
    int per_rank = (base->workers > 0 ? base->workers : 0) + (cpu->compute_share > 0 ? 1 : 0);
    double most = fmax(1.0, (double)per_rank * rpn / cpu->cores);
    double lo = 1.0 / most, hi = 1.0, ep, fe;
    *deflate = 1.0;
    if (cpu->cores <= 0 || most <= 1.0 || (cpu->fetch_share <= 0 && cpu->compute_share <= 0))
        return 0;
    int rc = wi_sim(base, base->workers, cpu, hi, &ep, &fe, err);
    if (rc || fe <= base->mean_fetch_s)
        return rc;
    rc = wi_sim(base, base->workers, cpu, lo, &ep, &fe, err);
    if (rc || fe >= base->mean_fetch_s) {
        *deflate = lo;
        return rc;
    }
    for (int it = 0; it < 14 && rc == 0; it++) {
        double mid = 0.5 * (lo + hi);
        rc = wi_sim(base, base->workers, cpu, mid, &ep, &fe, err);
        if (fe > base->mean_fetch_s)
            hi = mid;
        else
            lo = mid;
    }
    *deflate = 0.5 * (lo + hi);
    return rc;
}

/* Simulated mean epoch time of trace `base` run with `workers`. */
static int wi_predict(const stall_measured *base, int workers, const wi_cpu *cpu, double *epoch_s,
                      stall_err *err)
{
    double d, fe;
    int rc = wi_deflate(base, cpu, &d, err);
    if (rc == 0)
        rc = wi_sim(base, workers, cpu, d, epoch_s, &fe, err);
    return rc;
}

/* ---- mode = model ---- */

typedef struct wi_job {
    stall_align fa;
    stall_summary sum;
    stall_model_stats st;
} wi_job;

typedef struct wi_out {
    const wi_job *jobs;
    int n;
    const stall_model_params *p;
    double measured_epoch_s; /* NAN without a trace */
} wi_out;

static int wi_fill_summary(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const wi_out *o = arg;
    fputs("fetch_align,start_align,gpus,workers,prefetch_factor,", f);
    stall_summary_header(f);
    fputs(",events,measured_epoch_time_s,vs_measured_pct\n", f);
    for (int i = 0; i < o->n; i++) {
        const wi_job *j = &o->jobs[i];
        fprintf(f, "%s,none,%d,%d,%d,", stall_align_name(j->fa), o->p->ranks, o->p->workers,
                o->p->prefetch);
        stall_summary_fields(f, &j->sum);
        fprintf(f, ",%llu", (unsigned long long)j->st.events);
        if (isnan(o->measured_epoch_s))
            fputs(",,\n", f);
        else
            fprintf(f, ",%.9g,%.6f\n", o->measured_epoch_s,
                    100.0 * (j->sum.epoch_time_s - o->measured_epoch_s) / o->measured_epoch_s);
    }
    return 0;
}

static char *wi_outdir(const stall_config *cfg, const stall_run_opts *opts)
{
    return opts->outdir ? stall_xstrdup(opts->outdir) : stall_path_join("results", cfg->name);
}

int stall_whatif_run(const stall_config *cfg, const stall_run_opts *opts, stall_err *err)
{
    stall_measured m = {0};
    bool have = cfg->format == STALL_FORMAT_TIDY;
    if (cfg->format == STALL_FORMAT_DSANALYZER)
        return stall_err_set(
            err, STALL_ECONFIG,
            "%s: [trace] format: mode = model reads tidy traces (or format = none)", cfg->ini_path);
    for (int i = 0; i < cfg->start_align.n; i++)
        if (cfg->start_align.v[i] != STALL_ALIGN_NONE && stall_config_given(cfg, "align", "start"))
            return stall_err_set(
                err, STALL_ECONFIG,
                "%s: [align] start: start alignment is a counterfactual on measured "
                "starts, available in mode = replay; mode = model takes start = none",
                cfg->ini_path);
    int rc = have ? wi_load_measured(cfg, &m, err) : 0;
    stall_model_params p;
    wi_tables w = {0};
    double contention = 1.0;
    if (rc == 0) {
        wi_params(cfg, have ? &m : NULL, true, &p);
        rc = wi_tables_build(cfg, have ? &m : NULL, p.ranks, p.epochs, p.batches, true, &w, err);
    }
    if (rc == 0 && have && p.cores > 0) {
        /* The trace's durations were measured under contention: find how
         * much by simulating the measured configuration on these cores. */
        wi_cpu cpu = {.cores = p.cores,
                      .gpn = (int)cfg->gpus_per_node,
                      .fetch_share = p.cpu_share,
                      .compute_share = p.compute_cpu_share};
        rc = wi_deflate(&m, &cpu, &p.cpu_deflate, err);
        contention = 1.0 / p.cpu_deflate;
    }
    /* Fetch alignments: the [align] fetch list when given, else none. */
    stall_align_list fl = {1, {STALL_ALIGN_NONE}};
    if (stall_config_given(cfg, "align", "fetch"))
        fl = cfg->fetch_align;
    wi_job *jobs = stall_xcalloc((size_t)fl.n, sizeof *jobs);
    char *outdir = wi_outdir(cfg, opts);
    if (rc == 0)
        rc = stall_mkdirs(outdir, err);
    int64_t samples = cfg->samples > 0 ? cfg->samples : (have ? m.samples : 0);
    for (int i = 0; i < fl.n && rc == 0; i++) {
        wi_job *j = &jobs[i];
        j->fa = fl.v[i];
        stall_model_params pj = p;
        pj.fetch_align = j->fa;
        wi_collect c = {
            .rep = stall_report_create(p.ranks, cfg->warmup, cfg->delay_threshold, samples)};
        rc = wi_run(&pj, &w, &c, &j->st, err);
        if (rc == 0) {
            stall_report_summarize(c.rep, &j->sum);
            char name[64];
            snprintf(name, sizeof name, "fetch-%s_start-none", stall_align_name(j->fa));
            char *dir = stall_path_join(outdir, name);
            rc = stall_mkdirs(dir, err);
            if (rc == 0) {
                char *path = stall_path_join(dir, "iterations.csv");
                rc = stall_report_write_iterations(c.rep, path, err);
                free(path);
            }
            free(dir);
        }
        stall_report_destroy(c.rep);
    }
    double measured = NAN;
    if (have && rc == 0)
        measured = wi_mean_epoch(&m);
    if (rc == 0) {
        wi_out o = {.jobs = jobs, .n = fl.n, .p = &p, .measured_epoch_s = measured};
        rc = stall_write_atomic_in(outdir, "summary.csv", wi_fill_summary, &o, err);
    }
    if (rc == 0) {
        /* effective.ini says what ran, so that it runs again as is. */
        stall_config eff = *cfg;
        eff.fetch_align = fl;
        eff.start_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
        rc = stall_scenario_manifest(&eff, outdir, err);
    }
    if (rc == 0 && opts->term) {
        FILE *f = opts->term;
        fprintf(
            f,
            "stallsim %s: scenario '%s' (model), %d GPUs (%d per node) x %d workers x prefetch %d, "
            "%lld batches x %d epochs%s\n",
            stall_version(), cfg->name, p.ranks, p.gpus_per_node, p.workers, p.prefetch,
            (long long)p.batches, p.epochs, p.cores ? "" : ", no CPU contention");
        if (p.cores > 0)
            fprintf(f,
                    "CPU: %d cores per node; %.0f%% of a fetch and %.0f%% of a compute is CPU "
                    "work%s",
                    p.cores, 100 * p.cpu_share, 100 * p.compute_cpu_share, have ? "" : "\n");
        if (p.cores > 0 && have)
            fprintf(f, "; the trace's CPU work ran %.3fx slower than alone (measured %d workers)\n",
                    contention, m.workers);
        fprintf(f, "%-5s %11s %9s %10s %9s %9s %7s %7s %12s\n", "fetch", "epoch_s", "vs_meas",
                "iter_s", "stall_s", "delay_s", "stall%", "busy%", "samples/s");
        for (int i = 0; i < fl.n; i++) {
            const wi_job *j = &jobs[i];
            char vs[16] = "";
            if (!isnan(measured))
                snprintf(vs, sizeof vs, "%+.2f%%",
                         100.0 * (j->sum.epoch_time_s - measured) / measured);
            fprintf(f, "%-5s %11.3f %9s %10.4f %9.4f %9.4f %7.2f %7.2f %12.1f\n",
                    stall_align_name(j->fa), j->sum.epoch_time_s, vs, j->sum.iteration.mean,
                    j->sum.stall.mean, j->sum.delay.mean, 100.0 * j->sum.stall_share,
                    100.0 * j->sum.gpu_busy_share,
                    isnan(j->sum.throughput_samples_s) ? j->sum.throughput_batches_s
                                                       : j->sum.throughput_samples_s);
        }
        if (!isnan(measured))
            fprintf(f, "%-5s %11.3f   (measured mean epoch time of the trace)\n", "trace",
                    measured);
        fprintf(f,
                "results in %s/ (summary.csv, fetch-*_start-none/iterations.csv, effective.ini)\n",
                outdir);
    }
    free(outdir);
    free(jobs);
    wi_tables_free(&w);
    stall_measured_free(&m);
    return rc;
}

/* ---- validate ---- */

typedef struct wi_val {
    const stall_measured *m;
    const double *sim_e, *sim_s;
} wi_val;

static int wi_fill_validate(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const wi_val *v = arg;
    fputs("epoch,measured_s,simulated_s,error_pct,measured_stall_s,simulated_stall_s,stall_error_"
          "pct\n",
          f);
    for (int e = 0; e < v->m->epochs; e++)
        fprintf(f, "%d,%.6f,%.6f,%.3f,%.6f,%.6f,%.3f\n", e, v->m->epoch_s[e], v->sim_e[e],
                100.0 * (v->sim_e[e] - v->m->epoch_s[e]) / v->m->epoch_s[e], v->m->stall_s[e],
                v->sim_s[e],
                v->m->stall_s[e] > 0 ? 100.0 * (v->sim_s[e] - v->m->stall_s[e]) / v->m->stall_s[e]
                                     : 0.0);
    return 0;
}

int stall_validate(const stall_config *cfg, const stall_run_opts *opts, stall_err *err)
{
    if (cfg->format != STALL_FORMAT_TIDY)
        return stall_err_set(err, STALL_ECONFIG, "%s: [trace] format: validate needs a tidy trace",
                             cfg->ini_path);
    stall_measured m = {0};
    int rc = wi_load_measured(cfg, &m, err);
    stall_model_params p;
    wi_tables w = {0};
    double *sim_e = NULL, *sim_s = NULL;
    char *outdir = wi_outdir(cfg, opts);
    if (rc == 0) {
        wi_params(cfg, &m, false, &p);
        rc = wi_tables_build(cfg, &m, p.ranks, p.epochs, p.batches, false, &w, err);
    }
    if (rc == 0) {
        sim_e = stall_xcalloc((size_t)m.epochs, sizeof *sim_e);
        sim_s = stall_xcalloc((size_t)m.epochs, sizeof *sim_s);
        wi_collect c = {.epoch_s = sim_e, .stall_s = sim_s};
        stall_model_stats st;
        rc = wi_run(&p, &w, &c, &st, err);
    }
    if (rc == 0)
        rc = stall_mkdirs(outdir, err);
    if (rc == 0) {
        wi_val v = {.m = &m, .sim_e = sim_e, .sim_s = sim_s};
        rc = stall_write_atomic_in(outdir, "validate.csv", wi_fill_validate, &v, err);
    }
    if (rc == 0) {
        stall_config eff = *cfg;
        eff.start_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
        rc = stall_scenario_manifest(&eff, outdir, err);
    }
    if (rc == 0 && opts->term) {
        FILE *f = opts->term;
        fprintf(
            f,
            "stallsim %s: validate %s: %d ranks x %d workers x prefetch %d, %lld batches x %d "
            "epochs; from the trace: start-up %.4f s (median), hand-over %.6f s per batch (mean)\n",
            stall_version(), cfg->path, p.ranks, p.workers, p.prefetch, (long long)p.batches,
            p.epochs, stall_ns_to_s(p.startup), stall_ns_to_s(p.handover));
        fprintf(f, "%5s %11s %11s %8s | %11s %11s %8s\n", "epoch", "measured_s", "simulated_s",
                "error", "meas_stall", "sim_stall", "error");
        double ms = 0, ss = 0;
        for (int e = 0; e < m.epochs; e++) {
            ms += m.epoch_s[e];
            ss += sim_e[e];
            fprintf(f, "%5d %11.4f %11.4f %+7.2f%% | %11.5f %11.5f %+7.2f%%\n", e, m.epoch_s[e],
                    sim_e[e], 100.0 * (sim_e[e] - m.epoch_s[e]) / m.epoch_s[e], m.stall_s[e],
                    sim_s[e],
                    m.stall_s[e] > 0 ? 100.0 * (sim_s[e] - m.stall_s[e]) / m.stall_s[e] : 0.0);
        }
        fprintf(f, "%5s %11.4f %11.4f %+7.2f%%\n", "mean", ms / m.epochs, ss / m.epochs,
                100.0 * (ss - ms) / ms);
        fprintf(f, "results in %s/ (validate.csv, effective.ini)\n", outdir);
    }
    free(outdir);
    free(sim_e);
    free(sim_s);
    wi_tables_free(&w);
    stall_measured_free(&m);
    return rc;
}

/* ---- calibrate ---- */

/* Least squares for the mean fetch D_i = io + cpu * f_i, f_i = max(1, W_i *
 * R_i / cores), at each candidate core count (or the given one), keeping the
 * best: a first estimate of the core count. */
static int wi_cores_fit(const stall_measured *ms, int n, int cores, int gpn, stall_calibration *c,
                        stall_err *err)
{
    double best_sse = INFINITY, *f = stall_xcalloc((size_t)n, sizeof *f);
    int lo = cores > 0 ? cores : 1, hi = cores > 0 ? cores : 256;
    for (int k = lo; k <= hi; k++) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int i = 0; i < n; i++) {
            int rpn = gpn > 0 && gpn < ms[i].ranks ? gpn : ms[i].ranks;
            f[i] = fmax(1.0, (double)ms[i].workers * rpn / k);
            double y = ms[i].mean_fetch_s;
            sx += f[i];
            sy += y;
            sxx += f[i] * f[i];
            sxy += f[i] * y;
        }
        double den = n * sxx - sx * sx;
        if (fabs(den) < 1e-12)
            continue;
        double cpu = (n * sxy - sx * sy) / den, io = (sy - cpu * sx) / n;
        if (cpu < 0) {
            cpu = 0;
            io = sy / n;
        }
        if (io < 0) {
            io = 0;
            cpu = sxy / sxx;
        }
        double sse = 0;
        for (int i = 0; i < n; i++) {
            double d = io + cpu * f[i] - ms[i].mean_fetch_s;
            sse += d * d;
        }
        if (sse < best_sse - 1e-15) {
            best_sse = sse;
            c->fit_io_s = io;
            c->fit_cpu_s = cpu;
            c->cores = k;
        }
    }
    free(f);
    if (!isfinite(best_sse) && cores > 0) {
        /* No trace was contended in the linear sense: nothing to fit, the
         * simulation below still is. */
        c->cores = cores;
        c->fit_io_s = c->fit_cpu_s = NAN;
        return 0;
    }
    if (!isfinite(best_sse))
        return stall_err_set(err, STALL_EINVAL, "calibrate: the traces do not determine a fit");
    return 0;
}

void stall_calibration_free(stall_calibration *c)
{
    if (!c)
        return;
    free(c->workers);
    free(c->mean_fetch_s);
    free(c->contention);
    free(c->measured_s);
    free(c->predicted_s);
    memset(c, 0, sizeof *c);
}

int stall_calibrate_fit(const char *const *paths, int n, int cores, int gpus_per_node,
                        stall_calibration *c, stall_err *err)
{
    memset(c, 0, sizeof *c);
    if (n < 2)
        return stall_err_set(err, STALL_EINVAL,
                             "calibrate needs two or more traces of the same job");
    stall_measured *ms = stall_xcalloc((size_t)n, sizeof *ms);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        stall_tidy_trace *t = NULL;
        rc = stall_tidy_load(paths[i], &t, err);
        if (rc == 0)
            rc = stall_measured_from_tidy(t, &ms[i], err);
        if (rc == 0 && ms[i].workers < 1)
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: calibrate needs traces with a workers column and workers >= 1",
                               paths[i]);
        stall_tidy_free(t);
    }
    int distinct = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= ms[j].workers == ms[i].workers;
        distinct += !seen;
    }
    if (rc == 0 && distinct < 2)
        rc = stall_err_set(err, STALL_EINVAL,
                           "calibrate needs traces with at least two different worker counts");
    if (rc == 0 && cores <= 0 && distinct < 3)
        rc = stall_err_set(
            err, STALL_EINVAL,
            "calibrate: with two worker counts the core count cannot be estimated; give --cores N");
    c->n = n;
    c->cores_given = cores > 0;
    c->gpus_per_node = gpus_per_node;
    if (rc == 0)
        rc = wi_cores_fit(ms, n, cores, gpus_per_node, c, err);
    /* Refinement by simulation: the fit above assumes every worker is in
     * its CPU part all the time, which overstates contention, and it leaves
     * out the training loop's own CPU use. Search the share of a measured
     * fetch and of a measured compute that is CPU time (the same for every
     * trace) minimising the squared relative error of the simulated
     * cross-predictions (trace i run with trace j's worker count, i != j),
     * where each base trace's CPU work is deflated by the contention it met
     * in the simulation of its own run (wi_deflate). */
    c->measured_s = stall_xcalloc((size_t)n, sizeof *c->measured_s);
    for (int j = 0; j < n && rc == 0; j++)
        c->measured_s[j] = wi_mean_epoch(&ms[j]);
    double best_obj = INFINITY;
    wi_cpu best = {.cores = c->cores, .gpn = gpus_per_node};
    enum { CAL_FETCH_STEPS = 20, CAL_COMPUTE_STEPS = 10 };
    double grid[CAL_COMPUTE_STEPS + 1][CAL_FETCH_STEPS + 1];
    for (int cs = 0; cs <= CAL_COMPUTE_STEPS && rc == 0; cs++)
        for (int fs = 0; fs <= CAL_FETCH_STEPS && rc == 0; fs++) {
            wi_cpu cpu = {.cores = c->cores,
                          .gpn = gpus_per_node,
                          .fetch_share = (double)fs / CAL_FETCH_STEPS,
                          .compute_share = (double)cs / CAL_COMPUTE_STEPS};
            double obj = 0;
            for (int i = 0; i < n && rc == 0; i++)
                for (int j = 0; j < n && rc == 0; j++) {
                    if (j == i)
                        continue;
                    double pred;
                    rc = wi_predict(&ms[i], ms[j].workers, &cpu, &pred, err);
                    double e = pred / c->measured_s[j] - 1;
                    obj += e * e;
                }
            grid[cs][fs] = 100.0 * sqrt(obj / (n * (n - 1.0)));
            if (rc == 0 && obj < best_obj - 1e-15) {
                best_obj = obj;
                best = cpu;
            }
        }
    c->fetch_share = best.fetch_share;
    c->compute_share = best.compute_share;
    c->rms_pct = 100.0 * sqrt(best_obj / (n * (n - 1.0)));
    /* How well the traces pin the shares down: the ranges of the fits whose
     * rms error is within CAL_SLACK percentage points of the best. */
    const double CAL_SLACK = 0.5;
    c->fetch_share_lo = c->compute_share_lo = 1.0;
    c->fetch_share_hi = c->compute_share_hi = 0.0;
    for (int cs = 0; cs <= CAL_COMPUTE_STEPS && rc == 0; cs++)
        for (int fs = 0; fs <= CAL_FETCH_STEPS; fs++)
            if (grid[cs][fs] <= c->rms_pct + CAL_SLACK) {
                double f = (double)fs / CAL_FETCH_STEPS, k = (double)cs / CAL_COMPUTE_STEPS;
                c->fetch_share_lo = fmin(c->fetch_share_lo, f);
                c->fetch_share_hi = fmax(c->fetch_share_hi, f);
                c->compute_share_lo = fmin(c->compute_share_lo, k);
                c->compute_share_hi = fmax(c->compute_share_hi, k);
            }
    c->workers = stall_xcalloc((size_t)n, sizeof *c->workers);
    c->mean_fetch_s = stall_xcalloc((size_t)n, sizeof *c->mean_fetch_s);
    c->contention = stall_xcalloc((size_t)n, sizeof *c->contention);
    c->predicted_s = stall_xcalloc((size_t)n * (size_t)n, sizeof *c->predicted_s);
    for (int i = 0; i < n && rc == 0; i++) {
        c->workers[i] = ms[i].workers;
        c->mean_fetch_s[i] = ms[i].mean_fetch_s;
        double d;
        rc = wi_deflate(&ms[i], &best, &d, err);
        c->contention[i] = 1.0 / d;
        for (int j = 0; j < n && rc == 0; j++)
            rc = wi_predict(&ms[i], ms[j].workers, &best, &c->predicted_s[(size_t)i * n + j], err);
    }
    for (int i = 0; i < n; i++)
        stall_measured_free(&ms[i]);
    free(ms);
    if (rc)
        stall_calibration_free(c);
    return rc;
}

void stall_calibration_print(const stall_calibration *c, const char *const *paths, FILE *out)
{
    int n = c->n;
    fprintf(out,
            "stallsim %s: calibrate from %d traces on %d cores%s: %.0f%% of a measured fetch "
            "and %.0f%% of a measured compute is CPU time (rms cross-prediction error "
            "%.2f%%)",
            stall_version(), n, c->cores, c->cores_given ? " (given)" : " (fitted)",
            100 * c->fetch_share, 100 * c->compute_share, c->rms_pct);
    if (isnan(c->fit_io_s))
        fputs("; mean-fetch fit: none (no trace had more workers than cores)\n", out);
    else
        fprintf(out, "; mean-fetch fit: %.6f s waiting + %.6f s CPU\n", c->fit_io_s, c->fit_cpu_s);
    fprintf(out,
            "fits within 0.5 points of the best: fetch CPU share %.2f-%.2f, compute CPU share "
            "%.2f-%.2f\n",
            c->fetch_share_lo, c->fetch_share_hi, c->compute_share_lo, c->compute_share_hi);
    double most = 0;
    for (int i = 0; i < n; i++)
        most = fmax(most, c->contention[i]);
    if (most < 1.05 || c->fetch_share_hi - c->fetch_share_lo > 0.25)
        fprintf(out,
                "warning: the shares are not pinned down (the most contended trace ran its CPU "
                "work %.3fx slower than alone); predictions for more workers than measured are "
                "unreliable: add a trace with more workers than cores\n",
                most);
    fprintf(out, "%-40s %7s %12s %11s\n", "trace", "workers", "mean_fetch_s", "contention");
    for (int i = 0; i < n; i++)
        fprintf(out, "%-40s %7d %12.6f %10.3fx\n", paths[i], c->workers[i], c->mean_fetch_s[i],
                c->contention[i]);
    fprintf(out,
            "\nINI lines for a scenario built on any of these traces (mode = model deflates "
            "the trace's CPU work by the contention it met, as above):\n[cluster]\ncores = "
            "%d\n",
            c->cores);
    if (c->gpus_per_node > 0)
        fprintf(out, "gpus_per_node = %d\n", c->gpus_per_node);
    fprintf(out, "[fetch]\ncpu_share = %.2f\n[compute]\ncpu_share = %.2f\n", c->fetch_share,
            c->compute_share);
    fprintf(out, "\npredicted mean epoch time (rows: trace the prediction starts from; "
                 "columns: worker count)\n");
    fprintf(out, "%-40s", "from \\ to");
    for (int j = 0; j < n; j++)
        fprintf(out, " %16s", paths[j] + (strlen(paths[j]) > 16 ? strlen(paths[j]) - 16 : 0));
    fprintf(out, "\n%-40s", "measured");
    for (int j = 0; j < n; j++)
        fprintf(out, " %16.4f", c->measured_s[j]);
    fputc('\n', out);
    for (int i = 0; i < n; i++) {
        fprintf(out, "%-40s", paths[i]);
        for (int j = 0; j < n; j++) {
            double pred = c->predicted_s[(size_t)i * n + j], mj = c->measured_s[j];
            fprintf(out, " %8.4f %+6.1f%%", pred, 100.0 * (pred - mj) / mj);
        }
        fputc('\n', out);
    }
}

int stall_calibrate(const char *const *paths, int n, int cores, int gpus_per_node, FILE *out,
                    stall_err *err)
{
    stall_calibration c;
    int rc = stall_calibrate_fit(paths, n, cores, gpus_per_node, &c, err);
    if (rc == 0)
        stall_calibration_print(&c, paths, out);
    stall_calibration_free(&c);
    return rc;
}
