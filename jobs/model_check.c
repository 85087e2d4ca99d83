/*
 * model_check.c - mode = model's checks that need the trace's grid, not its
 * durations (model_check.h, modes.h): a what-if beyond the trace without
 * resampling, replications, [run] seed and [storage] batch_mb where they
 * have no effect, and the grid itself read as the job would read it. The
 * job makes them on its own run; a sweep makes them on every point before
 * any runs, reading each distinct trace's grid once.
 */
#include "model_check.h"

#include <stdio.h>
#include <string.h>

#include "infer.h"
#include "stream.h"

/* Where a message about cfg's trace starts: the INI file, or the trace
 * given directly in its place. */
static const char *mc_where(const stall_config *cfg)
{
    if (cfg->ini_path[0])
        return cfg->ini_path;
    if (cfg->format == STALL_FORMAT_DSANALYZER && cfg->perf[0])
        return cfg->perf;
    return cfg->path[0] ? cfg->path : "config";
}

/* Whether l holds a policy other than none. */
static bool mc_aligns(const stall_align_list *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] != STALL_ALIGN_NONE)
            return true;
    return false;
}

void wi_effects(const stall_measured *m, const wi_whatif *what, const stall_model_params *p,
                stall_model_effects *fx)
{
    /* Durations are drawn beyond the trace, without one, and for random
     * stragglers (docs/model.md 2.6); the storage tiers' misses are a hash,
     * not of the seed (2.3). */
    fx->draws = !m || p->ranks > m->ranks || p->epochs > m->epochs || p->batches > m->batches ||
                p->uneven.straggler_fraction > 0;
    /* batch_mb is read only from a shared bandwidth or by the tiers. */
    fx->reads = p->storage_mb_s > 0 || p->tiers;
    /* the measured waits for a core come out only where cores are shared */
    fx->cpu_waits = m && m->cpu.has && p->cores > 0;
    /* resample draws only the cells beyond the trace (wi_grid_check) */
    fx->beyond = m && (p->ranks > m->ranks || p->epochs > m->epochs || p->batches > m->batches);
    /* strong and weak scaling differ only in the batches per GPU of another
     * GPU count (feed.c: the trace's dataset split, or the trace's batches) */
    fx->rescales = m && what->batches <= 0 && p->ranks != m->ranks;
    /* drop_last acts where the batches per GPU come from the trace's dataset
     * split (strong scaling, feed.c) and a rank's share of it is not whole
     * batches */
    fx->drops = false;
    if (m && what->batches <= 0 && what->scaling == STALL_SCALING_STRONG && p->ranks > 0) {
        /* feed.c's own split, with and without it */
        int64_t l = wi_dataset_samples(what, m), b = wi_batch_samples(what, m);
        fx->drops =
            wi_strong_batches(l, p->ranks, b, true) != wi_strong_batches(l, p->ranks, b, false);
    }
    /* Persistent workers skip the start-up of every epoch after the first
     * (model.c); the trace's setting also says how its start-up is
     * estimated (from epoch 0 only), and is the run's unless [loader]
     * persistent_workers is given (feed.c). */
    fx->epochs = p->epochs > 1;
    fx->trace_epochs =
        m && (m->epochs > 1 || (p->epochs > 1 && !what->persistent_given && p->workers > 0));
    /* ... and only where there are worker processes to keep: the run's
     * ([loader] workers, else the trace's), the measured run's (a trace of
     * 0 workers estimates no start-up, and PyTorch refuses
     * persistent_workers=True without workers). */
    fx->workers = p->workers > 0;
    fx->trace_workers = m && m->workers > 0;
    /* A partitioned node reads its share of the dataset: all of it on one
     * node (model_tier.c) */
    fx->nodes = p->gpus_per_node > 0 && p->ranks > p->gpus_per_node;
    /* alignment across GPUs (align.c) leaves one GPU's durations as they are */
    fx->ranks = p->ranks > 1;
    /* one worker (or none) fetches a rank's batches one after another, so
     * they are ready in index order whatever in_order says (model.c); one
     * batch per GPU in an epoch is in order by itself */
    fx->orders = p->workers > 1 && p->batches > 1;
    /* an epoch of one batch per GPU synchronises at its end every
     * iteration, whatever the accumulation (feed.c) */
    fx->accumulates = p->batches > 1;
    /* An every_iterations past the run's iterations writes no checkpoint,
     * where the trace records none (model_job.c says so for a run) */
    fx->ckpts = !(what->ckpt_every_given && p->ckpt.every > (int64_t)p->epochs * p->batches &&
                  p->ckpt.every_ns <= 0 && !(m && m->ckpt_n > 0));
    fx->batches_max = p->batches;
    /* a late start is replayed at the trace's own GPU count (feed.c) */
    fx->late = m && m->late_any && p->ranks == m->ranks;
    /* the contention of a trace without CPU columns is found where cores
     * are shared (model_job.c; one with them records its own) */
    fx->deflates = m && !m->cpu.has && p->cores > 0;
    /* The cache holds nothing when the run starts but cached_start_mb, and
     * each epoch reads every sample once: it hits from the second epoch on
     * (docs/model.md 2.3), or costs its admission writes */
    fx->caches = p->epochs > 1 || what->cached_start_mb > 0 || what->admit_ms > 0;
    /* The loader's first round sends each worker prefetch_factor requests
     * (model.c, as PyTorch's _reset): with no more batches than workers
     * that round takes every batch, one per worker, whatever the factor */
    fx->prefetches = p->workers > 0 && p->batches > p->workers;
}

