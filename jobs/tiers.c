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
void wi_tiers(const wi_whatif *what, const stall_measured *m, stall_model_params *p)
{
    stall_storage *s = &p->storage;
    memset(s, 0, sizeof *s);
    p->tiers = true;
    p->read_in_fetch = false;
    s->link_mb_s = what->bandwidth_mb_s;
    s->global_mb_s = what->global_mb_s;
    s->latency = stall_s_to_ns(what->latency_ms / 1e3);
    s->batch_mb = p->batch_mb;
    s->requests = what->requests_per_batch > 0 ? what->requests_per_batch
                                               : (double)wi_batch_samples(what, m);
    s->cache_mb = what->cache_mb;
    s->dataset_mb = what->dataset_mb > 0 ? what->dataset_mb
                                         : p->batch_mb * (double)p->batches * p->ranks;
    s->partitioned = what->partitioned;
    s->start_mb = what->cached_start_mb;
    if (m && m->read_above) {
        s->read_out = m->read_above;
        s->read_epochs = m->epochs;
        s->read_rest = m->read_above_mean;
    }
}

void wi_tiers_say(FILE *f, const stall_model_params *p, const stall_measured *m)
{
    const stall_storage *s = &p->storage;
    int nodes = (p->ranks + p->gpus_per_node - 1) / p->gpus_per_node;
    char link[32] = "unlimited", glob[32] = "unlimited";
    if (s->link_mb_s > 0)
        snprintf(link, sizeof link, "%.6g", s->link_mb_s);
    if (s->global_mb_s > 0)
        snprintf(glob, sizeof glob, "%.6g", s->global_mb_s);
    fprintf(f,
            "storage tiers: %.6g MB per batch in %.6g requests; cache %.6g MB per node, dataset "
            "%.6g MB %s, %.6g MB cached at the start; link %s MB/s per node, %s MB/s shared by "
            "the %d node%s, latency %.6g ms per missed request\n",
            s->batch_mb, s->requests, s->cache_mb, s->dataset_mb,
            s->partitioned ? "partitioned" : "replicated", s->start_mb,
            link, glob, nodes,
            nodes == 1 ? "" : "s", (double)s->latency / 1e6);
    int shown = p->epochs < 8 ? p->epochs : 8;
    double *hit = stall_xcalloc((size_t)shown * (size_t)nodes, sizeof *hit);
    stall_storage_hits(s, p->ranks, p->gpus_per_node, p->batches, shown, hit);
    fprintf(f, "cache hits per epoch (node 0):");
    for (int e = 0; e < shown; e++)
        fprintf(f, " %.1f%%", 100 * hit[(size_t)e * (size_t)nodes]);
    fprintf(f, "%s\n", p->epochs > shown ? " ..." : "");
    free(hit);
    if (m && s->read_out) {
        fprintf(f, "measured read taken out of each fetch, per epoch (its mean fetch above the "
                   "fastest epoch's):");
        for (int e = 0; e < m->epochs && e < 8; e++)
            fprintf(f, " %.4f s", (double)s->read_out[e] / 1e9);
        fprintf(f, "%s\n", m->epochs > 8 ? " ..." : "");
    }
}
