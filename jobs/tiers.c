/*
 * tiers.c - the storage tiers of a what-if (stall/storage.h,
 * docs/model.md 2.3): the [storage] keys resolved into the model's
 * parameters, and what the terminal says about them.
 */
#include "feed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The storage tiers (stall/storage.h) of a what-if: the [storage] keys,
 * with the defaults of docs/model.md 2.3 (requests: one per sample; the
 * dataset: what an epoch of the what-if reads), and the measured read taken
 * out of a trace's fetches: per epoch, its mean fetch above the fastest
 * epoch's (that epoch's reads taken as all hits); beyond the trace's epochs
 * the mean of those (a drawn fetch is any measured one). */
/* [storage] trace_cache_mb: the measured run's cache, started cold, gives
 * each of its epochs a miss share x_e (the same rule); its mean fetch
 * f_e = base + x_e rho is fitted by least squares over the epochs, and
 * rho x x_e is its measured read. Epochs that all miss alike leave rho
 * unknown: the fastest-epoch rule stays. */
void wi_tiers_fit_grid(const wi_whatif *what, const stall_measured *m, stall_storage *s)
{
    s->fit_cache_mb = what->trace_cache_mb;
    s->fit_ranks = m->ranks;
    s->fit_gpn =
        m->ranks_per_node > 0 && m->ranks_per_node < m->ranks ? m->ranks_per_node : m->ranks;
    s->fit_batches = m->batches;
    s->fit_epochs = m->epochs;
}

static void wi_tiers_fit_of(const wi_whatif *what, const stall_measured *m, const stall_storage *s,
                            stall_storage *t)
{
    *t = *s;
    wi_tiers_fit_grid(what, m, t);
    if (!(what->dataset_mb > 0))
        t->dataset_mb = s->batch_mb * (double)m->batches * m->ranks;
}

static void wi_tiers_fit(const wi_whatif *what, const stall_measured *m, stall_storage *s)
{
    stall_storage t;
    wi_tiers_fit_of(what, m, s, &t);
    double *x = stall_xcalloc((size_t)m->epochs, sizeof *x);
    stall_storage_fit_misses(&t, x);
    double mx = 0, mf = 0, sxx = 0, sxf = 0;
    for (int e = 0; e < m->epochs; e++) {
        mx += x[e] / m->epochs;
        mf += m->epoch_fetch_s[e] / m->epochs;
    }
    for (int e = 0; e < m->epochs; e++) {
        sxx += (x[e] - mx) * (x[e] - mx);
        sxf += (x[e] - mx) * (m->epoch_fetch_s[e] - mf);
    }
    free(x);
    if (sxx < 1e-9)
        return;
    s->fit_rho = fmax(0.0, sxf / sxx) * 1e9;
    s->fit_cache_mb = t.fit_cache_mb;
    s->fit_ranks = t.fit_ranks;
    s->fit_gpn = t.fit_gpn;
    s->fit_batches = t.fit_batches;
    s->fit_epochs = t.fit_epochs;
    /* the fit uses the trace's dataset; the what-if keeps its own */
}

