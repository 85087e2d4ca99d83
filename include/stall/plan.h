/*
 * stall/plan.h - `stallsim plan`: capacity planning on the closed-loop
 * model (mode = model), answered by search rather than by a full sweep.
 *
 * [plan] keys (all optional):
 *   stall_target = 0.05  the stall share to reach, in [0, 1]
 *   efficiency   = 0.80  weak-scaling efficiency to keep, in (0, 1]
 *   max_workers  = 64    the most workers per GPU to try
 *   max_gpus     = 1024  the most GPUs on the scaling curve
 *   target_throughput    samples/s (batches/s without samples) to reach
 *   target_epoch_s       the epoch deadline to meet, s
 *   ckpt_stall_budget    the checkpoint stall share to keep, in (0, 1)
 *
 * Questions, in order, each with the simulations it took:
 *  1. workers: the fewest workers per GPU in 1..max_workers whose stall
 *     share is <= stall_target: galloping (1, 2, 4, ...) then bisection,
 *     which assumes the stall share does not grow with workers. Not met:
 *     max_workers is the best found, and the reason is given.
 *  2. gpus: weak scaling (per-GPU batches and samples fixed) of the
 *     configuration with that worker count over 1, 2, 4, ... up to
 *     max_gpus, nodes of [cluster] gpus_per_node GPUs (0: of the
 *     configuration's GPU count); throughput, speed-up and efficiency
 *     against 1 GPU; the largest count whose efficiency, and that of every
 *     smaller count, stays >= efficiency: the powers of two, then bisection
 *     between the last one that holds and the first that does not. What
 *     limits it is found by simulating that first failing count without
 *     each shared resource in turn (storage bandwidth, host cores, the
 *     all-reduce) and without the checkpoint writes (a node's ranks share
 *     their bandwidth); when none gives back 1% of efficiency, stragglers
 *     at the barrier. A trace with [fetch] resample = none is resampled with
 *     bootstrap beyond its ranks.
 *  3. bandwidth, cores: for the chosen configuration (question 1's workers,
 *     the configuration's GPUs), the least storage bandwidth per node
 *     (when [storage] batch_mb is set; resolution 0.1%) and host cores
 *     per node whose throughput is within 1% of unlimited (for cores: a
 *     core for every process of the node, 2^20, not the run without
 *     [cluster] cores, which splits no fetch into its CPU part).
 *  4. which resource binds, in a sentence.
 *  5. with target_throughput (samples/s, or batches/s where samples per
 *     batch are unknown): the fewest GPUs, in 1..max_gpus under weak
 *     scaling, whose throughput reaches it; with target_epoch_s: the fewest
 *     GPUs whose epoch, the configuration's dataset split over them (strong
 *     scaling), takes at most that long. Powers of two, then bisection.
 *  6. with the storage tiers on: the least link bandwidth, global bandwidth
 *     and cache size per node for a stall share <= stall_target at the
 *     configuration's GPUs (plan.csv rows tier_link_mb_s, tier_global_mb_s,
 *     tier_cache_mb): galloping then bisection to 0.1%, assuming the stall
 *     share does not grow with either. A row not met says what its best
 *     run simulated (that resource at its most, the rest as configured)
 *     and its stall share (tiers_why); the workers' reason (question 1)
 *     names the storage bandwidth and the cores only where question 3's
 *     answer binds.
 *  Every answer that is a GPU count carries its GPU-hours per epoch.
 */
#ifndef STALL_PLAN_H
#define STALL_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"
#include "stall/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STALL_PLAN_CURVE_MAX 64
/* The most storage-tier requests one run of the scaling curve may simulate
 * (about 1 us each): past it the curve stops, binding "cost". */
#define STALL_PLAN_TIER_REQUESTS 2e7
/* The most requests x nodes one run of the scaling curve or of a GPU target
 * may simulate with the fair store (each request passes over every node's
 * share of it, about 3-5 ns a pass on the 2-core development VM): past it the
 * search stops, as past STALL_PLAN_TIER_REQUESTS. */
#define STALL_PLAN_TIER_REQUEST_NODES 1e9

typedef struct stall_plan_answer {
    double value;     /* NAN: not answered (e.g. bandwidth without batch_mb) */
    double gpu_h;     /* GPU-hours per epoch of the answer (GPUs x epoch time); NAN: none */
    double data;      /* the data of that epoch, as a multiple of the planned configuration's
                         epoch (weak scaling: GPUs / its GPUs; 1 at its GPUs or strong
                         scaling), so that gpu_h / data compares answers; NAN with gpu_h */
    char binding[24]; /* one word: met, not_met, storage, cores, allreduce, checkpoint,
                         stragglers, none, not_modelled; max_gpus: not reached up to
                         the search's bound, the answer is at least it; cost: the search
                         stopped where its next run would pass [plan] max_requests or
                         max_request_nodes */
    int sims;         /* simulations the answer took */
    /* The run behind gpu_h (where gpu_h is not NAN): its GPU count (for
     * the workers' answer the configuration's, else the answer) and its
     * stall share (for the workers' answer stall_at_workers, the least
     * found where not_met). plan.csv's gpus and stall_share columns. */
    int gpus;
    double stall;
} stall_plan_answer;

