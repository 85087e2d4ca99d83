/*
 * inputs.c - the configuration resolved into the typed inputs of inputs.h:
 * the one place under the job's start that reads stall_config.
 */
#include "inputs.h"

#include <stdlib.h>
#include <string.h>

#include "stall/measured.h"

void wi_inputs_resolve(const stall_config *cfg, wi_inputs *in)
{
    memset(in, 0, sizeof *in);
    wi_trace_src *t = &in->trace;
    t->format = cfg->format;
    t->fetch = cfg->fetch;
    t->start = cfg->start;
    t->perf = cfg->perf;
    t->path = cfg->path;
    t->epoch = cfg->epoch;
    t->workers = cfg->trace_workers;
    t->workers_given = stall_config_given(cfg, "trace", "workers");
    t->workers_at[0] = '\0';
    if (t->workers_given)
        stall_config_origin(cfg, "trace", "workers", t->workers_at, sizeof t->workers_at);
    t->prefetch = cfg->trace_prefetch;
    t->prefetch_at[0] = '\0';
    if (stall_config_given(cfg, "trace", "prefetch_factor"))
        stall_config_origin(cfg, "trace", "prefetch_factor", t->prefetch_at, sizeof t->prefetch_at);
    t->persistent = cfg->trace_persistent;
    t->persistent_given = stall_config_given(cfg, "trace", "persistent_workers");
    t->persistent_at[0] = '\0';
    if (t->persistent_given)
        stall_config_origin(cfg, "trace", "persistent_workers", t->persistent_at,
                            sizeof t->persistent_at);
    t->ini = cfg->ini_path;

    wi_whatif *w = &in->what;
    w->ini = cfg->ini_path;
    w->gpus = cfg->gpus;
    w->gpus_per_node = cfg->gpus_per_node;
    w->cores = cfg->cores;
    w->cores_given = stall_config_given(cfg, "cluster", "cores");
    w->cpu_share_given = stall_config_given(cfg, "fetch", "cpu_share");
    w->cpu_waits_out = cfg->cpu_waits_out;
    w->compute_cpu_share_given = stall_config_given(cfg, "compute", "cpu_share");
    w->scaling = cfg->scaling;
    w->drop_last = cfg->drop_last;
    w->samples = cfg->samples;
    w->workers = cfg->workers;
    w->workers_given = stall_config_given(cfg, "loader", "workers");
    w->prefetch_factor = cfg->prefetch_factor;
    w->prefetch_given = stall_config_given(cfg, "loader", "prefetch_factor");
    w->startup_s = cfg->startup_s;
    w->startup_given = stall_config_given(cfg, "loader", "startup_s");
    w->handover_s = cfg->handover_s;
    w->handover_given = stall_config_given(cfg, "loader", "handover_s");
    w->in_order = cfg->in_order;
    w->persistent_workers = cfg->persistent_workers;
    w->persistent_given = stall_config_given(cfg, "loader", "persistent_workers");
    w->late_none = cfg->late_start == 1;
    w->pin_memory_s = cfg->pin_memory_s;
    w->batches = cfg->batches;
    w->epochs = cfg->epochs;
    w->seed = cfg->seed;
    w->cpu_share = cfg->cpu_share;
    w->compute_cpu_share = cfg->compute_cpu_share;
    w->bandwidth_mb_s = cfg->bandwidth_mb_s;
    w->batch_mb = cfg->batch_mb;
    w->batch_mb_given = stall_config_given(cfg, "storage", "batch_mb");
    w->tiers = stall_config_tiers(cfg);
    w->global_mb_s = cfg->global_mb_s;
    w->latency_ms = cfg->latency_ms;
    w->requests_per_batch = cfg->requests_per_batch;
    w->cache_mb = cfg->cache_mb;
    w->dataset_mb = cfg->dataset_mb;
    w->cached_start_mb = cfg->cached_start_mb;
    w->partitioned = cfg->layout == STALL_LAYOUT_PARTITIONED;
    w->latency_constant = cfg->latency_dist == 1;
    w->fifo = cfg->queue == 1;
    w->admit_ms = cfg->admit_ms;
    w->trace_cache_mb = cfg->trace_cache_mb;
    w->trace_cache_given = stall_config_given(cfg, "storage", "trace_cache_mb");
    w->trace_mb_s = cfg->trace_mb_s;
    w->trace_latency_ms = cfg->trace_latency_ms;
    w->trace_store_given = stall_config_given(cfg, "storage", "trace_mb_s") ||
                           stall_config_given(cfg, "storage", "trace_latency_ms");
    w->allreduce_s = cfg->allreduce_s;
    w->allreduce_given = stall_config_given(cfg, "ddp", "allreduce_s");
    w->bucket_mb = cfg->bucket_mb;
    w->bandwidth_gb_s = cfg->bandwidth_gb_s;
    w->latency_us = cfg->latency_us;
    w->accumulation = cfg->accumulation;
    w->resample = cfg->resample;
    w->fetch_dist = cfg->fetch_dist;
    w->compute_dist = cfg->compute_dist;
    wi_inputs_ckpt(cfg, w);
}

void wi_whatif_defaults(wi_whatif *w)
{
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    stall_config_defaults(cfg);
    wi_inputs in;
    wi_inputs_resolve(cfg, &in);
    free(cfg);
    *w = in.what;
    w->ini = ""; /* borrowed nothing: no INI file */
}

int wi_trace_persistent(const wi_trace_src *src, int column, bool *out, stall_err *err)
{
    *out = src->persistent;
    if (column < 0)
        return 0;
    if (src->persistent_given && src->persistent != (column == 1))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s = %s, but the trace records persistent = %d (its 'persistent' "
                             "column); leave the key out",
                             src->persistent_at, src->persistent ? "true" : "false", column);
    *out = column == 1;
    return 0;
}

int wi_trace_prefetch(const wi_trace_src *src, int column, int *pf, stall_err *err)
{
    if (column < 1) {
        *pf = (int)src->prefetch;
        return 0;
    }
    int64_t given = src->prefetch > 0 ? src->prefetch : 2;
    if (src->prefetch_at[0] && given != column)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s = %lld, but the trace records prefetch = %d (its 'prefetch' "
                             "column); leave the key out",
                             src->prefetch_at, (long long)src->prefetch, column);
    *pf = column;
    return 0;
}

int wi_trace_workers(const wi_trace_src *src, int column, int maxid, int (*infer)(void *),
                     void *ctx, int *workers, int *from, stall_err *err)
{
    *from = STALL_WORKERS_TRACE;
    *workers = column;
    if (column >= 0) {
        if (src->workers_given && src->workers != column)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s = %lld, but the trace records workers = %d (its 'workers' "
                                 "column)",
                                 src->workers_at, (long long)src->workers, column);
        return 0;
    }
    *from = src->workers >= 0 ? STALL_WORKERS_GIVEN : STALL_WORKERS_INFERRED;
    *workers = src->workers >= 0 ? (int)src->workers : maxid >= 0 ? maxid + 1 : infer(ctx);
    return 0;
}
