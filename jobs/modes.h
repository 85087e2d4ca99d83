/*
 * modes.h - the run of each [scenario] mode (private to jobs/: only the
 * dispatch in scenario.c calls the jobs; sweep.c calls mode = model's
 * checks on every point before any runs).
 */
#ifndef STALL_JOBS_MODES_H
#define STALL_JOBS_MODES_H

#include "stall/config.h"
#include "stall/job.h"
#include "stall/measured.h"

/* mode = replay and mode = seed, on a dsanalyzer trace (replay_job.c). */
int stall_replay_job(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

/* mode = model: the closed-loop what-if (model_job.c). */
int stall_model_job(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

/* The grid of cfg's trace, read as stall_model_job would (every check of
 * its first pass runs), without its durations: ranks, epochs, batches,
 * samples and workers (the count the job would take: the trace's column,
 * [trace] workers, else inferred) in *grid, every other field zero but
 * what stall_model_effects reads. Returns 0, 1 where it cannot
 * be told before the job (no trace; Kineto and dftracer traces, whose
 * fetches are inferred), or the error reading the trace gives. */
int stall_model_grid(const stall_config *cfg, stall_measured *grid, stall_err *err);

/* Whether a what-if draws durations ([run] seed has an effect) and reads
 * from storage ([storage] batch_mb has one). */
typedef struct stall_model_effects {
    bool draws, reads;
    bool cpu_waits; /* the trace's CPU columns share a node's cores ([cluster] cpu_waits_out) */
    bool beyond;    /* more ranks, epochs or batches than the trace ([fetch] resample) */
    bool rescales;  /* another GPU count, batches per GPU not given ([cluster] scaling) */
    bool drops; /* strong scaling leaves a rank's share a partial last batch ([loader] drop_last) */
    bool epochs;         /* the run has more than one epoch ([loader] persistent_workers) */
    bool trace_epochs;   /* the trace has more than one epoch, or the run has, with workers,
                          * and takes the trace's setting ([trace] persistent_workers) */
    bool workers;        /* the run has DataLoader workers ([loader] persistent_workers) */
    bool trace_workers;  /* the trace's run had DataLoader workers ([trace] persistent_workers) */
    bool nodes;          /* the run spans more than one node ([storage] layout) */
    bool ranks;          /* the run has more than one GPU ([align] fetch other than none) */
    bool orders;         /* the run has more than one worker per GPU ([loader] in_order) */
    bool late;           /* the trace's ranks began an epoch apart, the run has its GPU count
                            ([ranks] late_start) */
    bool deflates;       /* the trace's contention is found on its cores: shared cores, no CPU
                            columns ([trace] cores) */
    bool caches;         /* the node's cache can hit or write: more than one epoch, a warm start
                            or admission writes ([storage] cache_mb) */
    bool prefetches;     /* an epoch has more batches per GPU than workers, so the loader's
                            first round of requests does not take them all ([loader]
                            prefetch_factor) */
    bool accumulates;    /* an epoch has more than one batch per GPU, so not every iteration
                            synchronises at the epoch's end ([ddp] accumulation) */
    bool ckpts;          /* a checkpoint is written: no every_iterations past the run's
                            iterations, or a trace that records checkpoints ([checkpoint]
                            every_iterations) */
    int64_t batches_max; /* the most batches per GPU in an epoch of a run: none is kept in
                            the means where it is at most [report] warmup ([report]
                            delay_threshold) */
} stall_model_effects;

/* into |= fx, field by field (batches_max: the larger): a key has an effect where any of the runs
 * judged together (a sweep's points, a plan's counts) gives it one. */
void stall_model_effects_or(stall_model_effects *into, const stall_model_effects *fx);

/* The keys stall_model_effects_check judges, in this order. */
#define STALL_MODEL_EFFECT_KEYS 24

/* mode = model's checks of one configuration that need the trace's grid
 * (from stall_model_grid; NULL without a trace), as stall_model_job makes
 * them: a what-if beyond the trace without [fetch] resample, replications
 * where nothing is drawn; *fx gets what it draws and reads. Returns 0 or
 * STALL_ECONFIG. */
int stall_model_point_check(const stall_config *cfg, const stall_measured *grid,
                            stall_model_effects *fx, stall_err *err);

/* Refuses [run] seed, [storage] batch_mb, [cluster] cpu_waits_out, [fetch]
 * resample, [cluster] scaling, [loader] drop_last, [loader] and [trace]
 * persistent_workers (twice each: one epoch, no workers), [storage] layout,
 * [loader] in_order, [ranks] late_start, [report] delay_threshold (one GPU),
 * [trace] cores (nothing deflated), [storage] cache_mb > 0 (a cold cache in
 * a run of one epoch: it hits nothing), [loader] prefetch_factor (no more
 * batches per GPU in an epoch than workers: the first requests take them all),
 * [ddp] bucket_mb, bandwidth_gb_s and latency_us (one GPU: the ring has no
 * steps), [ddp] accumulation (one batch per GPU in an epoch), [checkpoint]
 * every_iterations (past the run, no checkpoint in the trace), [report]
 * delay_threshold again (no batch of an epoch after [report] warmup)
 * and an [align] fetch list with a policy other than none given in cfg
 * where fx says they have no
 * effect, naming where they were given: where_of[i] (may be NULL, or
 * where_of itself) replaces stall_config_origin's words for key i in that
 * order (a sweep axis). Returns 0 or STALL_ECONFIG. */
int stall_model_effects_check(const stall_config *cfg, const stall_model_effects *fx,
                              const char *const where_of[STALL_MODEL_EFFECT_KEYS], stall_err *err);

#endif