typedef struct stall_plan_result {
    double stall_target, efficiency;
    int max_workers, max_gpus;
    double max_requests; /* [plan] max_requests: storage-tier requests a curve run may simulate */
    double max_request_nodes; /* [plan] max_request_nodes: those requests x the run's nodes */
    bool max_requests_given, max_request_nodes_given; /* written to effective.ini */
    stall_plan_answer workers, gpus, bandwidth, cores;
    /* [plan] target_throughput, target_epoch_s (0: not asked) and their
     * answers: the fewest GPUs that reach them (binding met, or max_gpus
     * when not reached up to it, value NAN), with a sentence each. */
    double target_throughput, target_epoch_s;
    stall_plan_answer throughput_gpus, epoch_gpus;
    /* With the storage tiers ([storage] tier keys, stall_config_tiers): the
     * least link bandwidth, global bandwidth (MB/s) and cache (MB per node)
     * whose stall share, at the configuration's GPUs with question 1's
     * workers, is at most stall_target, the others as configured; binding
     * met, or not_met (not even unlimited, or a cache holding the dataset,
     * meets it; value NAN). */
    bool tiers;
    stall_plan_answer tier_link, tier_global, tier_cache;
    /* Each tier row (link, global, cache) not met: the stall share of its
     * best run, that resource at its most (1e12 MB/s, a cache holding the
     * dataset) and the rest as configured (NAN: met); and what each such
     * run simulated, in sentences ("": every row met). */
    double tier_best_stall[3];
    char tiers_why[1536];
    char throughput_why[1024], epoch_why[1024];
    /* [plan] ckpt_stall_budget (0: not asked): the shortest checkpoint
     * interval in iterations whose checkpoint stall share stays within it
     * (binding met, or not_met with one checkpoint per run), jobs/plan_ckpt.c.
     * [checkpoint] mb_per_rank and bandwidth_mb_s are taken without an
     * interval; with none given or recorded in the trace, the other answers
     * are computed without checkpoints (ckpt_why says so). */
    double ckpt_budget;
    stall_plan_answer ckpt_every;
    char ckpt_why[512];
    double stall_at_workers; /* stall share with the chosen workers */
    int n;                   /* scaling curve points */
    int curve_gpus[STALL_PLAN_CURVE_MAX];
    double curve_samples_s[STALL_PLAN_CURVE_MAX]; /* NAN when samples per batch unknown */
    double curve_batches_s[STALL_PLAN_CURVE_MAX];
    double curve_speedup[STALL_PLAN_CURVE_MAX], curve_efficiency[STALL_PLAN_CURVE_MAX];
    double curve_stall[STALL_PLAN_CURVE_MAX];
    bool resampled; /* bootstrap turned on for the curve */
    /* The trace's ranks began an epoch apart (docs/model.md 2.4): plan's
     * runs begin every epoch together. late_rank -1: none; else the widest
     * spread, its epoch (the trace's label) and the rank that began last. */
    int late_rank, late_epoch;
    double late_s;
    char why[1024];           /* why the worker target was not met ("" when met) */
    char cores_note[320];     /* what the cores answer assumes: the default [fetch] cpu_share,
                                 where neither the INI nor the trace's CPU columns give it
                                 ("": they do) */
    char bandwidth_note[256]; /* why storage_bandwidth_mb_s is not_modelled: no MB per
                                 batch, and the key that gives it ("": modelled) */
    char reads_note[1024];    /* the trace's cold reads counted twice by the storage tiers
                                 (docs/model.md 2.3; "": not so) */
    char limit[1024];         /* what limits the scaling */
    int cut_gpus;             /* > 0: the curve stopped after this count, its next run too costly */
    double cut_requests;      /* the requests that run would have simulated */
    /* The curve stopped past its answer, short of a run past max_requests
     * or max_request_nodes: where and why, for the terminal and
     * effective.ini ("": it ran to max_gpus, or stopped at its answer,
     * binding cost) */
    char curve_note[640];
    /* The limit's run without the store's cost (a store of bandwidths far
     * above the demand, the fair store) would pass the bound: not made, and
     * the limit says so */
    bool storage_untried;
    char sentence[1024]; /* which resource binds */
} stall_plan_result;

/* Answers the questions for cfg (its [plan] lines are read, the rest must
 * be a valid mode = model configuration). Returns 0 or a code. */
int stall_plan_compute(const stall_config *cfg, stall_plan_result *res, stall_err *err);

typedef struct stall_plan_opts {
    const char *outdir; /* NULL: results/<name> */
    FILE *term;         /* the table; NULL: none */
} stall_plan_opts;

/* stall_plan_compute, then plan.csv and scaling.csv in the result folder
 * and the table on opts->term. With opts->term, and stderr a terminal, a
 * progress line on stderr while it computes (erased before the table). */
int stall_plan_run(const stall_config *cfg, const stall_plan_opts *opts, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