int wi_grid_check(const stall_config *cfg, const wi_whatif *what, const stall_measured *m,
                  const stall_model_params *p, stall_err *err)
{
    bool beyond = m && (p->ranks > m->ranks || p->epochs > m->epochs || p->batches > m->batches);
    if (!beyond || what->resample != STALL_RESAMPLE_NONE)
        return 0;
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: [fetch] resample: the what-if needs %d ranks x %d epochs x %lld "
                         "batches but the trace has %d x %d x %lld; set resample = bootstrap, "
                         "lognormal or gamma",
                         mc_where(cfg), p->ranks, p->epochs, (long long)p->batches, m->ranks,
                         m->epochs, (long long)m->batches);
}

int wi_reps_check(const stall_config *cfg, const stall_model_effects *fx, stall_err *err)
{
    /* Replications only where the what-if draws durations: otherwise every
     * seed gives the same numbers and the interval would be a pretence. */
    if (cfg->replications <= 1 || fx->draws)
        return 0;
    char where[STALL_PATH_MAX + 64];
    stall_config_origin(cfg, "run", "replications", where, sizeof where);
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: has no effect: this what-if replays measured durations only "
                         "(nothing is drawn, every seed gives the same run); replications need "
                         "more GPUs, batches or epochs than the trace with [fetch] resample, or "
                         "format = none",
                         where);
}

int stall_model_point_check(const stall_config *cfg, const stall_measured *m,
                            stall_model_effects *fx, stall_err *err)
{
    wi_inputs in;
    wi_inputs_resolve(cfg, &in);
    stall_model_params p;
    wi_params(&in.what, m, true, &p);
    wi_effects(m, &in.what, &p, fx);
    int rc = wi_grid_check(cfg, &in.what, m, &p, err);
    return rc ? rc : wi_reps_check(cfg, fx, err);
}

void stall_model_effects_or(stall_model_effects *into, const stall_model_effects *fx)
{
    into->draws |= fx->draws;
    into->reads |= fx->reads;
    into->cpu_waits |= fx->cpu_waits;
    into->beyond |= fx->beyond;
    into->rescales |= fx->rescales;
    into->drops |= fx->drops;
    into->epochs |= fx->epochs;
    into->trace_epochs |= fx->trace_epochs;
    into->workers |= fx->workers;
    into->trace_workers |= fx->trace_workers;
    into->nodes |= fx->nodes;
    into->ranks |= fx->ranks;
    into->orders |= fx->orders;
    into->late |= fx->late;
    into->deflates |= fx->deflates;
    into->caches |= fx->caches;
    into->prefetches |= fx->prefetches;
    into->accumulates |= fx->accumulates;
    into->ckpts |= fx->ckpts;
    if (fx->batches_max > into->batches_max)
        into->batches_max = fx->batches_max;
}

/* The ring all-reduce of one GPU has no steps (feed.c: 2 (g - 1) of them):
 * its tail is 0 s whatever the bucket, bandwidth and latency. */
#define DDP_RING_ONE_GPU                                                                           \
    "the run has one GPU, whose ring all-reduce has no steps, so the ring model's tail is 0 s "    \
    "whatever its bucket, bandwidth and latency (it replaces the measured tail, optimizer "        \
    "step included); it needs more GPUs ([cluster] gpus), or [ddp] allreduce_s for the tail"