void wi_tiers(const wi_whatif *what, const stall_measured *m, stall_model_params *p)
{
    stall_storage *s = &p->storage;
    memset(s, 0, sizeof *s);
    p->tiers = true;
    p->read_in_fetch = false;
    s->link_mb_s = what->bandwidth_mb_s;
    s->global_mb_s = what->global_mb_s;
    s->latency = stall_s_to_ns(what->latency_ms / 1e3);
    s->latency_constant = what->latency_constant;
    s->fifo = what->fifo;
    s->admit = stall_s_to_ns(what->admit_ms / 1e3);
    s->batch_mb = p->batch_mb;
    s->requests =
        what->requests_per_batch > 0 ? what->requests_per_batch : (double)wi_batch_samples(what, m);
    s->cache_mb = what->cache_mb;
    s->dataset_mb =
        what->dataset_mb > 0 ? what->dataset_mb : p->batch_mb * (double)p->batches * p->ranks;
    s->partitioned = what->partitioned;
    s->start_mb = what->cached_start_mb;
    s->fit_rho = -1;
    if (m) {
        s->read_ranks = m->ranks;
        s->read_batches = m->batches;
    }
    if (m && m->read_above) {
        s->read_out = m->read_above;
        s->read_epochs = m->epochs;
        s->read_rest = m->read_above_mean;
    }
    if (m && m->epoch_fetch_s &&
        (s->read_out || what->trace_cache_given || what->trace_store_given)) {
        s->read_mean_s = m->epoch_fetch_s;
        s->read_epochs = m->epochs;
        for (int e = 0; e < m->epochs; e++)
            s->read_rest_mean_s += m->epoch_fetch_s[e] / m->epochs;
    }
    if (m && m->epoch_fetch_s && what->trace_cache_given && !what->trace_store_given)
        wi_tiers_fit(what, m, s);
}

bool wi_tiers_fit_none(const wi_whatif *what, const stall_measured *m, const stall_model_params *p,
                       char *why, size_t n)
{
    /* with the trace's storage it is the cache of the run simulated there */
    if (!what->trace_cache_given || !p->tiers || p->storage.fit_rho >= 0 ||
        (m && what->trace_store_given))
        return false;
    if (!m)
        snprintf(why, n, "there is no measured trace whose reads it would fit");
    else if (!m->epoch_fetch_s)
        snprintf(why, n, "the trace's epochs' mean fetches, which it fits, are not kept");
    else if (m->epochs < 2)
        snprintf(why, n,
                 "the trace has one epoch, and its read is fitted against the others' (its "
                 "fetches are taken whole)");
    else {
        stall_storage t;
        wi_tiers_fit_of(what, m, &p->storage, &t);
        double *x = stall_xcalloc((size_t)m->epochs, sizeof *x);
        stall_storage_fit_misses(&t, x);
        snprintf(why, n,
                 "with a cache of %.6g MB per node the trace's run, %.6g MB of dataset, misses "
                 "%.1f%% of its reads in every epoch, so they cannot be told from the rest of its "
                 "fetches (its fetches are kept whole, as without the key; docs/model.md 2.3)",
                 what->trace_cache_mb, t.dataset_mb, 100 * x[0]);
        free(x);
    }
    return true;
}

