/*
 * inputs.h - the configuration resolved once, where a job starts, into the
 * typed inputs the layers under it take (private to jobs/): the trace to
 * read and what the what-if sets. Below this point nothing receives the
 * whole configuration or asks whether a key was given: where a rule
 * depends on it (a key given explicitly overrides the measured value), the
 * flag is resolved here, by name.
 */
#ifndef STALL_JOBS_INPUTS_H
#define STALL_JOBS_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/ckpt.h"
#include "stall/config.h"

/* The measured trace, from [trace] (paths borrowed from the configuration,
 * which outlives the job). */
typedef struct wi_trace_src {
    int format;                       /* stall_format */
    const char *fetch, *start, *perf; /* dsanalyzer */
    const char *path;                 /* tidy */
    int64_t epoch;                    /* dsanalyzer: the epoch read */
    int64_t workers;                  /* [trace] workers; -1: infer from the fetch starts */
    bool workers_given;               /* set explicitly: must agree with a trace that records it */
    char workers_at[STALL_PATH_MAX + 64];  /* where [trace] workers was given ("": not given), for
                                              a tidy trace's worker ids past it */
    int64_t prefetch;                      /* [trace] prefetch_factor; 0: PyTorch's default 2 */
    char prefetch_at[STALL_PATH_MAX + 64]; /* where it was given ("": not given): it must agree
                                              with a trace that records its prefetch */
    bool persistent;                       /* [trace] persistent_workers */
    bool persistent_given;                 /* set explicitly: must agree with the trace's column */
    char persistent_at[STALL_PATH_MAX + 64]; /* where it was given ("": not given) */
    const char *ini;                         /* the INI file, for messages ("" when none) */
} wi_trace_src;

/* What a what-if sets ([loader] [cluster] [fetch] [compute] [storage]
 * [ddp] [run]), with *_given where a key given explicitly replaces the
 * measured value. */
typedef struct wi_whatif {
    const char *ini; /* the INI file, for messages ("" when none) */
    int64_t gpus, gpus_per_node, cores;
    bool cores_given, cpu_share_given, compute_cpu_share_given;
    double cpu_waits_out; /* [cluster] cpu_waits_out: -1 fitted */
    int scaling;          /* stall_scaling */
    bool drop_last;       /* [loader] drop_last */
    int64_t samples;      /* [report] samples: samples per batch per rank; 0: the trace's */
    int64_t workers, prefetch_factor;
    bool workers_given, prefetch_given;
    double startup_s, handover_s;
    bool startup_given, handover_given;
    bool in_order, persistent_workers;
    bool persistent_given; /* [loader] persistent_workers set explicitly */
    bool late_none;        /* [ranks] late_start = none: the ranks begin every epoch together */
    bool observed; /* an observer (--analyze, --timeline) keeps every rank-iteration of the run:
                      its memory counts in the run's check (wi_mem_check) */
    double pin_memory_s;
    int64_t batches, epochs, seed;
    double cpu_share, compute_cpu_share;
    double bandwidth_mb_s, batch_mb;
    bool batch_mb_given;
    bool tiers; /* a storage-tier key given: the tier model (stall/storage.h) */
    double global_mb_s, latency_ms, requests_per_batch, cache_mb, dataset_mb, cached_start_mb;
    bool partitioned, latency_constant, fifo;
    double admit_ms; /* [storage] admit_ms */
    double trace_cache_mb;
    bool trace_cache_given;
    /* [storage] trace_mb_s, trace_latency_ms: the storage the trace's run
     * read from; given (either): its measured read is found by simulating
     * that run (tierfit.c) */
    double trace_mb_s, trace_latency_ms;
    bool trace_store_given;
    double allreduce_s; /* [ddp] allreduce_s, when allreduce_given */
    bool allreduce_given;
    double bucket_mb, bandwidth_gb_s, latency_us;
    int64_t accumulation; /* [ddp] accumulation */
    int resample;         /* stall_resample */
    stall_dist fetch_dist, compute_dist;
    /* [checkpoint]: the interval, size and bandwidth replace a trace's
     * recorded checkpoints when given; [ranks], [straggler] */
    stall_ckpt_params ckpt;
    bool ckpt_every_given, ckpt_mb_given, ckpt_mb_s_given, ckpt_first_given;
    bool ckpt_off;          /* [checkpoint] mode = off: none, not even the trace's */
    char ckpt_any_key[160]; /* where the first [checkpoint] key other than the interval was
                               given ("": none), for wi_ckpt_check */
    char ckpt_mb_key[160], ckpt_mb_s_key[160];     /* where each came from, for wi_ckpt_check */
    char ckpt_target_key[160], ckpt_snap_key[160]; /* the same for target and snapshot_mb_s */
    char slow_key[160]; /* where [ranks] slow came from, for wi_ckpt_check */
    stall_uneven_params uneven;
} wi_whatif;

typedef struct wi_inputs {
    wi_trace_src trace;
    wi_whatif what;
} wi_inputs;

/* Resolves cfg (which must outlive *in: paths are borrowed). */
void wi_inputs_resolve(const stall_config *cfg, wi_inputs *in);

/* The [checkpoint], [ranks] and [straggler] part of wi_inputs_resolve
 * (ckpt_job.c). */
void wi_inputs_ckpt(const stall_config *cfg, wi_whatif *w);

/* The what-if of a configuration with every key at its default. */
void wi_whatif_defaults(wi_whatif *w);

/* The INI file for messages, or "config" when there is none. */
static inline const char *wi_where(const char *ini)
{
    return ini[0] ? ini : "config";
}

/* Whether the measured run kept its workers (persistent_workers): the
 * trace's persistent column when it has one (column 0/1; -1: none), else
 * [trace] persistent_workers. An explicit [trace] persistent_workers that
 * contradicts the column is refused (STALL_ECONFIG), as [trace] workers is. */
int wi_trace_persistent(const wi_trace_src *src, int column, bool *out, stall_err *err);

/* The measured run's workers per rank: the trace's workers column (column;
 * -1: none), else [trace] workers, else one more than the largest worker id
 * in the trace (maxid; -1: none), else what infer() gives (the fetch starts;
 * called only then). Where it came from in *from (stall_workers_from). A
 * [trace] workers that contradicts the column is refused (STALL_ECONFIG). */
/* The measured run's prefetch factor into *pf: a tidy trace's prefetch
 * column (column >= 1), which a given [trace] prefetch_factor must agree
 * with (a contradiction is refused, naming where it was given), else the
 * key's value, 0 left as 0 (the caller's default). */
int wi_trace_prefetch(const wi_trace_src *src, int column, int *pf, stall_err *err);
int wi_trace_workers(const wi_trace_src *src, int column, int maxid, int (*infer)(void *),
                     void *ctx, int *workers, int *from, stall_err *err);

#endif