int stall_model_effects_check(const stall_config *cfg, const stall_model_effects *fx,
                              const char *const where_of[STALL_MODEL_EFFECT_KEYS], stall_err *err)
{
    static const struct {
        const char *section, *key, *why;
    } keys[STALL_MODEL_EFFECT_KEYS] = {
        {"run", "seed",
         "this what-if replays measured durations only (nothing is drawn, every seed gives the "
         "same run); a seed needs more GPUs, batches or epochs than the trace with [fetch] "
         "resample, random stragglers, or format = none"},
        {"storage", "batch_mb",
         "nothing is read from storage (a measured fetch already holds its read); it needs "
         "[storage] bandwidth_mb_s or a storage tier key"},
        {"cluster", "cpu_waits_out",
         "no run shares a node's cores with a trace's CPU columns (fetch_cpu, fetch_wait, ...) "
         "whose waits it would take out: it needs a tidy trace with them and [cluster] cores > "
         "0"},
        {"fetch", "resample",
         "the what-if stays within the trace's ranks, epochs and batches, whose measured "
         "durations it replays; resample draws those beyond them (more GPUs, batches or "
         "epochs)"},
        {"cluster", "scaling",
         "the what-if keeps the trace's GPU count (or sets [run] batches), where strong and "
         "weak scaling give the same batches per GPU; it matters with another [cluster] gpus"},
        {"loader", "drop_last",
         "no rank's share of the dataset ends in a partial batch: it acts under [cluster] "
         "scaling = strong (the trace's dataset split over the GPUs, no [run] batches) where a "
         "rank's samples are not a whole number of batches"},
        {"loader", "persistent_workers",
         "the run has one epoch: persistent workers skip the start-up of the epochs after the "
         "first; it needs [run] epochs > 1 or a trace of several epochs"},
        {"trace", "persistent_workers",
         "the trace and the run have one epoch each (or the run's own [loader] "
         "persistent_workers is given, or the run has no workers): it says the measured "
         "start-up came from epoch 0 only, and keeps workers for the run's later epochs"},
        {"loader", "persistent_workers",
         "the run has no DataLoader workers (workers = 0: the training process loads its own "
         "batches), so there are no worker processes to keep across epochs; it needs [loader] "
         "workers > 0"},
        {"trace", "persistent_workers",
         "the trace's run has no DataLoader workers (its workers = 0), so no worker processes "
         "were kept and no start-up was measured (PyTorch refuses persistent_workers=True "
         "without workers); for the what-if's own workers, set [loader] persistent_workers"},
        {"storage", "layout",
         "the run's GPUs are on one node, whose cache sees the whole dataset either way; it "
         "needs more GPUs than [cluster] gpus_per_node"},
        {"align", "fetch",
         "the run has one GPU, whose fetch durations no alignment across GPUs changes (every "
         "policy runs as none); it needs more GPUs ([cluster] gpus), or align.fetch = none"},
        {"loader", "in_order",
         "the run has at most one DataLoader worker per GPU, which fetches its batches one "
         "after another, or one batch per GPU in an epoch, so they are ready in index order "
         "either way; it needs [loader] workers > 1 and more than one batch per GPU"},
        {"ranks", "late_start",
         "no rank of the trace began an epoch after another, or the run has another GPU count "
         "than the trace's, where no rank's start is taken from it (docs/model.md 2.4); it needs "
         "a trace whose ranks began an epoch apart, at its own GPU count"},
        {"report", "delay_threshold",
         "the run has one GPU, whose delay (max - min stall over the GPUs) is always 0, so no "
         "iteration's delay exceeds the threshold (effective_delay_pct stays 0); it needs more "
         "GPUs ([cluster] gpus)"},
        {"trace", "cores",
         "no CPU contention is taken out of the trace's durations: that needs [cluster] cores > "
         "0 and a trace without CPU columns (a trace with them records its own cores)"},
        {"storage", "cache_mb",
         "the run has one epoch, which reads every sample once, so a cache that starts cold "
         "hits nothing (every hit share is 0); it needs [run] epochs > 1 (with [fetch] resample "
         "beyond the trace's epochs), [storage] cached_start_mb (a warm start) or admit_ms"},
        {"loader", "prefetch_factor",
         "an epoch has no more batches per GPU than workers, so the loader's first round of "
         "requests (workers x prefetch_factor) already sends every batch, one to each worker, "
         "whatever the factor; it needs [run] batches (or the trace's) above [loader] workers"},
        {"ddp", "bucket_mb", DDP_RING_ONE_GPU},
        {"ddp", "bandwidth_gb_s", DDP_RING_ONE_GPU},
        {"ddp", "latency_us", DDP_RING_ONE_GPU},
        {"ddp", "accumulation",
         "an epoch has one batch per GPU, so every iteration ends an epoch and synchronises "
         "whatever the accumulation; it needs more than one batch per GPU ([run] batches)"},
        {"checkpoint", "every_iterations",
         "no run reaches the first checkpoint, after every_iterations iterations (counted over "
         "the run), and the trace records none, so no checkpoint is written and the "
         "[checkpoint] keys change nothing; it needs a shorter interval or a longer run ([run] "
         "epochs)"},
        {"report", "delay_threshold",
         "no batch of an epoch comes after the [report] warmup batches left out of the means, so "
         "effective_delay_pct has no iteration to count (it is left empty); it needs a smaller "
         "warmup or more batches per GPU ([run] batches)"},
    };
    const bool idle[STALL_MODEL_EFFECT_KEYS] = {
        !fx->draws,    !fx->reads,         !fx->cpu_waits, !fx->beyond,
        !fx->rescales, !fx->drops,         !fx->epochs,    !fx->trace_epochs,
        !fx->workers,  !fx->trace_workers, !fx->nodes,     !fx->ranks,
        !fx->orders,   !fx->late,          !fx->ranks,     !fx->deflates,
        !fx->caches,   !fx->prefetches,    !fx->ranks,     !fx->ranks,
        !fx->ranks,    !fx->accumulates,   !fx->ckpts,     fx->batches_max <= cfg->warmup};
    for (int i = 0; i < STALL_MODEL_EFFECT_KEYS; i++) {
        if (!idle[i] || !stall_config_given(cfg, keys[i].section, keys[i].key))
            continue;
        /* [align] fetch = none says what one GPU does anyway */
        if (strcmp(keys[i].section, "align") == 0 && !mc_aligns(&cfg->fetch_align))
            continue;
        /* [ddp] accumulation = 1 says what no accumulation does anyway */
        if (strcmp(keys[i].key, "accumulation") == 0 && cfg->accumulation <= 1)
            continue;
        /* [storage] cache_mb = 0 says what no cache does anyway (a sweep's
         * baseline) */
        if (strcmp(keys[i].key, "cache_mb") == 0 && cfg->cache_mb <= 0)
            continue;
        char where[STALL_PATH_MAX + 64];
        if (where_of && where_of[i])
            snprintf(where, sizeof where, "%s", where_of[i]);
        else
            stall_config_origin(cfg, keys[i].section, keys[i].key, where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG, "%s: has no effect: %s", where, keys[i].why);
    }
    return 0;
}