void wi_tiers_say(FILE *f, const stall_model_params *p, const stall_measured *m,
                  const wi_store_fit *store)
{
    const stall_storage *s = &p->storage;
    int nodes = (p->ranks + p->gpus_per_node - 1) / p->gpus_per_node;
    char link[32] = "unlimited", glob[32] = "unlimited";
    if (s->link_mb_s > 0)
        snprintf(link, sizeof link, "%.6g", s->link_mb_s);
    if (s->global_mb_s > 0)
        snprintf(glob, sizeof glob, "%.6g", s->global_mb_s);
    /* what the cache can hold of what was asked (stall_storage_step's c_0) */
    double work = s->partitioned ? s->dataset_mb * p->gpus_per_node / p->ranks : s->dataset_mb;
    double start = fmin(s->start_mb, fmin(s->cache_mb, work));
    char asked[96] = "";
    if (start < s->start_mb)
        snprintf(asked, sizeof asked, " (of %.6g MB asked: the %s holds no more)", s->start_mb,
                 s->cache_mb < work ? "cache"
                 : s->partitioned   ? "node's shard"
                                    : "dataset");
    fprintf(f,
            "storage tiers: %.6g MB per batch in %.6g requests; cache %.6g MB per node, dataset "
            "%.6g MB %s, %.6g MB cached at the start%s; link %s MB/s per node, %s MB/s shared by "
            "the %d node%s, latency %.6g ms per missed request%s%s\n",
            s->batch_mb, s->requests, s->cache_mb, s->dataset_mb,
            s->partitioned ? "partitioned" : "replicated", start, asked, link, glob, nodes,
            nodes == 1 ? "" : "s", (double)s->latency / 1e6,
            s->latency_constant ? " (constant)" : "",
            s->fifo ? "; transfers served one at a time in arrival order (queue = fifo)" : "");
    if (s->admit > 0)
        fprintf(f, "cache admission: %.6g ms to write each request the cache admits\n",
                (double)s->admit / 1e6);
    int shown = p->epochs < 8 ? p->epochs : 8;
    double *hit = stall_xcalloc((size_t)shown * (size_t)nodes, sizeof *hit);
    stall_storage_hits(s, p->ranks, p->gpus_per_node, p->batches, shown, hit);
    fprintf(f, "cache hits per epoch (node 0):");
    for (int e = 0; e < shown; e++)
        fprintf(f, " %.1f%%", 100 * hit[(size_t)e * (size_t)nodes]);
    fprintf(f, "%s\n", p->epochs > shown ? " ..." : "");
    free(hit);
    if (m && s->fit_rho >= 0) {
        double *x = stall_xcalloc((size_t)s->fit_epochs, sizeof *x);
        stall_storage_fit_misses(s, x);
        char how[400], tlink[48] = "unlimited bandwidth";
        if (store && store->on && store->mb_s > 0)
            snprintf(tlink, sizeof tlink, "%.6g MB/s per node", store->mb_s);
        if (store && store->on)
            snprintf(how, sizeof how,
                     "%.4f s per fetch that misses everything, for which the trace's run "
                     "simulated at its storage (%s, %.6g ms per request, a cache of %.6g MB per "
                     "node) gives its mean fetch back, %.4f s",
                     s->fit_rho / 1e9, tlink, store->latency_ms, store->cache_mb, store->meas_s);
        else
            snprintf(how, sizeof how,
                     "fitted: %.4f s per fetch that misses everything, the trace's run with a "
                     "cache of %.6g MB per node",
                     s->fit_rho / 1e9, s->fit_cache_mb);
        fprintf(f,
                "measured read taken out of the fetches, per fetch on average, epoch by epoch "
                "(each fetch loses its share in proportion to its length; %s):",
                how);
        for (int e = 0; e < s->fit_epochs && e < 8; e++)
            fprintf(f, " %.4f s", s->fit_rho * x[e] / 1e9);
        fprintf(f, "%s\n", s->fit_epochs > 8 ? " ..." : "");
        free(x);
    } else if (m && s->read_out) {
        fprintf(f, "measured read taken out of the fetches, per fetch on average, epoch by epoch "
                   "(the epoch's mean fetch above the fastest epoch's; each fetch loses its share "
                   "in proportion to its length):");
        for (int e = 0; e < m->epochs && e < 8; e++)
            fprintf(f, " %.4f s", (double)s->read_out[e] / 1e9);
        fprintf(f, "%s\n", m->epochs > 8 ? " ..." : "");
        bool none = true;
        for (int e = 0; e < m->epochs; e++)
            none = none && s->read_out[e] == 0;
        if (none) {
            char w[1024];
            wi_tiers_twice_text(w, sizeof w, m->epochs == 1, "");
            fprintf(f, "%s\n", w);
        }
    }
}

int wi_tiers_twice_text(char *buf, size_t n, bool one_epoch, const char *where)
{
    return snprintf(buf, n,
                    "warning: %s, so nothing in it tells its reads from the rest of its "
                    "fetches: they are kept whole and every modelled miss comes on top, so a "
                    "read its run made counts twice%s (docs/model.md 2.3). fix: give the storage "
                    "the trace's run read from, [storage] trace_mb_s (MB/s per node; here "
                    "--set storage.trace_mb_s=...) with trace_latency_ms and trace_cache_mb "
                    "where it had them: its read is then found by simulating that run and "
                    "taken out; or ask [storage] bandwidth_mb_s alone (no tier key, no "
                    "global_mb_s), which takes each fetch to hold its read at that bandwidth",
                    one_epoch ? "the trace has one epoch" : "the trace's epochs read alike", where);
}
