/*
 * tierfit.c - the measured read of a trace whose run's storage is known
 * ([storage] trace_mb_s, trace_latency_ms; docs/model.md 2.3): the read
 * per fetch that misses everything, rho, for which the trace's own run,
 * simulated at that storage with its cache (trace_cache_mb, default 0:
 * every read missed), gives the measured mean fetch back. The what-if then
 * takes rho x its miss share out of each of the trace's fetches, as the
 * fitted read of trace_cache_mb alone (tiers.c), and reads at its own
 * storage instead.
 */
#include "feed.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The trace's own run at its storage: every key at its default but the
 * storage's, whose link, latency and cache are the trace's. */
static void tf_trace_whatif(const wi_whatif *what, wi_whatif *t)
{
    wi_whatif_defaults(t);
    t->ini = what->ini;
    t->tiers = true;
    t->batch_mb = what->batch_mb;
    t->batch_mb_given = what->batch_mb_given;
    /* [report] samples: a trace without a samples column (the notebook's)
     * has that many per batch, one request each unless requests_per_batch */
    t->samples = what->samples;
    t->requests_per_batch = what->requests_per_batch;
    t->dataset_mb = what->dataset_mb;
    t->partitioned = what->partitioned;
    t->latency_constant = what->latency_constant;
    t->fifo = what->fifo;
    t->bandwidth_mb_s = what->trace_mb_s;
    t->latency_ms = what->trace_latency_ms;
    t->cache_mb = what->trace_cache_mb;
    /* a cache of files writes what it admits (the what-if's cost) */
    t->admit_ms = what->trace_cache_mb > 0 ? what->admit_ms : 0;
    t->trace_store_given = true; /* its read is taken out in proportion (tiers.c) */
}

typedef struct tf_ctx {
    const wi_whatif *what; /* the trace's run (tf_trace_whatif) */
    const wi_whatif *orig; /* the configuration's, for its trace cache */
    const stall_measured *m;
    const wi_feed *f; /* the trace streamed, or NULL: w */
    wi_tables *w;
    const wi_cpu_fit *cpufit; /* the trace's CPU columns' fit, or NULL */
} tf_ctx;

/* The trace's run simulated with rho ns taken out of a fetch that misses
 * everything: its mean simulated fetch (E - S), s. */
static int tf_sim(const tf_ctx *c, double rho, double *fetch_s, stall_err *err)
{
    stall_model_params p;
    wi_params(c->what, c->m, true, &p);
    if (c->cpufit)
        wi_cpu_waits_scale(&p, c->cpufit->out);
    wi_tiers_fit_grid(c->orig, c->m, &p.storage);
    p.storage.fit_rho = rho;
    return wi_sim_params(&p, c->w, c->f, NULL, fetch_s, err);
}

/* The largest rho that changes anything: it empties the fetches of the
 * epoch that needs most (each loses at most its length). */
static double tf_rho_most(const wi_whatif *what, const stall_measured *m)
{
    wi_whatif t;
    tf_trace_whatif(what, &t);
    stall_model_params p;
    wi_params(&t, m, true, &p);
    stall_storage s = p.storage;
    wi_tiers_fit_grid(what, m, &s);
    double *x = stall_xcalloc((size_t)m->epochs, sizeof *x), most = 0;
    stall_storage_fit_misses(&s, x);
    for (int e = 0; e < m->epochs; e++)
        if (x[e] > 0)
            most = fmax(most, m->epoch_fetch_s[e] / x[e]);
    free(x);
    return most * 1e9;
}

/* A fingerprint of what the fit depends on: the trace's grid and epochs,
 * and the storage of its run (a sweep or plan runs one trace many times;
 * the fit is kept per process). */