int stall_model_grid(const stall_config *cfg, stall_measured *grid, stall_err *err)
{
    memset(grid, 0, sizeof *grid);
    if (cfg->format == STALL_FORMAT_NONE || wi_json_format(cfg->format))
        return 1;
    wi_inputs in;
    wi_inputs_resolve(cfg, &in);
    wi_stream *ws = NULL;
    int rc = wi_stream_start(&in.trace, &ws, err);
    if (rc == 0) {
        wi_stream_grid(ws, grid);
        wi_stream_close(ws);
        return 0;
    }
    if (rc != STALL_DS_UNSORTED && rc != WI_STREAM_WHOLE)
        return rc;
    /* Read whole: only its grid is kept. */
    stall_measured m;
    rc = wi_load_measured(&in.trace, &m, err);
    if (rc)
        return rc;
    grid->ranks = m.ranks;
    grid->epochs = m.epochs;
    grid->batches = m.batches;
    grid->workers = m.workers;
    grid->samples = m.samples;
    grid->samples_last = m.samples_last;
    grid->ranks_per_node = m.ranks_per_node;
    /* whether its CPU columns share cores (stall_model_effects.cpu_waits) */
    grid->cpu.has = m.cpu.has;
    grid->late_any = m.late_any;
    grid->late_wide = m.late_wide;
    grid->cpu.cores = m.cpu.cores;
    /* whether it records checkpoints (stall_model_effects.ckpts); a
     * streamed trace has no checkpoint columns */
    grid->ckpt_n = m.ckpt_n;
    stall_measured_free(&m);
    return 0;
}