static uint64_t tf_key(const wi_whatif *what, const stall_measured *m)
{
    uint64_t h = 14695981039346656037ull;
    int dims[5] = {m->ranks, m->epochs, m->workers, m->prefetch, m->ranks_per_node};
    double st[10] = {what->trace_mb_s,
                     what->trace_latency_ms,
                     what->trace_cache_mb,
                     what->batch_mb_given ? what->batch_mb : m->batch_mb,
                     what->requests_per_batch,
                     what->dataset_mb,
                     what->admit_ms,
                     m->mean_fetch_s,
                     stall_measured_mean_epoch(m),
                     (double)wi_batch_samples(what, m)};
    bool kind[3] = {what->partitioned, what->latency_constant, what->fifo};
    h = wi_fnv(h, dims, sizeof dims);
    h = wi_fnv(h, &m->batches, sizeof m->batches);
    h = wi_fnv(h, st, sizeof st);
    h = wi_fnv(h, kind, sizeof kind);
    h = wi_fnv(h, m->epoch_fetch_s, (size_t)m->epochs * sizeof *m->epoch_fetch_s);
    return h;
}

static pthread_mutex_t tf_memo_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool set;
    uint64_t key;
    wi_store_fit fit;
} tf_memo;

static int tf_bisect(const tf_ctx *c, double most, wi_store_fit *fit, stall_err *err)
{
    double meas = c->m->mean_fetch_s, lo = 0, hi = most, f0, f1;
    int rc = tf_sim(c, 0, &f0, err);
    if (rc == 0)
        rc = tf_sim(c, most, &f1, err);
    if (rc)
        return rc;
    fit->whole_s = f0;
    fit->emptied_s = f1;
    if (f0 <= meas) {
        fit->rho = 0; /* even whole, the fetches and the modelled reads fit */
        return 0;
    }
    if (f1 > meas) {
        fit->rho = -1; /* that storage is slower than the trace's run read */
        return 0;
    }
    for (int it = 0; it < 16 && rc == 0; it++) {
        double mid = 0.5 * (lo + hi), fm;
        rc = tf_sim(c, mid, &fm, err);
        if (fm > meas)
            lo = mid;
        else
            hi = mid;
    }
    fit->rho = 0.5 * (lo + hi);
    return rc;
}

int wi_store_fit_find(const wi_whatif *what, const stall_measured *m, const wi_feed *f,
                      wi_store_fit *fit, stall_err *err)
{
    *fit = (wi_store_fit){.rho = -1,
                          .on = true,
                          .mb_s = what->trace_mb_s,
                          .latency_ms = what->trace_latency_ms,
                          .cache_mb = what->trace_cache_mb,
                          .meas_s = m->mean_fetch_s};
    uint64_t key = tf_key(what, m);
    pthread_mutex_lock(&tf_memo_mu);
    bool hit = tf_memo.set && tf_memo.key == key;
    if (hit)
        *fit = tf_memo.fit;
    pthread_mutex_unlock(&tf_memo_mu);
    if (hit)
        return 0;
    wi_whatif t;
    tf_trace_whatif(what, &t);
    stall_model_params p;
    wi_params(&t, m, true, &p);
    wi_cpu_fit cpufit;
    int rc = m->cpu.has && p.cores > 0 ? wi_cpu_waits_fit(m, &cpufit, err) : 0;
    wi_tables w = {0};
    if (rc == 0 && !f)
        rc = wi_tables_build(&t, m, p.ranks, p.epochs, p.batches, true, &w, err);
    tf_ctx c = {.what = &t,
                .orig = what,
                .m = m,
                .f = f,
                .w = &w,
                .cpufit = m->cpu.has && p.cores > 0 ? &cpufit : NULL};
    if (rc == 0)
        rc = tf_bisect(&c, tf_rho_most(what, m), fit, err);
    wi_tables_free(&w);
    if (rc == 0) {
        pthread_mutex_lock(&tf_memo_mu);
        tf_memo.set = true;
        tf_memo.key = key;
        tf_memo.fit = *fit;
        pthread_mutex_unlock(&tf_memo_mu);
    }
    return rc;
}

void wi_store_fit_apply(const wi_whatif *what, const stall_measured *m, const wi_store_fit *fit,
                        stall_model_params *p)
{
    wi_tiers_fit_grid(what, m, &p->storage);
    p->storage.fit_rho = fit->rho;
}
